// Native FLAC decoded with libFLAC's stream decoder, resynchronising past damaged frames at their true position.
import CFLAC
import CSndFile
import Foundation

/// `AudioDecoder` for native FLAC streams (libFLAC `FLAC__stream_decoder_*`, read through callbacks on an
/// `InputFile`, so pipes work as well as files).
///
/// Damage: every FLAC frame starts with a sync code and a header protected by a CRC-8, and ends with a CRC-16 of the
/// whole frame (FLAC format spec, "FRAME_HEADER", "FRAME_FOOTER"). libFLAC reports a damaged frame to the error
/// callback and searches for the next sync code itself; a frame whose CRC-16 fails is delivered as silence of its
/// length. The header carries the frame's first sample number (a frame number for fixed-blocksize streams, which
/// libFLAC converts to a sample number), so:
///
/// * a frame that starts after the expected sample number leaves a gap of exactly the missing frames;
/// * a frame delivered after a CRC-16 mismatch is not audio: its samples become part of the gap, and so are the
///   all-zero frames libFLAC 1.4 writes in place of frames it lost after other errors (until real audio returns);
/// * a frame that starts before the expected number (a repeat) has the repeated part dropped, and a frame that would
///   end beyond STREAMINFO's total is implausible (a header damaged in a way its CRC-8 missed) and dropped, unless it
///   starts exactly where the previous frame ended: contiguous audio past the total means the total is wrong (an
///   encoder or editor that wrote a short count), and the audio is kept.
///
/// Samples are scaled k / 2^(bps−1), libsndfile's normalisation of integer PCM.
final class FLACDecoder: AudioDecoder {
    private let input: InputFile
    private var decoder: UnsafeMutablePointer<FLAC__StreamDecoder>?

    private(set) var sampleRate = 0
    private(set) var channelCount = 0
    private(set) var frameCount: Int64?
    private var bitsPerSample = 0
    private(set) var stopError: AudioError?
    var formatDescription: String {
        let sub = switch bitsPerSample {
        case ...8: SF_FORMAT_PCM_S8
        case 9...16: SF_FORMAT_PCM_16
        case 17...24: SF_FORMAT_PCM_24
        default: SF_FORMAT_PCM_32
        }
        return SndFile.formatDescription(Int32(SF_FORMAT_FLAC | sub))
    }
    var isOgg: Bool { false }
    var integerBits: Int? { bitsPerSample > 0 ? bitsPerSample : nil }

    /// The last frame libFLAC delivered, planar (`channelCount` rows of `capacity` floats), and how far it was read.
    private var samples: UnsafeMutablePointer<Float>
    private var capacity = 0
    private var buffered = 0
    private var readOffset = 0
    /// Sample number the next audio frame should start at.
    private var expected: Int64 = 0
    /// Missing frames to report before the buffered audio.
    private var pendingGap: Int64 = 0
    /// The error callback reported a CRC-16 mismatch: the next frame delivered is libFLAC's silence, not audio.
    private var crcMismatch = false
    /// An error was reported since the last frame of audio: all-zero frames now are libFLAC's fill for frames it
    /// could not decode (libFLAC 1.4 writes silence of the missing length when it resynchronises on a frame whose
    /// sample number lies beyond the last one), not audio.
    private var errorSinceAudio = false
    private var sawStreamInfo = false
    /// The read callback has reported the end of the input.
    private var inputEnded = false
    private var ended = false
    /// A read error of the input (errno), reported when decoding stops.
    private var readErrno: Int32 = 0

