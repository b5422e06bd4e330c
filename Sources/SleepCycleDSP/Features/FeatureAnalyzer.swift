/// Streaming frame analysis of one channel: centred framing, then `FrameFeatureExtractor` per frame.
///
/// Framing follows librosa's `center=True, pad_mode='constant'` (librosa 0.11 `stft`): the stream is padded with
/// `frameLength / 2` zeros at both ends and frame `j` covers stream samples `j·hop − frameLength/2 ..<
/// j·hop + frameLength/2`, so it is centred on sample `j·hop`. A stream of `n > 0` samples has `1 + n / hop`
/// frames (librosa's count). Frames are produced as soon as their last sample has arrived, so the result does
/// not depend on how the samples are split into `process` calls; `finish()` pads the end and yields the rest.
///
/// Frame centres stay on the timeline's grid (multiples of `hopLength`) across restarts: after
/// `reset(startSample:)` the first frame is centred on the first grid sample at or after the restart, so once a
/// frame lies wholly after a gap it is the frame an uninterrupted stream has there (a resumed night, a damaged
/// stretch of a file).
///
/// Lifecycle (Essentia-style configure/compute/reset): `init` validates and allocates every buffer; `process`
/// and `finish` allocate only the returned block's storage; `reset(startSample:)` starts a new stream.
public final class FeatureAnalyzer {
    public let frameLength: Int
    public let hopLength: Int
    public let sampleRate: Int
    public let channel: Int

    private let extractor: FrameFeatureExtractor
    private let buffer: UnsafeMutablePointer<Float>
    private let capacity: Int
    /// Valid floats in `buffer` (including the initial zero padding).
    private var filled = 0
    /// Stream position (samples since the stream's start; negative inside the start padding) of `buffer[0]`.
    private var bufferStart: Int64 = 0
    /// Analysis-timeline sample of the stream's first sample.
    private var origin: Int64 = 0
    /// Samples received since the stream started.
    private var received: Int64 = 0
    /// Frames produced since the stream started.
    private var framesDone: Int64 = 0
    /// Stream position of the first frame's centre: from the stream's start to the next grid sample.
    private var phase: Int64 = 0

    /// - Parameters:
    ///   - frameLength: FFT / frame size in samples; even, 64…65536 (each of the 8 band-energy bands then holds
    ///     at least one bin at 16 kHz).
    ///   - hopLength: samples between frame centres, 1…frameLength.
    ///   - sampleRate: Hz of the samples (the analysis rate, 16000).
    ///   - channel: copied into every `FeatureBlock`.
    public init(frameLength: Int = 1024, hopLength: Int = 512, sampleRate: Int = 16000, channel: Int = 0) throws {
        try Self.validate(frameLength: frameLength, hopLength: hopLength, sampleRate: sampleRate)
        self.frameLength = frameLength
        self.hopLength = hopLength
        self.sampleRate = sampleRate
        self.channel = channel
        extractor = FrameFeatureExtractor(frameLength: frameLength, sampleRate: sampleRate)
        capacity = frameLength + max(8 * hopLength, 8192)
        buffer = .allocate(capacity: capacity)
        buffer.initialize(repeating: 0, count: capacity)
        reset(startSample: 0)
    }

    deinit { buffer.deallocate() }

    /// Checks analysis parameters; the error names the parameter, the accepted range and the value found.
    public static func validate(frameLength: Int, hopLength: Int, sampleRate: Int) throws {
        guard frameLength >= 64, frameLength <= 65536, frameLength % 2 == 0 else {
            throw DSPError(.invalidParameter, "frame length must be an even number of samples in 64…65536, got \(frameLength)")
        }
        guard hopLength >= 1, hopLength <= frameLength else {
            throw DSPError(.invalidParameter, "hop length must be in 1…\(frameLength) (the frame length), got \(hopLength)")
        }
        guard sampleRate > 0 else {
            throw DSPError(.invalidParameter, "sample rate must be positive, got \(sampleRate)")
        }
    }

    /// Restarts framing: the next sample given to `process` is timeline sample `startSample` (e.g. after an
    /// audio gap); the first frame is centred on the first multiple of `hopLength` at or after it. Pending samples
    /// and unfinished frames are discarded — call `finish()` first to keep them.
    public func reset(startSample: Int64) {
        origin = startSample
        let hop = Int64(hopLength)
        phase = (hop - startSample % hop) % hop
        received = 0
        framesDone = 0
        let pad = frameLength / 2
        buffer.update(repeating: 0, count: pad)
        filled = pad
        bufferStart = -Int64(pad)
        extractor.resetFlux()
    }

