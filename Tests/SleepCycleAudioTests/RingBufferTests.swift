import Foundation
import Testing
@testable import SleepCycleAudio

/// Frames 0..<n of a 2-channel ramp: frame i = (i, -i).
private func stereoRamp(_ range: Range<Int>) -> [Float] {
    range.flatMap { [Float($0), -Float($0)] }
}

@Suite struct RingBufferTests {
    @Test func wrapsAroundAndKeepsOrder() {
        var ring = FrameRingBuffer(capacityFrames: 5, channels: 2)
        var out = [Float](repeating: 0, count: 10)
        var next = 0, expected = 0
        // Write 3, read 2, drain when 2 or more remain: head and tail cross the end of storage many times.
        for _ in 0..<20 {
            let chunk = stereoRamp(next..<(next + 3))
            #expect(chunk.withUnsafeBufferPointer { ring.write($0, frames: 3) } == 0)
            next += 3
            let n = out.withUnsafeMutableBufferPointer { ring.read(into: $0, frames: 2) }
            #expect(n == 2)
            #expect(Array(out[0..<4]) == stereoRamp(expected..<(expected + 2)))
            expected += 2
            if ring.count >= 2 {
                let m = out.withUnsafeMutableBufferPointer { ring.read(into: $0, frames: 5) }
                #expect(Array(out[0..<(2 * m)]) == stereoRamp(expected..<(expected + m)))
                expected += m
            }
        }
        #expect(expected + ring.count == next)
    }

    @Test func overflowDropsTheOldestFrames() {
        var ring = FrameRingBuffer(capacityFrames: 4, channels: 2)
        let a = stereoRamp(0..<3)
        #expect(a.withUnsafeBufferPointer { ring.write($0, frames: 3) } == 0)
        let b = stereoRamp(3..<6)
        #expect(b.withUnsafeBufferPointer { ring.write($0, frames: 3) } == 2)   // frames 0 and 1 dropped
        #expect(ring.count == 4)
        let out = ring.read(deinterleavingUpTo: 10)
        #expect(out == [[2, 3, 4, 5], [-2, -3, -4, -5]])
        #expect(ring.count == 0)
    }

    @Test func aWriteLargerThanTheRingKeepsItsNewestFrames() {
        var ring = FrameRingBuffer(capacityFrames: 4, channels: 1)
        let a: [Float] = [100, 101]
        _ = a.withUnsafeBufferPointer { ring.write($0, frames: 2) }
        let big: [Float] = (0..<7).map(Float.init)
        // 2 old frames + the first 3 of the 7 new ones are dropped.
        #expect(big.withUnsafeBufferPointer { ring.write($0, frames: 7) } == 5)
        #expect(ring.read(deinterleavingUpTo: 10) == [[3, 4, 5, 6]])
    }

    @Test func discardAndPartialReads() {
        var ring = FrameRingBuffer(capacityFrames: 3, channels: 1)
        let a: [Float] = [1, 2, 3]
        _ = a.withUnsafeBufferPointer { ring.write($0, frames: 3) }
        #expect(ring.discard(2) == 2)
        let b: [Float] = [4, 5]
        #expect(b.withUnsafeBufferPointer { ring.write($0, frames: 2) } == 0)   // wraps
        #expect(ring.read(deinterleavingUpTo: 2) == [[3, 4]])
        #expect(ring.read(deinterleavingUpTo: 2) == [[5]])
        #expect(ring.read(deinterleavingUpTo: 2) == [[]])
    }
}

@Suite struct TimelineBufferTests {
    /// Reads until `.end` (the buffer must have been finished).
    static func drain(_ t: TimelineBuffer) -> [SourceRead] {
        var out: [SourceRead] = []
        while true {
            let r = t.next()
            if case .end = r { return out }
            out.append(r)
        }
    }

