// Opening an input (a path or a file descriptor), naming open failures precisely, and sniffing the format.
import CPipePeek
import Foundation
import SleepCycleFormats

/// An open input stream: a file descriptor plus what `fstat` says about it. Owns the descriptor only when it
/// opened it (a path); a descriptor handed in (standard input) is left open.
final class InputFile {
    let fd: Int32
    let name: String
    /// A regular file: positioned reads, a known size.
    let isRegular: Bool
    /// Byte offset of the stream's start in the descriptor (where a redirected standard input stood).
    let baseOffset: Int64
    private let ownsDescriptor: Bool
    private var closed = false

    /// Opens `path` read-only. Every failure names the path and the problem in one line: `stat` first (ENOENT,
    /// ELOOP, EACCES, ENOTDIR, ENAMETOOLONG …), then a directory, then a 0-byte *regular* file (character devices
    /// and FIFOs report size 0 but are streams), then `open` itself. Opening a FIFO waits for its writer, as any
    /// reader of a FIFO does.
    init(path: String) throws(AudioError) {
        var st = stat()
        // File names are bytes: `PathEncoding` gives back those of a name that is not UTF-8.
        guard PathEncoding.withCString(path, { stat($0, &st) }) == 0 else { throw Self.openError(path: path, errno: errno) }
        let kind = st.st_mode & S_IFMT
        guard kind != S_IFDIR else {
            throw AudioError(.unreadable, path: path, message: "is a directory (expected an audio file)")
        }
        if kind == S_IFREG && st.st_size == 0 {
            throw AudioError(.empty, path: path, message: "file is empty (0 bytes; expected an audio file)")
        }
        var fd: Int32
        repeat { fd = PathEncoding.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) } } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw Self.openError(path: path, errno: errno) }
        self.fd = fd
        self.name = path
        self.ownsDescriptor = true
        self.isRegular = kind == S_IFREG
        self.baseOffset = 0
    }

    /// Wraps an open descriptor (not closed by `close()`): a pipe, a regular file redirected to standard input, …
    init(fileDescriptor fd: Int32, name: String) throws(AudioError) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Self.openError(path: name, errno: errno) }
        let kind = st.st_mode & S_IFMT
        guard kind != S_IFDIR else {
            throw AudioError(.unreadable, path: name, message: "is a directory (expected an audio stream)")
        }
        self.fd = fd
        self.name = name
        self.ownsDescriptor = false
        self.isRegular = kind == S_IFREG
        self.baseOffset = isRegular ? max(0, Int64(lseek(fd, 0, SEEK_CUR))) : 0
        if isRegular && Int64(st.st_size) <= baseOffset {
            throw AudioError(.empty, path: name, message: "stream is empty (0 bytes; expected audio data)")
        }
    }

    deinit { close() }

    func close() {
        guard !closed else { return }
        closed = true
        if ownsDescriptor { _ = Foundation.close(fd) }
    }

    // MARK: - Reading (the decoders' callbacks use these)

    /// Stream position of the next `read` (bytes from `baseOffset`), for regular files.
    private(set) var position: Int64 = 0

    /// Reads up to `count` bytes: positioned for regular files (the descriptor's offset is left alone), sequential
    /// otherwise. Returns 0 at the end, -1 on an error (errno set). Retries EINTR.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Int {
        var n: Int
        repeat {
            n = isRegular ? pread(fd, buffer, count, off_t(baseOffset + position)) : Foundation.read(fd, buffer, count)
        } while n < 0 && errno == EINTR
        if n > 0 { position += Int64(n) }
        return n
    }

    /// Moves the read position (regular files only); false if not seekable or out of range.
    func seek(to offset: Int64) -> Bool {
        guard isRegular, offset >= 0 else { return false }
        position = offset
        return true
    }

    /// Stream length in bytes (regular files), else nil.
    var length: Int64? {
        guard isRegular else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return max(0, Int64(st.st_size) - baseOffset)
    }

    // MARK: - Sniffing

    /// Up to `count` bytes from the start of the stream, without consuming them: `pread` for a regular file, and
    /// for a pipe Linux `tee(2)`, which copies pipe data into a second pipe without consuming it (waiting until
    /// `count` bytes are in the pipe or its writer has closed it). Empty when neither works (a terminal, a socket):
    /// such a stream then goes to libsndfile.
    func peek(_ count: Int) -> [UInt8] {
        if isRegular {
            var bytes = [UInt8](repeating: 0, count: count)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(baseOffset)) }
            return n > 0 ? Array(bytes.prefix(n)) : []
        }
        return PipePeek.peek(fd, count: count)
    }

    // MARK: - Errors

    /// The one line for a failed `stat`/`open` of `path` with `errno` `code`.
    static func openError(path: String, errno code: Int32) -> AudioError {
        switch code {
        case ENOENT:
            return AudioError(.notFound, path: path, message: "no such file (expected an audio file)")
        case ELOOP:
            return AudioError(.unreadable, path: path, message: "too many levels of symbolic links (a symlink loop; "
                + "expected an audio file)")
        case EACCES, EPERM:
            return AudioError(.unreadable, path: path, message: "permission denied (cannot read the file or search "
                + "a directory on its path)")
        case ENOTDIR:
            return AudioError(.notFound, path: path, message: "a component of the path is not a directory (expected "
                + "a path to an audio file)")
        case ENAMETOOLONG:
            return AudioError(.notFound, path: path, message: "file name too long (expected a path to an audio file)")
        case EISDIR:
            return AudioError(.unreadable, path: path, message: "is a directory (expected an audio file)")
        case ENXIO, ENODEV:
            return AudioError(.unreadable, path: path, message: "no such device or address (the device or socket "
                + "behind the path is not available)")
        default:
            return AudioError(.unreadable, path: path, message: "cannot open the file",
                              underlying: String(cString: strerror(code)))
        }
    }
}

