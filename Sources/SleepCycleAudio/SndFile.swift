// The thin libsndfile wrapper: the only Swift code that touches a SNDFILE handle, and the one choke point that
// turns libsndfile's error codes into AudioError (one choke point per C library).
import CSndFile
import Foundation
import SleepCycleFormats

/// An open libsndfile handle (read or write). Internal: callers use `AudioFileSource` / `AudioFileWriter`.
final class SndFile {
    let path: String
    private var handle: OpaquePointer?
    private(set) var info: SF_INFO

    /// Opens an input for reading through its descriptor. Open failures of the path itself (missing, permissions,
    /// a directory, 0 bytes) were reported by `InputFile`. libsndfile 1.2 closes the descriptor when `sf_open_fd`
    /// fails even with `close_desc` 0, so it is handed a duplicate that it owns (`close_desc` 1).
    init(reading input: InputFile) throws(AudioError) {
        self.path = input.name
        var info = SF_INFO()
        let fd = dup(input.fd)
        guard fd >= 0 else { throw InputFile.openError(path: input.name, errno: errno) }
        let handle = sf_open_fd(fd, Int32(SFM_READ), &info, 1)
        guard let handle else { throw Self.openError(input: input) }
        self.handle = handle
        self.info = info
    }

    /// Creates (or replaces) `path` for writing with a libsndfile `format` (major | subtype).
    init(writingPath path: String, format: Int32, sampleRate: Int, channels: Int) throws(AudioError) {
        self.path = path
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format
        guard sf_format_check(&info) != 0 else {
            throw AudioError(.invalidParameter, path: path,
                             message: "libsndfile cannot write format 0x\(String(format, radix: 16)) at "
                                 + "\(sampleRate) Hz with \(channels) channel(s)")
        }
        guard let handle = PathEncoding.withCString(path, { sf_open($0, Int32(SFM_WRITE), &info) }) else {
            throw AudioError(.writeFailed, path: path, message: "cannot create the file",
                             underlying: String(cString: sf_strerror(nil)))
        }
        self.handle = handle
        self.info = info
    }

    deinit { close() }

    func close() {
        if let handle { sf_close(handle) }
        handle = nil
    }

    var frames: Int64 { Int64(info.frames) }
    var sampleRate: Int { Int(info.samplerate) }
    var channels: Int { Int(info.channels) }

    /// Reads up to `frames` interleaved frames as floats in [−1, 1) (libsndfile normalises integer PCM).
    /// Returns the number of frames read; fewer than asked means the end of the data (or a decode error, thrown).
    /// When it throws, `lastReadCount` still tells how many frames were decoded into `buffer` before the error.
    func readFloat(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioError) -> Int {
        guard let handle else { return 0 }
        let n = Int(sf_readf_float(handle, buffer, sf_count_t(frames)))
        lastReadCount = n
        if n < frames { try check("reading audio data") }
        return n
    }

    /// Frames returned by the last `readFloat`.
    private(set) var lastReadCount = 0

    /// Writes `frames` interleaved frames.
    func writeFloat(_ buffer: UnsafePointer<Float>, frames: Int) throws(AudioError) {
        guard let handle else { return }
        let n = Int(sf_writef_float(handle, buffer, sf_count_t(frames)))
        if n != frames {
            throw AudioError(.writeFailed, path: path, message: "wrote \(n) of \(frames) frames",
                             underlying: String(cString: sf_strerror(handle)))
        }
    }

    /// Sets a libsndfile double-valued command (e.g. Vorbis quality); ignores unsupported commands.
    func setDouble(_ command: Int32, _ value: Double) {
        guard let handle else { return }
        var v = value
        _ = sf_command(handle, command, &v, Int32(MemoryLayout<Double>.size))
    }

    /// libsndfile's channel map (`SF_CHANNEL_MAP_*` per channel) when the container stores one.
    func channelMap() -> [Int32]? {
        guard let handle, channels > 0 else { return nil }
        var map = [Int32](repeating: 0, count: channels)
        let ok = map.withUnsafeMutableBytes {
            sf_command(handle, Int32(SFC_GET_CHANNEL_MAP_INFO), $0.baseAddress, Int32($0.count))
        }
        return ok == Int32(SF_TRUE) ? map : nil
    }

