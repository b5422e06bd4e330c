import Foundation
import SleepCycleBus
import SleepCycleDSP

extension BreathingRateEstimator {
    /// Runs the estimator over a whole in-memory signal, fed by `AnalysisFeeder` exactly as the engine's pipeline
    /// feeds it (blocks of `blockSize` samples; `FeatureAnalyzer` frame 1024 / hop 512). For evaluation tools and
    /// tests.
    ///
    /// - Parameters:
    ///   - channels: 16 kHz samples, one array per channel (1 or 2), all the same length.
    ///   - blockSize: samples per `.audio` block (> 0).
    /// - Returns: the published rate estimates and trace chunks, in publication order, and the CPU time
    ///   spent inside the estimator (feature extraction excluded), in seconds.
    public static func run(_ channels: [[Float]], blockSize: Int = 4096,
                           configuration: Configuration = Configuration())
        -> (estimates: [BreathingEstimate], trace: [BreathingTraceChunk], estimatorCPUSec: Double) {
        precondition(blockSize > 0, "blockSize must be positive")
        var estimator = BreathingRateEstimator(configuration: configuration)
        var estimates: [BreathingEstimate] = []
        var trace: [BreathingTraceChunk] = []
        var ticks: clock_t = 0
        func step(_ event: AnalysisEvent) {
            let t0 = clock()
            let events = estimator.handle(event)
            ticks += clock() - t0
            collect(events)
        }
        func collect(_ events: [AnalysisEvent]) {
            for event in events {
                switch event {
                case .breathingRate(let e): estimates.append(e)
                case .breathingTrace(let t): trace.append(t)
                default: break
                }
            }
        }
        let length = channels.first?.count ?? 0
        let analyzers = configuration.envelopeSource == .features
            ? channels.indices.compactMap { try? FeatureAnalyzer(frameLength: 1024, hopLength: 512, channel: $0) }
            : []
        let feeder = AnalysisFeeder(extractors: analyzers) { step($0) }
        var start = 0
        while start < length {
            let end = min(length, start + blockSize)
            feeder.audio(AudioBlock(start: SampleTime(start), channels: channels.map { Array($0[start..<end]) }))
            start = end
        }
        feeder.end()
        return (estimates, trace, Double(ticks) / Double(CLOCKS_PER_SEC))
    }
}
