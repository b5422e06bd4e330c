import Foundation
import SleepCycleBus
import SleepCycleDSP

/// A stretch of sound that rose above the noise floor, with its features, before classification.
public struct CandidateSegment: Sendable {
    /// FeatureBlock channel index (0 = primary).
    public var channel: Int
    public var start: SampleTime
    public var end: SampleTime
    public var features: SegmentFeatures
    /// Un-normalised 16-d signature inputs (see `SnoreSignature`).
    public var rawSignature: [Float]
}

/// Finds candidate segments in one channel's frame features: adaptive noise floor, SNR hysteresis, gap bridging,
/// minimum / maximum duration; then computes each segment's features.
///
/// `enum State`: `.idle` (no segment open) or `.open` (frames since the segment's first frame are buffered,
/// at most `maxSegmentSec` of them: bounded memory). A frame's SNR is the best of four band groups
/// (< 0.5 kHz, 0.5–1.3 kHz, 1.3–3.3 kHz, ≥ 3.3 kHz) of `10 log10(Σ P / Σ N)` — a snore, a word, a cough or a
/// rustle each stand out in at least one group even over a loud fan.
public struct SegmentExtractor: Sendable {
    enum State: Sendable { case idle, open(start: SampleTime, lastActive: Int) }

    public let configuration: DetectorConfiguration
    public let channel: Int
    private var floor: MelNoiseFloor?
    private var hopLength = 512
    private var state: State = .idle
    private var spectra: [Float] = []    // frames × 40 noise-subtracted mel powers of the open segment
    private var snr: [Float] = []
    private var zcr: [Float] = []
    private var rawFlatness: [Float] = []
    private var frameCentres: [SampleTime] = []
    private let extractor = SegmentFeatureExtractor()
    private let groups: [Range<Int>]
    private var power = [Float](repeating: 0, count: FeatureLayout.melCount)

    public init(configuration: DetectorConfiguration = .default, channel: Int = 0) throws {
        try configuration.validate()
        self.configuration = configuration
        self.channel = channel
        let centres = extractor.centresKHz
        func firstBand(_ khz: Float) -> Int { centres.firstIndex(where: { $0 >= khz }) ?? centres.count }
        let cuts = [0, firstBand(0.5), firstBand(1.3), firstBand(3.3), centres.count]
        groups = (0..<4).map { cuts[$0]..<cuts[$0 + 1] }
    }

    private var hopSec: Double { Double(hopLength) / Double(AnalysisClock.sampleRate) }

    /// Steps the segmenter with every frame of `block`; returns the segments that closed.
    public mutating func process(_ block: FeatureBlock) -> [CandidateSegment] {
        if floor == nil || block.hopLength != hopLength {
            hopLength = block.hopLength
            floor = MelNoiseFloor(bands: FeatureLayout.melCount, hopSec: hopSec, configuration: configuration)
        }
        var out: [CandidateSegment] = []
        let bridge = Int((configuration.bridgeGapSec / hopSec).rounded())
        let maxFrames = Int((configuration.maxSegmentSec / hopSec).rounded())
        block.values.withUnsafeBufferPointer { values in
            for i in 0..<block.count {
                let row = UnsafeBufferPointer(rebasing: values[(i * FeatureLayout.stride + FeatureLayout.mel)...]
                    .prefix(FeatureLayout.melCount))
                let centre = block.start + SampleTime(i * block.hopLength)
                zcr.append(values[i * FeatureLayout.stride + FeatureLayout.zeroCrossingRate])
                rawFlatness.append(values[i * FeatureLayout.stride + FeatureLayout.spectralFlatness])
                let frameSNR = step(row, centre: centre)
                switch state {
                case .idle:
                    if frameSNR >= configuration.onThresholdDb {
                        state = .open(start: centre, lastActive: 0)
                    } else {
                        clearBuffers()
                    }
                case .open(let start, let lastActive):
                    let index = frameCentres.count - 1
                    if frameSNR >= configuration.offThresholdDb {
                        state = .open(start: start, lastActive: index)
                        if index + 1 >= maxFrames, let s = close(frames: index + 1) { out.append(s) }
                    } else if index - lastActive > bridge {
                        if let s = close(frames: lastActive + 1) { out.append(s) }
                    }
                }
            }
        }
        return out
    }

