// Ogg Vorbis decoded with libvorbisfile, placing audio after a damaged page at its true time.
import CSndFile
import CVorbisFile
import Foundation

/// `AudioDecoder` for Ogg Vorbis (libvorbisfile `ov_open_callbacks` / `ov_read_float` on an `InputFile`; seekable
/// for regular files, which gives the total length, and without seeking for pipes).
///
/// Damage: every Ogg page carries a CRC-32 and a sequence number (RFC 3533 §6). libogg drops a page whose CRC fails
/// and resynchronises on the next capture pattern; the sequence-number jump makes `ov_read_float` return `OV_HOLE`
/// once, then decoding goes on with the next complete packet. The samples of the lost page are simply missing, so
/// counting samples would put everything after it early. The true position comes back with the next page that ends
/// a packet: its granule position is the PCM position of the last sample of that page (Vorbis I spec §A.2), and
/// libvorbisfile resets `ov_pcm_tell` from it. So after a hole the decoded samples are held until `ov_pcm_tell` stops
/// following the sample count; the held samples end where the resynchronised ones begin, and the frames between the
/// last audio before the hole and the first held sample are reported as a gap.
final class VorbisDecoder: AudioDecoder {
    private let input: InputFile
    private let file: UnsafeMutablePointer<OggVorbis_File>
    private var open = false

    let sampleRate: Int
    let channelCount: Int
    let frameCount: Int64?
    var formatDescription: String { SndFile.formatDescription(Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)) }
    var isOgg: Bool { true }
    var integerBits: Int? { nil }
    private(set) var stopError: AudioError?

    /// Most samples held after a hole while waiting for a granule position (then they are placed by count).
    private let holdLimit: Int
    /// `ov_pcm_tell` after the last read.
    private var lastTell: Int64 = 0
    /// `ov_pcm_tell` at the end of the audio delivered before the hole being resolved, nil outside a hole.
    private var holeTell: Int64?
    /// Samples decoded since the hole (per requested channel), and how many of them are already handed out.
    private var held: [[Float]] = []
    private var heldOffset = 0
    private var flushingHeld = false
    private var pendingGap: Int64 = 0
    private var ended = false
    private var consecutiveErrors = 0

    init(input: InputFile) throws(AudioError) {
        self.input = input
        file = .allocate(capacity: 1)
        file.initialize(to: OggVorbis_File())
        let callbacks = ov_callbacks(read_func: vorbisRead, seek_func: input.isRegular ? vorbisSeek : nil,
                                     close_func: nil, tell_func: input.isRegular ? vorbisTell : nil)
        let status = ov_open_callbacks(Unmanaged.passUnretained(input).toOpaque(), file, nil, 0, callbacks)
        // Until every stored property is set, a throw does not run deinit: the file is released here.
        guard status == 0 else { file.deallocate(); throw Self.error(path: input.name, code: status, operation: "opening") }
        open = true
        guard let info = ov_info(file, -1), info.pointee.channels > 0, info.pointee.rate > 0 else {
            ov_clear(file); file.deallocate(); open = false
            throw AudioError(.notAudio, path: input.name, message: "malformed Ogg Vorbis stream: no valid "
                + "identification header (expected channels and a sample rate)")
        }
        sampleRate = Int(info.pointee.rate)
        channelCount = Int(info.pointee.channels)
        let total = ov_seekable(file) != 0 ? ov_pcm_total(file, -1) : -1
        frameCount = total >= 0 ? Int64(total) : nil
        holdLimit = max(1, min(sampleRate, 192_000)) * 10
        if frameCount == 0 {   // fully initialised: deinit releases the file
            throw AudioError(.empty, path: input.name, message: "contains no audio frames (expected at least one "
                + "sample, found an empty \(formatDescription) stream)")
        }
    }

    deinit {
        close()
        file.deallocate()
    }

    func close() {
        if open { ov_clear(file) }
        open = false
        ended = true
    }

    func read(channels: [Int], into output: [UnsafeMutablePointer<Float>], frames: Int) throws(AudioError) -> DecodeStep {
        if held.count != channels.count { held = channels.map { _ in [] } }
        while true {
            if pendingGap > 0 {
                defer { pendingGap = 0 }
                return .gap(pendingGap)
            }
            if flushingHeld {
                let n = min(frames, held[0].count - heldOffset)
                if n > 0 {
                    for k in channels.indices {
                        held[k].withUnsafeBufferPointer { output[k].update(from: $0.baseAddress! + heldOffset, count: n) }
                    }
                    heldOffset += n
                    return .audio(n)
                }
                for k in held.indices { held[k].removeAll(keepingCapacity: true) }
                heldOffset = 0
                flushingHeld = false
            }
            if ended || !open { return .end }
            if let step = decode(channels: channels, into: output, frames: frames) { return step }
        }
    }

    /// One `ov_read_float`; returns the step to hand out, or nil to go round again (held samples, a hole, an error).
    private func decode(channels: [Int], into output: [UnsafeMutablePointer<Float>], frames: Int) -> DecodeStep? {
        var pcm: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?
        var link: Int32 = 0
        let n = ov_read_float(file, &pcm, Int32(clamping: frames), &link)
        if n == Int(OV_HOLE) {
            consecutiveErrors = 0
            if holeTell == nil { holeTell = lastTell }
            // A second hole before the position is known: what is held has no known place; it joins the gap.
            for k in held.indices { held[k].removeAll(keepingCapacity: true) }
            return nil
        }
        if n < 0 {
            consecutiveErrors += 1
            if consecutiveErrors > 64 {   // a stream that yields nothing but errors ends here
                stopError = Self.error(path: input.name, code: Int32(clamping: n), operation: "decoding")
                ended = true
            }
            return nil
        }
        consecutiveErrors = 0
        if n == 0 {
            ended = true
            // The end-of-stream page's granule position does not reset `ov_pcm_tell`, but for a seekable stream it is
            // the total length: the held samples are the stream's last ones.
            if let hole = holeTell, let total = frameCount, let held = held.first {
                pendingGap = Self.distance(from: hole, to: total - Int64(held.count))
            }
            return releaseHeld()   // otherwise they stay where counting puts them
        }
        guard let pcm, let info = ov_info(file, -1), Int(info.pointee.channels) == channelCount,
              Int(info.pointee.rate) == sampleRate else {
            stopError = AudioError(.unsupportedEncoding, path: input.name, message: "the Ogg stream changes its channel "
                + "count or sample rate (a chained stream); analysis stops there")
            ended = true
            return releaseHeld()
        }
        let tell = Int64(ov_pcm_tell(file))
        defer { lastTell = tell }
        guard let hole = holeTell else {
            for (k, c) in channels.enumerated() {
                guard let src = pcm[c] else { return nil }
                output[k].update(from: src, count: n)
            }
            return .audio(n)
        }
        let following = tell == lastTell &+ Int64(n)
        for (k, c) in channels.enumerated() {
            guard let src = pcm[c] else { continue }
            held[k].append(contentsOf: UnsafeBufferPointer(start: src, count: n))
        }
        if following {
            if held[0].count > holdLimit { return releaseHeld() }
            return nil
        }
        // `tell` was just reset from a granule position: the samples of this read end at `tell`, and the held ones
        // (this read included) directly precede it.
        holeTell = nil
        let heldStart = tell &- Int64(held[0].count)
        if heldStart < hole && heldStart > hole &- Int64(held[0].count) &- 1 {
            // A granule position slightly behind the audio already delivered: drop the repeated part.
            heldOffset = Int(hole - heldStart)
        }
        pendingGap = Self.distance(from: hole, to: heldStart)
        flushingHeld = true
        return nil
    }

    /// Frames from `a` forward to `b`; 0 when `b` is not ahead or the difference overflows (a forged granule
    /// position far behind the audio: the samples are then placed by count).
    private static func distance(from a: Int64, to b: Int64) -> Int64 {
        let (d, overflow) = b.subtractingReportingOverflow(a)
        return overflow ? 0 : max(0, d)
    }

    /// Hands out the held samples at their counted position (no gap).
    private func releaseHeld() -> DecodeStep? {
        holeTell = nil
        if let first = held.first, !first.isEmpty { flushingHeld = true }
        return nil
    }

    // MARK: - The libvorbisfile error choke point

    /// Maps a libvorbisfile return code (`OV_*`, vorbisfile.h / codec.h) to an AudioError.
    static func error(path: String, code: Int32, operation: String) -> AudioError {
        let cause = "libvorbisfile \(code)"
        switch code {
        case OV_EREAD:
            return AudioError(.unreadable, path: path, message: "read error while \(operation) Ogg Vorbis data",
                              underlying: "\(cause): \(String(cString: strerror(errno)))")
        case OV_ENOTVORBIS:
            return AudioError(.notAudio, path: path, message: "not an Ogg Vorbis stream (expected a Vorbis "
                + "identification header in the first Ogg page)", underlying: cause)
        case OV_EBADHEADER:
            return AudioError(.notAudio, path: path, message: "damaged Ogg Vorbis headers (the identification, comment "
                + "or setup header cannot be read; nothing can be decoded without them)", underlying: cause)
        case OV_EVERSION:
            return AudioError(.unsupportedEncoding, path: path, message: "Vorbis version not supported "
                + "(expected Vorbis I)", underlying: cause)
        case OV_EFAULT:
            return AudioError(.notAudio, path: path, message: "libvorbisfile failed while \(operation) "
                + "(internal error on malformed data)", underlying: cause)
        default:
            return AudioError(.notAudio, path: path, message: "malformed or undecodable Ogg Vorbis data while "
                + "\(operation)", underlying: cause)
        }
    }
}

