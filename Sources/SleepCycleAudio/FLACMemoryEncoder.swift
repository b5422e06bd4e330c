// Encodes one channel of samples as a FLAC file in memory (libsndfile's virtual I/O), for audio clips.
import CSndFile
import Foundation
import SleepCycleDSP

/// A mono FLAC file built in memory, so that a clip can be encrypted before anything touches the disk.
///
/// Samples are stored as integers: with `integerBits` ≤ 16 as 16-bit FLAC, otherwise as 24-bit FLAC, each sample
/// x written as round(x · 2^(bits−1)) (clamped to the integer range) through `sf_writef_int`. For a source whose
/// samples are k / 2^(b−1) with b ≤ 24 (16-bit or 24-bit PCM, 8-bit, µ-law, …) that integer is exactly k, so reading
/// the FLAC back (libsndfile, soundfile, libFLAC: k / 2^(bits−1)) gives the source's own samples bit for bit. Float and
/// lossy sources are quantised to 24 bits (error ≤ 2^−24).
public enum FLACMemoryEncoder {
    /// The FLAC file's bytes for the mono `samples`: 16-bit values as 16-bit FLAC unchanged; floats as described
    /// above. `comment` and `title` become Vorbis comments (COMMENT, TITLE). Encoded at FLAC's fastest level (0):
    /// clips are written while a night is analysed hundreds of times faster than real time.
    public static func encode(_ samples: PlanarSamples, sampleRate: Int, integerBits: Int?, title: String? = nil,
                              comment: String? = nil, name: String) throws(AudioError) -> [UInt8] {
        let bits: Int
        if case .int16 = samples { bits = 16 } else { bits = (integerBits ?? 24) <= 16 ? 16 : 24 }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = 1
        info.format = Int32(SF_FORMAT_FLAC | (bits == 16 ? SF_FORMAT_PCM_16 : SF_FORMAT_PCM_24))
        guard sampleRate > 0, samples.channelCount == 1, sf_format_check(&info) != 0 else {
            throw AudioError(.invalidParameter, path: name, message: "cannot encode mono FLAC at \(sampleRate) Hz")
        }
        let file = MemoryFile()
        file.bytes.reserveCapacity(samples.frameCount * bits / 8 + 8192)
        var io = SF_VIRTUAL_IO(get_filelen: MemoryFile.length, seek: MemoryFile.seek, read: MemoryFile.read,
                               write: MemoryFile.write, tell: MemoryFile.tell)
        let handle = withExtendedLifetime(file) {
            sf_open_virtual(&io, Int32(SFM_WRITE), &info, Unmanaged.passUnretained(file).toOpaque())
        }
        guard let handle else {
            throw AudioError(.writeFailed, path: name, message: "cannot start a FLAC stream",
                             underlying: String(cString: sf_strerror(nil)))
        }
        var level = 0.0
        _ = sf_command(handle, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
        if let title { _ = sf_set_string(handle, Int32(SF_STR_TITLE), title) }
        if let comment { _ = sf_set_string(handle, Int32(SF_STR_COMMENT), comment) }
        _ = sf_set_string(handle, Int32(SF_STR_SOFTWARE), "sleepcycle")
        var failure: String?
        switch samples {
        case .int16(let channels):
            let n = channels[0].count
            let written = channels[0].withUnsafeBufferPointer { sf_writef_short(handle, $0.baseAddress, sf_count_t(n)) }
            if written != n { failure = String(cString: sf_strerror(handle)) }
        case .float(let channels):
            let data = channels[0]
            let scale = Float(1 << (bits - 1)), top = scale - 1, shift = Int32(32 - bits)
            let chunk = 8192
            var ints = [Int32](repeating: 0, count: chunk)
            var offset = 0
            while offset < data.count {
                let n = min(chunk, data.count - offset)
                for i in 0..<n { ints[i] = Int32(min(top, max(-scale, (data[offset + i] * scale).rounded()))) << shift }
                let written = ints.withUnsafeBufferPointer { sf_writef_int(handle, $0.baseAddress, sf_count_t(n)) }
                if written != n { failure = String(cString: sf_strerror(handle)); break }
                offset += n
            }
        }
        let closed = sf_close(handle)
        if let failure {
            throw AudioError(.writeFailed, path: name, message: "FLAC encoding failed", underlying: failure)
        }
        guard closed == 0 else {
            throw AudioError(.writeFailed, path: name, message: "FLAC encoding failed",
                             underlying: String(cString: sf_error_number(closed)))
        }
        return withExtendedLifetime(file) { file.bytes }
    }
}

/// A seekable byte buffer behind `SF_VIRTUAL_IO` (the callbacks get it back through `user_data`).
private final class MemoryFile {
    var bytes: [UInt8] = []
    var position = 0

    static func this(_ p: UnsafeMutableRawPointer?) -> MemoryFile {
        Unmanaged<MemoryFile>.fromOpaque(p!).takeUnretainedValue()
    }

    static let length: sf_vio_get_filelen = { sf_count_t(this($0).bytes.count) }
    static let tell: sf_vio_tell = { sf_count_t(this($0).position) }
    static let seek: sf_vio_seek = { offset, whence, user in
        let f = this(user)
        let base: Int
        switch whence {
        case SEEK_CUR: base = f.position
        case SEEK_END: base = f.bytes.count
        default: base = 0
        }
        let target = base + Int(offset)
        guard target >= 0 else { return -1 }
        f.position = target
        return sf_count_t(target)
    }
    static let read: sf_vio_read = { buffer, count, user in
        let f = this(user)
        let n = max(0, min(Int(count), f.bytes.count - f.position))
        if n > 0, let buffer {
            f.bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + f.position, byteCount: n) }
            f.position += n
        }
        return sf_count_t(n)
    }
    static let write: sf_vio_write = { buffer, count, user in
        let f = this(user)
        let n = Int(count)
        guard n > 0, let buffer else { return 0 }
        let end = f.position + n
        if end > f.bytes.count { f.bytes.append(contentsOf: repeatElement(0, count: end - f.bytes.count)) }
        f.bytes.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: f.position).copyMemory(from: buffer, byteCount: n) }
        f.position = end
        return sf_count_t(n)
    }
}
