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
    /// How exactly the segment repeats the sound one, two and three beat periods before it (`EchoTracker`; near 1:
    /// the next tick of a clock).
    public var echo: Float = 0
    /// Decided none by the `SegmentScreen` from the spectral summaries alone: the voicing and shape values of
    /// `features` are zeros (not computed) and the classifier is not asked.
    public var screened = false
    /// The segment's noise-subtracted mel spectra in dB (`frames × 40`, `10·log10 S`), kept only when the extractor's
    /// `keepsSpectra` is set (developer tools: `sleepcycle detect-dev segment-features --spectra`).
    public var spectraDb: [Float]? = nil
}

/// Finds candidate segments in one channel's frame features: adaptive noise floor, SNR hysteresis, gap bridging,
/// minimum / maximum duration, and a split where the level falls `splitDropDb` below the segment's peak for
/// longer than the bridge gap (a snore and the audible breath after it become two segments); then computes each
/// segment's features.
///
/// `enum State`: `.idle` (no segment open) or `.open` (frames since the segment's first frame are buffered,
/// at most `maxSegmentSec` of them: bounded memory). A frame's SNR is the best of four band groups
/// (< 0.5 kHz, 0.5–1.3 kHz, 1.3–3.3 kHz, ≥ 3.3 kHz) of `10 log10(Σ P / Σ N)` — a snore, a word, a cough or a
/// rustle each stand out in at least one group even over a loud fan.
public struct SegmentExtractor: Sendable {
    enum State: Sendable { case idle, open(start: SampleTime, lastActive: Int, peak: Float) }

    public let configuration: DetectorConfiguration
    public let channel: Int
    /// Not optional (reading through an optional copied the floor's state every frame); `floorStale` marks it
    /// for re-creation at the next block (at the start, after `flush()`, or when the hop length changes).
    private var floor: MelNoiseFloor
    private var floorStale = true
    private var hopLength = 512
    private var state: State = .idle
    /// Whether closed segments carry their denoised spectra (`CandidateSegment.spectraDb`; developer tools only).
    public var keepsSpectra = false
    /// Decides plainly-none segments from their spectral summaries, before their voicing and shape are computed
    /// (`CandidateSegment.screened`); nil: every segment gets all its features (training, custom classifiers).
    public var screen: SegmentScreen?

    /// Start of the segment that is open now, as it will be reported (its first frame's centre less half a hop;
    /// nil when none is open): the piece after a cut at `maxSegmentSec` starts exactly where the last one ended.
    public var openSince: SampleTime? {
        if case .open(let start, _, _) = state { return max(0, start - SampleTime(hopLength / 2)) }
        return nil
    }
    private var spectra: [Float] = []    // frames × 40 noise-subtracted mel powers of the open segment
    private var snr: [Float] = []
    private var zcr: [Float] = []
    private var rawFlatness: [Float] = []
    private var frameCentres: [SampleTime] = []
    private let extractor = SegmentFeatureExtractor()
    private let groups: [Range<Int>]
    private var power = [Float](repeating: 0, count: FeatureLayout.melCount)
    private var frame = [Float](repeating: 0, count: FeatureLayout.melCount)   // the denoised spectrum of a step
    private var levelsDb: [Float] = []   // the closing segment's levels in dB (`spectralSummaries`; reused)
    /// The channel's recent raw samples (for the voicing features at segment close) and their analyser.
    private var ring = AudioRing()
    private let voicing = VoicingAnalyzer()
    private var echo = EchoTracker()

    public init(configuration: DetectorConfiguration = .default, channel: Int = 0) throws {
        try configuration.validate()
        self.init(validated: configuration, channel: channel)
    }

    /// For a configuration already validated (the detector validates its own once, in its initializer).
    init(validated configuration: DetectorConfiguration, channel: Int) {
        self.configuration = configuration
        self.channel = channel
        let centres = extractor.centresKHz
        func firstBand(_ khz: Float) -> Int { centres.firstIndex(where: { $0 >= khz }) ?? centres.count }
        let cuts = [0, firstBand(0.5), firstBand(1.3), firstBand(3.3), centres.count]
        groups = (0..<4).map { cuts[$0]..<cuts[$0 + 1] }
        precondition(cuts.first == 0 && cuts.last == FeatureLayout.melCount && zip(cuts, cuts.dropFirst()).allSatisfy(<=),
                     "the SNR band groups must tile the mel bands in order")
        floor = MelNoiseFloor(bands: FeatureLayout.melCount, hopSec: Double(hopLength) / Double(AnalysisClock.sampleRate),
                              configuration: configuration)
    }