    init(input: InputFile) throws(AudioError) {
        self.input = input
        samples = .allocate(capacity: 1)
        guard let decoder = FLAC__stream_decoder_new() else {
            throw Self.error(path: input.name, .initStatus(FLAC__STREAM_DECODER_INIT_STATUS_MEMORY_ALLOCATION_ERROR))
        }
        self.decoder = decoder
        _ = FLAC__stream_decoder_set_md5_checking(decoder, 0)
        let status = FLAC__stream_decoder_init_stream(
            decoder, flacRead, nil, nil, nil, nil, flacWrite, flacMetadata, flacError,
            Unmanaged.passUnretained(self).toOpaque())
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            throw Self.error(path: input.name, .initStatus(status))
        }
        let ok = FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0
        guard ok, sawStreamInfo else { throw Self.error(path: input.name, .metadata(state: stateString())) }
        guard (1...8).contains(channelCount), (4...32).contains(bitsPerSample), sampleRate > 0 else {
            throw AudioError(.notAudio, path: input.name, message: "malformed FLAC STREAMINFO: \(channelCount) "
                + "channels, \(bitsPerSample) bits, \(sampleRate) Hz (expected 1–8 channels, 4–32 bits)")
        }
        // Decode the first frame now, so that a stream with no audio at all is reported at open.
        while buffered == 0 && pendingGap == 0 && !ended { decodeFrame() }
        if buffered == 0 && pendingGap == 0 && (frameCount ?? 0) == 0 {
            throw AudioError(.empty, path: input.name, message: "contains no audio frames (expected at least one "
                + "sample, found an empty \(formatDescription) stream)")
        }
    }

    deinit {
        close()
        samples.deallocate()
    }

    func close() {
        guard let decoder else { return }
        _ = FLAC__stream_decoder_finish(decoder)
        FLAC__stream_decoder_delete(decoder)
        self.decoder = nil
        ended = true
    }

    func read(channels: [Int], into output: [UnsafeMutablePointer<Float>], frames: Int) throws(AudioError) -> DecodeStep {
        while true {
            if pendingGap > 0 {
                defer { pendingGap = 0 }
                return .gap(pendingGap)
            }
            if readOffset < buffered {
                let n = min(frames, buffered - readOffset)
                for (k, c) in channels.enumerated() {
                    output[k].update(from: samples + c * capacity + readOffset, count: n)
                }
                readOffset += n
                return .audio(n)
            }
            if ended { return .end }
            decodeFrame()
        }
    }

    /// Runs libFLAC until it delivers one frame (or the stream ends or fails).
    private func decodeFrame() {
        guard let decoder, !ended else { ended = true; return }
        buffered = 0; readOffset = 0
        let ok = FLAC__stream_decoder_process_single(decoder) != 0
        let state = FLAC__stream_decoder_get_state(decoder)
        if state == FLAC__STREAM_DECODER_END_OF_STREAM {
            ended = true
            // Damage in the last frame(s): an error was reported after the last audio, and STREAMINFO says where the
            // stream ends, so the rest is a gap. (A file merely cut off ends without an error: truncation.)
            if errorSinceAudio, let total = frameCount, total > expected {
                pendingGap += total - expected
                expected = total
            }
        } else if !ok || state == FLAC__STREAM_DECODER_ABORTED {
            ended = true
            stopError = Self.error(path: input.name, .decoding(state: stateString(), readErrno: readErrno))
        }
    }

    private func stateString() -> String {
        guard let decoder, let s = FLAC__stream_decoder_get_resolved_state_string(decoder) else { return "" }
        return String(cString: s)
    }

    // MARK: - libFLAC callbacks

    fileprivate func readBytes(_ buffer: UnsafeMutablePointer<FLAC__byte>, _ bytes: UnsafeMutablePointer<Int>)
        -> FLAC__StreamDecoderReadStatus {
        let n = input.read(into: buffer, count: bytes.pointee)
        if n > 0 { bytes.pointee = n; return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE }
        bytes.pointee = 0
        if n == 0 { inputEnded = true; return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM }
        readErrno = errno
        return FLAC__STREAM_DECODER_READ_STATUS_ABORT
    }

    fileprivate func metadata(_ block: UnsafePointer<FLAC__StreamMetadata>) {
        guard block.pointee.type == FLAC__METADATA_TYPE_STREAMINFO, !sawStreamInfo else { return }
        let info = block.pointee.data.stream_info
        sawStreamInfo = true
        sampleRate = Int(info.sample_rate)
        channelCount = Int(info.channels)
        bitsPerSample = Int(info.bits_per_sample)
        // STREAMINFO total_samples 0 means "unknown" (FLAC format spec, METADATA_BLOCK_STREAMINFO).
        frameCount = info.total_samples > 0 ? Int64(info.total_samples) : nil
        let maxBlock = max(Int(info.max_blocksize), 4_096)
        reserve(maxBlock)
    }

    private func reserve(_ frames: Int) {
        guard frames > capacity, channelCount > 0 else { return }
        samples.deallocate()
        samples = .allocate(capacity: frames * channelCount)
        capacity = frames
    }

    fileprivate func errorReported(_ status: FLAC__StreamDecoderErrorStatus) {
        if status == FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH { crcMismatch = true }
        // An error after the input ended is a frame cut off by the end of the file (truncation), not damage.
        if !inputEnded { errorSinceAudio = true }
    }

    fileprivate func write(_ frame: UnsafePointer<FLAC__Frame>,
                           _ buffer: UnsafePointer<UnsafePointer<FLAC__int32>?>) -> FLAC__StreamDecoderWriteStatus {
        let header = frame.pointee.header
        let length = Int(header.blocksize)
        // Sample numbers are 36-bit (frame numbers 31-bit) in the format; clamping only guards the conversion.
        let start: Int64 = header.number_type == FLAC__FRAME_NUMBER_TYPE_SAMPLE_NUMBER
            ? Int64(clamping: header.number.sample_number) : Int64(header.number.frame_number) * Int64(length)
        let damaged = crcMismatch
        crcMismatch = false
        let bits = Int(header.bits_per_sample)
        let end = start + Int64(length)
        if let total = frameCount, end > total, start != expected {
            return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE   // implausible position: not this stream's audio
        }
        guard !damaged, Int(header.channels) == channelCount, (4...32).contains(bits), length > 0,
              !(errorSinceAudio && Self.isSilent(buffer, channels: channelCount, length: length)) else {
            // libFLAC's silence for a frame that failed its CRC (or a frame of another layout): a gap.
            if end > expected { pendingGap += end - expected; expected = end }
            return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
        }
        if start > expected { pendingGap += start - expected; expected = start }
        let skip = Int(max(0, expected - start))
        guard skip < length else { return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE }   // a repeat
        reserve(length)
        let scale = 1 / Float(1 << (bits - 1))
        for c in 0..<channelCount {
            guard let src = buffer[c] else { continue }
            let dst = samples + c * capacity
            for i in skip..<length { dst[i - skip] = Float(src[i]) * scale }
        }
        buffered = length - skip
        readOffset = 0
        expected = end
        errorSinceAudio = false
        return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
    }

    private static func isSilent(_ buffer: UnsafePointer<UnsafePointer<FLAC__int32>?>, channels: Int,
                                 length: Int) -> Bool {
        for c in 0..<channels {
            guard let src = buffer[c] else { continue }
            for i in 0..<length where src[i] != 0 { return false }
        }
        return true
    }

    // MARK: - The libFLAC error choke point

    /// What went wrong, in libFLAC's terms.
    enum Failure {
        /// `FLAC__stream_decoder_new` / `_init_stream` failed.
        case initStatus(FLAC__StreamDecoderInitStatus)
        /// `FLAC__stream_decoder_process_until_end_of_metadata` failed or found no STREAMINFO.
        case metadata(state: String)
        /// `FLAC__stream_decoder_process_single` failed (a read error of the input when `readErrno` is not 0).
        case decoding(state: String, readErrno: Int32)
    }

    /// Maps a libFLAC failure to an AudioError (the one place for libFLAC status codes and states).
    static func error(path: String, _ failure: Failure) -> AudioError {
        switch failure {
        case .initStatus(FLAC__STREAM_DECODER_INIT_STATUS_MEMORY_ALLOCATION_ERROR):
            return AudioError(.unreadable, path: path, message: "cannot start the FLAC decoder (out of memory)")
        case .initStatus(let status):
            return AudioError(.unreadable, path: path, message: "cannot start the FLAC decoder",
                              underlying: "init status \(status.rawValue)")
        case .metadata(let state):
            return AudioError(.notAudio, path: path, message: "malformed FLAC stream: no valid STREAMINFO block "
                + "(expected one right after \"fLaC\")", underlying: state)
        case .decoding(_, let readErrno) where readErrno != 0:
            return AudioError(.unreadable, path: path, message: "read error while decoding FLAC",
                              underlying: String(cString: strerror(readErrno)))
        case .decoding(let state, _):
            return AudioError(.notAudio, path: path, message: "FLAC decoding failed", underlying: state)
        }
    }
}

private func decoderObject(_ client: UnsafeMutableRawPointer?) -> FLACDecoder? {
    client.map { Unmanaged<FLACDecoder>.fromOpaque($0).takeUnretainedValue() }
}

private let flacRead: FLAC__StreamDecoderReadCallback = { _, buffer, bytes, client in
    guard let decoder = decoderObject(client), let buffer, let bytes else { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
    return decoder.readBytes(buffer, bytes)
}

private let flacWrite: FLAC__StreamDecoderWriteCallback = { _, frame, buffer, client in
    guard let decoder = decoderObject(client), let frame, let buffer else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
    return decoder.write(frame, buffer)
}

private let flacMetadata: FLAC__StreamDecoderMetadataCallback = { _, block, client in
    guard let decoder = decoderObject(client), let block else { return }
    decoder.metadata(block)
}

private let flacError: FLAC__StreamDecoderErrorCallback = { _, status, client in
    decoderObject(client)?.errorReported(status)
}
