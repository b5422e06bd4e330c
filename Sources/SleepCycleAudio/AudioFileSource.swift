// Streams an audio file (anything libsndfile decodes) as 16 kHz analysis blocks per channel.
import CSndFile
import Foundation
import SleepCycleDSP

/// An `AudioSource` reading a file with libsndfile: WAV (PCM 8/16/24/32-bit, float), FLAC, Ogg Vorbis, AIFF and
/// the other libsndfile formats, at any rate 8–192 kHz, resampled to the 16 kHz analysis rate (`Resampler`).
///
/// * Reads return `.audio(start:channels:)` blocks of exactly `blockFrames` analysis-rate samples per channel
///   (the last block may be shorter), contiguous from sample 0, then `.end`. Total length per channel is
///   round(frames · 16000 / rate). Memory is bounded by the block size, whatever the file's length.
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
    public let path: String
    /// Analysis-rate samples per channel in each `.audio` block (the last may be shorter).
    public let blockFrames: Int
    /// Container and encoding as libsndfile names them, e.g. "WAV (Microsoft), Signed 16 bit PCM".
    public let formatDescription: String
    /// Source channel indices feeding analysis channels 0 (and 1).
    public let sourceChannels: [Int]
    /// Problems that did not stop the analysis (currently: truncation), one-line `AudioError`s.
    public private(set) var warnings: [AudioError] = []
    /// Source frames decoded so far.
    public private(set) var framesDecoded: Int64 = 0

    private let truncation: TruncationPolicy
    private var file: SndFile?
    private let resamplers: [Resampler]
    private let framesPerRead: Int
    private let interleaved: UnsafeMutablePointer<Float>
    private let planar: [UnsafeMutablePointer<Float>]
    private var pending: [[Float]]
    /// Frames of `pending` already returned by `read()` (compacted away before the next decode).
    private var pendingHead = 0
    private var nextStart: Int64 = 0
    private var inputDone = false
    private var closed = false
    private let sourceChannelCount: Int

    public init(path: String, blockFrames: Int = 16_384,
                truncation: TruncationPolicy = .analyseAvailable) throws(AudioError) {
        guard blockFrames > 0 else {
            throw AudioError(.invalidParameter, path: path, message: "blockFrames must be positive (got \(blockFrames))")
        }
        let file = try SndFile(readingPath: path)
        let rate = file.sampleRate, channels = file.channels
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
        guard file.frames > 0 else {
            throw AudioError(.empty, path: path, message: "contains no audio frames (expected at least one sample, "
                + "found an empty \(file.formatDescription) file)")
        }
        self.path = path
        self.file = file
        self.blockFrames = blockFrames
        self.truncation = truncation
        self.formatDescription = file.formatDescription
        self.sourceChannelCount = channels

        let map = channels > 2 ? file.channelMap() : nil
        var left = map?.firstIndex(where: { $0 == Int32(SF_CHANNEL_MAP_FRONT_LEFT) || $0 == Int32(SF_CHANNEL_MAP_LEFT) })
        var right = map?.firstIndex(where: { $0 == Int32(SF_CHANNEL_MAP_FRONT_RIGHT) || $0 == Int32(SF_CHANNEL_MAP_RIGHT) })
        if map == nil, file.isOgg, let pair = ChannelRule.vorbisFrontPair(channelCount: channels) {
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
        // About one output block per decode call.
        let perRead = max(64, Int((Int64(blockFrames) * Int64(rate) + Int64(Self.analysisRate) - 1)
            / Int64(Self.analysisRate)))
        framesPerRead = perRead
        interleaved = .allocate(capacity: perRead * channels)
        planar = sourceChannels.map { _ in .allocate(capacity: perRead) }
        pending = sourceChannels.map { _ in
            var a = [Float](); a.reserveCapacity(blockFrames * 2 + 64); return a
        }
        // libsndfile reports SF_COUNT_MAX frames for a stream of unknown length (a FIFO given as the path).
        let knownFrames: Int64? = file.frames == Int64.max ? nil : file.frames
        format = SourceFormat(sampleRate: rate, channelCount: channels, analysisChannelCount: sourceChannels.count,
                              frameCount: knownFrames)
        let log = file.log()
        if let declared = Self.declaredFramesBeyondFile(log: log, channels: channels, frames: file.frames) {
            warnings.append(Self.truncationError(path: path, declared: declared, present: file.frames))
            if truncation == .fail { throw warnings[0] }
        }
    }

    deinit {
        interleaved.deallocate()
        for p in planar { p.deallocate() }
    }

    /// The next block of analysis-rate audio, or `.end`.
    public func read() throws(AudioError) -> SourceRead {
        guard !closed else { return .end }
        while pending[0].count - pendingHead < blockFrames && !inputDone {
            compactPending()
            try decodeMore()
        }
        let take = min(blockFrames, pending[0].count - pendingHead)
        guard take > 0 else { close(); return .end }
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

    /// Moves the unread tail of each pending buffer to its front in place. The buffers keep their capacity, so
    /// steady-state reading reallocates nothing (`removeFirst` on a large array cost a fresh mapping per block).
    private func compactPending() {
        guard pendingHead > 0 else { return }
        for c in pending.indices {
            let unread = pending[c].count - pendingHead
            pending[c].withUnsafeMutableBufferPointer { p in
                _ = memmove(p.baseAddress!, p.baseAddress! + pendingHead, unread * MemoryLayout<Float>.stride)
            }
            pending[c].removeLast(pendingHead)
        }
        pendingHead = 0
    }

    /// Releases the file; later reads return `.end`. Idempotent.
    public func close() {
        closed = true
        file?.close()
        file = nil
    }

    // MARK: - Decoding

    private func decodeMore() throws(AudioError) {
        guard let file else { inputDone = true; return }
        var n = 0
        var decodeError: AudioError?
        do { n = try file.readFloat(into: interleaved, frames: framesPerRead) } catch {
            // A decoder error (e.g. FLAC "lost sync" at a cut-off end) ends the readable audio: what was decoded is
            // kept and the file is treated as truncated.
            decodeError = error
            n = file.lastReadCount
        }
        framesDecoded += Int64(n)
        if n > 0 {
            let stride = sourceChannelCount
            for (k, source) in sourceChannels.enumerated() {
                let dst = planar[k]
                var src = interleaved + source
                for i in 0..<n { dst[i] = src.pointee; src += stride }
                resamplers[k].process(UnsafeBufferPointer(start: dst, count: n), into: &pending[k])
            }
        }
        if n < framesPerRead {
            inputDone = true
            if framesDecoded < format.frameCount ?? 0 || decodeError != nil {
                // Declared length not reached, or the decoder failed before the end: keep what was decoded.
                let error = format.frameCount.map {
                    Self.truncationError(path: path, declared: $0, present: framesDecoded, cause: decodeError?.underlying)
                } ?? AudioError(.truncated, path: path, message: "truncated: decoding stopped after \(framesDecoded) "
                    + "frames", underlying: decodeError?.underlying)
                if truncation == .fail { throw error }
                warnings.append(error)
            }
            for k in resamplers.indices { resamplers[k].finish(into: &pending[k]) }
            file.close()
            self.file = nil
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
                    return frames * declared / present
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
