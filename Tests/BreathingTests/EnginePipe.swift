import SleepCycleBus
import SleepCycleDSP
@testable import Breathing

/// Feeds a consumer the way the engine's pipeline does: `.audio`, then each channel's `.features`
/// (FeatureAnalyzer 1024/512); before a gap and at the end, the remaining frames.
struct EnginePipe {
    var estimator: BreathingRateEstimator
    let analyzers: [FeatureAnalyzer]
    private(set) var estimates: [BreathingEstimate] = []

    init(channels: Int, configuration: BreathingRateEstimator.Configuration = .init()) throws {
        estimator = BreathingRateEstimator(configuration: configuration)
        analyzers = try (0..<channels).map { try FeatureAnalyzer(channel: $0) }
    }

    /// Returns the rate estimates published by this step.
    @discardableResult
    mutating func audio(start: Int64, _ channels: [[Float]]) -> [BreathingEstimate] {
        var events = estimator.handle(.audio(AudioBlock(start: start, channels: channels)))
        for (c, analyzer) in analyzers.enumerated() {
            if let block = analyzer.process(channels[c]) { events += estimator.handle(.features(block)) }
        }
        return collect(events)
    }

    @discardableResult
    mutating func gap(start: Int64, length: Int64) -> [BreathingEstimate] {
        var events = flushFeatures()
        events += estimator.handle(.gap(AudioGap(start: start, length: length, reason: .missingInput)))
        for a in analyzers { a.reset(startSample: start + length) }
        return collect(events)
    }

    @discardableResult
    mutating func end(at t: Int64) -> [BreathingEstimate] {
        var events = flushFeatures()
        events += estimator.handle(.sessionEnding(at: t))
        return collect(events)
    }

    private mutating func flushFeatures() -> [AnalysisEvent] {
        analyzers.compactMap { $0.finish() }.flatMap { estimator.handle(.features($0)) }
    }

    private mutating func collect(_ events: [AnalysisEvent]) -> [BreathingEstimate] {
        var new: [BreathingEstimate] = []
        for case .breathingRate(let e) in events { new.append(e) }
        estimates += new
        return new
    }
}