    /// True for an Ogg container (Vorbis, Opus, …).
    var isOgg: Bool { info.format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_OGG) }

    /// Bits of the integer samples the encoding decodes to (libsndfile scales them by 1/2^(bits−1) when read as
    /// float); nil for float, lossy and other encodings whose decoded values are not such integers.
    var integerBits: Int? {
        switch Int(info.format & Int32(SF_FORMAT_SUBMASK)) {
        case SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8, SF_FORMAT_DPCM_8: 8
        case SF_FORMAT_PCM_16, SF_FORMAT_DPCM_16, SF_FORMAT_ULAW, SF_FORMAT_ALAW, SF_FORMAT_ALAC_16,
             SF_FORMAT_IMA_ADPCM, SF_FORMAT_MS_ADPCM: 16
        case SF_FORMAT_PCM_24, SF_FORMAT_ALAC_20, SF_FORMAT_ALAC_24: 24
        case SF_FORMAT_PCM_32, SF_FORMAT_ALAC_32: 32
        default: nil
        }
    }

    /// Stores a channel map (`SF_CHANNEL_MAP_*` per channel) in a file being written (CAF, WAVEX, …).
    func setChannelMap(_ map: [Int32]) throws(AudioError) {
        guard let handle else { return }
        var m = map
        let ok = m.withUnsafeMutableBytes {
            sf_command(handle, Int32(SFC_SET_CHANNEL_MAP_INFO), $0.baseAddress, Int32($0.count))
        }
        guard ok == Int32(SF_TRUE) else {
            throw AudioError(.invalidParameter, path: path, message: "this format cannot store the channel map \(map)")
        }
    }

    /// libsndfile's parse log for this file (used to detect headers that claim more data than present).
    func log() -> String {
        guard let handle else { return "" }
        var buffer = [CChar](repeating: 0, count: 8192)
        _ = buffer.withUnsafeMutableBytes { sf_command(handle, Int32(SFC_GET_LOG_INFO), $0.baseAddress, Int32($0.count)) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Human-readable container and encoding, e.g. "WAV (Microsoft), Signed 16 bit PCM".
    var formatDescription: String { Self.formatDescription(info.format) }

    /// libsndfile's names for a format (major | subtype), also used by the FLAC and Vorbis decoders so that every
    /// input is described the same way.
    static func formatDescription(_ format: Int32) -> String {
        let major = formatName(format & Int32(SF_FORMAT_TYPEMASK), command: Int32(SFC_GET_FORMAT_MAJOR))
        let sub = formatName(format & Int32(SF_FORMAT_SUBMASK), command: Int32(SFC_GET_FORMAT_SUBTYPE))
        return [major, sub].compactMap { $0 }.joined(separator: ", ")
    }

    // MARK: - The error choke point

    /// Throws the pending libsndfile error of this handle, if any, as an AudioError naming `operation`.
    func check(_ operation: String) throws(AudioError) {
        guard let handle else { return }
        let code = sf_error(handle)
        guard code != Int32(SF_ERR_NO_ERROR) else { return }
        throw Self.error(code: code, path: path, operation: operation,
                         underlying: String(cString: sf_strerror(handle)))
    }

    /// The error for a failed `sf_open_fd` (libsndfile keeps it in a global slot read with a nil handle).
    /// libsndfile reports a WAV with a codec it lacks as a malformed 'fmt ' chunk; the WAV format tag is read here so
    /// the message can say which encoding it is.
    private static func openError(input: InputFile) -> AudioError {
        let code = sf_error(nil)
        let underlying = String(cString: sf_strerror(nil))
        if code != Int32(SF_ERR_SYSTEM), input.isRegular, let tag = WAVFormatTag.read(input.peek(65_536)),
           !WAVFormatTag.decodable.contains(tag) {
            return AudioError(.unsupportedEncoding, path: input.name, message: "WAV encoding \(WAVFormatTag.name(tag)) "
                + "cannot be decoded (expected PCM, IEEE float, A-law, µ-law, IMA/MS ADPCM or GSM 6.10)",
                underlying: underlying)
        }
        // libsndfile seeks inside some headers and codecs (GSM 6.10 in WAV, for one); on a pipe that fails with an
        // internal or malformed-file error although the same bytes open as a file, so the line says both.
        if !input.isRegular, code != Int32(SF_ERR_SYSTEM), code != Int32(SF_ERR_UNRECOGNISED_FORMAT),
           code != Int32(SF_ERR_UNSUPPORTED_ENCODING) {
            return AudioError(.notAudio, path: input.name, message: "cannot be decoded from a pipe or stream (the "
                + "audio is malformed, or its format needs seeking: give it as a file)", underlying: underlying)
        }
        return error(code: code, path: input.name, operation: "opening", underlying: underlying)
    }

    /// Maps a libsndfile error code to an AudioError: the one place where that mapping lives.
    static func error(code: Int32, path: String, operation: String, underlying: String) -> AudioError {
        switch code {
        case Int32(SF_ERR_UNRECOGNISED_FORMAT):
            return AudioError(.notAudio, path: path, message: "not a recognised audio file "
                + "(expected WAV, FLAC, Ogg Vorbis, AIFF or another libsndfile format)", underlying: underlying)
        case Int32(SF_ERR_UNSUPPORTED_ENCODING):
            return AudioError(.unsupportedEncoding, path: path, message: "audio encoding not supported by libsndfile "
                + "(expected PCM, float, FLAC or Vorbis data)", underlying: underlying)
        case Int32(SF_ERR_MALFORMED_FILE):
            return AudioError(.notAudio, path: path, message: "malformed audio file while \(operation)",
                              underlying: underlying)
        case Int32(SF_ERR_SYSTEM):
            return AudioError(.unreadable, path: path, message: "system error while \(operation)",
                              underlying: underlying)
        default:
            // libsndfile's internal codes (SFE_*): a recognised container whose contents it cannot parse.
            return AudioError(.notAudio, path: path, message: "malformed or undecodable audio data while \(operation)",
                              underlying: underlying)
        }
    }

    private static func formatName(_ format: Int32, command: Int32) -> String? {
        var count: Int32 = 0
        let countCommand = command == Int32(SFC_GET_FORMAT_MAJOR)
            ? Int32(SFC_GET_FORMAT_MAJOR_COUNT) : Int32(SFC_GET_FORMAT_SUBTYPE_COUNT)
        sf_command(nil, countCommand, &count, Int32(MemoryLayout<Int32>.size))
        for i in 0..<count {
            var fi = SF_FORMAT_INFO()
            fi.format = i
            sf_command(nil, command, &fi, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
            if fi.format == format, let name = fi.name { return String(cString: name) }
        }
        return nil
    }
}

/// The `wFormatTag` of a RIFF/WAVE file's 'fmt ' chunk (Microsoft RIFF/WAVE specification, mmreg.h tags).
enum WAVFormatTag {
    /// Tags libsndfile decodes: PCM, ADPCM, IEEE float, A-law, µ-law, IMA ADPCM, GSM 6.10, G.721 / G.723, extensible.
    static let decodable: Set<UInt16> = [0x0001, 0x0002, 0x0003, 0x0006, 0x0007, 0x0011, 0x0031, 0x0040, 0x0014,
                                         0x0064, 0xFFFE]

    static func name(_ tag: UInt16) -> String {
        let known: [UInt16: String] = [0x0050: "MPEG", 0x0055: "MPEG Layer 3", 0x0161: "Windows Media Audio",
                                       0x00FF: "AAC", 0x1610: "AAC (HE)", 0x2000: "AC-3", 0x0092: "Dolby AC-3 SPDIF"]
        let hex = String(format: "0x%04X", tag)
        return known[tag].map { "\($0) (format tag \(hex))" } ?? "format tag \(hex)"
    }

    /// Reads the format tag from the first bytes (64 KB is plenty) of a RIFF/WAVE file, or nil if it is not one.
    static func read(_ bytes: [UInt8]) -> UInt16? {
        guard bytes.count >= 12 else { return nil }
        guard bytes[0..<4] == [0x52, 0x49, 0x46, 0x46][...], bytes[8..<12] == [0x57, 0x41, 0x56, 0x45][...] else {
            return nil   // not "RIFF....WAVE"
        }
        var offset = 12
        while offset + 10 <= bytes.count {
            let id = bytes[offset..<(offset + 4)]
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16
                | Int(bytes[offset + 7]) << 24
            if id == [0x66, 0x6D, 0x74, 0x20][...] {   // "fmt "
                return UInt16(bytes[offset + 8]) | UInt16(bytes[offset + 9]) << 8
            }
            offset += 8 + size + (size & 1)
        }
        return nil
    }
}
