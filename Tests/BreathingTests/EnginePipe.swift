import SleepCycleBus
import SleepCycleDSP
@testable import Breathing

/// Feeds the estimator through `AnalysisFeeder`, the engine's own driver (FeatureAnalyzer 1024/512), and keeps
/// the rate estimates each step publishes.
struct EnginePipe {
    /// The estimator and what it published, stepped by the feeder.
    private final class Sink {
        var estimator: BreathingRateEstimator
        var estimates: [BreathingEstimate] = []
        var fresh: [BreathingEstimate] = []
        init(_ estimator: BreathingRateEstimator) { self.estimator = estimator }
        func step(_ event: AnalysisEvent) {
            for case .breathingRate(let e) in estimator.handle(event) { fresh.append(e); estimates.append(e) }
        }
        func take() -> [BreathingEstimate] { defer { fresh = [] }; return fresh }
    }

    private let sink: Sink
    private let feeder: AnalysisFeeder
    var estimates: [BreathingEstimate] { sink.estimates }

    init(channels: Int, configuration: BreathingRateEstimator.Configuration = .init()) throws {
        let sink = Sink(BreathingRateEstimator(configuration: configuration))
        self.sink = sink
        feeder = AnalysisFeeder(extractors: try (0..<channels).map { try FeatureAnalyzer(channel: $0) }) { sink.step($0) }
    }

    /// Returns the rate estimates published by this step.
    @discardableResult
    func audio(start: Int64, _ channels: [[Float]]) -> [BreathingEstimate] {
        feeder.audio(AudioBlock(start: start, channels: channels))
        return sink.take()
    }

    @discardableResult
    func gap(start: Int64, length: Int64) -> [BreathingEstimate] {
        feeder.gap(AudioGap(start: start, length: length, reason: .missingInput))
        return sink.take()
    }

    /// Ends the session where the audio ends (`t` must be that position).
    @discardableResult
    func end(at t: Int64) -> [BreathingEstimate] {
        precondition(t == feeder.position, "the session ends where the audio ends")
        feeder.end()
        return sink.take()
    }
}
