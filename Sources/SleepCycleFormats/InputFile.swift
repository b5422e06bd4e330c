#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A problem with an input file, printed as one line: `path:line: message` (the line when there is one).
public struct InputFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Whether the file could not be read at all, or was read and is not what was expected.
    public enum Kind: Sendable, Hashable { case unreadable, malformed }
    public var kind: Kind
    /// The file (or `-` for standard input), as the user named it.
    public var path: String
    /// 1-based line number, when the problem is on one line.
    public var line: Int?
    public var message: String
    public init(path: String, line: Int? = nil, message: String, kind: Kind = .malformed) {
        self.path = path; self.line = line; self.message = message; self.kind = kind
    }
    public var description: String {
        MessageText.path(path) + (line.map { ":\($0)" } ?? "") + ": " + message
    }
}

/// Reading whole small input files (CSV side inputs, keys, model files) with errors a person can act on.
public enum InputFile {
    /// Reads `path` (`-`: standard input) to its end. Refuses directories, NUL bytes when `text` (a binary file
    /// given where text is expected, or `/dev/zero`: found in the first block, not after reading forever) and
    /// more than `limit` bytes.
    public static func read(_ path: String, limit: Int = 256 << 20, text: Bool = true) throws(InputFileError) -> [UInt8] {
        let fd: Int32
        if path == "-" {
            fd = STDIN_FILENO
        } else {
            fd = PathEncoding.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
            guard fd >= 0 else { throw InputFileError(path: path, message: describe(errno: errno), kind: .unreadable) }
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
            throw InputFileError(path: path, message: describe(errno: EISDIR), kind: .unreadable)
        }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw InputFileError(path: path, message: "cannot read (" + describe(errno: errno) + ")", kind: .unreadable)
            }
            if n == 0 { break }
            if text, let zero = chunk[0..<n].firstIndex(of: 0) {
                throw InputFileError(path: path, message: "not a text file (a NUL byte at byte \(data.count + zero + 1))")
            }
            guard data.count + n <= limit else {
                throw InputFileError(path: path, message: "larger than \(limit >> 20) MiB (expected a small text file)")
            }
            data.append(contentsOf: chunk[0..<n])
        }
        return data
    }

    /// A short description of an `errno` value from opening or reading a path.
    public static func describe(errno code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EACCES, EPERM: "permission denied"
        case ELOOP: "too many levels of symbolic links (a symbolic link loop?)"
        case ENOTDIR: "a component of the path is not a directory"
        case EISDIR: "is a directory"
        case ENAMETOOLONG: "file name too long"
        case ENXIO: "no such device or address (a FIFO with no reader, or a missing device)"
        case ENOSPC: "no space left on the device"
        case EROFS: "read-only file system"
        case EIO: "input/output error"
        default: String(cString: strerror(code))
        }
    }
}