// MARK: - libvorbisfile callbacks over an InputFile (the datasource)

private func inputFile(_ source: UnsafeMutableRawPointer?) -> InputFile? {
    source.map { Unmanaged<InputFile>.fromOpaque($0).takeUnretainedValue() }
}

/// fread semantics: returns items read, 0 with errno set on an error, 0 with errno 0 at the end.
private let vorbisRead: @convention(c) (UnsafeMutableRawPointer?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    buffer, size, count, source in
    guard let buffer, let input = inputFile(source), size > 0 else { return 0 }
    let n = input.read(into: buffer, count: size * count)
    if n < 0 { return 0 }
    errno = 0
    return n / size
}

private let vorbisSeek: @convention(c) (UnsafeMutableRawPointer?, ogg_int64_t, Int32) -> Int32 = {
    source, offset, whence in
    guard let input = inputFile(source) else { return -1 }
    let target: Int64
    switch whence {
    case SEEK_SET: target = offset
    case SEEK_CUR: target = input.position + offset
    case SEEK_END:
        guard let length = input.length else { return -1 }
        target = length + offset
    default: return -1
    }
    return input.seek(to: target) ? 0 : -1
}

private let vorbisTell: @convention(c) (UnsafeMutableRawPointer?) -> Int = { source in
    inputFile(source).map { Int($0.position) } ?? -1
}
