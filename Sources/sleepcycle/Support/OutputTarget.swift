#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SleepCycleFormats

/// Where a command's output goes (`--output PATH|-`), following the contract's rules (docs/cli.md, "Output"):
///
/// * none or `-`: standard output.
/// * an existing regular file: replaced atomically — written to a temporary file beside it, given the old file's
///   mode and owner, synced, then renamed over it — so a failure leaves the old file as it was. Refused when it is
///   one of the command's inputs (the recording, `--hr` …, compared by device and inode, so links and other
///   spellings of the same file count), when it is read-only, or when the user may not write it.
/// * an existing device, FIFO or other non-regular file: written through, never replaced (`/dev/null` stays a
///   device). A FIFO with no reader is an error, not a hang.
/// * a symbolic link: followed (also when dangling: the file it names is created); a loop is an error.
/// * one of this process's open descriptors (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`, also reached through
///   links): written to that descriptor, so `--output /dev/stdout >> log` appends to the log instead of replacing it.
/// * a new path: created (mode 0666 minus the umask) only when the output is complete.
///
/// Nothing else on the system is replaced or deleted. `resolve` checks everything it can before the command does
/// its work; `write` reports the remaining failures (a full disk) as one line, leaving no partial file.
struct OutputTarget {
    enum Destination: Equatable {
        case standardOutput
        /// A regular file to create or replace atomically (`existing`: the file's mode and owner when it exists).
        case regularFile(path: String, existing: Ownership?)
        /// A device, FIFO or other special file to write through.
        case special(path: String, isFIFO: Bool)
        /// A descriptor this process already has open (`/dev/stderr`, `/dev/fd/3`, `/proc/self/fd/3`): written as
        /// the shell opened it (`>>` appends), never reopened or replaced.
        case descriptor(Int32)
    }

    struct Ownership: Equatable { var mode: mode_t; var uid: uid_t; var gid: gid_t }

    /// The path as the user gave it (for messages).
    let name: String
    let destination: Destination

    static let standardOutput = OutputTarget(name: "standard output", destination: .standardOutput)

    /// The files of the store at `path` (the SQLite database, its write-ahead log, shared memory and rollback
    /// journal, and the recorder's lock file): all inputs of a command that reads the store, since writing over any
    /// of them damages it (a replaced lock file lets a second recorder in beside the first).
    static func databaseFiles(_ path: String) -> [String] {
        [path, path + "-wal", path + "-shm", path + "-journal", path + ".lock"]
    }

    /// Checks `path` (nil or `-`: standard output) against the rules; `inputs` are the files the command reads
    /// (the recording, wearable files, key files, configuration files, the store's files).
    /// `made`: what the command itself creates (a clips folder), refused as the output too.
    static func resolve(_ path: String?, inputs: [String], made: [String] = []) throws(CLIError) -> OutputTarget {
        guard let path, path != "-" else { return .standardOutput }
        guard !path.isEmpty else { throw CLIError(.usage, "--output: the path is empty") }
        let shown = MessageText.path(path)
        func fail(_ why: String) -> CLIError { CLIError(.cannotCreate, "\(shown): \(why)") }

        let (target, descriptor) = try followLinks(path, shown: shown)
        if let fd = descriptor {
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0 else { throw fail("is descriptor \(fd), which is not open") }
            guard flags & O_ACCMODE != O_RDONLY else { throw fail("is descriptor \(fd), which is open for reading only") }
            return OutputTarget(name: path, destination: fd == STDOUT_FILENO ? .standardOutput : .descriptor(fd))
        }
        var st = stat()
        if PathEncoding.withCString(target, { stat($0, &st) }) != 0 {
            let code = errno
            guard code == ENOENT else { throw fail(InputFile.describe(errno: code)) }
            try checkDirectory(of: target, shown: shown)
            // A file the command makes itself (a new store, the clips folder) does not exist yet either: the same
            // place by another spelling is found by its folder's identity and its name. Writing the output there
            // after the work replaced a night's new store with the summary.
            if let place = Place(target) {
                for input in inputs + made where input != "-" && Place(input) == place {
                    throw fail("is also \(made.contains(input) ? "a path this command writes" : "an input of this command") "
                        + "(\(MessageText.path(input))): writing the output there would destroy it; choose another output path")
                }
            }
            return OutputTarget(name: path, destination: .regularFile(path: target, existing: nil))
        }
        // Only a regular file is destroyed by writing to it: a device or FIFO that is also an input (`/dev/null`
        // both ways) is written through like any other.
        for input in inputs + made where st.st_mode & S_IFMT == S_IFREG {
            var other = stat()
            let found = input == "-" ? fstat(STDIN_FILENO, &other) : PathEncoding.withCString(input, { stat($0, &other) })
            if found == 0, other.st_dev == st.st_dev, other.st_ino == st.st_ino {
                throw fail("is also an input of this command (\(input == "-" ? "standard input" : MessageText.path(input))): writing the output there "
                    + "would destroy it; choose another output path")
            }
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
            throw fail("is a directory (expected a file path for the output)")
        case S_IFREG:
            guard st.st_mode & 0o222 != 0 else {
                throw fail("is read-only (mode \(String(st.st_mode & 0o777, radix: 8))): not replaced")
            }
            guard PathEncoding.withCString(target, { access($0, W_OK) }) == 0 else {
                throw fail(InputFile.describe(errno: errno))
            }
            try checkDirectory(of: target, shown: shown)
            return OutputTarget(name: path, destination: .regularFile(
                path: target, existing: Ownership(mode: st.st_mode & 0o7777, uid: st.st_uid, gid: st.st_gid)))
        case S_IFSOCK:
            throw fail("is a socket (expected a file, a device or a FIFO)")
        default:
            return OutputTarget(name: path, destination: .special(path: target, isFIFO: st.st_mode & S_IFMT == S_IFIFO))
        }
    }

