// PCM of a WAV whose `data` size says "unknown", read to the end of the file or the pipe.
import CSndFile

/// Reads the samples of a WAV whose `data` chunk size is a "length unknown" value, the value writers put there when
/// they cannot seek back to fill it in or when the data passes 4 GiB (sox, ffmpeg and libsndfile itself write such
/// files when they stream a long recording). libsndfile takes the size at face value, so a 2-hour 8-channel 48-kHz
/// file (5.5 GB) ended at 4 GiB, 93 minutes in, and the same night piped from sox (whose value is 0x7FFFF000) at
/// 2 GiB, without a word. The samples run to the end of the input.
///
/// On a regular file the reader finds the data and reads it to the end of the file (an interrupted sox recording
/// keeps 0x7FFFF000 in its header). On a pipe it reads every sample after libsndfile has parsed the header (which
/// leaves the pipe at the first sample): libsndfile stops at the declared size after reading past it (to byte 2^31
/// of the data for both 2-GiB values, libsndfile 1.2), so taking over where it stopped would lose audio.
///
/// The samples of an RF64 file on a pipe are read here too, after its header (`SndFileDecoder.rf64Stream`): on a
/// pipe libsndfile's RF64 parser consumes some of them.
///
/// Integer PCM of 8 (unsigned), 16, 24 and 32 bits and 32-bit float, scaled as libsndfile scales them when it reads
/// floats (k / 2^(bits−1), 8-bit as (k − 128) / 128), so the same file decodes to the same values either way.
struct UnsizedWAVReader {
    /// Bytes per sample and the conversion.
    private enum Encoding { case u8, s16, s24, s32, f32 }
    private let encoding: Encoding
    private let bytesPerSample: Int
    let channels: Int
    /// Where the samples start and how many whole frames the file holds after it (regular files); on a pipe the
    /// samples are read where the stream stands and their count is unknown (nil).
    let dataOffset: Int64
    let frameCount: Int64?
    private let seekable: Bool
    private var frame: Int64 = 0
    private var bytes: [UInt8] = []

    /// The `data` sizes that mean "length unknown" on a stream: 0xFFFFFFFF, 0x7FFFFFFF (ffmpeg) and 0x7FFFF000 (sox).
    static let unknownSizes: Set<Int64> = [0xFFFF_FFFF, 0x7FFF_FFFF, 0x7FFF_F000]

    /// A reader when `input` is a regular-file WAV of one of those encodings with an "unknown" data size (`format`
    /// and `channels` as libsndfile opened it); nil otherwise (libsndfile then reads it as it is).
    init?(input: InputFile, format: Int32, channels: Int) {
        guard input.isRegular, channels > 0, let (encoding, bytesPerSample) = Self.encoding(format),
              let length = input.length else { return nil }
        guard let (offset, size) = Self.dataChunk(input, length: length), Self.unknownSizes.contains(Int64(size)) else {
            return nil
        }
        (self.encoding, self.bytesPerSample, self.channels, seekable) = (encoding, bytesPerSample, channels, true)
        dataOffset = offset
        frameCount = (length - offset) / Int64(bytesPerSample * channels)
    }

    /// A reader of a WAV on a pipe (not a regular file) whose declared `data` size (`declaredBytes`, from
    /// libsndfile's log of the header it has just parsed) is one of `unknownSizes`; nil otherwise.
    init?(stream input: InputFile, format: Int32, channels: Int, declaredBytes: Int64?) {
        guard !input.isRegular, channels > 0, let declaredBytes, Self.unknownSizes.contains(declaredBytes),
              let (encoding, bytesPerSample) = Self.encoding(format) else { return nil }
        (self.encoding, self.bytesPerSample, self.channels, seekable) = (encoding, bytesPerSample, channels, false)
        dataOffset = 0
        frameCount = nil
    }

    /// A reader of the samples of an RF64 file on a pipe whose header has been read off (`SndFileDecoder`), up to
    /// ds64's `dataBytes` (to the end of the stream when unknown); nil for an encoding it does not take.
    init?(rf64Stream input: InputFile, format: Int32, channels: Int, dataBytes: UInt64?) {
        guard !input.isRegular, channels > 0, Int(format) & SF_FORMAT_TYPEMASK == SF_FORMAT_RF64,
              let (encoding, bytesPerSample) = Self.encoding(format) else { return nil }
        (self.encoding, self.bytesPerSample, self.channels, seekable) = (encoding, bytesPerSample, channels, false)
        dataOffset = 0
        frameCount = dataBytes.map { Int64($0 / UInt64(bytesPerSample * channels)) }
    }

    /// Where an RF64 header's samples start in `head` and the data size its ds64 chunk declares (nil when ds64 says
    /// nothing usable).
    static func rf64DataChunk(_ head: [UInt8]) -> (offset: Int, bytes: UInt64?)? {
        let chunk = dataChunk(form: "RF64", length: Int64(head.count)) { count, offset in
            offset + Int64(count) <= Int64(head.count) ? Array(head[Int(offset)..<Int(offset) + count]) : nil
        }
        return chunk.map { (Int($0.offset), $0.ds64Bytes.flatMap { $0 > 0 && $0 < 1 << 60 ? $0 : nil }) }
    }

