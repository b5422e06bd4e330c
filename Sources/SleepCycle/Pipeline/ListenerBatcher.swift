import Foundation
import SleepCycleBus

/// One batch as the batcher cuts it (timeline form, for tests and for listeners).
public struct AudioBatch: Sendable {
    public var start: SampleTime
    public var samples: [Float]
    public var eventsStarted: [SoundEvent]
    public var eventsEnded: [SoundEvent]
    public var rms: Float
    public var end: SampleTime { start + SampleTime(samples.count) }
}

/// Re-chunks the analysed audio into batches of `batchLength` samples, whatever the block sizes the source
/// delivers: the batches cover the analysed audio exactly (no hole, no overlap). A batch never spans a gap: the
/// partial batch before a gap (and at the end) is delivered short.
public struct ListenerBatcher: AnalysisConsumer {
    public let batchLength: Int
    private var pending: [Float] = []
    private var pendingStart: SampleTime = 0
    private var started: [SoundEvent] = []
    private var ended: [SoundEvent] = []
    private let deliver: (AudioBatch) -> Void

    public init(batchLength: Int, deliver: @escaping (AudioBatch) -> Void) {
        precondition(batchLength > 0)
        self.batchLength = batchLength
        self.deliver = deliver
        pending.reserveCapacity(batchLength)
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .audio(let block):
            if !pending.isEmpty && pendingStart + SampleTime(pending.count) != block.start { flush() }
            var offset = 0
            let n = block.frameCount
            let channels = block.channels
            while offset < n {
                if pending.isEmpty { pendingStart = block.start + SampleTime(offset) }
                let take = min(batchLength - pending.count, n - offset)
                if channels.count == 1 {
                    pending.append(contentsOf: channels[0][offset..<(offset + take)])
                } else {
                    let scale = 1 / Float(channels.count)
                    for i in offset..<(offset + take) {
                        var s: Float = 0
                        for c in channels { s += c[i] }
                        pending.append(s * scale)
                    }
                }
                offset += take
                if pending.count == batchLength { flush() }
            }
        case .gap, .sessionEnding:
            flush()
        case .eventStarted(let e):
            started.append(e)
        case .eventEnded(let e):
            ended.append(e)
        default:
            break
        }
        return []
    }

    private mutating func flush() {
        guard !pending.isEmpty else { return }
        var sum: Float = 0
        for v in pending { sum += v * v }
        let batch = AudioBatch(start: pendingStart, samples: pending, eventsStarted: started, eventsEnded: ended,
                               rms: (sum / Float(pending.count)).squareRoot())
        pendingStart += SampleTime(pending.count)
        pending.removeAll(keepingCapacity: true)
        started.removeAll(keepingCapacity: true)
        ended.removeAll(keepingCapacity: true)
        deliver(batch)
    }
}
