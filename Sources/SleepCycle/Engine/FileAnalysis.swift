import Foundation
import SleepCycleBus
import SleepCycleAudio

/// Synchronous, non-actor analysis of a whole file on the calling thread (plus one reader thread when
/// `prefetch` is on): what `sleepcycle analyze` runs. Same `AnalysisPipeline` as `SleepAnalysisEngine`.
public enum FileAnalysis {
    /// The default wall-clock time of a recording's first sample when none is given: 2000-01-01T22:00:00.000Z.
    /// Fixed (not the file's modification time, which changes with every copy) so results are reproducible.
    public static let defaultStart = Date(timeIntervalSince1970: 946_764_000)

    /// Analyses the file at `path`.
    /// - Parameters:
    ///   - path: the recording.
    ///   - start: wall-clock time of the first sample (default `defaultStart`).
    ///   - options: side inputs, the alarm and other pipeline settings.
    ///   - utcOffsetSeconds: the offset of the sleeper's clock, for the text summary's clock times.
    ///   - pace: `.asFastAsPossible` for files, `.realTime` to replay like a live microphone.
    ///   - prefetch: decode + resample on a second thread, overlapping features and the bus (two cores; off by
    ///     default: it measured slower on a loaded 2-core machine, see docs/0004).
    ///   - listeners: audio-event listeners, called on the analysing thread.
    ///   - progress: called after every read with the samples analysed so far and the expected total (nil when
    ///     unknown).
    ///   - warnings: called with each one-line warning as the result reports it (`AnalysisResult.warnings`).
    /// - Throws: `AudioError` (one line naming the file and the problem) for unreadable input.
    public static func analyze(path: String, start: Date = defaultStart, utcOffsetSeconds: Int = 0,
                               options: PipelineOptions = .default,
                               pace: ReplayPace = .asFastAsPossible, prefetch: Bool = false,
                               listeners: [any AudioEventListener] = [],
                               progress: ((SampleTime, SampleTime?) -> Void)? = nil,
                               warnings: ((AnalysisWarning) -> Void)? = nil) throws -> AnalysisResult {
        let file = try AudioFileSource(path: path)
        let id = SessionIdentifier.forFile(path: path, start: start)
            ?? SessionIdentifier.forFile(name: path, size: -1, edges: [], start: start)
        return try analyze(file: file, id: id, start: start, utcOffsetSeconds: utcOffsetSeconds, options: options,
                           pace: pace, prefetch: prefetch, listeners: listeners, progress: progress, warnings: warnings)
    }

    /// Analyses an open file source (a path, or standard input) under session id `id`.
    public static func analyze(file: AudioFileSource, id: UUID, start: Date = defaultStart, utcOffsetSeconds: Int = 0,
                               options: PipelineOptions = .default,
                               pace: ReplayPace = .asFastAsPossible, prefetch: Bool = false,
                               listeners: [any AudioEventListener] = [],
                               progress: ((SampleTime, SampleTime?) -> Void)? = nil,
                               warnings: ((AnalysisWarning) -> Void)? = nil) throws -> AnalysisResult {
        try run(file: file, id: id, start: start, utcOffsetSeconds: utcOffsetSeconds, options: options, pace: pace,
                prefetch: prefetch, listeners: listeners, progress: progress, warnings: warnings).result
    }

    /// Analyses a stereo file source for two sleepers (`options.channelSeparation` must be set): one session per
    /// sleeper (`SeparatedAnalysisResult`).
    /// - Throws: `ChannelSeparationError` without the option or for input that is not stereo; `AudioError`.
    public static func analyzeSeparated(file: AudioFileSource, id: UUID, start: Date = defaultStart,
                                        utcOffsetSeconds: Int = 0, options: PipelineOptions,
                                        pace: ReplayPace = .asFastAsPossible, prefetch: Bool = false,
                                        listeners: [any AudioEventListener] = [],
                                        progress: ((SampleTime, SampleTime?) -> Void)? = nil,
                                        warnings: ((AnalysisWarning) -> Void)? = nil) throws -> SeparatedAnalysisResult {
        guard options.channelSeparation != nil else {
            throw ChannelSeparationError("no channel separation was configured (PipelineOptions.channelSeparation)")
        }
        let (result, pipeline) = try run(file: file, id: id, start: start, utcOffsetSeconds: utcOffsetSeconds,
                                         options: options, pace: pace, prefetch: prefetch, listeners: listeners,
                                         progress: progress, warnings: warnings)
        return pipeline.separatedResult(from: result)!
    }

    private static func run(file: AudioFileSource, id: UUID, start: Date, utcOffsetSeconds: Int,
                            options: PipelineOptions, pace: ReplayPace, prefetch: Bool,
                            listeners: [any AudioEventListener], progress: ((SampleTime, SampleTime?) -> Void)?,
                            warnings: ((AnalysisWarning) -> Void)?) throws -> (result: AnalysisResult, pipeline: AnalysisPipeline) {
        let format = file.format
        let info = SessionInfo(id: id, clock: AnalysisClock(start: start), sourceSampleRate: format.sampleRate,
                               channelCount: format.channelCount)
        var source: any AudioSource = file
        if pace != .asFastAsPossible { source = PacedSource(source, pace: pace) }
        if prefetch { source = PrefetchingSource(source) }
        defer { source.close() }
        let expected: SampleTime? = format.frameCount.map {
            SampleTime((Double($0) * Double(AnalysisClock.sampleRate) / Double(max(1, format.sampleRate))).rounded())
        }
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: PathEncoding.display(file.name),
                                            options: options,
                                            listeners: listeners)
        var result = try pipeline.run(source: source, progress: progress.map { p in { p($0, expected) } })
        result.utcOffsetSeconds = utcOffsetSeconds
        for w in result.warnings { warnings?(w) }
        return (result, pipeline)
    }
}

extension AnalysisWarning {
    /// A source's warning (`AudioError` with a `truncated`, `damagedAudio` or `invalidSamples` code).
    public init(audio error: AudioError) {
        self.init(Code(error.code.rawValue), error.description)
    }
}