    /// Closes any open segment (end of audio, or a gap in the timeline) and restarts the noise floor.
    public mutating func flush() -> [CandidateSegment] {
        var out: [CandidateSegment] = []
        if case .open(_, let lastActive) = state, let s = close(frames: lastActive + 1) { out.append(s) }
        state = .idle
        clearBuffers()
        floor = nil
        return out
    }

    /// Updates the floor with one frame, appends its denoised spectrum to the buffers, returns its SNR (dB).
    private mutating func step(_ row: UnsafeBufferPointer<Float>, centre: SampleTime) -> Float {
        let n = FeatureLayout.melCount
        for b in 0..<n { power[b] = max(row[b], 0) }
        if !floor!.started {
            // The first frame seeds the floor: nothing stands out before anything has been heard.
            power.withUnsafeBufferPointer { floor!.update($0) }
        }
        let floorBefore = floor!.floor
        var best: Float = -.infinity
        for g in groups {
            var p: Float = 0, q: Float = 0
            for b in g { p += power[b]; q += floorBefore[b] }
            best = max(best, 10 * log10f(max(p, 1e-30) / q))
        }
        var excessMean: Float = 0
        for b in 0..<n { excessMean += max(power[b] - floorBefore[b], 0) }
        let eps = 1e-3 * excessMean / Float(n) + 1e-12
        for b in 0..<n { spectra.append(max(power[b] - floorBefore[b], 0) + eps) }
        snr.append(best)
        frameCentres.append(centre)
        power.withUnsafeBufferPointer { floor!.update($0) }
        return best
    }

    /// Emits the segment made of the first `frames` buffered frames, keeps the rest for the next segment.
    private mutating func close(frames: Int) -> CandidateSegment? {
        let n = FeatureLayout.melCount
        let minFrames = max(1, Int((configuration.minSegmentSec / hopSec).rounded()))
        var result: CandidateSegment? = nil
        if frames >= minFrames {
            let (features, signature) = extractor.features(spectra: spectra, snrDb: snr, zcr: zcr,
                                                                  rawFlatness: rawFlatness, frames: frames, hopSec: hopSec)
            let half = SampleTime(hopLength / 2)
            result = CandidateSegment(channel: channel, start: max(0, frameCentres[0] - half),
                                      end: frameCentres[frames - 1] + half, features: features, rawSignature: signature)
        }
        // Frames after the segment (a bridged tail) are dropped; an at-max cut continues with a fresh segment.
        state = .idle
        spectra.removeFirst(min(spectra.count, frames * n))
        snr.removeFirst(min(snr.count, frames))
        zcr.removeFirst(min(zcr.count, frames))
        rawFlatness.removeFirst(min(rawFlatness.count, frames))
        frameCentres.removeFirst(min(frameCentres.count, frames))
        if let lastSNR = snr.last, lastSNR >= configuration.offThresholdDb, let c = frameCentres.first {
            // Trailing frames still active: they start the next segment.
            let lastActive = snr.lastIndex(where: { $0 >= configuration.offThresholdDb }) ?? 0
            state = .open(start: c, lastActive: lastActive)
        } else {
            clearBuffers()
        }
        return result
    }

    private mutating func clearBuffers() {
        spectra.removeAll(keepingCapacity: true)
        snr.removeAll(keepingCapacity: true)
        zcr.removeAll(keepingCapacity: true)
        rawFlatness.removeAll(keepingCapacity: true)
        frameCentres.removeAll(keepingCapacity: true)
    }
}
