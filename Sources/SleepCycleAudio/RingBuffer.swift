/// A fixed-capacity FIFO of interleaved `Float` frames that never blocks the writer: when a write does not
/// fit, the oldest frames are discarded to make room and the number discarded is returned.
///
/// This is the classic circular buffer (Knuth, TAOCP vol. 1 §2.2.2, "sequential allocation" of a queue in a
/// circle) with the overwrite-oldest policy used by capture front ends such as PortAudio's
/// `PaUtil_RingBuffer` users and JACK's ringbuffer clients: the microphone side must never wait.
///
/// It is *not* synchronised by itself; `TimelineBuffer` wraps it in one `NSCondition` (a single producer,
/// the capture thread or the host's push, and a single consumer, the analysis thread). At 16 kHz the lock
/// is taken ~16 times a second per side, which costs nothing measurable (see
/// docs/0003-live-capture-and-injected-sources.md).
struct FrameRingBuffer: ~Copyable {
    /// Interleaved channels per frame.
    let channels: Int
    /// Capacity in frames.
    let capacity: Int
    private let storage: UnsafeMutableBufferPointer<Float>
    /// Index (in frames) of the oldest frame.
    private var head = 0
    /// Frames currently held.
    private(set) var count = 0

    init(capacityFrames: Int, channels: Int) {
        precondition(capacityFrames > 0 && channels > 0, "FrameRingBuffer needs a positive capacity and channel count")
        self.channels = channels
        self.capacity = capacityFrames
        storage = .allocate(capacity: capacityFrames * channels)
        storage.initialize(repeating: 0)
    }

    deinit { storage.deallocate() }

    var freeFrames: Int { capacity - count }

    /// Appends `frames` interleaved frames from `source` (`source.count >= frames * channels`). If they do
    /// not fit, the oldest frames are dropped first; if `frames > capacity`, only the newest `capacity`
    /// frames of `source` are kept. Returns the number of frames dropped (old ones plus skipped new ones).
    @discardableResult
    mutating func write(_ source: UnsafeBufferPointer<Float>, frames: Int) -> Int {
        precondition(frames >= 0 && source.count >= frames * channels, "FrameRingBuffer.write: source too short")
        var dropped = 0
        var srcFrame = 0
        var n = frames
        if n > capacity {                       // keep only the newest `capacity` frames of the write
            dropped += n - capacity + count
            srcFrame = n - capacity
            n = capacity
            head = 0; count = 0
        } else if n > freeFrames {
            let excess = n - freeFrames
            discard(excess)
            dropped += excess
        }
        var tail = (head + count) % capacity
        var remaining = n
        while remaining > 0 {
            let chunk = min(remaining, capacity - tail)
            let dst = storage.baseAddress! + tail * channels
            dst.update(from: source.baseAddress! + srcFrame * channels, count: chunk * channels)
            srcFrame += chunk; remaining -= chunk
            tail = (tail + chunk) % capacity
        }
        count += n
        return dropped
    }

    /// Moves up to `frames` of the oldest frames into `destination` (interleaved); returns frames moved.
    mutating func read(into destination: UnsafeMutableBufferPointer<Float>, frames: Int) -> Int {
        let n = min(frames, count, destination.count / channels)
        var copied = 0
        while copied < n {
            let chunk = min(n - copied, capacity - head)
            (destination.baseAddress! + copied * channels)
                .update(from: storage.baseAddress! + head * channels, count: chunk * channels)
            copied += chunk
            head = (head + chunk) % capacity
        }
        count -= n
        if count == 0 { head = 0 }
        return n
    }

    /// Moves up to `frames` of the oldest frames into one array per channel (de-interleaving).
    mutating func read(deinterleavingUpTo frames: Int) -> [[Float]] {
        let n = min(frames, count)
        var out = [[Float]](repeating: [], count: channels)
        for c in 0..<channels {
            out[c] = [Float](unsafeUninitializedCapacity: n) { buf, initialized in
                var pos = head
                for i in 0..<n {
                    buf[i] = storage[pos * channels + c]
                    pos += 1
                    if pos == capacity { pos = 0 }
                }
                initialized = n
            }
        }
        discard(n)
        return out
    }

    /// Drops up to `frames` of the oldest frames; returns frames dropped.
    @discardableResult
    mutating func discard(_ frames: Int) -> Int {
        let n = min(max(frames, 0), count)
        head = (head + n) % capacity
        count -= n
        if count == 0 { head = 0 }
        return n
    }

    mutating func removeAll() { head = 0; count = 0 }
}
