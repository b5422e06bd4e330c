import Testing
import SleepCycleBus
@testable import AudioHealth

/// Drives the monitor like the engine does: `.audio` blocks of `blockSize`, `.gap`s, then `.sessionEnding`.
private struct Harness {
    var monitor = AudioHealthMonitor()
    var changes: [AudioHealthChange] = []
    var timeline = AudioHealthTimeline()
    var t: SampleTime = 0

    init() { _ = monitor.handle(.sessionStarted(SessionInfo(
        id: .init(), clock: AnalysisClock(start: .init(timeIntervalSince1970: 0)), sourceSampleRate: 16_000,
        channelCount: 1))) }

    mutating func feed(_ samples: [Float], blockSize: Int = 4096) {
        var i = 0
        while i < samples.count {
            let n = min(blockSize, samples.count - i)
            record(monitor.handle(.audio(AudioBlock(start: t, channels: [Array(samples[i..<(i + n)])]))))
            t += SampleTime(n); i += n
        }
    }

    mutating func gap(seconds: Double, reason: GapReason = .missingInput) {
        let n = AnalysisClock.samples(seconds: seconds)
        record(monitor.handle(.gap(AudioGap(start: t, length: n, reason: reason))))
        t += n
    }

    mutating func end() -> [AudioHealthInterval] {
        record(monitor.handle(.sessionEnding(at: t)))
        return timeline.intervals(end: t)
    }

    private mutating func record(_ events: [AnalysisEvent]) {
        for case .healthChanged(let c) in events { changes.append(c); timeline.record(c) }
    }
}

/// Deterministic noise (xorshift), `level` full-scale amplitude, optionally quantised to 16 bits.
private func noise(seconds: Double, level: Float, seed: UInt64 = 1, quantise16: Bool = false) -> [Float] {
    var s = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<Int(seconds * 16_000)).map { _ in
        s ^= s << 13; s ^= s >> 7; s ^= s << 17
        let v = (Float(s % 2_000_001) / 1_000_000 - 1) * level
        return quantise16 ? (v * 32768).rounded() / 32768 : v
    }
}

private func seconds(_ t: SampleTime) -> Double { AnalysisClock.seconds(t) }

