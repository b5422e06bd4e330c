// Encrypted clips at rest: AES-256-GCM in a small documented container (docs/0010-audio-clips.md).
import Crypto
import Foundation
import SleepCycleFormats

/// A problem with a clip, a clips folder or a key, as one line naming the file.
public struct ClipError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of problem: a file that is missing or unreadable, one that is not what it should be (a key of the
    /// wrong size, a clip that does not decrypt), a folder that cannot be written, or a setting out of range.
    public enum Kind: Sendable, Equatable { case missing, invalid, unwritable, setting }
    public var kind: Kind
    public var path: String
    public var message: String
    public init(_ kind: Kind = .invalid, path: String, message: String) {
        self.kind = kind; self.path = path; self.message = message
    }
    public var description: String { "\(MessageText.path(path)): \(message)" }
}

/// A 256-bit AES key for clips. The key file holds exactly 32 raw bytes, or 64 hexadecimal digits (surrounding
/// whitespace, e.g. a final newline, is ignored).
public struct ClipKey: Sendable {
    let key: SymmetricKey
    /// The key, for other data the night encrypts with it (the journal's wearable readings).
    public var symmetricKey: SymmetricKey { key }
    /// Where the key came from (its file, for messages).
    public private(set) var source = "the key"

    public init(bytes: [UInt8]) throws(ClipError) {
        guard bytes.count == 32 else {
            throw ClipError(path: "key", message: "an AES-256 key is 32 bytes (got \(bytes.count))")
        }
        key = SymmetricKey(data: bytes)
    }

    /// Reads a key file.
    public static func load(path: String) throws(ClipError) -> ClipKey {
        // A key is 32 bytes or 64 hexadecimal digits: read at most a little more, so that a large file given by
        // mistake is refused at once (and a key from a pipe or process substitution still reads). The name goes
        // to the system as bytes (`PathEncoding`: a name that is not UTF-8 opens too).
        let fd = PathEncoding.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw ClipError(.missing, path: path, message: errno == ENOENT ? "key file not found"
                : "cannot read the key file (\(InputFile.describe(errno: errno)))")
        }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR {
            throw ClipError(.missing, path: path, message: "is a directory (expected a key file)")
        }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else {
                throw ClipError(.missing, path: path, message: "cannot read the key file (\(InputFile.describe(errno: errno)))")
            }
            if n == 0 { break }
            count += n
        }
        let data = Data(bytes.prefix(count))
        guard data.count < 4096 else {
            throw ClipError(path: path, message: "not an AES-256 key: expected 32 raw bytes or 64 hexadecimal digits "
                + "(the file is larger than 4 KiB)")
        }
        var key: ClipKey
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if data.count == 32 {
            key = try ClipKey(bytes: Array(data))
        } else if text.count == 64, let bytes = Self.hexBytes(text) {
            key = try ClipKey(bytes: bytes)
        } else {
            throw ClipError(path: path, message: "not an AES-256 key: expected 32 raw bytes or 64 hexadecimal digits "
                + "(found \(data.count) bytes)")
        }
        key.source = path
        return key
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let h = high { bytes.append(h << 4 | v); high = nil } else { high = v }
        }
        return high == nil ? bytes : nil
    }
}

/// The encrypted clip container (`.flac.enc`):
///
/// | offset | bytes | content |
/// |---|---|---|
/// | 0 | 8 | magic `SCCLIPv1` (ASCII) |
/// | 8 | 4 | algorithm `AESG` (AES-256-GCM) |
/// | 12 | 12 | nonce (random per clip) |
/// | 24 | n | ciphertext of the FLAC file |
/// | 24 + n | 16 | GCM tag |
///
/// The 12-byte header (magic and algorithm) is authenticated as additional data, so a changed header, nonce,
/// ciphertext or tag all fail to decrypt.
public enum ClipContainer {
    static let header: [UInt8] = Array("SCCLIPv1AESG".utf8)
    /// Header, nonce and tag: what an encrypted clip adds to its FLAC.
    public static let overhead = 12 + 12 + 16

    /// Encrypts `plain` (a FLAC file) with a fresh random nonce.
    public static func seal(_ plain: [UInt8], key: ClipKey) throws(ClipError) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plain, using: key.key, nonce: AES.GCM.Nonce(), authenticating: header)
            return header + Array(box.nonce) + Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw ClipError(path: "clip", message: "encryption failed (\(error))")
        }
    }

    /// Decrypts a container; `name` is the file's name for messages.
    public static func open(_ sealed: [UInt8], key: ClipKey, name: String) throws(ClipError) -> [UInt8] {
        guard sealed.count >= overhead, sealed.starts(with: header.prefix(8)) else {
            throw ClipError(path: name, message: "not an encrypted sleepcycle clip (expected a SCCLIPv1 header)")
        }
        guard Array(sealed[8..<12]) == Array(header[8..<12]) else {
            throw ClipError(path: name, message: "unsupported clip encryption (expected AES-256-GCM)")
        }
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: sealed[12..<24]),
                                            ciphertext: sealed[24..<(sealed.count - 16)],
                                            tag: sealed[(sealed.count - 16)...])
            return Array(try AES.GCM.open(box, using: key.key, authenticating: header))
        } catch {
            throw ClipError(path: name, message: "cannot decrypt: wrong key, or the file was altered or truncated")
        }
    }
}