    /// Features of every frame completed by `samples` (nil if none).
    public func process(_ samples: UnsafeBufferPointer<Float>) -> FeatureBlock? {
        guard let base = samples.baseAddress, samples.count > 0 else { return nil }
        let total = received + Int64(samples.count)
        // Frame j (centred on phase + j·hop) is complete once phase + j·hop + frameLength/2 <= total.
        let lastComplete = (total - Int64(frameLength / 2) - phase).floorDiv(Int64(hopLength))
        let count = Int(max(0, lastComplete + 1 - framesDone))
        let firstFrame = framesDone
        var values = [Float]()
        if count > 0 {
            values = [Float](unsafeUninitializedCapacity: count * FeatureLayout.stride) { out, initialized in
                var produced = 0
                feed(base, samples.count, into: out.baseAddress!, produced: &produced, endOfStream: nil)
                precondition(produced == count)
                initialized = count * FeatureLayout.stride
            }
        } else {
            var produced = 0
            feed(base, samples.count, into: nil, produced: &produced, endOfStream: nil)
        }
        guard count > 0 else { return nil }
        return block(firstFrame: firstFrame, count: count, values: values)
    }

    /// Convenience for arrays.
    public func process(_ samples: [Float]) -> FeatureBlock? {
        samples.withUnsafeBufferPointer { process($0) }
    }

    /// Pads the end of the stream with zeros and returns its remaining frames (nil if none). The analyzer then
    /// continues as a new stream starting right after the last sample received.
    public func finish() -> FeatureBlock? {
        defer { reset(startSample: origin + received) }
        guard received > 0, received >= phase else { return nil }
        let totalFrames = 1 + (received - phase) / Int64(hopLength)
        let count = Int(totalFrames - framesDone)
        guard count > 0 else { return nil }
        let firstFrame = framesDone
        let values = [Float](unsafeUninitializedCapacity: count * FeatureLayout.stride) { out, initialized in
            var produced = 0
            let zeros = [Float](repeating: 0, count: frameLength / 2 + hopLength)
            zeros.withUnsafeBufferPointer { z in
                let end = received
                while produced < count {
                    feed(z.baseAddress!, z.count, into: out.baseAddress!, produced: &produced,
                         endOfStream: end, maxFrames: count)
                }
            }
            initialized = count * FeatureLayout.stride
        }
        return block(firstFrame: firstFrame, count: count, values: values)
    }

    /// Whole-signal convenience (tests, tools): features of every frame of `samples`, one block.
    public static func analyze(_ samples: [Float], frameLength: Int = 1024, hopLength: Int = 512,
                               sampleRate: Int = 16000, channel: Int = 0) throws -> FeatureBlock {
        let analyzer = try FeatureAnalyzer(frameLength: frameLength, hopLength: hopLength,
                                           sampleRate: sampleRate, channel: channel)
        let head = analyzer.process(samples)
        let tail = analyzer.finish()
        var values = head?.values ?? []
        values.append(contentsOf: tail?.values ?? [])
        return FeatureBlock(channel: channel, start: 0, frameLength: frameLength, hopLength: hopLength,
                            count: (head?.count ?? 0) + (tail?.count ?? 0), values: values)
    }

    private func block(firstFrame: Int64, count: Int, values: [Float]) -> FeatureBlock {
        FeatureBlock(channel: channel, start: origin + phase + firstFrame * Int64(hopLength), frameLength: frameLength,
                     hopLength: hopLength, count: count, values: values)
    }

    /// Appends `n` samples (real ones, or end padding when `endOfStream` is the stream length) and computes
    /// every frame they complete into `out` (at most `maxFrames` in total).
    private func feed(_ samples: UnsafePointer<Float>, _ n: Int, into out: UnsafeMutablePointer<Float>?,
                      produced: inout Int, endOfStream: Int64?, maxFrames: Int = .max) {
        var used = 0
        let half = Int64(frameLength / 2)
        while used < n && produced < maxFrames {
            let take = min(n - used, capacity - filled)
            (buffer + filled).update(from: samples + used, count: take)
            filled += take
            used += take
            if endOfStream == nil { received += Int64(take) }
            // Offset in `buffer` of the next frame's first sample.
            var offset = Int(phase + framesDone * Int64(hopLength) - half - bufferStart)
            while offset + frameLength <= filled && produced < maxFrames {
                let frameStart = bufferStart + Int64(offset)            // stream position of the frame's sample 0
                let lo = Int(max(0, -frameStart))
                let hi = endOfStream.map { Int(min(Int64(frameLength), $0 - frameStart)) } ?? frameLength
                extractor.compute(frame: buffer + offset, zcrRange: lo..<max(lo, hi),
                                  into: out! + produced * FeatureLayout.stride)
                produced += 1
                framesDone += 1
                offset += hopLength
            }
            // Keep only what later frames need.
            let keepFrom = min(offset, filled)
            if keepFrom > 0 {
                buffer.update(from: buffer + keepFrom, count: filled - keepFrom)
                filled -= keepFrom
                bufferStart += Int64(keepFrom)
            }
        }
    }
}

extension Int64 {
    /// Floor division (rounds toward −∞).
    fileprivate func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
