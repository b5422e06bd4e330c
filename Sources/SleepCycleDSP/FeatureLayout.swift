/// The column layout of one analysis frame's features, shared by every consumer of `FeatureBlock`.
///
/// One row per frame (see `FeatureBlock.start` for the frame centres on the 16 kHz analysis timeline),
/// `FeatureLayout.stride` floats per row. Definitions follow librosa; see each extractor's doc comment.
public enum FeatureLayout {
    public static let rms = 0
    public static let spectralCentroid = 1      // Hz
    public static let spectralBandwidth = 2     // Hz (p = 2)
    public static let spectralRolloff = 3       // Hz (85 %)
    public static let spectralFlatness = 4      // 0…1
    public static let spectralFlux = 5          // L2 of positive magnitude differences
    public static let zeroCrossingRate = 6      // 0…1
    /// Band energies (mean power per bin, linear) in `bandEdgesHz` bands.
    public static let bandEnergy = 7
    public static let bandEdgesHz: [Float] = [0, 100, 300, 600, 1000, 2000, 4000, 6000, 8000]
    public static var bandCount: Int { bandEdgesHz.count - 1 }
    /// 40 Slaney mel bands (power).
    public static let mel = bandEnergy + 8
    public static let melCount = 40
    /// 13 MFCCs (DCT-II ortho of 10·log10 mel, floored at 1e-10).
    public static let mfcc = mel + 40
    public static let mfccCount = 13
    public static let stride = mfcc + 13
}

/// Features of consecutive frames of one channel, row-major, `FeatureLayout.stride` floats per frame.
public struct FeatureBlock: Sendable {
    /// Channel index (0 = primary/left, 1 = secondary/right).
    public var channel: Int
    /// Sample index (analysis timeline) of the first frame's centre; frame `i` is centred at
    /// `start + i * hopLength`.
    public var start: Int64
    public var frameLength: Int
    public var hopLength: Int
    public var count: Int
    public var values: [Float]

    public init(channel: Int, start: Int64, frameLength: Int, hopLength: Int, count: Int, values: [Float]) {
        precondition(values.count >= count * FeatureLayout.stride)
        self.channel = channel
        self.start = start
        self.frameLength = frameLength
        self.hopLength = hopLength
        self.count = count
        self.values = values
    }

    /// Value of feature column `column` (a `FeatureLayout` index) for frame `i` of this block.
    @inlinable public subscript(frame i: Int, column: Int) -> Float {
        values[i * FeatureLayout.stride + column]
    }
}
