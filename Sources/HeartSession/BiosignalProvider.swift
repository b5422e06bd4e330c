// Where a session's readings come from (Synheart's providers): a mock that synthesises beats, a replay of recorded
// readings (as fast as possible or paced in real time), and a provider the host pushes readings into.
import Foundation

/// A source of readings for `SessionEngine.start(config:provider:callback:)`, read on the engine's thread.
public protocol BiosignalProvider: AnyObject, Sendable {
    /// The next reading, in time order, or nil when there are no more. May block (a live or paced provider).
    func next() throws -> BiosignalSample?
    /// Makes a blocked or later `next()` return nil (the session is being stopped).
    func cancel()
}

/// Readings that were recorded (a wearable's file, `WearableFile`), replayed in order: as fast as they can be read,
/// or paced by their timestamps (`sleep` is how long to wait; tests pass a manual clock that never sleeps).
public final class ReplayBiosignalProvider: BiosignalProvider, @unchecked Sendable {
    private let samples: [BiosignalSample]
    private let paced: Bool
    private let sleep: @Sendable (Double) -> Void
    private let lock = NSLock()
    private var index = 0
    private var cancelled = false

    public init(samples: [BiosignalSample], paced: Bool = false,
                sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        self.samples = samples; self.paced = paced; self.sleep = sleep
    }

    public func next() throws -> BiosignalSample? {
        let (sample, wait) = lock.withLock { () -> (BiosignalSample?, Double) in
            guard !cancelled, index < samples.count else { return (nil, 0) }
            let s = samples[index]
            let wait = paced && index > 0 ? Double(s.timestampMs - samples[index - 1].timestampMs) / 1000 : 0
            index += 1
            return (s, wait)
        }
        if wait > 0 { sleep(wait) }
        return lock.withLock { cancelled } ? nil : sample
    }

    public func cancel() { lock.withLock { cancelled = true } }
}

/// Synthetic beats for demos and tests: a heart rate around `meanBpm` with respiratory sinus arrhythmia (a sine at
/// `breathsPerMinute` of `rsaMs` amplitude) and seeded Gaussian jitter of `jitterMs`, for `durationSec`; one
/// reading per beat, stamped at the beat, optionally with every `artefactEvery`-th beat missed (two intervals in one).
public final class MockBiosignalProvider: BiosignalProvider, @unchecked Sendable {
    private let replay: ReplayBiosignalProvider

    public init(durationSec: Double, meanBpm: Double = 60, rsaMs: Double = 40, breathsPerMinute: Double = 12,
                jitterMs: Double = 15, artefactEvery: Int? = nil, seed: UInt64 = 1, paced: Bool = false,
                sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        replay = ReplayBiosignalProvider(
            samples: Self.beats(durationSec: durationSec, meanBpm: meanBpm, rsaMs: rsaMs,
                                breathsPerMinute: breathsPerMinute, jitterMs: jitterMs, artefactEvery: artefactEvery,
                                seed: seed),
            paced: paced, sleep: sleep)
    }

    public func next() throws -> BiosignalSample? { try replay.next() }
    public func cancel() { replay.cancel() }

    /// The mock's readings (deterministic for a seed).
    public static func beats(durationSec: Double, meanBpm: Double = 60, rsaMs: Double = 40,
                             breathsPerMinute: Double = 12, jitterMs: Double = 15, artefactEvery: Int? = nil,
                             seed: UInt64 = 1) -> [BiosignalSample] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func uniform() -> Double {          // xorshift64*: reproducible on every platform
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return Double((state &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
        }
        func gaussian() -> Double { (-2 * log(max(uniform(), 1e-300))).squareRoot() * cos(2 * .pi * uniform()) }
        let mean = 60_000 / meanBpm
        var t = 0.0, out: [BiosignalSample] = [], beat = 0, carried = 0.0
        while true {
            let rr = max(300, mean + rsaMs * sin(2 * .pi * breathsPerMinute / 60 * t / 1000) + jitterMs * gaussian())
            guard t + rr <= durationSec * 1000 else { break }
            t += rr
            beat += 1
            if let every = artefactEvery, every > 1, beat % every == 0 { carried = rr; continue }     // a missed beat
            out.append(BiosignalSample(timestampMs: Int64(t.rounded()), rrMs: [rr + carried]))
            carried = 0
        }
        return out
    }
}

/// Readings the host pushes (a Bluetooth strap's callback, a socket): `push(_:)` from any thread, `finish()` when
/// there are no more. Holds at most `capacity` readings not yet read; a push beyond that drops the oldest and counts
/// it (`droppedCount`) rather than blocking the host.
public final class PushedBiosignalProvider: BiosignalProvider, @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [BiosignalSample] = []
    private var head = 0
    private var finished = false
    private let capacity: Int
    public private(set) var droppedCount = 0

    public init(capacity: Int = 4096) { self.capacity = max(1, capacity) }

    public func push(_ sample: BiosignalSample) {
        condition.withLock {
            guard !finished else { return }
            if queue.count - head >= capacity { head += 1; droppedCount += 1 }
            queue.append(sample)
            condition.signal()
        }
    }

    /// No more readings: `next()` returns nil once the queued ones are read.
    public func finish() { condition.withLock { finished = true; condition.broadcast() } }

    public func next() throws -> BiosignalSample? {
        condition.withLock {
            while head == queue.count && !finished { condition.wait() }
            guard head < queue.count else { return nil }
            let s = queue[head]
            head += 1
            if head > 1024 && head * 2 > queue.count { queue.removeFirst(head); head = 0 }
            return s
        }
    }

    public func cancel() {
        condition.withLock { finished = true; queue.removeAll(); head = 0; condition.broadcast() }
    }
}
