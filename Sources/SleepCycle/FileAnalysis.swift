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
    ///   - start: wall-clock time of the first sample (default `defaultStart`).
    ///   - pace: `.asFastAsPossible` for files, `.realTime` to replay like a live microphone.
    ///   - prefetch: decode + resample on a second thread, overlapping features and the bus (two cores; off by
    ///     default: it measured slower on a loaded 2-core machine, see docs/0004).
    ///   - warnings: called with one-line messages about problems that did not stop the analysis.
    /// - Throws: `AudioError` (one line naming the file and the problem) for unreadable input.
    public static func analyze(path: String, start: Date = defaultStart, options: PipelineOptions = .default,
                               pace: ReplayPace = .asFastAsPossible, prefetch: Bool = false,
                               listeners: [any AudioEventListener] = [],
                               progress: ((SampleTime, SampleTime?) -> Void)? = nil,
                               warnings: ((String) -> Void)? = nil) throws -> AnalysisResult {
        let file = try AudioFileSource(path: path)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        let name = (path as NSString).lastPathComponent
        let id = SessionIdentifier.forFile(name: name, size: size, start: start)
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
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: path, options: options,
                                            listeners: listeners)
        let result = try pipeline.run(source: source, progress: progress.map { p in { p($0, expected) } })
        for w in file.warnings { warnings?(w.description) }
        return result
    }
}
