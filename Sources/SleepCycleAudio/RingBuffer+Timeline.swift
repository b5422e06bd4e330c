import DequeModule
import Foundation

/// The hand-over point between a producer that must never wait (the ALSA capture thread, a host program
/// pushing buffers) and the analysis thread that calls `AudioSource.read()`.
///
/// Audio lives in a `FrameRingBuffer`; next to it, a queue of timeline segments (audio runs and gaps)
/// records where on the source's timeline every buffered frame belongs, so consecutive reads always tile
/// the timeline: the producer appends audio or a gap at the current end, and when the ring is full the
/// oldest *unread* audio is turned into an `.overrun` gap of exactly the frames discarded.
///
/// Positions are frames at the producer's rate since the source started. One `NSCondition` guards
/// everything; `next()` waits on it, appends signal it. Single producer, single consumer.
final class TimelineBuffer: @unchecked Sendable {
    private enum Segment {
        case audio(start: Int64, frames: Int)
        case gap(start: Int64, length: Int64, reason: SourceGapReason)
    }

    /// What the ring overflow has cost so far.
    struct DropCounters: Sendable, Equatable {
        /// Appends that had to discard unread audio.
        var events = 0
        /// Frames of unread audio discarded.
        var frames: Int64 = 0
    }

    let channels: Int
    let capacityFrames: Int
    /// Largest `.audio` block `next()` returns, in frames.
    let maxReadFrames: Int

    private let condition = NSCondition()
    private var ring: FrameRingBuffer
    private var segments = Deque<Segment>()
    private var end: Int64 = 0
    private var finished = false
    private var closed = false
    private var drops = DropCounters()

    init(capacityFrames: Int, channels: Int, maxReadFrames: Int = 4096) {
        precondition(maxReadFrames > 0)
        self.channels = channels
        self.capacityFrames = capacityFrames
        self.maxReadFrames = maxReadFrames
        ring = FrameRingBuffer(capacityFrames: capacityFrames, channels: channels)
    }

    /// End of the timeline written so far (frames).
    var writePosition: Int64 { condition.withLock { end } }
    var dropCounters: DropCounters { condition.withLock { drops } }
    var isClosed: Bool { condition.withLock { closed } }
    /// Frames of audio buffered and not yet read.
    var bufferedFrames: Int { condition.withLock { ring.count } }

    /// Appends `frames` interleaved frames at the end of the timeline. Never waits. Returns the frames of
    /// older unread audio discarded to make room (already turned into an `.overrun` gap).
    @discardableResult
    func appendAudio(_ interleaved: UnsafeBufferPointer<Float>, frames: Int) -> Int {
        guard frames > 0 else { return 0 }
        condition.lock()
        defer { condition.unlock(); condition.broadcast() }
        if closed { return 0 }
        if case .audio(let s, let f)? = segments.last, s + Int64(f) == end {
            segments[segments.count - 1] = .audio(start: s, frames: f + frames)
        } else {
            segments.append(.audio(start: end, frames: frames))
        }
        end += Int64(frames)
        let dropped = ring.write(interleaved, frames: frames)
        if dropped > 0 {
            convertOldestAudioToOverrun(dropped)
            drops.events += 1
            drops.frames += Int64(dropped)
        }
        return dropped
    }

    /// Appends a gap of `length` frames at the end of the timeline (merged with a preceding gap of the same
    /// reason).
    func appendGap(length: Int64, reason: SourceGapReason) {
        guard length > 0 else { return }
        condition.lock()
        defer { condition.unlock(); condition.broadcast() }
        if closed { return }
        if case .gap(let s, let l, let r)? = segments.last, r == reason, s + l == end {
            segments[segments.count - 1] = .gap(start: s, length: l + length, reason: r)
        } else {
            segments.append(.gap(start: end, length: length, reason: reason))
        }
        end += length
    }

    /// The producer is done: `next()` drains what is buffered, then returns `.end`.
    func finish() {
        condition.withLock { finished = true }
        condition.broadcast()
    }

    /// Stops at once: a waiting or later `next()` returns `.end`; later appends are ignored.
    func close() {
        condition.withLock {
            closed = true; finished = true
            segments.removeAll(); ring.removeAll()
        }
        condition.broadcast()
    }

    /// The next block of the timeline, waiting until there is one, or `.end`.
    func next() -> SourceRead {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if closed { return .end }
            if let first = segments.first {
                switch first {
                case .gap(let s, let l, let r):
                    segments.removeFirst()
                    return .gap(start: s, length: l, reason: r)
                case .audio(let s, let f):
                    let n = min(f, maxReadFrames)
                    let data = ring.read(deinterleavingUpTo: n)
                    if n == f { segments.removeFirst() } else {
                        segments[0] = .audio(start: s + Int64(n), frames: f - n)
                    }
                    return .audio(start: s, channels: data)
                }
            }
            if finished { return .end }
            condition.wait()
        }
    }

    /// Turns the oldest `frames` frames of buffered audio into `.overrun` gaps, merging neighbours.
    private func convertOldestAudioToOverrun(_ frames: Int) {
        var remaining = frames
        var i = 0
        while remaining > 0 && i < segments.count {
            if case .audio(let s, let f) = segments[i] {
                let k = min(remaining, f)
                segments[i] = .gap(start: s, length: Int64(k), reason: .overrun)
                if k < f { segments.insert(.audio(start: s + Int64(k), frames: f - k), at: i + 1) }
                remaining -= k
            }
            i += 1
        }
        precondition(remaining == 0, "TimelineBuffer: ring dropped frames that no segment accounts for")
        // Merge adjacent overrun gaps in the part just rewritten.
        var j = 1
        while j < min(i + 1, segments.count) {
            if case .gap(let s0, let l0, .overrun) = segments[j - 1],
               case .gap(let s1, let l1, .overrun) = segments[j], s0 + l0 == s1 {
                segments[j - 1] = .gap(start: s0, length: l0 + l1, reason: .overrun)
                segments.remove(at: j)
                i -= 1
            } else {
                j += 1
            }
        }
    }
}
