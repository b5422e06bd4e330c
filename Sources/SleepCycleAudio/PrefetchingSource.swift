import Foundation
import DequeModule

/// Reads another source ahead on its own thread into a bounded queue, so decoding and resampling (the reader
/// thread) overlap feature extraction and the bus (the caller's thread): the two-core mode for files.
///
/// The queue holds at most `depth` reads (bounded memory: depth × block size); the reader waits when it is full.
/// An error from the inner source is re-thrown by `read()` in order. `close()` stops the reader.
public final class PrefetchingSource: AudioSource, @unchecked Sendable {
    public let inner: any AudioSource
    public let depth: Int
    private let condition = NSCondition()
    private var queue = Deque<(tapped: [SourceRateAudio], read: Result<SourceRead, any Error>)>()
    /// The tap the caller installed, and what the inner source handed to it during the read in progress (reader
    /// thread only): delivered to `tap` on the caller's thread just before the read it came with.
    private var tap: SourceRateTap?
    private var tappedDuringRead: [SourceRateAudio] = []
    private var finished = false
    private var closed = false
    private var thread: Thread?
    private var readerActive = false
    private var innerClosed = false

    public init(_ inner: any AudioSource, depth: Int = 4) {
        self.inner = inner
        self.depth = max(1, depth)
    }

    public var format: SourceFormat { inner.format }
    public var name: String { inner.name }
    public var warnings: [AudioError] { inner.warnings }

    @discardableResult
    public func setSourceRateTap(_ tap: SourceRateTap?) -> Bool {
        self.tap = tap
        guard tap != nil else { return inner.setSourceRateTap(nil) }
        return inner.setSourceRateTap { [unowned self] audio in tappedDuringRead.append(audio) }
    }

    private func startIfNeeded() {
        guard thread == nil else { return }
        let t = Thread { [self] in readerLoop() }
        t.name = "sleepcycle.prefetch"
        thread = t
        t.start()
    }

    private func readerLoop() {
        while true {
            condition.lock()
            while queue.count >= depth && !closed { condition.wait() }
            if closed { condition.unlock(); return }
            readerActive = true
            condition.unlock()
            let item: Result<SourceRead, any Error>
            do { item = .success(try inner.read()) } catch { item = .failure(error) }
            condition.lock()
            readerActive = false
            if closed {
                // close() came during the read: the handle is closed here, by the thread that used it.
                let closeNow = !innerClosed
                innerClosed = true
                condition.unlock()
                if closeNow { inner.close() }
                return
            }
            queue.append((tappedDuringRead, item))
            tappedDuringRead = []
            var stop = false
            switch item {
            case .success(.end), .failure: finished = true; stop = true
            default: break
            }
            condition.broadcast()
            condition.unlock()
            if stop { return }
        }
    }

    public func read() throws -> SourceRead {
        startIfNeeded()
        condition.lock()
        while queue.isEmpty && !closed && !finished { condition.wait() }
        if queue.isEmpty { condition.unlock(); return .end }
        let item = queue.removeFirst()
        condition.broadcast()
        condition.unlock()
        if let tap { for audio in item.tapped { tap(audio) } }
        return try item.read.get()
    }

    /// Stops the reader. A file's handle is closed only when no read is running on it (by the reader thread at
    /// the end of its read otherwise); a live source (unknown length) is closed at once so a blocked read returns.
    public func close() {
        condition.lock()
        closed = true
        queue.removeAll()
        condition.broadcast()
        let closeNow = !innerClosed && (!readerActive || inner.format.frameCount == nil)
        if closeNow { innerClosed = true }
        condition.unlock()
        if closeNow { inner.close() }
    }
}
