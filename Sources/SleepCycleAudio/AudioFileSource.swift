// Streams an audio file or stream (libsndfile, libFLAC, libvorbisfile) as 16 kHz analysis blocks per channel.
import CSndFile
import Foundation
import SleepCycleDSP

/// An `AudioSource` reading a file or stream: WAV (PCM 8/16/24/32-bit, float), FLAC, Ogg Vorbis, AIFF and the other
/// libsndfile formats, at any rate 8–192 kHz, resampled to the 16 kHz analysis rate (`Resampler`).
///
/// * Native FLAC is decoded with libFLAC (`FLACDecoder`), Ogg Vorbis with libvorbisfile (`VorbisDecoder`), the rest
///   with libsndfile (`SndFileDecoder`); the first bytes decide (`InputKind.sniff`).
/// * Reads return `.audio(start:channels:)` blocks of exactly `blockFrames` analysis-rate samples per channel
///   (the last block of a run of audio may be shorter), contiguous from sample 0, then `.end`. Total length per
///   channel is round(frames · 16000 / rate). Memory is bounded by the block size, whatever the file's length.
/// * Damaged data the decoder can resynchronise past (a FLAC frame, an Ogg page) becomes a
///   `.gap(start:length:reason: .missingInput)`: source frame `f` after the damage lands at analysis sample
///   round(f · 16000 / rate), exactly where it would be in an undamaged file. Each run of audio between gaps is
///   resampled on its own (flushed at the gap, restarted after it) and trimmed or zero-padded by at most a sample to
///   its mapped length, so audio and gaps tile the timeline. One `.damagedData` warning summarises the gaps.
/// * Samples that cannot be audio (NaN, ±Inf, beyond ±`SampleSanitizer.bound`) are replaced by 0 before resampling
///   and counted (`invalidSampleCount`); one `.invalidSamples` warning summarises them.
/// * Channels follow `ChannelRule`: mono stays mono, stereo stays two channels, more channels keep front L/R.
///   `ChannelRule.downmixToMono` mixes a block to mono for callers that want one channel.
/// * Bad input throws `AudioError` with a one-line description (missing, unreadable, not audio, unsupported
///   encoding, empty, unsupported rate, too many channels).
/// * Truncation (the header declares more frames than the file holds): by default the frames present are analysed
///   and an `AudioError` with code `.truncated` is added to `warnings` (a cut-off night is still worth analysing);
///   with `truncation: .fail` the read that discovers it throws that error instead.
public final class AudioFileSource: AudioSource {
    /// What to do when the file holds fewer frames than its header declares.
    public enum TruncationPolicy: Sendable { case analyseAvailable, fail }

    public static let analysisRate = 16_000

    public let format: SourceFormat
    public var name: String { path }
    /// The path, or the name given to a file descriptor (e.g. "-" or "standard input").
    public let path: String
    /// The input is a pipe or another stream that cannot seek (some libsndfile formats cannot be read from one).
    private let isStream: Bool
    /// Analysis-rate samples per channel in each `.audio` block (the last of a run may be shorter).
    public let blockFrames: Int
    /// Container and encoding as libsndfile names them, e.g. "WAV (Microsoft), Signed 16 bit PCM".
    public let formatDescription: String
    /// Source channel indices feeding analysis channels 0 (and 1).
    public let sourceChannels: [Int]
    /// Problems that did not stop the analysis, one-line `AudioError`s: `.truncated`, `.damagedData`,
    /// `.invalidSamples`. Complete after `.end`.
    public private(set) var warnings: [AudioError] = []
    /// Source frames of audio decoded so far (gaps not included).
    public private(set) var framesDecoded: Int64 = 0
    /// Samples (over the analysed channels) replaced by silence because they were NaN, ±Inf or beyond
    /// ±`SampleSanitizer.bound`.
    public private(set) var invalidSampleCount: Int64 = 0
    /// Stream time (seconds from the start) of the first such sample, nil if none.
    public private(set) var firstInvalidSampleTime: Double?
    /// Stretches of damaged data replaced by gaps, their total length in source frames, and the stream time
    /// (seconds) where the first begins.
    public private(set) var damagedStretchCount = 0
    public private(set) var damagedFrameCount: Int64 = 0
    public private(set) var firstDamageTime: Double?

