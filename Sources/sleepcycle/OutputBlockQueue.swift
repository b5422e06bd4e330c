import Dispatch
import Foundation

/// A bounded single-producer / single-consumer hand-off between a computing thread and the output thread.
/// `put` blocks while `capacity` items wait (bounded memory whatever the file length); `take` blocks until an
/// item or the end arrives. The producer runs on its own `Thread` (never on the cooperative pool).
final class OutputBlockQueue<Item>: @unchecked Sendable {
    private var items: [Item?] = []
    private let lock = NSLock()
    private let free: DispatchSemaphore
    private let filled = DispatchSemaphore(value: 0)
    private var cancelled = false

    init(capacity: Int) { free = DispatchSemaphore(value: capacity) }

    /// Enqueues `item` (nil marks the end). Returns false if the consumer cancelled.
    @discardableResult
    func put(_ item: Item?) -> Bool {
        free.wait()
        lock.lock()
        let stop = cancelled
        if !stop { items.append(item) }
        lock.unlock()
        if stop { free.signal() } else { filled.signal() }   // after a cancel, pass the slot on to the next put
        return !stop
    }

    /// The next item, or nil at the end.
    func take() -> Item? {
        filled.wait()
        lock.lock()
        let item = items.removeFirst()
        lock.unlock()
        free.signal()
        return item
    }

    /// Consumer gives up: pending and later `put`s are dropped.
    func cancel() {
        lock.lock(); cancelled = true; items.removeAll(); lock.unlock()
        free.signal()
    }

    var isCancelled: Bool { lock.lock(); defer { lock.unlock() }; return cancelled }
}
