import ArgumentParser
import Foundation
import SleepCycle
import SleepCycleAudio
import SleepCycleBus
import SleepCycleFormats

/// `sleepcycle analyze FILE`: a whole night from a recording → a text summary or the contract JSON.
struct Analyze: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Analyse a night's recording: events, breathing, sleep stages, statistics, audio health.",
        discussion: """
            Reads any file libsndfile decodes (WAV, FLAC, Ogg/Vorbis, AIFF; 8–192 kHz; mono or stereo), or \
            standard input with FILE '-'. The JSON output is described in docs/json.md; it is byte-identical for \
            the same input and options.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, csv, html }

    @Argument(help: "The recording to analyse ('-': standard input).", completion: .file())
    var file: String

    @Option(help: ArgumentHelp("Output format: text (a night summary), json (docs/json.md), csv (a row per 30-s epoch) "
                               + "or html (a self-contained report to open in a browser)."))
    var format: Format = .text

    @Option(help: ArgumentHelp("Write the output to this file ('-': standard output, the default). A device or FIFO "
                               + "is written through, a regular file replaced atomically; an input file is refused.",
                               valueName: "path"), completion: .file())
    var output: String?

    @Option(help: ArgumentHelp("Wall-clock time of the recording's first sample, ISO 8601 with its UTC offset (e.g. "
                               + "2026-01-01T23:00:00+01:00). Clock times you type (--alarm) and read (the text "
                               + "summary) are in that offset.",
                               discussion: "Default: 2000-01-01T22:00:00Z (fixed, so results are reproducible).",
                               valueName: "ISO8601"), transform: OptionValue.startTime)
    var start: ISO8601Time?

    @Flag(help: "Do not show the progress bar (it is only shown when standard error is a terminal).")
    var noProgress = false

    @Option(help: ArgumentHelp("Replay speed: fast (default), realtime, or a factor from 0.01 to 1000000 (× real time).",
                               valueName: "fast|realtime|factor"), transform: OptionValue.pace)
    var pace: ReplayPace = .asFastAsPossible

    /// Decoding on a second thread overlaps it with features + bus, but on the shared 2-core machine it measured
    /// slower and costlier than one thread (docs/0004, "Performance"), so it is opt-in.
    @Flag(help: ArgumentHelp("Decode and resample on a second thread (benchmarking).", visibility: .hidden))
    var decodeThread = false

    @Option(name: .customLong("hr"), help: ArgumentHelp(
        "Heart rate from a wearable: CSV with time and bpm and/or rr_ms columns (docs/cli.md).",
        valueName: "file"), completion: .file())
    var heartRateFile: String?

    @Option(name: .customLong("motion"), help: ArgumentHelp(
        "Accelerometer motion: CSV with time and count, or time,x,y,z columns (docs/cli.md).",
        valueName: "file"), completion: .file())
    var motionFile: String?

    @Flag(help: ArgumentHelp("Skip sound-event detection (benchmarking its cost).", visibility: .hidden))
    var noDetection = false

    @Flag(help: ArgumentHelp("Group the night's snores by snorer (clustering of the 16-d snore signatures): each "
                             + "snoring event gets a `snorer` number and the output a per-snorer summary."))
    var snorers = false

    @Option(help: ArgumentHelp("Smart alarm time HH:MM (24 h, in the offset of --start): report when the alarm would "
                               + "have fired.", valueName: "HH:MM"), transform: OptionValue.clockTime)
    var alarm: ClockTime?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Smart-alarm window before the alarm time, 1 s to 12 h: 30m (default), 45min, 1h, "
                               + "90s; a bare number is minutes.", valueName: "duration"),
            transform: OptionValue.alarmWindow)
    var alarmWindow: Double?

    @Option(name: .customLong("channel-separation"), help: ArgumentHelp(
        "Two sleepers on a stereo recording, one per channel (left: primary): attribute every sound to one of them "
        + "and report a session per sleeper. bedside: a microphone near each sleeper; centered: a closely spaced pair "
        + "between them; strength: no spatial cues (docs/0009-two-sleepers.md).", valueName: "bedside|centered|strength"))
    var channelSeparation: ChannelSeparationConfig.Preset?

    @Option(name: .customLong("channel-separation-config"), help: ArgumentHelp(
        "A JSON file of channel-separation settings (ChannelSeparationConfig's keys, e.g. {\"microphoneDistance\": 1.5}) "
        + "over the preset's (docs/0009-two-sleepers.md).", valueName: "file"), completion: .file())
    var channelSeparationConfig: String?

    @OptionGroup var clipOptions: ClipOptions

    @OptionGroup var diagnostics: DiagnosticOptions

    func validate() throws {
        if alarmWindow != nil && alarm == nil { throw ValidationError("--alarm-window needs --alarm") }
        if channelSeparationConfig != nil && channelSeparation == nil {
            throw ValidationError("--channel-separation-config needs --channel-separation")
        }
        let fromStandardInput = [file, heartRateFile, motionFile].filter { $0 == "-" }.count
        if fromStandardInput > 1 { throw ValidationError("only one input can be read from standard input ('-')") }
    }

    /// Options for the pipeline from the command line: side inputs (--hr, --motion) and the alarm.
    func pipelineOptions(start: ISO8601Time) throws -> PipelineOptions {
        var options = PipelineOptions()
        options.eventDetection = !noDetection
        options.channelSeparation = try channelSeparation.map { preset in
            try channelSeparationConfig.map { try ChannelSeparationConfig.load(path: $0, over: .preset(preset)) }
                ?? .preset(preset)
        }
        if let path = heartRateFile {
            let readings = try WearableFile.read(path: path, origin: start).readings
            options.add(sideInputs: WearMetrics.heartRateSamples(readings, start: start.date).map { .heartRate($0) })
            options.sideInputOrigins[.heartRate] = MessageText.path(path)
        }
        if let path = motionFile {
            // Grouped per second: a 50-Hz accelerometer night is 1.44 million rows, and staging reads their mean
            // per 30-s epoch, which the grouped samples keep.
            let readings = try MotionFile.load(path: path, start: start)
            options.add(sideInputs: MotionSample.binned(readings, every: AnalysisClock.samples(seconds: 1)).map { .motion($0) })
            options.sideInputOrigins[.motion] = MessageText.path(path)
        }
        if let alarm {
            options.alarm = .init(time: alarm.nextOccurrence(after: start.date, utcOffsetSeconds: start.utcOffsetSeconds),
                                  windowSeconds: alarmWindow ?? 1800)
        }
        options.clips = try clipOptions.option()
        return options
    }

    func run() throws {
        diagnostics.bootstrap()
        let inputs = [file] + [heartRateFile, motionFile, clipOptions.clipsKey, channelSeparationConfig].compactMap { $0 }
        let destination = try OutputTarget.resolve(output, inputs: inputs, made: [clipOptions.clips].compactMap { $0 })
        let startTime = start ?? ISO8601Time(date: FileAnalysis.defaultStart)
        let options = try pipelineOptions(start: startTime)
        let progress = ProgressBar(enabled: !noProgress && !diagnostics.quiet && isatty(STDERR_FILENO) == 1,
                                   label: file == "-" ? "standard input" : file)
        var result: AnalysisResult
        var separated: SeparatedAnalysisResult?
        let began = ContinuousClock.now
        do {
            let source = try InputAudio.open(file)
            Diagnostics.log.info("\(MessageText.path(source.file.name)): \(source.file.formatDescription), \(source.file.format.sampleRate) Hz, \(source.file.format.channelCount) channel(s)")
            let channels = source.file.format.channelCount
            if channelSeparation != nil, channels != 2 {
                throw CLIError(.usage, "\(file == "-" ? "standard input" : MessageText.path(file)): --channel-separation "
                               + "needs a stereo recording (one channel per sleeper); it has \(channels) channel(s)")
            }
            let id = source.sessionId(start: startTime.date)
            let report: ((SampleTime, SampleTime?) -> Void)? = progress.enabled ? { progress.update(done: $0, total: $1) } : nil
            if channelSeparation != nil {
                var two = try FileAnalysis.analyzeSeparated(
                    file: source.file, id: id, start: startTime.date, utcOffsetSeconds: startTime.utcOffsetSeconds,
                    options: options, pace: pace, prefetch: decodeThread, progress: report)
                if let id = source.finalSessionId(start: startTime.date) { two = two.withSessionId(id) }
                separated = two
                result = two.session(.primary)
                result.warnings = two.warnings
            } else {
                result = try FileAnalysis.analyze(
                    file: source.file, id: id, start: startTime.date,
                    utcOffsetSeconds: startTime.utcOffsetSeconds, options: options, pace: pace, prefetch: decodeThread,
                    progress: report)
                if let id = source.finalSessionId(start: startTime.date) { result = result.withSessionId(id) }
            }
        } catch {
            progress.clear()
            throw error
        }
        progress.finish()
        for w in result.warnings {
            var line = w.message
            if w.code == .sideInputOutsideRecording, start == nil { line += " (no --start was given)" }
            Diagnostics.log.warning("\(line)")
        }
        let elapsed = ContinuousClock.now - began
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        Diagnostics.log.info("analysed \(String(format: "%.1f", AnalysisClock.seconds(result.analysedSamples) / 60)) min of audio in \(String(format: "%.2f", seconds)) s")
        let clipLinks = ReportFormat.clipLinks(clipsDirectory: clipOptions.clips, output: destination)
        if var two = separated {
            if snorers { two = two.labellingSnorers() }
            try destination.write(ReportFormat.render(two, format: format, clips: clipLinks))
            return
        }
        if snorers { result = result.labellingSnorers() }
        try destination.write(ReportFormat.render(result, format: format, clips: clipLinks))
    }
}
