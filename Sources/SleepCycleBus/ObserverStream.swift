import Foundation

/// A stream handed to an outside observer (an app, the CLI's progress bar): an `AsyncStream` with an explicit
/// `.bufferingNewest(capacity)` policy, so the analysis never waits for the observer.
///
/// A slow observer loses its OLDEST undelivered items; every loss is counted from the result of
/// `AsyncStream.Continuation.yield(_:)` (`.dropped`) and visible in `droppedCount`. The buffer never holds more than
/// `capacity` items, whatever the observer does (policy as in swift-async-algorithms' buffering; see
/// docs/0004-bus-and-engine.md).
///
/// `ObserverStream` is itself an `AsyncSequence`; iterate it once (like any `AsyncStream`).
public final class ObserverStream<Element: Sendable>: AsyncSequence, @unchecked Sendable {
    public typealias AsyncIterator = AsyncStream<Element>.Iterator

    /// The most items buffered for the observer.
    public let capacity: Int
    public let stream: AsyncStream<Element>
    private let continuation: AsyncStream<Element>.Continuation
    private let lock = NSLock()
    private var _yielded = 0
    private var _dropped = 0
    private var _terminated = false

    /// - Parameter capacity: the buffer size (≥ 1); older items are dropped beyond it.
    public init(capacity: Int = 256) {
        precondition(capacity >= 1, "ObserverStream capacity must be at least 1")
        self.capacity = capacity
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(capacity))
        self.stream = stream
        self.continuation = continuation
        continuation.onTermination = { [weak self] _ in self?.markTerminated() }
    }

    /// Offers an item to the observer; never blocks. Returns false if the observer has gone away.
    @discardableResult
    public func yield(_ element: Element) -> Bool {
        let result = continuation.yield(element)
        lock.lock(); defer { lock.unlock() }
        switch result {
        case .enqueued:
            _yielded += 1
            return true
        case .dropped:
            // `.bufferingNewest`: the new item was enqueued and the oldest one dropped.
            _yielded += 1
            _dropped += 1
            return true
        case .terminated:
            _terminated = true
            return false
        @unknown default:
            return true
        }
    }

    /// Ends the stream: the observer's loop finishes after the buffered items.
    public func finish() { continuation.finish() }

    /// Items offered to the observer while it was listening.
    public var yieldedCount: Int { lock.lock(); defer { lock.unlock() }; return _yielded }
    /// Items the observer lost because it was too slow (oldest first).
    public var droppedCount: Int { lock.lock(); defer { lock.unlock() }; return _dropped }
    /// True once the observer stopped listening or the stream was finished.
    public var isTerminated: Bool { lock.lock(); defer { lock.unlock() }; return _terminated }

    public func makeAsyncIterator() -> AsyncStream<Element>.Iterator { stream.makeAsyncIterator() }

    private func markTerminated() { lock.lock(); _terminated = true; lock.unlock() }
}

/// Fan-out to any number of `ObserverStream`s: each observer gets its own bounded buffer and drop counter;
/// finished or abandoned streams are forgotten. Thread-safe; `yield` never blocks on an observer.
public final class ObserverFanOut<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var streams: [ObserverStream<Element>] = []
    private var finished = false
    private var _dropped = 0
    public let capacity: Int

    public init(capacity: Int = 256) { self.capacity = capacity }

    /// A new observer stream; it receives items yielded from now on (an already-finished fan-out gives a
    /// finished stream).
    public func makeStream() -> ObserverStream<Element> {
        let stream = ObserverStream<Element>(capacity: capacity)
        lock.lock()
        if finished { lock.unlock(); stream.finish(); return stream }
        streams.append(stream)
        lock.unlock()
        return stream
    }

    /// True when someone is listening (lets producers skip building items nobody reads).
    public var hasObservers: Bool { lock.lock(); defer { lock.unlock() }; return !streams.isEmpty }

    public func yield(_ element: Element) {
        lock.lock()
        let current = streams
        lock.unlock()
        guard !current.isEmpty else { return }
        var gone = false
        for stream in current where !stream.yield(element) { gone = true }
        if gone {
            lock.lock()
            for s in streams where s.isTerminated { _dropped += s.droppedCount }
            streams.removeAll { $0.isTerminated }
            lock.unlock()
        }
    }

    /// Total items dropped over all observers (including ones that have gone away).
    public var droppedCount: Int {
        lock.lock(); defer { lock.unlock() }
        return _dropped + streams.reduce(0) { $0 + $1.droppedCount }
    }

    /// Finishes every stream; later `makeStream()` calls get finished streams.
    public func finish() {
        lock.lock()
        let current = streams
        finished = true
        streams.removeAll()
        for s in current { _dropped += s.droppedCount }
        lock.unlock()
        for s in current { s.finish() }
    }

    /// Finishes the streams made so far but stays open: streams made later receive later items (the engine ends
    /// its observers' loops at the end of a session; observers that subscribe afterwards see the next session).
    public func finishCurrentStreams() {
        lock.lock()
        let current = streams
        streams.removeAll()
        for s in current { _dropped += s.droppedCount }
        lock.unlock()
        for s in current { s.finish() }
    }
}