    /// Where a path that may not exist yet would be: its folder's device and inode, and its last component (links
    /// followed). nil when its folder does not exist.
    struct Place: Equatable {
        var device: dev_t, inode: ino_t
        var name: [UInt8]

        init?(_ path: String) {
            guard let (target, descriptor) = try? OutputTarget.followLinks(path, shown: ""), descriptor == nil else {
                return nil
            }
            var bytes = PathEncoding.bytes(target)
            while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
            let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
            let folder = slash.map { $0 == 0 ? "/" : PathEncoding.string(fromBytes: bytes[..<$0]) } ?? "."
            name = Array(slash.map { bytes[($0 + 1)...] } ?? bytes[...])
            guard !name.isEmpty, name != Array(".".utf8), name != Array("..".utf8) else { return nil }
            var st = stat()
            guard PathEncoding.withCString(folder, { stat($0, &st) }) == 0 else { return nil }
            device = st.st_dev; inode = st.st_ino
        }
    }

    /// The path with symbolic links followed, also when the last one dangles (the path it names is returned), or
    /// the descriptor of this process it names.
    private static func followLinks(_ path: String, shown: String) throws(CLIError) -> (String, descriptor: Int32?) {
        var current = path
        for _ in 0..<40 {
            if let fd = descriptorNumber(current) { return (current, fd) }
            var st = stat()
            guard PathEncoding.withCString(current, { lstat($0, &st) }) == 0 else {
                let code = errno
                if code == ENOENT { return (current, nil) }
                throw CLIError(.cannotCreate, "\(shown): \(InputFile.describe(errno: code))")
            }
            guard st.st_mode & S_IFMT == S_IFLNK else { return (current, nil) }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = PathEncoding.withCString(current) { readlink($0, &buffer, buffer.count - 1) }
            guard n >= 0 else { throw CLIError(.cannotCreate, "\(shown): \(InputFile.describe(errno: errno))") }
            let link = PathEncoding.string(fromBytes: buffer.prefix(n).map { UInt8(bitPattern: $0) })
            if link.hasPrefix("/") {
                current = link
            } else {
                let bytes = PathEncoding.bytes(current)
                let dir = bytes.lastIndex(of: UInt8(ascii: "/")).map { PathEncoding.string(fromBytes: bytes[...$0]) } ?? ""
                current = dir + link
            }
        }
        throw CLIError(.cannotCreate, "\(shown): \(InputFile.describe(errno: ELOOP))")
    }

    /// N when `path` names descriptor N of this process: `/dev/fd/N` or `/proc/{self,thread-self,<pid>}/fd/N`.
    /// (Opening those reopens the file the descriptor points at, from its start: not what the shell asked for.)
    private static func descriptorNumber(_ path: String) -> Int32? {
        for prefix in ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/\(getpid())/fd/"]
        where path.hasPrefix(prefix) {
            let rest = path.dropFirst(prefix.count)
            guard !rest.isEmpty, rest.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int32(rest)
        }
        return nil
    }