    private let truncation: TruncationPolicy
    private var tap: SourceRateTap?
    private var input: InputFile?
    private var decoder: (any AudioDecoder)?
    private let rate: Int
    private let resamplers: [Resampler]
    private let framesPerRead: Int
    private let planar: [UnsafeMutablePointer<Float>]
    private var pending: [[Float]]
    /// Frames of `pending` already returned by `read()` (compacted away before the next decode).
    private var pendingHead = 0
    /// Analysis-rate position of `pending[pendingHead]`.
    private var nextStart: Int64 = 0
    /// Source position (frames since the start, gaps included) where the current run of audio began, and the
    /// source position reached by decoding.
    private var runStart: Int64 = 0
    private var sourcePosition: Int64 = 0
    /// Analysis-rate samples the current run has put into `pending`.
    private var runProduced: Int64 = 0
    /// Leading outputs of the current run still to drop (the resampler's lead-in, see `startRun`).
    private var runDiscard = 0
    /// Source frames per period of the rate ratio: rate / gcd(rate, 16000) (441 at 44.1 kHz, 3 at 48 kHz).
    private let gridPeriod: Int64
    /// The current run is finished (flushed); `pending` drains, then `queuedGap` (if any) is returned.
    private var runEnded = false
    private var queuedGap: (start: Int64, length: Int64)?
    private var inputDone = false
    private var closed = false
    /// Set when a decoder reported a gap reaching beyond `maxPosition`; decoding stopped there.
    private var implausiblePosition: AudioError?
    /// Largest source position accepted (2^40 frames: 66 days at 192 kHz), which keeps every position
    /// computation far from overflow.
    static let maxPosition: Int64 = 1 << 40

    /// Opens the file at `path`.
    public convenience init(path: String, blockFrames: Int = 16_384,
                            truncation: TruncationPolicy = .analyseAvailable) throws(AudioError) {
        guard blockFrames > 0 else {
            throw AudioError(.invalidParameter, path: path, message: "blockFrames must be positive (got \(blockFrames))")
        }
        try self.init(input: InputFile(path: path), blockFrames: blockFrames, truncation: truncation)
    }

    /// Reads the stream on an open file descriptor, e.g. standard input (`fileDescriptor: 0`, `name: "-"`): a pipe
    /// (length unknown: `format.frameCount` is nil) or a regular file redirected to it. The descriptor is not
    /// closed; it is read from its current position. Native FLAC and Ogg Vorbis resynchronise past damage on pipes
    /// too (their decoders need no seeking).
    public convenience init(fileDescriptor: Int32, name: String, blockFrames: Int = 16_384,
                            truncation: TruncationPolicy = .analyseAvailable) throws(AudioError) {
        guard blockFrames > 0 else {
            throw AudioError(.invalidParameter, path: name, message: "blockFrames must be positive (got \(blockFrames))")
        }
        try self.init(input: InputFile(fileDescriptor: fileDescriptor, name: name), blockFrames: blockFrames,
                      truncation: truncation)
    }

