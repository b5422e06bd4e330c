import Foundation
import Testing
@testable import SleepCycleAudio

#if canImport(Glibc)
import Glibc
#endif

/// `n` samples whose value encodes their timeline position (t / 100000), so misplacement is visible.
private func stamped(_ t: Int64, _ n: Int) -> [Float] { (0..<n).map { Float(t + Int64($0)) / 100_000 } }

private func audioPositions(_ reads: [SourceRead]) -> [(Int64, [Float])] {
    reads.compactMap { if case .audio(let s, let c) = $0 { return (s, c[0]) } else { return nil } }
}

/// True when every audio sample sits at the position its value encodes.
private func audioIsInPlace(_ reads: [SourceRead]) -> Bool {
    audioPositions(reads).allSatisfy { start, run in run == stamped(start, run.count) }
}

@Suite struct InjectedAudioSourceTests {
    @Test func contiguousBuffersArriveUnchanged() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1)
        for k in 0..<5 { try source.push([stamped(Int64(k * 320), 320)], at: Int64(k * 320)) }
        source.finish()
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 1600)
        #expect(audioPositions(reads).flatMap(\.1) == stamped(0, 1600))
        let s = source.statistics
        #expect(s.buffersPushed == 5 && s.framesAccepted == 1600)
        #expect(s.lateGaps == 0 && s.missingInputGaps == 0 && s.overlappingBuffers == 0 && s.outOfOrderBuffers == 0)
    }

    @Test func holesAreLateOrMissingInputByLength() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1, lateThresholdSec: 0.5)
        try source.push([stamped(0, 1600)], at: 0)
        try source.push([stamped(2000, 1600)], at: 2000)            // 400-frame hole: late
        try source.push([stamped(20_000, 160)], at: 20_000)         // 16 400-frame hole (> 0.5 s): missing
        source.finish(at: 21_000)                                  // host says the session ran to 21 000
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 21_000)
        #expect(audioIsInPlace(reads))
        let gaps = reads.compactMap { r -> (Int64, Int64, SourceGapReason)? in
            if case .gap(let s, let l, let why) = r { return (s, l, why) } else { return nil }
        }
        #expect(gaps.map(\.0) == [1600, 3600, 20_160])
        #expect(gaps.map(\.1) == [400, 16_400, 840])
        #expect(gaps.map(\.2) == [.late, .missingInput, .missingInput])
        let s = source.statistics
        #expect(s.lateGaps == 1 && s.lateFrames == 400)
        #expect(s.missingInputGaps == 2 && s.missingInputFrames == 16_400 + 840)
    }

    @Test func overlapsAreDroppedAndCounted() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1)
        try source.push([stamped(0, 1000)], at: 0)
        try source.push([stamped(800, 1000)], at: 800)      // frames 800..<1000 repeat time already delivered
        try source.push([stamped(800, 1000)], at: 800)      // an exact repeat of the previous buffer
        try source.push([stamped(1800, 10)], at: 1800)
        source.finish()
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 1810)
        #expect(gapFrames(reads, .late) + gapFrames(reads, .missingInput) == 0)
        #expect(audioIsInPlace(reads))
        let s = source.statistics
        #expect(s.overlappingBuffers == 2)
        #expect(s.overlapFramesDropped == 200 + 1000)
        #expect(s.framesAccepted == 1810)
        #expect(s.outOfOrderBuffers == 0)
    }

    @Test func anOutOfOrderBufferIsNotGluedIntoTheGapAlreadyReported() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1)
        try source.push([stamped(0, 1000)], at: 0)
        try source.push([stamped(2000, 1000)], at: 2000)    // hole 1000..<2000 reported as late
        try source.push([stamped(1000, 1000)], at: 1000)    // the missing buffer, too late
        source.finish()
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 3000)
        #expect(gapFrames(reads, .late) == 1000)
        #expect(audioIsInPlace(reads))
        let s = source.statistics
        #expect(s.outOfOrderBuffers == 1 && s.outOfOrderFramesDropped == 1000)
        #expect(s.overlappingBuffers == 0)
    }

    @Test func dateStampedBuffersSnapWithinToleranceOnly() throws {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1, start: t0, dateToleranceSec: 0.005)
        try source.push([stamped(0, 1600)], at: t0)
        // 3 ms late (48 frames): jitter, placed at 1600 and counted.
        try source.push([stamped(1600, 1600)], at: t0.addingTimeInterval(0.1 + 0.003))
        // 20 ms late (320 frames): a real hole, reported.
        try source.push([stamped(3520, 1600)], at: t0.addingTimeInterval(0.2 + 0.02))
        source.finish()
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 5120)
        #expect(audioIsInPlace(reads))
        #expect(gapFrames(reads, .late) == 320)
        #expect(source.statistics.snappedBuffers == 1)
        #expect(source.start == t0)
    }

    @Test func theFirstDateStampedPushDefinesTheStartWhenNoneIsGiven() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000.25)
        try source.push([stamped(0, 160)], at: t0)
        #expect(source.start == t0)
        try source.push([stamped(16_000, 160)], at: t0.addingTimeInterval(1))
        source.finish()
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 16_160)
        #expect(gapFrames(reads, .late) == 16_000 - 160)
    }

    @Test func stereoBuffersInBothLayouts() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 2)
        try source.push([[1, 2, 3], [-1, -2, -3]], at: 0)
        try source.push(interleaved: [4, -4, 5, -5], at: 3)
        source.finish()
        let reads = try readAll(source)
        guard reads.count == 1, case .audio(0, let c) = reads[0] else { Issue.record("\(reads)"); return }
        #expect(c == [[1, 2, 3, 4, 5], [-1, -2, -3, -4, -5]])
    }

    @Test func badBuffersAndLateCallsThrowOneLineErrors() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 2, name: "host-mic")
        #expect(throws: AudioError.self) { try source.push([[1, 2]], at: 0) }
        #expect(throws: AudioError.self) { try source.push([[1, 2], [3]], at: 0) }
        #expect(throws: AudioError.self) { try source.push(interleaved: [1, 2, 3], at: 0) }
        source.finish()
        do {
            try source.push([[1], [2]], at: 0)
            Issue.record("expected an error")
        } catch let error as AudioError {
            #expect(error.description == "host-mic: buffer pushed after finish() or close()")
        }
        #expect(throws: AudioError.self) { _ = try InjectedAudioSource(sampleRate: 16_000, channels: 3) }
    }

    @Test func aFullBufferDropsTheOldestAudioAsAnOverrunGap() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1, bufferSeconds: 0.01)   // 160 frames
        try source.push([stamped(0, 100)], at: 0)
        try source.push([stamped(100, 100)], at: 100)
        source.finish()
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 200)
        #expect(gapFrames(reads, .overrun) == 40)
        #expect(audioIsInPlace(reads))
        #expect(source.statistics.ringOverflows == 1 && source.statistics.ringFramesDropped == 40)
    }

    @Test func readWaitsForAPushAndCloseEndsIt() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1)
        let host = Thread {
            usleep(50_000)
            try? source.push([stamped(0, 10)], at: 0)
            usleep(50_000)
            source.close()
        }
        host.start()
        guard case .audio(0, let c) = try source.read() else { Issue.record("expected audio"); return }
        #expect(c[0] == stamped(0, 10))
        guard case .end = try source.read() else { Issue.record("expected .end"); return }
        #expect(throws: AudioError.self) { try source.push([[0]], at: 10) }
    }

    /// Four host threads push interleaved slices of one timeline while analysis reads: whatever the
    /// interleaving, the reads tile the timeline, every sample is in place, and the counters add up.
    @Test func concurrentPushersKeepTheTimelineConsistent() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1)
        let buffers = 400, length = 160
        let group = DispatchGroup()
        for worker in 0..<4 {
            group.enter()
            Thread {
                for k in stride(from: worker, to: buffers, by: 4) {
                    let t = Int64(k * length)
                    try? source.push([stamped(t, length)], at: t)
                }
                group.leave()
            }.start()
        }
        let done = Thread { group.wait(); source.finish() }
        done.start()
        let reads = try readAll(source)
        let s = source.statistics
        #expect(s.buffersPushed == buffers)
        #expect(audioIsInPlace(reads))
        let end = tiledEnd(reads)
        #expect(end != nil)
        #expect(s.framesAccepted + s.overlapFramesDropped + s.outOfOrderFramesDropped == Int64(buffers * length))
        #expect(s.framesAccepted + s.lateFrames + s.missingInputFrames == end)
    }

    /// 48 kHz pushes reach analysis at 16 kHz: positions divide by 3 (gaps included) and a 1 kHz tone
    /// matches the 16 kHz tone away from the run edges (where the resampler pads with silence).
    @Test func otherRatesAreResampledTo16kHzOnTheSameTimeline() throws {
        let source = try InjectedAudioSource(sampleRate: 48_000, channels: 1)
        #expect(source.format.sampleRate == 48_000)
        func tone(_ t: Int, _ n: Int, rate: Double) -> [Float] {
            (t..<(t + n)).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / rate)) }
        }
        for k in 0..<10 where k != 5 { try source.push([tone(k * 2400, 2400, rate: 48_000)], at: Int64(k * 2400)) }
        source.finish()
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 8000)
        let gaps = reads.compactMap { r -> (Int64, Int64, SourceGapReason)? in
            if case .gap(let s, let l, let why) = r { return (s, l, why) } else { return nil }
        }
        #expect(gaps.count == 1)
        #expect(gaps.first?.0 == 4000 && gaps.first?.1 == 800 && gaps.first?.2 == .late)
        var worst: Float = 0
        for (start, run) in audioPositions(reads) {
            let reference = tone(Int(start), run.count, rate: 16_000)
            for i in 0..<run.count {
                let t = Int(start) + i
                if t < 64 || (t >= 4000 - 64 && t < 4800 + 64) || t >= 8000 - 64 { continue }
                worst = max(worst, abs(run[i] - reference[i]))
            }
        }
        #expect(worst < 1e-3, "largest deviation from the 16 kHz tone: \(worst)")
    }
}