    /// The directory that will hold a new or replaced file must exist and be writable.
    private static func checkDirectory(of path: String, shown: String) throws(CLIError) {
        let bytes = PathEncoding.bytes(path)
        let dir = bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 == 0 ? "/" : PathEncoding.string(fromBytes: bytes[..<$0]) } ?? "."
        var st = stat()
        guard PathEncoding.withCString(dir, { stat($0, &st) }) == 0 else {
            let code = errno
            throw CLIError(.cannotCreate, "\(shown): cannot create the file: "
                + (code == ENOENT ? "its directory \(MessageText.path(dir)) does not exist" : InputFile.describe(errno: code)))
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw CLIError(.cannotCreate, "\(shown): cannot create the file: \(MessageText.path(dir)) is not a directory")
        }
        guard PathEncoding.withCString(dir, { access($0, W_OK | X_OK) }) == 0 else {
            throw CLIError(.cannotCreate, "\(shown): cannot create the file in \(MessageText.path(dir)) ("
                + InputFile.describe(errno: errno) + ")")
        }
    }

    /// Writes `bytes` as the whole output.
    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    func write(_ data: UnsafeRawBufferPointer) throws(CLIError) {
        switch destination {
        case .standardOutput:
            try Self.writeAll(STDOUT_FILENO, data, name: name)
        case .special(let path, let isFIFO):
            // A FIFO is opened without blocking first: with no reader, open fails (ENXIO) instead of hanging.
            let fd = PathEncoding.withCString(path) { open($0, O_WRONLY | O_CLOEXEC | O_NOCTTY | (isFIFO ? O_NONBLOCK : 0)) }
            guard fd >= 0 else { throw CLIError(.cannotCreate, "\(MessageText.path(name)): \(InputFile.describe(errno: errno))") }
            defer { close(fd) }
            if isFIFO { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) }
            try Self.writeAll(fd, data, name: name)
        case .regularFile(let path, let existing):
            try Self.replaceAtomically(path: path, existing: existing, data: data, name: name)
        case .descriptor(let fd):
            try Self.writeAll(fd, data, name: name)
        }
    }

    /// Writes to a temporary file in the target's directory and renames it over the target.
    private static func replaceAtomically(path: String, existing: Ownership?, data: UnsafeRawBufferPointer,
                                          name: String) throws(CLIError) {
        let shown = MessageText.path(name)
        let bytes = PathEncoding.bytes(path)
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let dir = slash.map { Array(bytes[...$0]) } ?? []
        let base = slash.map { Array(bytes[($0 + 1)...]) } ?? bytes
        var template = (dir + Array(".".utf8) + base.prefix(200) + Array(".XXXXXX".utf8)).map { CChar(bitPattern: $0) } + [0]
        let fd = mkstemp(&template)
        guard fd >= 0 else {
            throw CLIError(.cannotCreate, "\(shown): cannot create a temporary file beside it (\(InputFile.describe(errno: errno)))")
        }
        let temporary = PathEncoding.string(fromBytes: template.dropLast().map { UInt8(bitPattern: $0) })
        var committed = false
        defer {
            close(fd)
            if !committed { _ = PathEncoding.withCString(temporary) { unlink($0) } }
        }
        if let existing {
            _ = fchmod(fd, existing.mode)
            if fchown(fd, existing.uid, existing.gid) != 0 && errno != EPERM {
                throw CLIError(.ioError, "\(shown): cannot keep the file's owner (\(InputFile.describe(errno: errno)))")
            }
        } else {
            let mask = umask(0)
            umask(mask)
            _ = fchmod(fd, 0o666 & ~mask)
        }
        try writeAll(fd, data, name: name, unchanged: existing != nil)
        guard fsync(fd) == 0 else {
            throw CLIError(.ioError, "\(shown): cannot write the output (\(InputFile.describe(errno: errno)))"
                + (existing != nil ? "; the file is unchanged" : ""))
        }
        let renamed = PathEncoding.withCString(temporary) { from in PathEncoding.withCString(path) { rename(from, $0) } }
        guard renamed == 0 else {
            throw CLIError(.cannotCreate, "\(shown): cannot replace the file (\(InputFile.describe(errno: errno)))")
        }
        committed = true
    }

    /// `write(2)` until done, retrying interruptions.
    private static func writeAll(_ fd: Int32, _ data: UnsafeRawBufferPointer, name: String,
                                 unchanged: Bool = false) throws(CLIError) {
        var done = 0
        while done < data.count {
            let n = Glibc.write(fd, data.baseAddress! + done, data.count - done)
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EPIPE { throw CLIError(.brokenPipe, "") }
                throw CLIError(.ioError, "\(MessageText.path(name)): cannot write the output ("
                    + InputFile.describe(errno: code) + ")" + (unchanged ? "; the file is unchanged" : ""))
            }
            done += n
        }
    }
}
