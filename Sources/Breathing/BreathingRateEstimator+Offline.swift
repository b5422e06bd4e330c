import Foundation
import SleepCycleBus
import SleepCycleDSP

extension BreathingRateEstimator {
    /// Runs the estimator over a whole in-memory signal, exactly as the engine's pipeline does: for each
    /// block of `blockSize` samples an `.audio` event then, per channel, the `.features` of the frames it
    /// completed (`FeatureAnalyzer`, frame 1024 / hop 512); at the end the remaining frames and
    /// `.sessionEnding`. For evaluation tools and tests.
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
        var start = 0
        while start < length {
            let end = min(length, start + blockSize)
            let block = AudioBlock(start: SampleTime(start), channels: channels.map { Array($0[start..<end]) })
            step((.audio(block)))
            for (c, analyzer) in analyzers.enumerated() {
                if let features = block.channels[c].withUnsafeBufferPointer({ analyzer.process($0) }) {
                    step((.features(features)))
                }
            }
            start = end
        }
        for analyzer in analyzers {
            if let features = analyzer.finish() { step((.features(features))) }
        }
        step((.sessionEnding(at: SampleTime(length))))
        return (estimates, trace, Double(ticks) / Double(CLOCKS_PER_SEC))
    }
}
