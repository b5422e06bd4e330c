// Reading a descriptor as data arrives, in a wait that another thread can end: poll(2) on it and on a wake-up pipe.
import Foundation

/// Reads an input descriptor (a pipe, FIFO, regular file or socket) chunk by chunk, blocking in `poll(2)` on the
/// descriptor and on a private wake-up pipe, so that `interrupt()` from any thread ends a waiting `read` at once.
///
/// The descriptor's flags are left as they are (it may be standard input, shared with other processes): a
/// non-blocking descriptor works too, since `EAGAIN` only means waiting in `poll` again. This is the one place the
/// source's `poll`/`read` return codes are interpreted: `EINTR` and `EAGAIN` are retried, anything else throws an
/// `AudioError` naming the input. Nothing here allocates after `init`.
///
/// Only one thread reads; `interrupt()` may be called from any thread, any number of times.
final class InterruptibleReader: @unchecked Sendable {
    /// What one `read` produced.
    enum Outcome: Equatable {
        /// This many bytes (> 0) were stored.
        case bytes(Int)
        /// The writer closed its end (or a file ended): no more data will come.
        case endOfInput
        /// `interrupt()` was called; the descriptor was not read.
        case interrupted
    }

    let fd: Int32
    let name: String
    /// The wake-up pipe: `interrupt()` writes one byte to `wakeWrite` and nobody ever reads it, so every later `poll`
    /// sees `wakeRead` readable at once.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let pollSet: UnsafeMutablePointer<pollfd>

    /// Checks that `fd` is an open descriptor one can stream from (not a directory, not a terminal) and prepares the
    /// wake-up pipe. `fd` is never closed here.
    init(fileDescriptor fd: Int32, name: String) throws(AudioError) {
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw AudioError(.unreadable, path: name, message: "descriptor \(fd) is not open (expected raw PCM on an "
                + "open pipe, FIFO, file or socket)", underlying: String(cString: strerror(errno)))
        }
        guard st.st_mode & S_IFMT != S_IFDIR else {
            throw AudioError(.unreadable, path: name, message: "is a directory (expected raw PCM from a pipe, FIFO, "
                + "file or socket)")
        }
        guard isatty(fd) == 0 else {
            throw AudioError(.invalidParameter, path: name, message: "is a terminal (expected raw PCM piped in, e.g. "
                + "from arecord -t raw)")
        }
        var pair: [Int32] = [-1, -1]
        guard pipe(&pair) == 0 else {
            throw AudioError(.unreadable, path: name, message: "cannot prepare to read the input (no wake-up pipe)",
                             underlying: String(cString: strerror(errno)))
        }
        for end in pair { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK)
        self.fd = fd
        self.name = name
        wakeRead = pair[0]
        wakeWrite = pair[1]
        pollSet = .allocate(capacity: 2)
        pollSet.initialize(to: pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        (pollSet + 1).initialize(to: pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
    }

    deinit {
        _ = Foundation.close(wakeRead)
        _ = Foundation.close(wakeWrite)
        pollSet.deallocate()
    }

    /// Waits until the descriptor has data, reaches its end, or `interrupt()` is called, then reads at most `count`
    /// bytes (whatever is there: a pipe returns what its writer has written so far). An interruption wins over data.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(AudioError) -> Outcome {
        precondition(count > 0)
        while true {
            pollSet[0].revents = 0
            pollSet[1].revents = 0
            if poll(pollSet, 2, -1) < 0 {
                if errno == EINTR { continue }
                throw readError("waiting for input failed", errno)
            }
            if pollSet[1].revents != 0 { return .interrupted }
            let events = pollSet[0].revents
            if events & Int16(POLLNVAL) != 0 {
                throw AudioError(.unreadable, path: name, message: "the input descriptor was closed while reading")
            }
            guard events != 0 else { continue }
            let n = Foundation.read(fd, buffer, count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .endOfInput }
            let code = errno
            if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
            throw readError("reading raw PCM failed", code)
        }
    }

    /// Ends the current and every later `read` with `.interrupted`. Thread-safe; never blocks.
    func interrupt() {
        var byte: UInt8 = 1
        while Foundation.write(wakeWrite, &byte, 1) < 0 && errno == EINTR {}
    }

    private func readError(_ what: String, _ code: Int32) -> AudioError {
        AudioError(.unreadable, path: name, message: what, underlying: String(cString: strerror(code)))
    }
}