    /// The encoding of a WAV/WAVEX/RF64 libsndfile `format` this reader takes, and its bytes per sample.
    private static func encoding(_ format: Int32) -> (Encoding, Int)? {
        let major = Int(format) & SF_FORMAT_TYPEMASK
        guard major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX || major == SF_FORMAT_RF64 else { return nil }
        switch Int(format) & SF_FORMAT_SUBMASK {
        case SF_FORMAT_PCM_U8: return (.u8, 1)
        case SF_FORMAT_PCM_16: return (.s16, 2)
        case SF_FORMAT_PCM_24: return (.s24, 3)
        case SF_FORMAT_PCM_32: return (.s32, 4)
        case SF_FORMAT_FLOAT: return (.f32, 4)
        default: return nil
        }
    }

    /// The offset of the `data` chunk's samples and its declared size in a regular file.
    private static func dataChunk(_ input: InputFile, length: Int64) -> (Int64, UInt32)? {
        dataChunk(form: "RIFF", length: length) { count, offset in
            guard input.seek(to: offset) else { return nil }
            var out = [UInt8](repeating: 0, count: count)
            let n = out.withUnsafeMutableBytes { input.read(into: $0.baseAddress!, count: count) }
            return n == count ? out : nil
        }.map { ($0.offset, $0.size) }
    }

    /// The chunks of a `form` ("RIFF" or "RF64") WAVE header of `length` bytes walked from byte 12 to `data`, read
    /// through `read(count, offset)`: where the samples start, the `data` chunk's size field, and the data size of a
    /// ds64 chunk passed on the way (RF64's 64-bit sizes).
    private static func dataChunk(form: String, length: Int64, read: (Int, Int64) -> [UInt8]?)
        -> (offset: Int64, size: UInt32, ds64Bytes: UInt64?)? {
        func le32(_ b: [UInt8], _ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * $1) } }
        guard let header = read(12, 0), header[0..<4].elementsEqual(form.utf8), header[8..<12].elementsEqual("WAVE".utf8)
        else { return nil }
        var position: Int64 = 12, ds64Bytes: UInt64?
        for _ in 0..<1_000 {
            guard position + 8 <= length, let chunk = read(8, position) else { return nil }
            let size = le32(chunk, 4)
            if chunk[0..<4].elementsEqual("data".utf8) { return (position + 8, size, ds64Bytes) }
            if chunk[0..<4].elementsEqual("ds64".utf8), size >= 16, let sizes = read(8, position + 16) {
                ds64Bytes = UInt64(le32(sizes, 0)) | UInt64(le32(sizes, 4)) << 32
            }
            position += 8 + Int64(size) + Int64(size & 1)
        }
        return nil
    }

    /// Reads up to `frames` interleaved frames into `buffer`; 0 at the end (or on a read error).
    mutating func read(_ input: InputFile, into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let wanted = Int(min(Int64(frames), (frameCount ?? .max) - frame))
        guard wanted > 0, !seekable || input.seek(to: dataOffset + frame * Int64(bytesPerSample * channels)) else {
            return 0
        }
        let count = wanted * channels * bytesPerSample
        if bytes.count < count { bytes = [UInt8](repeating: 0, count: count) }
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { input.read(into: $0.baseAddress! + got, count: count - got) }
            guard n > 0 else { break }
            got += n
        }
        let whole = got / (channels * bytesPerSample)
        let samples = whole * channels
        bytes.withUnsafeBytes { raw in
            let b = raw.bindMemory(to: UInt8.self)
            // The little-endian 16- and 32-bit words at byte `at`.
            func le16(_ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
            func le32(_ at: Int) -> UInt32 { UInt32(le16(at)) | UInt32(le16(at + 2)) << 16 }
            switch encoding {
            case .u8:
                for i in 0..<samples { buffer[i] = (Float(b[i]) - 128) / 128 }
            case .s16:
                for i in 0..<samples { buffer[i] = Float(Int16(bitPattern: le16(2 * i))) / 32_768 }
            case .s24:
                for i in 0..<samples {
                    let u = UInt32(b[3 * i]) << 8 | UInt32(b[3 * i + 1]) << 16 | UInt32(b[3 * i + 2]) << 24
                    buffer[i] = Float(Int32(bitPattern: u) >> 8) / 8_388_608
                }
            case .s32:
                for i in 0..<samples { buffer[i] = Float(Int32(bitPattern: le32(4 * i))) / 2_147_483_648 }
            case .f32:
                for i in 0..<samples { buffer[i] = Float(bitPattern: le32(4 * i)) }
            }
        }
        frame += Int64(whole)
        return whole
    }
}
