import Foundation
import SleepCycleAudio
import SleepCycleBus
@testable import SleepCycle

/// Deterministic xorshift64* generator for property tests.
struct SeededRNG: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
}

/// Deterministic test noise at `level` full scale.
func testNoise(count: Int, level: Float, seed: UInt64) -> [Float] {
    var rng = SeededRNG(seed: seed)
    return (0..<count).map { _ in (Float(rng.next() % 2_000_001) / 1_000_000 - 1) * level }
}

/// A test-only `AudioSource`: a scripted list of reads (audio in given block sizes, gaps), then `.end`.
/// `live: true` reports an unknown length and blocks in `read()` after the script until closed.
final class ScriptedSource: AudioSource, @unchecked Sendable {
    enum Step { case audio([[Float]]), gap(Int64) }
    let format: SourceFormat
    let name: String
    private var steps: [Step]
    private var position: Int64 = 0
    private let live: Bool
    private let condition = NSCondition()
    private var closed = false
    private(set) var reads = 0

    init(steps: [Step], channels: Int = 1, live: Bool = false, name: String = "scripted.wav") {
        self.steps = steps
        self.live = live
        self.name = name
        let total = steps.reduce(Int64(0)) {
            switch $1 { case .audio(let c): $0 + Int64(c[0].count); case .gap(let n): $0 + n }
        }
        format = SourceFormat(sampleRate: 16_000, channelCount: channels, analysisChannelCount: channels,
                              frameCount: live ? nil : total)
    }

    /// `signal` (one array per channel) cut into random block sizes in 1…maxBlock.
    convenience init(signal: [[Float]], maxBlock: Int, rng: inout SeededRNG, live: Bool = false) {
        var steps: [Step] = []
        var i = 0
        while i < signal[0].count {
            let n = min(Int(rng.next() % UInt64(maxBlock)) + 1, signal[0].count - i)
            steps.append(.audio(signal.map { Array($0[i..<(i + n)]) }))
            i += n
        }
        self.init(steps: steps, channels: signal.count, live: live)
    }

    func read() throws -> SourceRead {
        condition.lock(); defer { condition.unlock() }
        reads += 1
        if closed { return .end }
        if steps.isEmpty {
            while live && !closed { condition.wait() }
            return .end
        }
        let step = steps.removeFirst()
        switch step {
        case .audio(let channels):
            defer { position += Int64(channels[0].count) }
            return .audio(start: position, channels: channels)
        case .gap(let n):
            defer { position += n }
            return .gap(start: position, length: n, reason: .missingInput)
        }
    }

    func close() { condition.lock(); closed = true; condition.broadcast(); condition.unlock() }
}

/// Records every batch it is given.
final class RecordingListener: AudioEventListener, @unchecked Sendable {
    struct Batch { var samples: [Float]; var start: Date; var end: Date; var rms: Float; var rate: Int }
    private let lock = NSLock()
    private var _batches: [Batch] = []
    var batches: [Batch] { lock.lock(); defer { lock.unlock() }; return _batches }

    func onAudioAnalysisBatchCompleted(sessionId: UUID, audioSamples: [Float], audioSampleRate: Int,
                                       audioStartTime: Date, audioEndTime: Date, eventsStarted: [SleepEvent],
                                       eventsEnded: [SleepEvent], rms: Float) {
        lock.lock()
        _batches.append(Batch(samples: audioSamples, start: audioStartTime, end: audioEndTime, rms: rms,
                              rate: audioSampleRate))
        lock.unlock()
    }
}

/// Cheap stand-in feature extractor for tests that exercise the pipeline, not the DSP: one "frame" per hop with
/// the mean of the hop in the RMS column. Block-size independent, like the real one.
final class MeanPerHopExtractor: StreamingFeatureExtractor {
    let hop: Int
    let channel: Int
    private var acc: Float = 0
    private var fill = 0
    private var next: Int64 = 0
    init(channel: Int, hop: Int) { self.channel = channel; self.hop = hop }

    func process(_ samples: UnsafeBufferPointer<Float>) -> FeatureBlock? {
        var values: [Float] = []
        var first: Int64?
        for v in samples {
            acc += v; fill += 1
            if fill == hop {
                var row = [Float](repeating: 0, count: FeatureLayout.stride)
                row[FeatureLayout.rms] = acc / Float(hop)
                values += row
                if first == nil { first = next }
                next += Int64(hop); acc = 0; fill = 0
            }
        }
        guard let first else { return nil }
        return FeatureBlock(channel: channel, start: first, frameLength: hop, hopLength: hop,
                            count: values.count / FeatureLayout.stride, values: values)
    }
    func finish() -> FeatureBlock? { acc = 0; fill = 0; return nil }
    func reset(startSample: Int64) { next = startSample; acc = 0; fill = 0 }
}

import SleepCycleDSP

extension PipelineOptions {
    static var testing: PipelineOptions {
        var o = PipelineOptions()
        o.featureExtractor = { channel, _, hop in MeanPerHopExtractor(channel: channel, hop: hop) }
        return o
    }
}

func testSessionInfo(id: UUID = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, channels: Int = 1)
    -> SessionInfo {
    SessionInfo(id: id, clock: AnalysisClock(start: FileAnalysis.defaultStart), sourceSampleRate: 16_000,
                channelCount: channels)
}