    private init(input: InputFile, blockFrames: Int, truncation: TruncationPolicy) throws(AudioError) {
        let path = input.name
        let decoder = try Self.openDecoder(input, blockFrames: blockFrames)
        let rate = decoder.sampleRate, channels = decoder.channelCount
        guard Resampler.supportedRates.contains(rate) else {
            throw AudioError(.unsupportedRate, path: path, message: "sample rate \(rate) Hz is not supported (expected "
                + "\(Resampler.supportedRates.lowerBound)–\(Resampler.supportedRates.upperBound) Hz)")
        }
        guard channels >= 1 else {
            throw AudioError(.notAudio, path: path, message: "file declares \(channels) channels (expected at least 1)")
        }
        guard channels <= ChannelRule.maxChannels else {
            throw AudioError(.tooManyChannels, path: path, message: "\(channels) channels is too many (expected 1–"
                + "\(ChannelRule.maxChannels); mono or stereo is analysed, front left/right of larger layouts)")
        }
        if decoder.frameCount == 0 {
            throw AudioError(.empty, path: path, message: "contains no audio frames (expected at least one sample, "
                + "found an empty \(decoder.formatDescription) file)")
        }
        self.path = path
        isStream = !input.isRegular
        self.input = input
        self.decoder = decoder
        self.rate = rate
        self.blockFrames = blockFrames
        self.truncation = truncation
        self.formatDescription = decoder.formatDescription

        let map = channels > 2 ? decoder.channelMap() : nil
        var left = map?.firstIndex(where: { $0 == Int32(SF_CHANNEL_MAP_FRONT_LEFT) || $0 == Int32(SF_CHANNEL_MAP_LEFT) })
        var right = map?.firstIndex(where: { $0 == Int32(SF_CHANNEL_MAP_FRONT_RIGHT) || $0 == Int32(SF_CHANNEL_MAP_RIGHT) })
        if map == nil, decoder.isOgg, let pair = ChannelRule.vorbisFrontPair(channelCount: channels) {
            (left, right) = (pair.left, pair.right)
        }
        sourceChannels = ChannelRule.analysisChannels(channelCount: channels, frontLeft: left, frontRight: right)

        var resamplers: [Resampler] = []
        for _ in sourceChannels {
            do { resamplers.append(try Resampler(inputRate: rate, outputRate: Self.analysisRate)) } catch {
                throw AudioError(.unsupportedRate, path: path, message: error.description)
            }
        }
        self.resamplers = resamplers
        var a = rate, b = Self.analysisRate
        while b != 0 { (a, b) = (b, a % b) }
        gridPeriod = Int64(rate / a)
        let perRead = Self.framesPerRead(blockFrames: blockFrames, rate: rate)
        framesPerRead = perRead
        planar = sourceChannels.map { _ in .allocate(capacity: perRead) }
        pending = sourceChannels.map { _ in
            var a = [Float](); a.reserveCapacity(blockFrames * 2 + 64); return a
        }
        format = SourceFormat(sampleRate: rate, channelCount: channels, analysisChannelCount: sourceChannels.count,
                              frameCount: decoder.frameCount, integerBits: decoder.integerBits)
        if let declared = decoder.declaredFramesBeyondData() {
            warnings.append(Self.truncationError(path: path, declared: declared, present: decoder.frameCount ?? 0))
            if truncation == .fail { throw warnings[0] }
        }
    }

    /// About one output block of source frames per decode call.
    static func framesPerRead(blockFrames: Int, rate: Int) -> Int {
        max(64, Int((Int64(blockFrames) * Int64(rate) + Int64(analysisRate) - 1) / Int64(analysisRate)))
    }

    /// The decoder the stream's first bytes call for (see `InputKind`).
    private static func openDecoder(_ input: InputFile, blockFrames: Int) throws(AudioError) -> any AudioDecoder {
        var head = input.peek(28)
        if head.starts(with: Array("OggS".utf8)), head.count > 26 { head = input.peek(27 + Int(head[26]) + 7) }
        switch InputKind.sniff(head) {
        case .flac: return try FLACDecoder(input: input)
        case .oggVorbis: return try VorbisDecoder(input: input)
        case .other: return try SndFileDecoder(input: input, blockFrames: blockFrames)
        }
    }

    deinit {
        for p in planar { p.deallocate() }
    }

    /// Maps a source position (frames at the source rate) to the analysis timeline: round(t · 16000 / rate), half up.
    func analysisPosition(_ t: Int64) -> Int64 {
        (2 * t * Int64(Self.analysisRate) + Int64(rate)) / (2 * Int64(rate))
    }

    /// The next block of analysis-rate audio, a gap where damaged data was skipped, or `.end`.
    public func read() throws(AudioError) -> SourceRead {
        guard !closed else { return .end }
        while true {
            let available = pending[0].count - pendingHead
            // While a run is open its last sample may still be trimmed (`finishRun`), so one is always held back.
            if available > blockFrames || (available == blockFrames && runEnded) || (runEnded && available > 0) {
                let take = min(blockFrames, available)
                var channels: [[Float]] = []
                channels.reserveCapacity(pending.count)
                for c in pending.indices {
                    channels.append(Array(pending[c][pendingHead..<(pendingHead + take)]))
                }
                pendingHead += take
                let start = nextStart
                nextStart += Int64(take)
                return .audio(start: start, channels: channels)
            }
            if runEnded {
                if let gap = queuedGap {
                    queuedGap = nil
                    runEnded = inputDone
                    compactPending()
                    nextStart = gap.start + gap.length
                    return .gap(start: gap.start, length: gap.length, reason: .missingInput)
                }
                if inputDone { close(); return .end }
                runEnded = false
            }
            compactPending()
            try decodeMore()
        }
    }

