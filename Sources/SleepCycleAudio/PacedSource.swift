import Foundation

/// How fast a file is replayed.
public enum ReplayPace: Sendable, Hashable {
    /// As fast as the machine goes (the default for files).
    case asFastAsPossible
    /// One second of audio per second of wall time, like a live microphone.
    case realTime
    /// `factor` seconds of audio per second of wall time.
    case speed(Double)

    var factor: Double? {
        switch self {
        case .asFastAsPossible: nil
        case .realTime: 1
        case .speed(let f): f > 0 ? f : nil
        }
    }
}

/// Replays another source in (scaled) real time: each read is returned once wall time has caught up with the end
/// of what it delivers (the audio "has been recorded"). The one place where files use the wall clock; the
/// timeline itself is unchanged, so results are identical to a fast replay. Waits sleep on a condition (no
/// polling), and `close()` — callable from any thread — wakes a waiting read, which then returns `.end`.
public final class PacedSource: AudioSource, @unchecked Sendable {
    public let inner: any AudioSource
    public let pace: ReplayPace
    private let factor: Double?
    private let condition = NSCondition()
    private var closed = false
    private var reading = false
    private var innerClosed = false
    private var anchor: Date?

    public init(_ inner: any AudioSource, pace: ReplayPace = .realTime) {
        self.inner = inner
        self.pace = pace
        self.factor = pace.factor
    }

    public var format: SourceFormat { inner.format }
    public var name: String { inner.name }
    public var warnings: [AudioError] { inner.warnings }

    @discardableResult
    public func setSourceRateTap(_ tap: SourceRateTap?) -> Bool { inner.setSourceRateTap(tap) }

    public func read() throws -> SourceRead {
        condition.lock()
        if closed { condition.unlock(); return .end }
        reading = true
        condition.unlock()
        defer {
            condition.lock()
            reading = false
            let closeNow = closed && !innerClosed
            if closeNow { innerClosed = true }
            condition.unlock()
            if closeNow { inner.close() }
        }
        let read = try inner.read()
        guard let factor else { return read }
        let now = Date()
        if anchor == nil { anchor = now }
        let end: Int64
        switch read {
        case .audio(let start, let channels): end = start + Int64(channels.first?.count ?? 0)
        case .gap(let start, let length, _): end = start + length
        case .end: return read
        }
        let due = anchor!.addingTimeInterval(Double(end) / 16_000.0 / factor)
        condition.lock()
        while !closed, Date() < due { _ = condition.wait(until: due) }
        let wasClosed = closed
        condition.unlock()
        return wasClosed ? .end : read
    }

    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        // A live inner source may be blocked in read() and supports close() from another thread; a file's handle
        // is closed only when no read is running (here or at the end of the running read).
        let closeNow = !innerClosed && (!reading || inner.format.frameCount == nil)
        if closeNow { innerClosed = true }
        condition.unlock()
        if closeNow { inner.close() }
    }
}
