import ArgumentParser
import Foundation
import HeartSession
import SleepCycle
import SleepCycleFormats

/// `sleepcycle hr-session FILE`: a heart session over a wearable's recording, replayed through the session engine's
/// file provider, as JSON lines or a table for people (docs/0011).
struct HRSession: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr-session",
        abstract: "A heart session over a wearable's heart rate: HR and HRV frames over a sliding window (JSON lines).",
        discussion: """
            FILE is CSV (time in seconds or ISO 8601, and rr_ms and/or bpm, or the columns of a Fitbit or Apple \
            Health CSV export; docs/cli.md), JSON lines of the wearable schema ({"timestamp", "metrics": {"hr"}, \
            "rrIntervals": [ms]}), Fitbit's heart_rate JSON export, Apple Health's export.xml, or a plain RR list (one \
            interval in ms per line, as Polar's RR export). Prints session_started, a session_frame every emit \
            interval, biosignal_frame with --include-raw, and session_summary; --format text prints a table.
            """)

    @Argument(help: "The wearable's recording: CSV, JSON lines, Fitbit JSON, Apple Health XML or an RR list.",
              completion: .file())
    var file: String

    @Option(help: "Session mode: focus (default) or breathing.")
    var mode: SessionMode = .focus

    @Option(parsing: .unconditional,
            help: ArgumentHelp("The sliding window of each frame (default 60s).", valueName: "duration"),
            transform: { try DurationText.parse($0, bareUnit: .seconds, range: 5...3600).seconds })
    var window: Double = 60

    @Option(parsing: .unconditional,
            help: ArgumentHelp("A frame every this often (default 5s).", valueName: "duration"),
            transform: { try DurationText.parse($0, bareUnit: .seconds, range: 0.5...3600).seconds })
    var emitInterval: Double = 5

    @Flag(help: "Also print the raw readings (biosignal_frame), every second.")
    var includeRaw = false

    @Flag(name: .customLong("no-artifact-correction"),
          help: "Take the RR intervals as NN intervals as they are (to compare with a library run on the same series).")
    var noArtifactCorrection = false

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, text }
    @Option(help: "json (JSON lines, default) or text (a table for people).")
    var format: Format = .json

    func validate() throws {
        if emitInterval > window { throw ValidationError("--emit-interval must not be longer than --window") }
    }

    func run() throws {
        let contents = try WearableFile.read(path: file, origin: nil)
        let engine = SessionEngine()
        let config = SessionConfig(mode: mode, profile: ComputeProfile(windowSec: window, emitIntervalSec: emitInterval),
                                   includeRaw: includeRaw && format == .json, correctsArtefacts: !noArtifactCorrection)
        let provider = ReplayBiosignalProvider(samples: WearMetrics.biosignalSamples(contents.readings))
        // Each event is written as it comes (a long export has a frame every emit interval of its whole span):
        // memory stays that of the output buffer, and a reader that goes away stops the writing.
        let out = OutputByteWriter(fd: STDOUT_FILENO)
        let lock = NSLock()
        var table = TableState(source: contents.format)
        var failure: OutputError?
        let id = try engine.start(config: config, provider: provider) { event in
            lock.withLock {
                guard failure == nil else { return }
                do {
                    switch format {
                    case .json: try out.append(event.jsonLine + "\n")
                    case .text: for line in table.lines(event) { try out.append(line + "\n") }
                    }
                } catch let error as OutputError { failure = error } catch {}
            }
        }
        try engine.wait()
        try engine.stop(sessionId: id)
        do {
            if let failure = lock.withLock({ failure }) { throw failure }
            try out.flush()
        } catch let error as OutputError {
            throw error.brokenPipe ? CLIError(.brokenPipe, "") : CLIError(.ioError, error.message)
        }
    }

    /// The session for people, one event at a time: a row per frame (time from the first reading), then the
    /// summary.
    struct TableState {
        let source: WearMetrics.Source
        var origin: Int64 = 0

        init(source: WearMetrics.Source) { self.source = source }

        mutating func lines(_ event: SessionEvent) -> [String] {
            func f(_ x: Double?, _ width: Int, _ decimals: Int = 1) -> String {
                let s = x.map { String(format: "%.\(decimals)f", $0) } ?? "–"
                return String(repeating: " ", count: max(0, width - s.count)) + s
            }
            func clock(_ ms: Int64) -> String {
                let s = Int(ms / 1000)
                return String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
            }
            switch event {
            case .started(_, let mode, let profile, let start):
                origin = start
                return ["heart session (\(mode.rawValue)), \(source.rawValue) readings, window \(Int(profile.windowSec)) s, "
                        + "a frame every \(profile.emitIntervalSec) s",
                        "   end      HR bpm  RMSSD ms  SDNN ms  pNN50 %  beats  artefacts"]
            case .frame(_, let m):
                return ["\(clock(m.endMs - origin).leftPadded(7))  \(f(m.hrMeanBpm, 7))  \(f(m.rmssdMs, 8))  "
                        + "\(f(m.hrSdnnMs, 7))  \(f(m.pnn50, 7))  \(String(m.sampleCount).leftPadded(5))  "
                        + "\(String(m.artifactCount).leftPadded(9))"]
            case .summary(_, let m):
                var out = ["", "summary over \(clock(m.endMs - m.startMs)) (\(m.sampleCount) \(m.meanNNMs != nil ? "beats" : "readings"), "
                           + "\(m.artifactCount) artefacts corrected)"]
                out.append("  heart rate   \(f(m.hrMeanBpm, 0)) bpm (SD of NN \(f(m.hrSdnnMs, 0)) ms)")
                out.append("  RMSSD        \(f(m.rmssdMs, 0)) ms, pNN50 \(f(m.pnn50, 0)) %, mean NN \(f(m.meanNNMs, 0)) ms")
                out.append("  stress index \(f(m.baevskySI, 0)) (Baevsky)")
                if m.lfHf != nil {
                    out.append("  LF / HF      \(f(m.lfMs2, 0)) / \(f(m.hfMs2, 0)) ms², ratio \(f(m.lfHf, 0, 2))")
                }
                if m.rmssdMs == nil {
                    out.append("  (HRV needs at least \(HRV.minimumIntervals) beat-to-beat RR intervals; "
                               + "heart-rate readings alone give only the mean)")
                }
                return out
            case .biosignal:
                return []
            }
        }
    }
}

extension SessionMode: ExpressibleByArgument {}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
