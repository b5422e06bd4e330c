import DequeModule
import SleepCycleDSP

/// The last `capacity` frames of each analysed channel at the source rate, addressed by absolute frame (frames at
/// the source rate since the start of the timeline).
///
/// It keeps the blocks the source handed over as they are (no copy: `PlanarSamples` arrays are shared), dropping the
/// oldest once the newest `capacity` frames no longer need them, so memory is the pre-roll plus one block however
/// long the night. A hole between blocks (an overrun, missing input) reads as silence.
struct ClipRing {
    let capacity: Int
    let channelCount: Int
    private var blocks = Deque<(first: Int64, samples: PlanarSamples)>()
    /// One past the newest frame held.
    private(set) var end: Int64 = 0

    init(capacity: Int, channelCount: Int) {
        self.capacity = max(1, capacity)
        self.channelCount = channelCount
    }

    /// The oldest frame still held (the start of the pre-roll).
    var start: Int64 {
        guard let oldest = blocks.first?.first else { return end }
        return max(oldest, end - Int64(capacity))
    }

    /// Appends `samples` as the frames from `first` on; frames before `end` (already held) are skipped.
    mutating func append(first: Int64, samples: PlanarSamples) {
        let n = samples.frameCount
        guard n > 0, samples.channelCount >= channelCount else { return }
        var first = first, samples = samples
        if !blocks.isEmpty && first < end {
            let skip = Int(end - first)
            guard skip < n else { return }
            samples = Self.suffix(samples, from: skip)
            first = end
        }
        blocks.append((first, samples))
        end = first + Int64(samples.frameCount)
        let keepFrom = end - Int64(capacity)
        while let oldest = blocks.first, oldest.first + Int64(oldest.samples.frameCount) <= keepFrom { blocks.removeFirst() }
    }

    /// The audio of frames [from, to) (clamped to what is held): the blocks that hold it, shared, not copied.
    func window(from: Int64, to: Int64) -> ClipAudio {
        let a = max(from, start), b = max(a, min(to, end))
        return ClipAudio(from: a, to: b, blocks: blocks.filter { $0.first < b && $0.first + Int64($0.samples.frameCount) > a })
    }

    private static func suffix(_ samples: PlanarSamples, from k: Int) -> PlanarSamples {
        switch samples {
        case .int16(let c): .int16(c.map { Array($0[k...]) })
        case .float(let c): .float(c.map { Array($0[k...]) })
        }
    }
}

/// A clip's stretch of audio as the ring's blocks that hold it (cheap to take on the analysing thread; the writer
/// copies it out).
struct ClipAudio: Sendable {
    var from: Int64
    var to: Int64
    var blocks: [(first: Int64, samples: PlanarSamples)]
    var frameCount: Int { Int(to - from) }
    /// Bytes of the blocks it keeps alive.
    var bytes: Int {
        blocks.reduce(0) { total, b in
            if case .int16 = b.samples { total + b.samples.frameCount * b.samples.channelCount * 2 }
            else { total + b.samples.frameCount * b.samples.channelCount * 4 }
        }
    }

    /// Channel `channel`'s samples, contiguous (a hole between blocks is silence): 16-bit values when the source's
    /// were, else floats.
    func samples(channel: Int) -> PlanarSamples {
        if case .float? = blocks.first?.samples {
            return .float([gather(channel) { if case .float(let c) = $0 { c } else { nil } }])
        }
        return .int16([gather(channel) { if case .int16(let c) = $0 { c } else { nil } }])
    }

    private func gather<T: Numeric>(_ channel: Int, _ channels: (PlanarSamples) -> [[T]]?) -> [T] {
        var out = [T](repeating: 0, count: frameCount)
        guard frameCount > 0 else { return out }
        out.withUnsafeMutableBufferPointer { dst in
            for block in blocks {
                let lo = max(from, block.first), hi = min(to, block.first + Int64(block.samples.frameCount))
                guard hi > lo, let c = channels(block.samples), channel < c.count else { continue }
                c[channel].withUnsafeBufferPointer { src in
                    (dst.baseAddress! + Int(lo - from)).update(from: src.baseAddress! + Int(lo - block.first),
                                                               count: Int(hi - lo))
                }
            }
        }
        return out
    }
}
