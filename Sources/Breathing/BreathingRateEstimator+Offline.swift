import SleepCycleBus

extension BreathingRateEstimator {
    /// Runs the estimator over a whole in-memory signal, exactly as the engine's bus would: `.audio` blocks
    /// of `blockSize` samples, then `.sessionEnding`. For evaluation tools and tests.
    ///
    /// - Parameters:
    ///   - channels: 16 kHz samples, one array per channel (1 or 2), all the same length.
    ///   - blockSize: samples per `.audio` block (> 0).
    /// - Returns: the published rate estimates and trace chunks, in publication order.
    public static func run(_ channels: [[Float]], blockSize: Int = 4096,
                           configuration: Configuration = Configuration())
        -> (estimates: [BreathingEstimate], trace: [BreathingTraceChunk]) {
        precondition(blockSize > 0, "blockSize must be positive")
        var estimator = BreathingRateEstimator(configuration: configuration)
        var estimates: [BreathingEstimate] = []
        var trace: [BreathingTraceChunk] = []
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
        var start = 0
        while start < length {
            let end = min(length, start + blockSize)
            let block = AudioBlock(start: SampleTime(start), channels: channels.map { Array($0[start..<end]) })
            collect(estimator.handle(.audio(block)))
            start = end
        }
        collect(estimator.handle(.sessionEnding(at: SampleTime(length))))
        return (estimates, trace)
    }
}