@Suite struct AudioHealthMonitorTests {
    @Test func noiseZerosDCNoiseGapBoundariesWithinOneSecond() {
        var h = Harness()
        h.feed(noise(seconds: 10, level: 0.05))                                   // 0–10 healthy
        h.feed([Float](repeating: 0, count: 5 * 16_000))                          // 10–15 digital silence
        h.feed([Float](repeating: 0.25, count: 5 * 16_000))                       // 15–20 DC offset
        h.feed(noise(seconds: 10, level: 0.05, seed: 2), blockSize: 1000)         // 20–30 healthy
        h.gap(seconds: 5)                                                         // 30–35 nothing arrives
        h.feed(noise(seconds: 5, level: 0.05, seed: 3), blockSize: 333)           // 35–40 healthy
        let intervals = h.end()
        let expected: [(AudioHealthStatus, Double, Double)] = [
            (.healthy, 0, 10), (.flatline, 10, 20), (.healthy, 20, 30), (.missingInput, 30, 35), (.healthy, 35, 40),
        ]
        #expect(intervals.count == expected.count)
        for (interval, want) in zip(intervals, expected) {
            #expect(interval.status == want.0)
            #expect(abs(seconds(interval.start) - want.1) < 1, "\(interval) starts near \(want.1) s")
            #expect(abs(seconds(interval.end) - want.2) < 1, "\(interval) ends near \(want.2) s")
        }
        // Contiguous and covering the whole analysed audio.
        #expect(intervals.first?.start == 0)
        #expect(intervals.last?.end == h.t)
        for (a, b) in zip(intervals, intervals.dropFirst()) { #expect(a.end == b.start) }
        // The boundaries are in fact sample-exact (±1: the step into silence is itself a change).
        #expect(abs(intervals[1].start - 10 * 16_000) <= 1)
        #expect(intervals[2].start == 20 * 16_000)
        #expect(intervals[3].start == 30 * 16_000)
    }

    @Test func quietRealRoomsStayHealthy() {
        // A very quiet 16-bit room: ±2 LSB of noise (−84 dBFS peak).
        var h = Harness()
        h.feed(noise(seconds: 20, level: 2.0 / 32768, quantise16: true))
        #expect(h.end().map(\.status) == [.healthy])
        // A quiet float recording at −100 dBFS RMS.
        var f = Harness()
        f.feed(noise(seconds: 20, level: 1.7e-5, seed: 9))
        #expect(f.end().map(\.status) == [.healthy])
    }

    @Test func aDeadMicrophoneIsFlatFromTheStart() {
        var h = Harness()
        h.feed([Float](repeating: -0.1, count: 30 * 16_000), blockSize: 16_384)
        let intervals = h.end()
        #expect(intervals.map(\.status) == [.flatline])
        #expect(intervals.first?.start == 0)
        #expect(h.changes.count == 1)
    }

    @Test func shortSilencesAndLoneClicksDoNotChangeTheStatus() {
        var h = Harness()
        h.feed(noise(seconds: 5, level: 0.1))
        h.feed([Float](repeating: 0, count: 8_000))                               // 0.5 s of silence: healthy
        h.feed(noise(seconds: 5, level: 0.1, seed: 4))
        h.gap(seconds: 0.2, reason: .overrun)                                     // an xrun: counted only
        h.feed(noise(seconds: 2, level: 0.1, seed: 5))
        var dead = [Float](repeating: 0, count: 10 * 16_000)
        dead[80_000] = 0.5                                                        // one click in a dead stretch
        h.feed(dead)
        let intervals = h.end()
        #expect(intervals.map(\.status) == [.healthy, .flatline])
        #expect(abs(seconds(intervals[1].start) - 12.7) < 0.01)
        #expect(h.monitor.counters.gapCount == 1)
        #expect(h.monitor.counters.overrunCount == 1)
    }

    @Test func aGapAfterAFlatlineAndAFlatStretchAfterAGap() {
        var h = Harness()
        h.feed([Float](repeating: 0, count: 3 * 16_000))
        h.gap(seconds: 2)
        h.feed([Float](repeating: 0, count: 3 * 16_000))
        h.feed(noise(seconds: 2, level: 0.1))
        let intervals = h.end()
        #expect(intervals.map(\.status) == [.flatline, .missingInput, .flatline, .healthy])
        #expect(intervals.map { seconds($0.start) } == [0, 3, 5, 8])
    }

    @Test func blockSizesDoNotChangeTheDecisions() {
        let signal = noise(seconds: 3, level: 0.1) + [Float](repeating: 0.3, count: 40_000) + noise(seconds: 3, level: 0.1)
        var reference: [AudioHealthInterval]?
        for blockSize in [1, 7, 800, 801, 4096, 100_000] where blockSize != 1 || signal.count < 200_000 {
            var h = Harness()
            h.feed(signal, blockSize: blockSize)
            let intervals = h.end()
            if let reference { #expect(intervals == reference, "block size \(blockSize)") } else { reference = intervals }
        }
        #expect(reference?.map(\.status) == [.healthy, .flatline, .healthy])
    }

    @Test func timelineMergesAndCoversStereoChannelsSeparately() {
        var t = AudioHealthTimeline()
        t.record(AudioHealthChange(time: 0, status: .healthy, channel: .secondary))
        t.record(AudioHealthChange(time: 100, status: .flatline, channel: .secondary))
        t.record(AudioHealthChange(time: 0, status: .healthy, channel: .primary))
        t.record(AudioHealthChange(time: 50, status: .healthy, channel: .primary))
        let intervals = t.intervals(end: 200)
        #expect(intervals == [
            AudioHealthInterval(status: .healthy, start: 0, end: 200, channel: .primary),
            AudioHealthInterval(status: .healthy, start: 0, end: 100, channel: .secondary),
            AudioHealthInterval(status: .flatline, start: 100, end: 200, channel: .secondary),
        ])
        #expect(AudioHealthTimeline().intervals(end: 10) == [AudioHealthInterval(status: .healthy, start: 0, end: 10)])
    }
}