    /// Feeds the channel's raw 16-kHz samples starting at `start`. Call it with each audio block BEFORE the
    /// feature block of the same samples (the engine's order), so a closing segment finds its audio in the ring.
    /// Without audio (features only) every voicing frame counts as unvoiced.
    public mutating func append(audio samples: UnsafeBufferPointer<Float>, start: SampleTime) {
        ring.append(samples, at: start)
    }

    /// The same for an array the caller hands over (the engine's `AudioBlock` channels): the ring holds the array
    /// itself, without copying its samples (`AudioRing`).
    public mutating func append(audio samples: [Float], start: SampleTime) {
        ring.append(samples, at: start)
    }

    private var hopSec: Double { Double(hopLength) / Double(AnalysisClock.sampleRate) }

    /// Steps the segmenter with every frame of `block`; returns the segments that closed.
    public mutating func process(_ block: FeatureBlock) -> [CandidateSegment] {
        if floorStale || block.hopLength != hopLength {
            floorStale = false
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
                let idle: Bool
                if case .idle = state { idle = true } else { idle = false }
                let frameSNR = step(row, centre: centre, idle: idle)
                // Buffers are empty whenever the state is idle (every way into `.idle` clears them), so a quiet
                // frame in `.idle`, which would be buffered and cleared at once, is not buffered at all.
                if idle, frameSNR < configuration.onThresholdDb {
                    assert(snr.isEmpty && spectra.isEmpty, "buffers must be empty while idle")
                    continue
                }
                appendFrame(snr: frameSNR, centre: centre, zcr: values[i * FeatureLayout.stride + FeatureLayout.zeroCrossingRate],
                            rawFlatness: values[i * FeatureLayout.stride + FeatureLayout.spectralFlatness])
                switch state {
                case .idle:
                    state = .open(start: centre, lastActive: 0, peak: frameSNR)
                case .open(let start, let lastActive, let peak):
                    let index = frameCentres.count - 1
                    // A frame counts as active above the off threshold and within `splitDropDb` of the segment's
                    // peak: a snore followed by audible breathing, or two coughs, become separate segments.
                    let peak = max(peak, frameSNR)
                    if frameSNR >= max(configuration.offThresholdDb, peak - configuration.splitDropDb) {
                        state = .open(start: start, lastActive: index, peak: peak)
                        if index + 1 >= maxFrames, let s = close(frames: index + 1) { out.append(s) }
                    } else if index - lastActive > bridge {
                        if let s = close(frames: lastActive + 1) { out.append(s) }
                    } else {
                        state = .open(start: start, lastActive: lastActive, peak: peak)
                    }
                }
            }
        }
        return out
    }

    /// How exactly the segment that starts at `start` is repeated one, two and three beat periods after it, from
    /// the frames heard so far (0 until those have been heard, and after `flush()`): the first ticks of a clock,
    /// before it has a past to echo. Asked when the context stage decides the segment, ≥ 10 s after its end.
    public mutating func echoAfter(start: SampleTime) -> Float {
        echo.strength(after: start == 0 ? 0 : start + SampleTime(hopLength / 2), hop: hopLength)
    }

    /// Closes any open segment (end of audio, or a gap in the timeline) and restarts the noise floor.
    public mutating func flush() -> [CandidateSegment] {
        var out: [CandidateSegment] = []
        if case .open(_, let lastActive, _) = state, let s = close(frames: lastActive + 1) { out.append(s) }
        state = .idle
        clearBuffers()
        floorStale = true
        echo.reset()
        return out
    }

    /// Updates the floor with one frame and returns its SNR (dB); leaves its denoised spectrum in `frame` (for
    /// `appendFrame`) unless `idle` and the SNR is under the on threshold (a frame that is not buffered: most of a
    /// night's frames, so their spectrum is not formed).
    ///
    /// Works on raw buffers (the floor is read in place, no copy of it per frame) with the same arithmetic in the
    /// same order as the definitions: band sums in ascending band order.
    private mutating func step(_ row: UnsafeBufferPointer<Float>, centre: SampleTime, idle: Bool) -> Float {
        let n = FeatureLayout.melCount
        var total: Float = 0
        power.withUnsafeMutableBufferPointer { p in
            for b in 0..<n { p[b] = max(row[b], 0); total += p[b] }
        }
        echo.append(power: total, centre: centre)
        if !floor.started {
            // The first frame seeds the floor: nothing stands out before anything has been heard.
            power.withUnsafeBufferPointer { floor.update($0) }
        }
        let onThreshold = configuration.onThresholdDb
        let best: Float = power.withUnsafeBufferPointer { p in
            floor.withFloor { f in
                var bestRatio: Float = 0   // the best group's power ratio; one logarithm per frame (log10 is monotonic)
                for g in groups {
                    var sp: Float = 0, sq: Float = 0
                    for b in g { sp += p[b]; sq += f[b] }
                    bestRatio = max(bestRatio, max(sp, 1e-30) / sq)
                }
                let snr = 10 * log10f(bestRatio)
                if idle, snr < onThreshold { return snr }
                frame.withUnsafeMutableBufferPointer { out in
                    var excessMean: Float = 0
                    for b in 0..<n {
                        let excess = max(p[b] - f[b], 0)
                        out[b] = excess
                        excessMean += excess
                    }
                    let eps = 1e-3 * excessMean / Float(n) + 1e-12
                    for b in 0..<n { out[b] += eps }
                }
                return snr
            }
        }
        power.withUnsafeBufferPointer { floor.update($0) }
        return best
    }

    /// Buffers the frame `step` just analysed.
    private mutating func appendFrame(snr frameSNR: Float, centre: SampleTime, zcr frameZCR: Float, rawFlatness flatness: Float) {
        zcr.append(frameZCR)
        rawFlatness.append(flatness)
        spectra.append(contentsOf: frame)
        snr.append(frameSNR)
        frameCentres.append(centre)
    }

    /// Emits the segment made of the first `frames` buffered frames, keeps the rest for the next segment.
    private mutating func close(frames: Int) -> CandidateSegment? {
        let minFrames = max(1, Int((configuration.minSegmentSec / hopSec).rounded()))
        var result: CandidateSegment? = nil
        if frames >= minFrames {
            let half = SampleTime(hopLength / 2)
            let start = max(0, frameCentres[0] - half), end = frameCentres[frames - 1] + half
            let spectral = extractor.spectralSummaries(spectra: spectra, snrDb: snr, zcr: zcr, rawFlatness: rawFlatness,
                                                       frames: frames, hopSec: hopSec, levelsDb: &levelsDb)
            var values = spectral.values
            let screened = screen.map { s in values.withUnsafeBufferPointer { s.isPlainlyNone($0) } } ?? false
            if screened {
                // Plainly none: the voicing and shape values are not computed (zeros; no classifier reads them).
                values += repeatElement(0, count: SegmentFeatures.count - values.count)
            } else {
                let pitch = SegmentVoicing.frames(voicing, ring: ring, start: start, end: end)
                values += SegmentVoicing.summary(pitch, durationSec: spectral.durationSec)
                values += SegmentShape.features(spectra: spectra, frames: frames, bands: FeatureLayout.melCount,
                                                hopSec: hopSec, levelsDb: levelsDb)
            }
            result = CandidateSegment(channel: channel, start: start, end: end,
                                      features: SegmentFeatures(values: values, durationSec: spectral.durationSec),
                                      rawSignature: spectral.signature,
                                      echo: echo.strength(firstFrameBack: frameCentres.count - 1), screened: screened)
            if keepsSpectra { result?.spectraDb = Array(levelsDb.prefix(frames * FeatureLayout.melCount)) }
        }
        // Frames after the segment (a bridged tail) are dropped; an at-max cut continues with a fresh segment.
        state = .idle
        dropFirst(frames)
        if let onset = snr.firstIndex(where: { $0 >= configuration.onThresholdDb }) {
            // The bridged tail after a split holds a new onset (e.g. loud breathing after a snore): it starts the
            // next segment there.
            dropFirst(onset)
            let lastActive = snr.lastIndex(where: { $0 >= configuration.offThresholdDb }) ?? 0
            state = .open(start: frameCentres[0], lastActive: lastActive, peak: snr.max() ?? 0)
        } else {
            clearBuffers()
        }
        return result
    }

    private mutating func dropFirst(_ frames: Int) {
        spectra.removeFirst(min(spectra.count, frames * FeatureLayout.melCount))
        snr.removeFirst(min(snr.count, frames))
        zcr.removeFirst(min(zcr.count, frames))
        rawFlatness.removeFirst(min(rawFlatness.count, frames))
        frameCentres.removeFirst(min(frameCentres.count, frames))
    }

    private mutating func clearBuffers() {
        spectra.removeAll(keepingCapacity: true)
        snr.removeAll(keepingCapacity: true)
        zcr.removeAll(keepingCapacity: true)
        rawFlatness.removeAll(keepingCapacity: true)
        frameCentres.removeAll(keepingCapacity: true)
    }
}