    /// Moves the unread tail of each pending buffer to its front in place. The buffers keep their capacity, so
    /// steady-state reading reallocates nothing (`removeFirst` on a large array cost a fresh mapping per block).
    private func compactPending() {
        guard pendingHead > 0 else { return }
        for c in pending.indices {
            let unread = pending[c].count - pendingHead
            pending[c].withUnsafeMutableBufferPointer { p in
                guard let base = p.baseAddress else { return }
                _ = memmove(base, base + pendingHead, unread * MemoryLayout<Float>.stride)
            }
            pending[c].removeLast(pendingHead)
        }
        pendingHead = 0
    }

    @discardableResult
    public func setSourceRateTap(_ tap: SourceRateTap?) -> Bool {
        self.tap = tap
        return true
    }

    /// Releases the file; later reads return `.end`. Idempotent.
    public func close() {
        closed = true
        decoder?.close()
        decoder = nil
        input?.close()
        input = nil
    }

    // MARK: - Decoding

    private func decodeMore() throws(AudioError) {
        guard let decoder else { try finishInput(); return }
        switch try decoder.read(channels: sourceChannels, into: planar, frames: framesPerRead) {
        case .audio(let n):
            if sourcePosition == runStart && runStart > 0 { startRun() }
            sanitize(frames: n)
            tap?(SourceRateAudio(start: sourcePosition, samples: sourceRateSamples(planar, frames: n, integerBits: format.integerBits)))
            let before = pending[0].count
            for k in sourceChannels.indices {
                resamplers[k].process(UnsafeBufferPointer(start: planar[k], count: n), into: &pending[k])
            }
            keepRunOutput(appendedFrom: before)
            framesDecoded += Int64(n)
            sourcePosition += Int64(n)
        case .gap(let length):
            guard length > 0 else { return }
            guard length <= Self.maxPosition - sourcePosition else {
                // A position this far ahead (a damaged or forged granule position) is not this recording's.
                finishRun()
                implausiblePosition = AudioError(.damagedData, path: path, message: "damaged audio data: the stream "
                    + "resumes \(length) frames ahead, beyond any recording; the rest is not analysed")
                try finishInput()
                return
            }
            finishRun()
            let a = analysisPosition(sourcePosition), b = analysisPosition(sourcePosition + length)
            if firstDamageTime == nil { firstDamageTime = Double(sourcePosition) / Double(rate) }
            damagedStretchCount += 1
            damagedFrameCount += length
            sourcePosition += length
            runStart = sourcePosition
            if b > a { queuedGap = (a, b - a) }
            runEnded = true
        case .end:
            finishRun()
            try finishInput()
        }
    }

    /// Starts a run of audio after a gap, at source frame s = `runStart`, on the same output grid as an undamaged
    /// decode: output k of a restarted resampler is the input evaluated at k · rate / 16000 after its first input, so
    /// the resampler is started at the grid point s' ≤ s (s' a multiple of `gridPeriod`, where s' · 16000 / rate is
    /// an integer), fed s − s' frames of silence, and its first round(s · 16000 / rate) − s' · 16000 / rate outputs
    /// are dropped. The run then starts at analysis sample round(s · 16000 / rate) and every later output is at
    /// exactly the time it has in an undamaged decode (the filter sees silence before s, as at the start of a file).
    private func startRun() {
        let lead = runStart % gridPeriod
        let gridStart = (runStart - lead) / gridPeriod * (gridPeriod * Int64(Self.analysisRate) / Int64(rate))
        runDiscard = Int(analysisPosition(runStart) - gridStart)
        guard lead > 0 else { return }
        let zeros = [Float](repeating: 0, count: Int(lead))
        let before = pending[0].count
        for k in resamplers.indices { resamplers[k].process(zeros, into: &pending[k]) }
        keepRunOutput(appendedFrom: before)
    }

    /// Drops the run's lead-in outputs (`runDiscard`) from what the resamplers just appended at `before`, and counts
    /// the rest.
    private func keepRunOutput(appendedFrom before: Int) {
        let appended = pending[0].count - before
        let drop = min(runDiscard, appended)
        if drop > 0 {
            for k in pending.indices { pending[k].removeSubrange(before..<(before + drop)) }
            runDiscard -= drop
        }
        runProduced += Int64(appended - drop)
    }

    /// Replaces invalid samples of the `frames` just decoded (before any filter sees them) and counts them.
    private func sanitize(frames n: Int) {
        for k in planar.indices {
            let result = SampleSanitizer.sanitize(UnsafeMutableBufferPointer(start: planar[k], count: n))
            guard result.replaced > 0 else { continue }
            invalidSampleCount += Int64(result.replaced)
            if let i = result.firstIndex {
                let t = Double(sourcePosition + Int64(i)) / Double(rate)
                firstInvalidSampleTime = min(firstInvalidSampleTime ?? t, t)
            }
        }
    }

