import DequeModule

/// A consumer of the bus: a plain state machine stepped by events, returning what it wants to publish.
///
/// Consumers are value types tested without threads, clocks or devices (docs/0004-bus-and-engine.md).
public protocol AnalysisConsumer {
    /// Steps the state machine with one event and returns the events to publish (usually none).
    mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent]
}

/// The ordered, synchronous event bus.
///
/// `publish` appends to a FIFO. If no dispatch is in progress, the FIFO is drained: each event reaches every
/// subscriber, in registration order, before the next event is delivered. Subscribers may publish; their
/// events join the back of the FIFO. Not thread-safe: a session's bus lives on the session's analysis task.
public final class EventBus {
    public typealias Handler = (AnalysisEvent) -> [AnalysisEvent]
    private var handlers: [(handle: Handler, replays: Bool)] = []
    private var queue = Deque<AnalysisEvent>()
    private var dispatching = false
    /// Number of events delivered so far.
    public private(set) var deliveredCount = 0
    /// While true, events reach only the handlers registered with `replays: true`: a resumed night's whole-night
    /// state (staging, the alarm, the result) is rebuilt from its journal without the producers (detection,
    /// breathing, health), which start afresh on the new audio.
    public var replaying = false

    public init() {}

    /// Registers a handler; handlers receive events in registration order.
    public func subscribe(replays: Bool = false, _ handler: @escaping Handler) {
        handlers.append((handler, replays))
    }

    /// Registers a value-type consumer, owned by the bus.
    public func subscribe<C: AnalysisConsumer>(_ consumer: C, replays: Bool = false) {
        let box = ConsumerBox(consumer)
        handlers.append(({ box.consumer.handle($0) }, replays))
    }

    /// Registers an observer that only reads.
    public func observe(replays: Bool = false, _ observer: @escaping (AnalysisEvent) -> Void) {
        handlers.append(({ observer($0); return [] }, replays))
    }

    /// Publishes an event; returns after the FIFO is drained unless called from inside a handler.
    public func publish(_ event: AnalysisEvent) {
        queue.append(event)
        guard !dispatching else { return }
        dispatching = true
        defer { dispatching = false }
        while let next = queue.popFirst() {
            deliveredCount += 1
            for handler in handlers where !replaying || handler.replays {
                let produced = handler.handle(next)
                if !produced.isEmpty { queue.append(contentsOf: produced) }
            }
        }
    }
}

private final class ConsumerBox<C: AnalysisConsumer> {
    var consumer: C
    init(_ consumer: C) { self.consumer = consumer }
}
