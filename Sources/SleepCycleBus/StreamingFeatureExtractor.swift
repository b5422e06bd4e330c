import SleepCycleDSP

/// A streaming per-frame feature extractor, as `SleepCycleDSP.FeatureAnalyzer` provides: features of every frame
/// completed by the samples given, the same whatever the block sizes. The engine holds one per channel.
public protocol StreamingFeatureExtractor: AnyObject {
    /// Features of the frames completed by `samples` (nil if none).
    func process(_ samples: UnsafeBufferPointer<Float>) -> FeatureBlock?
    /// End padding: features of the last frames of the current contiguous stretch.
    func finish() -> FeatureBlock?
    /// Restarts framing at timeline position `startSample` (after a gap).
    func reset(startSample: Int64)
}

/// Makes the extractor of channel `channel` for frame / hop lengths at 16 kHz.
public typealias FeatureExtractorFactory = @Sendable (_ channel: Int, _ frameLength: Int, _ hopLength: Int) throws
    -> any StreamingFeatureExtractor

extension FeatureAnalyzer: StreamingFeatureExtractor {}
