import Crypto
import Foundation
import SleepCycleFormats

/// Name-based session ids: RFC 4122 §4.3 version-5 UUIDs (SHA-1 of a namespace id and a name).
public enum SessionIdentifier {
    /// Namespace of sleepcycle file sessions (a fixed random UUID).
    public static let fileNamespace = UUID(uuidString: "8C1F6F0E-5B7A-4E2B-9C3D-2A6E1B7D4F10")!

    /// Bytes hashed at each end of the input.
    public static let edgeBytes = 64 << 10

    /// The id of a file analysis, from the input's file NAME (last path component), its size in bytes, a SHA-1 of
    /// its first and last 64 KiB, and the start time (ISO 8601 UTC, milliseconds), joined by "\n" (the JSON
    /// contract). The same input and options give the same id wherever the file is copied; two recordings that
    /// share a name and size differ in their content digest.
    public static func forFile(name: String, size: Int64, edges: some Sequence<UInt8>, start: Date) -> UUID {
        let digest = Insecure.SHA1.hash(data: Array(edges)).map { String(format: "%02x", $0) }.joined()
        return uuidV5(namespace: fileNamespace, name: "\(name)\n\(size)\n\(digest)\n\(ISO8601Time.utcString(from: start))")
    }

    /// The id of the file at `path`: its first and last `edgeBytes` are read here (nil if it cannot be read).
    public static func forFile(path: String, start: Date) -> UUID? {
        guard let (size, edges) = try? readEdges(path: path) else { return nil }
        return forFile(name: PathEncoding.bytes(path).split(separator: UInt8(ascii: "/")).last.map {
            PathEncoding.string(fromBytes: $0)
        } ?? path, size: size, edges: edges, start: start)
    }

    /// The size of the regular file at `path` and its first and last `edgeBytes` (just the head when the whole
    /// file fits in it; the two overlap between one and two times `edgeBytes`).
    static func readEdges(path: String) throws -> (Int64, [UInt8]) {
        // Only a regular file is read: opening a FIFO would wait for a writer (one that has finished never comes).
        var st = stat()
        guard PathEncoding.withCString(path, { stat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw POSIXError(.EINVAL)
        }
        let fd = PathEncoding.withCString(path) { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        return try readEdges(fileDescriptor: fd)
    }

    /// The size and edges of the regular file open as `fd` (read with `pread`: the file offset is untouched).
    public static func readEdges(fileDescriptor fd: Int32) throws -> (Int64, [UInt8]) {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { throw POSIXError(.EINVAL) }
        let size = Int64(st.st_size)
        func read(at offset: Int64, count: Int) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                done += n
            }
            return Array(buffer.prefix(done))
        }
        let edge = Int64(edgeBytes)
        let head = read(at: 0, count: Int(min(size, edge)))
        let tail = size > edge ? read(at: size - edge, count: edgeBytes) : []    // overlaps the head below 128 KiB
        return (size, head + tail)
    }

    /// RFC 4122 §4.3: SHA-1(namespace bytes ‖ name UTF-8), first 16 bytes, version 5, variant 10.
    public static func uuidV5(namespace: UUID, name: String) -> UUID {
        let ns = namespace.uuid
        var bytes: [UInt8] = [ns.0, ns.1, ns.2, ns.3, ns.4, ns.5, ns.6, ns.7,
                              ns.8, ns.9, ns.10, ns.11, ns.12, ns.13, ns.14, ns.15]
        bytes += Array(name.utf8)
        var h = Array(Insecure.SHA1.hash(data: bytes))
        h[6] = (h[6] & 0x0F) | 0x50
        h[8] = (h[8] & 0x3F) | 0x80
        return UUID(uuid: (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7],
                           h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]))
    }
}
