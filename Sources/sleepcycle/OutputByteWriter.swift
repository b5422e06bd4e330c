import SleepCycleFormats
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A reusable output buffer written to a file descriptor in large `write(2)` calls.
///
/// Callers reserve room (`ensure`) and write bytes at `cursor`; `flushIfFull` hands whole chunks to the kernel.
final class OutputByteWriter {
    let fd: Int32
    private(set) var buffer: UnsafeMutablePointer<UInt8>
    let capacity: Int
    var count = 0
    /// Description of the destination for error messages ("standard output" or a path).
    let destination: String

    init(fd: Int32, destination: String = "standard output", capacity: Int = 1 << 20) {
        self.fd = fd
        self.destination = destination
        self.capacity = capacity
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    @inline(__always) var cursor: UnsafeMutablePointer<UInt8> { buffer + count }

    /// Makes sure `bytes` more can be written at `cursor` (flushing first if needed).
    @inline(__always) func ensure(_ bytes: Int) throws {
        if count + bytes > capacity { try flush() }
    }

    func append(_ s: String) throws {
        var s = s
        try s.withUTF8 { u in
            try ensure(u.count)
            precondition(u.count <= capacity)
            cursor.update(from: u.baseAddress!, count: u.count)
            count += u.count
        }
    }

    @inline(__always) func append(byte: UInt8) { buffer[count] = byte; count += 1 }

    /// Writes everything buffered.
    func flush() throws {
        var done = 0
        while done < count {
            let r = write(fd, buffer + done, count - done)
            if r < 0 {
                let code = errno
                if code == EINTR { continue }
                throw OutputError(message: "cannot write to \(destination) (\(InputFile.describe(errno: code)))",
                                  brokenPipe: code == EPIPE)
            }
            done += r
        }
        count = 0
    }
}

struct OutputError: Error, CustomStringConvertible {
    var message: String
    /// The reader went away (EPIPE).
    var brokenPipe = false
    var description: String { message }
}
