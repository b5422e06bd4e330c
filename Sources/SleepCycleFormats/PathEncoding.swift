#if canImport(Glibc)
import Glibc
#endif

/// File names are bytes on Linux, not necessarily UTF-8; Swift strings are Unicode. This mapping carries any file
/// name through a `String` and back unchanged: valid UTF-8 is decoded as usual, and each byte of an invalid
/// sequence becomes the private-use scalar U+10FE00 + byte (bytes 0x80…0xFF → U+10FE80…U+10FEFF), the same idea
/// as Python's "surrogateescape" (PEP 383), which Swift strings cannot hold. A real file name containing those
/// private-use scalars would be misread as raw bytes; none is known to exist.
///
/// The command line decodes its arguments with `string(fromBytes:)`; everything that opens a path by name goes
/// through `withCString`; messages show the raw bytes as `\xNN` (`MessageText`).
public enum PathEncoding {
    private static let base: UInt32 = 0x10FE00

    /// The folder part of `path`: what comes before its last `/` (trailing slashes ignored), `/` for a name in the
    /// root, and "" for a bare name. By bytes: Foundation's `deletingLastPathComponent` traps on a one-character
    /// name (`x`, `x/`).
    public static func folder(of path: String) -> String {
        var bytes = self.bytes(path)[...]
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes = bytes.dropLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return slash == bytes.startIndex ? "/" : string(fromBytes: bytes[..<slash])
    }

    /// `path` with every symbolic link, `.` and `..` resolved (`realpath(3)`), or nil if it does not exist.
    public static func resolved(_ path: String) -> String? {
        withCString(path) { realpath($0, nil) }.map { resolved in
            defer { free(resolved) }
            return string(fromBytes: UnsafeBufferPointer(start: resolved, count: strlen(resolved)).map { UInt8(bitPattern: $0) })
        }
    }

    /// `component` (a path component, or a path when `keepingSlashes`) percent-encoded by its original bytes for a
    /// URL: letters, digits and `-._~!$&'()*+,=:@` stay, every other byte becomes `%XX` — a name that is not UTF-8
    /// too (Foundation would encode its escape scalars' UTF-8, a file that does not exist).
    public static func urlEncoded(_ component: String, keepingSlashes: Bool = false) -> String {
        let kept = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,=:@".utf8)
        var out = ""
        for b in bytes(component) {
            if kept.contains(b) || (keepingSlashes && b == UInt8(ascii: "/")) {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// Whether something exists at `path`, links followed (a dangling link is absent).
    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return withCString(path) { stat($0, &st) } == 0
    }

    /// The string for a file name's bytes.
    public static func string<Bytes: Collection<UInt8>>(fromBytes bytes: Bytes) -> String {
        var scalars = String.UnicodeScalarView()
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var pending = Array(bytes)[...]
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                scalars.append(Unicode.UTF8.decode(encoded))
                pending = pending.dropFirst(encoded.count)
            case .error(let length):
                for b in pending.prefix(length) { scalars.append(Unicode.Scalar(base + UInt32(b))!) }
                pending = pending.dropFirst(length)
            case .emptyInput:
                return String(scalars)
            }
        }
    }

    /// The raw byte a scalar stands for, if it is one of the escape scalars.
    public static func rawByte(_ u: Unicode.Scalar) -> UInt8? {
        u.value >= base + 0x80 && u.value <= base + 0xFF ? UInt8(u.value - base) : nil
    }

    /// `path` with each raw byte written as `\xNN` (valid UTF-8 unchanged): how a non-UTF-8 name is shown in the
    /// JSON's `source.path` and in messages.
    public static func display(_ path: String) -> String {
        guard path.unicodeScalars.contains(where: { rawByte($0) != nil }) else { return path }
        var out = ""
        for u in path.unicodeScalars {
            if let b = rawByte(u) { out += "\\x" + String(b, radix: 16, uppercase: true) } else { out.unicodeScalars.append(u) }
        }
        return out
    }

    /// The bytes of the file name `path` (the inverse of `string(fromBytes:)`).
    public static func bytes(_ path: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count)
        for u in path.unicodeScalars {
            if let b = rawByte(u) { out.append(b) } else { out.append(contentsOf: String(u).utf8) }
        }
        return out
    }

    /// Calls `body` with `path` as a NUL-terminated C string of its original bytes.
    public static func withCString<R, E: Error>(_ path: String,
                                                _ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        var raw = bytes(path).map { CChar(bitPattern: $0) }
        raw.append(0)
        return try raw.withUnsafeBufferPointer { (p) throws(E) -> R in try body(p.baseAddress!) }
    }
}

extension PathEncoding {
    /// Creates `path` and any missing parents (mode 0700), as `mkdir -p`; nil when it is a folder at the end, else
    /// the `errno` of the step that failed (ENOTDIR: something other than a folder is in the way).
    public static func makeFolders(_ path: String) -> Int32? {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            var st = stat()
            if PathEncoding.withCString(prefix, { mkdir($0, 0o700) }) != 0 {
                let failure = errno
                guard failure == EEXIST else { return failure }
                guard PathEncoding.withCString(prefix, { stat($0, &st) }) == 0 else { return errno }
                guard (st.st_mode & S_IFMT) == S_IFDIR else { return ENOTDIR }
            }
            prefix += "/"
        }
        return nil
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
