import Foundation
import SleepCycle
import SleepCycleAudio
import SleepCycleFormats

/// The recording a command reads: a path, or standard input for `-`.
///
/// Standard input that is a regular file (`< night.wav`) is read directly and hashed like a path. Any other stream
/// (a pipe from another program) passes through `StandardInputTee`, a thread that copies it to the decoder through a
/// pipe of our own while keeping its size and its first and last 64 KiB, so the session id is the contract's
/// (name `-`, size, content digest, start) once the stream has ended — without holding the stream in memory or on
/// disk.
struct InputAudio {
    let file: AudioFileSource
    /// The path as given (`-` for standard input).
    let path: String
    private let tee: StandardInputTee?

    static func open(_ path: String) throws -> InputAudio {
        guard path == "-" else { return InputAudio(file: try AudioFileSource(path: path), path: path, tee: nil) }
        var st = stat()
        let kind = fstat(STDIN_FILENO, &st) == 0 ? st.st_mode & S_IFMT : 0
        if kind == S_IFDIR {
            throw AudioError(.unreadable, path: "-", message: "is a directory (expected an audio stream)")
        }
        if kind == S_IFREG {
            return InputAudio(file: try AudioFileSource(fileDescriptor: STDIN_FILENO, name: "-"), path: path, tee: nil)
        }
        let tee = try StandardInputTee()
        return InputAudio(file: try AudioFileSource(fileDescriptor: tee.readEnd, name: "-"), path: path, tee: tee)
    }

    /// The session id known before the analysis (final for paths and redirected files).
    func sessionId(start: Date) -> UUID {
        if path == "-", tee == nil, let (size, edges) = try? SessionIdentifier.readEdges(fileDescriptor: STDIN_FILENO) {
            return SessionIdentifier.forFile(name: "-", size: size, edges: edges, start: start)
        }
        return SessionIdentifier.forFile(path: path, start: start)
            ?? SessionIdentifier.forFile(name: path, size: -1, edges: [], start: start)
    }

    /// The contract's id for a piped stream, once it has been read to its end (nil otherwise).
    func finalSessionId(start: Date) -> UUID? {
        guard let tee else { return nil }
        let (size, edges) = tee.finish()
        return SessionIdentifier.forFile(name: "-", size: size, edges: edges, start: start)
    }
}

/// Copies standard input to a pipe the decoder reads, keeping the stream's size and its first and last 64 KiB.
final class StandardInputTee: @unchecked Sendable {
    let readEnd: Int32
    private let writeEnd: Int32
    private let thread: Thread
    private let done = DispatchSemaphore(value: 0)
    private var head: [UInt8] = []
    private var tail: [UInt8] = []
    private var size: Int64 = 0

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw CLIError(.ioError, "-: cannot make a pipe for standard input (\(InputFile.describe(errno: errno)))")
        }
        readEnd = fds[0]
        writeEnd = fds[1]
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        let box = Box()
        thread = Thread { box.tee?.copy() }
        box.tee = self
        thread.name = "sleepcycle.stdin"
        thread.start()
    }

    private final class Box: @unchecked Sendable { weak var tee: StandardInputTee? }

    private func copy() {
        defer { close(writeEnd); done.signal() }
        let edge = SessionIdentifier.edgeBytes
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            let chunk = buffer[0..<n]
            if head.count < edge { head += chunk.prefix(edge - head.count) }
            tail += chunk
            if tail.count > 2 * edge { tail.removeFirst(tail.count - edge) }
            size += Int64(n)
            var written = 0
            while written < n {
                let w = buffer.withUnsafeBytes { write(writeEnd, $0.baseAddress! + written, n - written) }
                if w < 0 && errno == EINTR { continue }
                guard w > 0 else { return }         // the decoder stopped reading
                written += w
            }
        }
    }

    /// Waits for the copy to end and returns the stream's size and edges, hashed like a file's.
    func finish() -> (Int64, [UInt8]) {
        close(readEnd)       // a decoder that stopped early must not keep the copier blocked
        done.wait()
        let edge = SessionIdentifier.edgeBytes
        return (size, size > Int64(edge) ? head + tail.suffix(edge) : head)
    }
}