    /// Ends the current run of audio: flushes the resamplers and fixes the run to its mapped length,
    /// analysisPosition(end) − analysisPosition(start), so the next run or gap starts exactly where it belongs.
    private func finishRun() {
        defer { runProduced = 0; runStart = sourcePosition; runEnded = true }
        guard sourcePosition > runStart else { return }
        let before = pending[0].count
        for k in resamplers.indices { resamplers[k].finish(into: &pending[k]) }
        keepRunOutput(appendedFrom: before)
        for k in resamplers.indices { resamplers[k].reset() }
        runDiscard = 0
        let target = analysisPosition(sourcePosition) - analysisPosition(runStart)
        let excess = Int(runProduced - target)
        for k in pending.indices {
            if excess > 0 {
                pending[k].removeLast(min(excess, pending[k].count - pendingHead))
            } else if excess < 0 {
                pending[k].append(contentsOf: repeatElement(0, count: -excess))
            }
        }
    }

    /// The stream has ended: truncation check, the summary warnings, the decoder released.
    private func finishInput() throws(AudioError) {
        guard !inputDone else { return }
        inputDone = true
        runEnded = true
        let stopError = implausiblePosition ?? decoder?.stopError
        decoder?.close()
        decoder = nil
        input?.close()
        input = nil
        if let damage = damageWarning() { warnings.append(damage) }
        if let invalid = invalidSampleWarning() { warnings.append(invalid) }
        if sourcePosition == 0 {
            // Nothing decoded at all (a header alone through a pipe, a file cut inside its first frame): no night.
            let declared = format.frameCount.map { "the header declares \($0) frames but " } ?? ""
            // From a pipe, a header that declares frames and no frame after it is a stream cut short, or a format
            // libsndfile reads only by seeking (CAF, GSM 6.10 WAV): the file itself can be read.
            let hint = isStream && (format.frameCount ?? 0) > 0
                ? "; the stream ends early, or its format cannot be read without seeking: give it as a file" : ""
            throw AudioError(.empty, path: path, message: "contains no audio frames (\(declared)none could be read\(hint))",
                             underlying: stopError?.underlying)
        }
        if sourcePosition < format.frameCount ?? 0 || stopError != nil {
            // Declared length not reached, or the decoder failed before the end: keep what was decoded.
            let error = format.frameCount.map {
                Self.truncationError(path: path, declared: $0, present: sourcePosition, cause: stopError?.underlying)
            } ?? AudioError(.truncated, path: path, message: "truncated: decoding stopped after \(sourcePosition) "
                + "frames", underlying: stopError?.underlying)
            if truncation == .fail { throw error }
            warnings.append(error)
        }
    }

    static func truncationError(path: String, declared: Int64, present: Int64, cause: String? = nil) -> AudioError {
        AudioError(.truncated, path: path, message: "truncated: the header declares \(declared) frames but only "
            + "\(present) could be read", underlying: cause)
    }

    /// libsndfile clamps a WAV/AIFF data chunk that runs past the end of the file (it then reports only the frames
    /// present) and notes it in its parse log: WAV "data : 32000 (should be 20000)" (bytes declared, bytes present),
    /// AIFF "Frame count read from 'COMM' chunk (16000) not equal to …". Returns the declared frame count if so.
    static func declaredFramesBeyondFile(log: String, channels: Int, frames: Int64) -> Int64? {
        for line in log.split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("data :"), let open = text.range(of: "(should be ") {
                let declared = Int64(text[text.index(text.startIndex, offsetBy: 6)..<open.lowerBound]
                    .trimmingCharacters(in: .whitespaces))
                let present = Int64(text[open.upperBound...].prefix { $0.isNumber })
                if let declared, let present, present > 0, declared > present {
                    let (product, overflow) = frames.multipliedReportingOverflow(by: declared)
                    return overflow ? Int64(Double(frames) * Double(declared) / Double(present)) : product / present
                }
            }
            if let r = text.range(of: "Frame count read from 'COMM' chunk (") {
                if let declared = Int64(text[r.upperBound...].prefix { $0.isNumber }), declared > frames {
                    return declared
                }
            }
        }
        return nil
    }
}