    @Test func overflowBecomesAnOverrunGapAndTheTimelineStaysTiled() {
        let t = TimelineBuffer(capacityFrames: 8, channels: 1, maxReadFrames: 100)
        let ramp: [Float] = (0..<20).map(Float.init)
        ramp[0..<6].withUnsafeBufferPointer { _ = t.appendAudio($0, frames: 6) }
        t.appendGap(length: 4, reason: .missingInput)                    // timeline 6..<10
        // 10..<16 (6 frames): the ring holds 6 + 6 > 8, so frames 0..<4 are dropped.
        ramp[6..<12].withUnsafeBufferPointer { #expect(t.appendAudio($0, frames: 6) == 4) }
        t.finish()
        let reads = Self.drain(t)
        #expect(reads.count == 4)
        guard reads.count == 4 else { return }
        guard case .gap(0, 4, .overrun) = reads[0] else { Issue.record("\(reads[0])"); return }
        guard case .audio(4, let a) = reads[1] else { Issue.record("\(reads[1])"); return }
        #expect(a == [[4, 5]])
        guard case .gap(6, 4, .missingInput) = reads[2] else { Issue.record("\(reads[2])"); return }
        guard case .audio(10, let b) = reads[3] else { Issue.record("\(reads[3])"); return }
        #expect(b == [Array(ramp[6..<12])])
        #expect(t.dropCounters == .init(events: 1, frames: 4))
    }

    @Test func overflowAcrossAGapMergesNothingItShouldNot() {
        let t = TimelineBuffer(capacityFrames: 4, channels: 1, maxReadFrames: 100)
        let x: [Float] = [1, 2, 3, 4, 5, 6, 7, 8]
        x[0..<2].withUnsafeBufferPointer { _ = t.appendAudio($0, frames: 2) }   // 0..<2
        t.appendGap(length: 3, reason: .late)                                   // 2..<5
        x[2..<4].withUnsafeBufferPointer { _ = t.appendAudio($0, frames: 2) }   // 5..<7
        x[4..<8].withUnsafeBufferPointer { #expect(t.appendAudio($0, frames: 4) == 4) }   // 7..<11
        t.finish()
        let reads = Self.drain(t)
        // 0..<2 overrun, 2..<5 late, 5..<7 overrun, 7..<11 audio.
        #expect(reads.count == 4)
        guard reads.count == 4 else { return }
        guard case .gap(0, 2, .overrun) = reads[0], case .gap(2, 3, .late) = reads[1],
              case .gap(5, 2, .overrun) = reads[2], case .audio(7, let a) = reads[3] else {
            Issue.record("\(reads)"); return
        }
        #expect(a == [[5, 6, 7, 8]])
    }

    @Test func readsAreBoundedAndSplitLongRuns() {
        let t = TimelineBuffer(capacityFrames: 100, channels: 2, maxReadFrames: 4)
        let x = stereoRamp(0..<10)
        x.withUnsafeBufferPointer { _ = t.appendAudio($0, frames: 10) }
        t.finish()
        let reads = Self.drain(t)
        var starts: [Int64] = [], lengths: [Int] = []
        for r in reads {
            guard case .audio(let s, let c) = r else { continue }
            starts.append(s)
            lengths.append(c[0].count)
            #expect(c[1] == c[0].map { -$0 })
        }
        #expect(starts == [0, 4, 8])
        #expect(lengths == [4, 4, 2])
    }

    @Test func nextBlocksUntilAudioArrivesAndCloseEndsIt() async throws {
        let t = TimelineBuffer(capacityFrames: 16, channels: 1)
        let producer = Thread {
            usleep(50_000)
            let x: [Float] = [0.5, 0.25]
            x.withUnsafeBufferPointer { _ = t.appendAudio($0, frames: 2) }
            usleep(50_000)
            t.close()
        }
        producer.start()
        guard case .audio(0, let a) = t.next() else { Issue.record("expected audio"); return }
        #expect(a == [[0.5, 0.25]])
        guard case .end = t.next() else { Issue.record("expected end after close"); return }
    }
}
