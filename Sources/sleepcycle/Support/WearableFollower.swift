import Foundation
import SleepCycle
import SleepCycleFormats

/// `record --hr PATH`: follows a wearable's readings while the night is recorded — a file another program appends
/// to (read as `tail -f` does) or a FIFO — and pushes each line's readings into the session as it arrives
/// (`WearableLineReader`). A bad line is skipped and counted (a live night is not stopped by one garbled reading);
/// the first few are logged with their line number.
final class WearableFollower: @unchecked Sendable {
    private let path: String
    private let push: @Sendable ([WearMetrics]) -> Void
    private let lock = NSLock()
    private var stopping = false
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)
    private(set) var readings = 0
    private(set) var badLines = 0
    /// Called once the last reading has been pushed (after `stop()`).
    var onStop: (@Sendable () -> Void)?

    /// Opens `path` (without waiting for a FIFO's writer); throws a one-line error when it cannot be opened.
    init(path: String, origin: ISO8601Time, push: @escaping @Sendable ([WearMetrics]) -> Void) throws {
        self.path = path
        self.push = push
        let fd = PathEncoding.withCString(path) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { throw CLIError(.noInput, "\(MessageText.path(path)): \(InputFile.describe(errno: errno))") }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else {
            close(fd)
            throw CLIError(.noInput, "\(MessageText.path(path)): is a directory (expected a file or FIFO of readings)")
        }
        let thread = Thread { [self] in
            defer { close(fd); done.signal() }
            var reader = WearableLineReader(origin: origin)
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    pending += buffer[0..<n]
                    while let newline = pending.firstIndex(of: 0x0A) {
                        handle(String(decoding: pending[..<newline], as: UTF8.self), reader: &reader)
                        pending.removeSubrange(...newline)
                    }
                    continue
                }
                if n < 0 && errno != EAGAIN && errno != EINTR {
                    Diagnostics.log.warning("\(MessageText.path(path)): \(InputFile.describe(errno: errno)); no more wearable readings")
                    return
                }
                // Nothing new (the end of the file so far, or a FIFO without a writer): look again shortly, unless
                // the night is stopping — then what is pending is the last line.
                if lock.withLock({ stopping }) {
                    if !pending.isEmpty { handle(String(decoding: pending, as: UTF8.self), reader: &reader) }
                    return
                }
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        thread.name = "sleepcycle.wearable"
        self.thread = thread
        thread.start()
    }

    private func handle(_ line: String, reader: inout WearableLineReader) {
        do {
            let r = try reader.read(line: line, path: path)
            if !r.isEmpty { push(r); lock.withLock { readings += r.count } }
        } catch {
            let count = lock.withLock { badLines += 1; return badLines }
            if count <= 3 { Diagnostics.log.warning("\(error) (skipped)") }
        }
    }

    /// Reads what has arrived so far, then stops following.
    func stop() -> (readings: Int, badLines: Int) {
        lock.withLock { stopping = true }
        done.wait()
        onStop?()
        return lock.withLock { (readings, badLines) }
    }
}
