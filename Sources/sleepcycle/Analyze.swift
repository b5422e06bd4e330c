import ArgumentParser
import Foundation
import SleepCycle
import SleepCycleAudio
import SleepCycleBus
import SmartAlarm
import Staging

/// `sleepcycle analyze FILE`: a whole night from a recording → a text summary or the contract JSON.
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Analyse a night's recording: events, breathing, sleep stages, statistics, audio health.",
        discussion: """
            Reads any file libsndfile decodes (WAV, FLAC, Ogg/Vorbis, AIFF; 8–192 kHz; mono or stereo). \
            The JSON output is described in docs/json.md; it is byte-identical for the same input and options.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json }

    @Argument(help: "The recording to analyse.")
    var file: String

    @Option(help: "Output format: text (a night summary) or json (docs/json.md).")
    var format: Format = .text

    @Option(help: "Write the output to this file instead of standard output.")
    var output: String?

    @Option(help: ArgumentHelp("Wall-clock time of the recording's first sample, ISO 8601 (e.g. 2026-01-01T23:00:00Z).",
                               discussion: "Default: 2000-01-01T22:00:00.000Z (fixed, so results are reproducible)."))
    var start: String?

    @Flag(help: "Do not show the progress bar (it is only shown when standard error is a terminal).")
    var noProgress = false

    @Option(help: ArgumentHelp("Replay speed: fast (default), realtime, or a factor such as 60 (60× real time).",
                               valueName: "fast|realtime|factor"))
    var pace: String = "fast"

    /// Decoding on a second thread overlaps it with features + bus, but on the shared 2-core machine it measured
    /// slower and costlier than one thread (docs/0004, "Performance"), so it is opt-in.
    @Flag(help: ArgumentHelp("Decode and resample on a second thread (benchmarking).", visibility: .hidden))
    var decodeThread = false

    @Option(name: .customLong("hr"), help: ArgumentHelp(
        "Heart rate from a wearable: CSV with time and bpm and/or rr_ms columns (docs/0007, section 4).",
        valueName: "file"))
    var heartRateFile: String?

    @Option(name: .customLong("motion"), help: ArgumentHelp(
        "Accelerometer motion: CSV with time and count, or time,x,y,z columns (docs/0007, section 4).",
        valueName: "file"))
    var motionFile: String?

    @Flag(help: ArgumentHelp("Skip sound-event detection (benchmarking its cost).", visibility: .hidden))
    var noDetection = false

    @Flag(help: ArgumentHelp("Group the night's snores by snorer (clustering of the 16-d snore signatures): each "
                             + "snoring event gets a `snorer` number and the output a per-snorer summary."))
    var snorers = false

    @Option(help: ArgumentHelp("Smart alarm time HH:MM (24 h, in the time zone of --start, else UTC): report when "
                               + "the alarm would have fired.", valueName: "HH:MM"))
    var alarm: String?

    @Option(help: ArgumentHelp("Smart-alarm window before the alarm time, e.g. 30m, 45min, 1h (default 30m).",
                               valueName: "duration"))
    var alarmWindow: String?

    func validate() throws {
        if let start, ISO8601Milliseconds.date(from: start) == nil {
            throw ValidationError("--start '\(start)' is not an ISO 8601 time such as 2026-01-01T23:00:00.000Z")
        }
        if replayPace == nil {
            throw ValidationError("--pace '\(pace)' must be fast, realtime or a positive number")
        }
    }

    var replayPace: ReplayPace? {
        switch pace.lowercased() {
        case "fast": return .asFastAsPossible
        case "realtime", "real-time", "1": return .realTime
        default:
            guard let f = Double(pace), f > 0, f.isFinite else { return nil }
            return .speed(f)
        }
    }

    /// Options for the pipeline from the command line: side inputs (--hr, --motion) and the alarm.
    func pipelineOptions(start: Date) throws -> PipelineOptions {
        var options = PipelineOptions()
        options.eventDetection = !noDetection
        if let path = heartRateFile {
            options.sideInputs += try HeartRateFile.load(path: path, start: start).map { .heartRate($0) }
        }
        if let path = motionFile {
            options.sideInputs += try MotionFile.load(path: path, start: start).map { .motion($0) }
        }
        if let alarm {
            let spec = try AlarmSpec.parse(time: alarm, window: alarmWindow, start: start, timeZone: startTimeZone)
            options.alarm = .init(time: spec.alarmTime, windowSeconds: AnalysisClock.seconds(spec.window))
        }
        return options
    }

    /// The time zone written in --start (`Z` or `±HH:MM`), UTC when absent: --alarm is a clock time in it.
    var startTimeZone: TimeZone {
        let utc = TimeZone(identifier: "UTC")!
        guard let start, !start.hasSuffix("Z"), start.count > 6 else { return utc }
        let tail = start.suffix(6)
        guard let sign = tail.first, sign == "+" || sign == "-", tail.dropFirst(3).first == ":",
              let h = Int(tail.dropFirst().prefix(2)), let m = Int(tail.suffix(2)) else { return utc }
        return TimeZone(secondsFromGMT: (sign == "-" ? -1 : 1) * (h * 3600 + m * 60)) ?? utc
    }

    func run() throws {
        let startDate = start.flatMap(ISO8601Milliseconds.date(from:)) ?? FileAnalysis.defaultStart
        let progress = ProgressBar(enabled: !noProgress && isatty(STDERR_FILENO) == 1, label: file)
        var result: AnalysisResult
        do {
            result = try FileAnalysis.analyze(
                path: file, start: startDate, options: try pipelineOptions(start: startDate),
                pace: replayPace ?? .asFastAsPossible, prefetch: decodeThread,
                progress: progress.enabled ? { progress.update(done: $0, total: $1) } : nil,
                warnings: { Self.printError("warning: \($0)") })
        } catch {
            progress.clear()
            Self.printError(Self.oneLine(error, file: file))
            throw ExitCode(1)
        }
        progress.finish()
        if snorers { result = result.labellingSnorers() }
        let text = format == .json ? result.jsonString() : result.textSummary()
        if let output {
            do {
                try text.write(toFile: output, atomically: true, encoding: .utf8)
            } catch {
                Self.printError("\(output): cannot write the output (\(error.localizedDescription))")
                throw ExitCode(1)
            }
        } else {
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }

    /// One line naming the file and the problem.
    static func oneLine(_ error: any Error, file: String) -> String {
        let text: String
        switch error {
        case let e as AudioError: text = e.description
        case let e as StagingError: text = e.description          // names the --hr / --motion file and line
        case let e as AlarmSpec.ParseError: text = e.description  // names the option
        default: text = "\(file): \(error)"
        }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