/// Non-consuming reads from a pipe with `tee(2)` (Linux).
enum PipePeek {
    static func peek(_ fd: Int32, count: Int) -> [UInt8] {
        var p: [Int32] = [0, 0]
        guard pipe(&p) == 0 else { return [] }
        defer { _ = Foundation.close(p[0]); _ = Foundation.close(p[1]) }
        // `tee` blocks until the source pipe holds data (or its writer is gone, then returns 0). It copies what is
        // there now; when that is fewer than `count` bytes, wait for more unless the writer has closed (POLLHUP).
        var copied = 0
        var waitedMs = 0
        while true {
            let n = sc_pipe_tee(fd, p[1], count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            // Drain the copy so the next `tee` copies from the start again.
            var scratch = [UInt8](repeating: 0, count: n)
            let got = scratch.withUnsafeMutableBytes { Foundation.read(p[0], $0.baseAddress, n) }
            if got == n && n >= count { return scratch }
            copied = max(copied, got)
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, 0)
            if pfd.revents & Int16(POLLHUP) != 0 || waitedMs >= 5_000 { return Array(scratch.prefix(max(0, got))) }
            usleep(1_000)
            waitedMs += 1
        }
        return []
    }
}

/// The decoder an input's first bytes call for.
enum InputKind: Equatable {
    case flac, oggVorbis, other

    /// "fLaC" starts a native FLAC stream (FLAC format spec, "STREAM"); an Ogg stream starts with a page
    /// ("OggS", RFC 3533 §6) whose first packet is a Vorbis identification header ("\u{1}vorbis", Vorbis I spec
    /// §4.2.1) for Ogg Vorbis. Everything else (WAV, AIFF, Ogg Opus or FLAC, ID3-prefixed FLAC …) is libsndfile's.
    static func sniff(_ bytes: [UInt8]) -> InputKind {
        if bytes.starts(with: Array("fLaC".utf8)) { return .flac }
        if bytes.starts(with: Array("OggS".utf8)), bytes.count > 27 {
            let packet = 27 + Int(bytes[26])
            if bytes.count >= packet + 7, bytes[packet..<(packet + 7)].elementsEqual([0x01] + Array("vorbis".utf8)) {
                return .oggVorbis
            }
        }
        return .other
    }
}

/// An audio file's container, told by its first bytes: what `record --input` (headerless PCM) refuses rather than
/// analysing its header and compressed data as samples (a FLAC file was 83 s of noise).
enum AudioContainer: Equatable, CustomStringConvertible {
    case wav, wave64, flac, ogg, aiff, caf, au, mp3, wavpack

    /// Bytes needed to tell them apart.
    static let headerBytes = 12

    /// The container whose header `bytes` starts with, or nil. Each signature is 3–4 bytes at offset 0 (and the
    /// form type at 8 for RIFF and AIFF; Wave64's GUID `riff` and its next 4 bytes): as 16-bit samples they are
    /// loud, specific values no recording starts with by chance (at most one in 2^32). An MP3 without an ID3 tag
    /// starts with a frame sync (0xFFE), which raw audio can: only the tag is taken.
    init?(header bytes: UnsafeRawBufferPointer) {
        func at(_ offset: Int, _ text: String) -> Bool {
            let t = Array(text.utf8)
            return bytes.count >= offset + t.count && bytes[offset..<(offset + t.count)].elementsEqual(t)
        }
        if (at(0, "RIFF") || at(0, "RIFX") || at(0, "RF64") || at(0, "BW64")) && at(8, "WAVE") { self = .wav }
        else if at(0, "riff"), bytes.count >= 8, bytes[4..<8].elementsEqual([0x2E, 0x91, 0xCF, 0x11]) { self = .wave64 }
        else if at(0, "fLaC") { self = .flac }
        else if at(0, "OggS") { self = .ogg }
        else if at(0, "FORM") && (at(8, "AIFF") || at(8, "AIFC")) { self = .aiff }
        else if at(0, "caff") { self = .caf }
        else if at(0, ".snd") { self = .au }
        else if at(0, "ID3") { self = .mp3 }
        else if at(0, "wvpk") { self = .wavpack }
        else { return nil }
    }

    /// Whether `sleepcycle analyze` reads it (libsndfile has no WavPack).
    var analyzable: Bool { self != .wavpack }

    var description: String {
        switch self {
        case .wav: "a WAV file"
        case .wave64: "a Wave64 file"
        case .flac: "a FLAC file"
        case .ogg: "an Ogg file"
        case .aiff: "an AIFF file"
        case .caf: "a CAF file"
        case .au: "an AU file"
        case .mp3: "an MP3 file"
        case .wavpack: "a WavPack file"
        }
    }
}
