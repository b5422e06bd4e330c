import Foundation
import Testing
@testable import SleepCycleDSP

@Suite("FeatureAnalyzer streaming")
struct FeatureAnalyzerStreamingTests {
    /// Deterministic test signal: two tones, a noise burst, a silent stretch (LCG noise, no Foundation).
    static func signal(_ n: Int) -> [Float] {
        var state: UInt32 = 12345
        return (0..<n).map { i in
            state = state &* 1_664_525 &+ 1_013_904_223
            let noise = Float(Int32(bitPattern: state)) / Float(Int32.max)
            let t = Float(i) / 16000
            if i % 9000 > 7000 { return 0 }
            return 0.3 * sin(2 * .pi * 440 * t) + 0.05 * sin(2 * .pi * 2500 * t) + (i % 5000 < 800 ? 0.2 * noise : 0)
        }
    }

    /// Feeds `samples` in consecutive blocks of the given sizes (cycled) and collects every block.
    static func streamed(_ samples: [Float], blockSizes: [Int], frameLength: Int = 512, hop: Int = 160) throws
        -> (start: Int64?, count: Int, values: [Float]) {
        let a = try FeatureAnalyzer(frameLength: frameLength, hopLength: hop)
        var values = [Float](), count = 0, start: Int64?
        var expectedStart: Int64 = 0
        var i = 0, k = 0
        func take(_ b: FeatureBlock?) {
            guard let b else { return }
            #expect(b.start == expectedStart, "blocks must tile the frame sequence")
            if start == nil { start = b.start }
            expectedStart = b.start + Int64(b.count * hop)
            values += b.values.prefix(b.count * FeatureLayout.stride); count += b.count
        }
        while i < samples.count {
            let n = min(blockSizes[k % blockSizes.count], samples.count - i)
            take(samples[i..<i + n].withUnsafeBufferPointer { a.process($0) })
            i += n; k += 1
        }
        take(a.finish())
        return (start, count, values)
    }

    @Test func resultDoesNotDependOnBlockSizes() throws {
        let x = Self.signal(12_345)
        let whole = try Self.streamed(x, blockSizes: [x.count])
        #expect(whole.count == 1 + x.count / 160)
        for sizes in [[1], [7, 300, 1], [160], [511, 512, 513], [4096], [2, 3, 5000]] {
            let s = try Self.streamed(x, blockSizes: sizes)
            #expect(s.count == whole.count, "block sizes \(sizes)")
            #expect(s.values == whole.values, "block sizes \(sizes): values differ")
        }
    }

    @Test(arguments: [(1024, 512, 16000), (1024, 512, 511), (512, 256, 1), (64, 64, 1000), (1000, 333, 2001)])
    func frameCountIsLibrosas(frameLength: Int, hop: Int, n: Int) throws {
        let b = try FeatureAnalyzer.analyze(Self.signal(n), frameLength: frameLength, hopLength: hop)
        #expect(b.count == 1 + n / hop)
        #expect(b.values.count >= b.count * FeatureLayout.stride)
    }

    @Test func emptyStreamHasNoFrames() throws {
        let a = try FeatureAnalyzer()
        #expect(a.process([Float]()) == nil)
        #expect(a.finish() == nil)
    }

    @Test func silenceFollowsLibrosaConventions() throws {
        let b = try FeatureAnalyzer.analyze([Float](repeating: 0, count: 4000))
        for f in 0..<b.count {
            #expect(b[frame: f, FeatureLayout.rms] == 0)
            #expect(b[frame: f, FeatureLayout.spectralCentroid] == 0)
            #expect(b[frame: f, FeatureLayout.spectralBandwidth] == 0)
            #expect(b[frame: f, FeatureLayout.spectralRolloff] == 0)
            #expect(abs(b[frame: f, FeatureLayout.spectralFlatness] - 1) < 1e-5)
            #expect(b[frame: f, FeatureLayout.zeroCrossingRate] == 0)
            #expect(b[frame: f, FeatureLayout.mel] == 0)
            // MFCC of a flat −100 dB mel spectrum: c0 = −100·√40, the rest 0.
            #expect(abs(b[frame: f, FeatureLayout.mfcc] - (-100 * Float(40).squareRoot())) < 1e-2)
            #expect(abs(b[frame: f, FeatureLayout.mfcc + 1]) < 1e-3)
        }
    }

    @Test func resetRestartsFramingOnTheTimelinesGrid() throws {
        let x = Self.signal(5000)
        let a = try FeatureAnalyzer(frameLength: 512, hopLength: 256)
        _ = a.process(Self.signal(3000))
        a.reset(startSample: 1_000_000)  // e.g. after a gap; unfinished frames are dropped
        let head = a.process(x)
        let tail = a.finish()
        // 1_000_000 = 3906·256 + 64: the first frame is centred on the next multiple of the hop.
        #expect(head?.start == 1_000_192)
        #expect(tail.map { $0.start } == 1_000_192 + Int64((head?.count ?? 0) * 256))
        // Once a frame lies wholly after the restart, it is the frame of an uninterrupted stream there.
        let whole = try FeatureAnalyzer.analyze([Float](repeating: 0, count: 1_000_000) + x, frameLength: 512, hopLength: 256)
        let values = (head?.values ?? []) + (tail?.values ?? [])
        let firstWhole = 1                                     // centre 1_000_192 + 256: starts at 1_000_192
        let k0 = Int(1_000_192 / 256)
        for k in firstWhole..<((head?.count ?? 0) - 1) {
            let mine = Array(values[(k * FeatureLayout.stride)..<((k + 1) * FeatureLayout.stride)])
            let theirs = Array(whole.values[((k0 + k) * FeatureLayout.stride)..<((k0 + k + 1) * FeatureLayout.stride)])
            #expect(mine.dropLast(1) == theirs.dropLast(1), "frame \(k)")       // spectral flux (last) needs the previous frame
        }
        // A restart on the grid behaves as a fresh stream.
        a.reset(startSample: 1_000_192)
        let aligned = (a.process(x)?.values ?? []) + (a.finish()?.values ?? [])
        #expect(aligned == (try FeatureAnalyzer.analyze(x, frameLength: 512, hopLength: 256)).values)
    }

    @Test func finishContinuesAsANewStream() throws {
        let a = try FeatureAnalyzer(frameLength: 256, hopLength: 128)
        _ = a.process(Self.signal(1000))
        let end = a.finish()
        #expect(end != nil)
        let next = a.process(Self.signal(1000))
        #expect(next?.start == 1024)  // the first frame of the next stream is centred on the next grid sample
    }

    @Test func fluxIsZeroOnFirstFrameAndPositiveOnOnsets() throws {
        var x = [Float](repeating: 0, count: 8000)
        for i in 4000..<8000 { x[i] = 0.5 * sin(Float(i) * 0.3) }
        let b = try FeatureAnalyzer.analyze(x)
        #expect(b[frame: 0, FeatureLayout.spectralFlux] == 0)
        #expect(b[frame: 3, FeatureLayout.spectralFlux] == 0)          // silence → silence
        let onset = (0..<b.count).max { b[frame: $0, FeatureLayout.spectralFlux] < b[frame: $1, FeatureLayout.spectralFlux] }!
        #expect(abs(onset * 512 - 4000) <= 512)
    }

    @Test func zeroCrossingRateIgnoresPaddingAndTinyValues() throws {
        // Alternating ±0.5: every pair of real samples crosses. The first frame (samples −512..<512) holds 512
        // real samples → 511 crossings out of 1024 (zero padding would add one after the last, negative, sample).
        let x = (0..<4096).map { Float($0 % 2 == 0 ? 0.5 : -0.5) }
        let b = try FeatureAnalyzer.analyze(x)
        #expect(b[frame: 0, FeatureLayout.zeroCrossingRate] == Float(511) / 1024)
        #expect(b[frame: 3, FeatureLayout.zeroCrossingRate] == Float(1023) / 1024)
        #expect(b[frame: b.count - 1, FeatureLayout.zeroCrossingRate] == Float(511) / 1024)
        // |x| ≤ 1e-10 counts as zero (positive): no crossings.
        let tiny = (0..<4096).map { Float($0 % 2 == 0 ? 1e-11 : -1e-11) }
        #expect(try FeatureAnalyzer.analyze(tiny)[frame: 2, FeatureLayout.zeroCrossingRate] == 0)
    }

    @Test func invalidParametersAreRejectedWithAMessage() {
        #expect(throws: DSPError.self) { try FeatureAnalyzer(frameLength: 63) }
        #expect(throws: DSPError.self) { try FeatureAnalyzer(frameLength: 1025) }
        #expect(throws: DSPError.self) { try FeatureAnalyzer(frameLength: 1024, hopLength: 0) }
        #expect(throws: DSPError.self) { try FeatureAnalyzer(frameLength: 1024, hopLength: 2048) }
        #expect(throws: DSPError.self) { try FeatureAnalyzer(sampleRate: 0) }
        do { _ = try FeatureAnalyzer(frameLength: 100, hopLength: 101) } catch {
            #expect("\(error)".contains("hop length") && "\(error)".contains("101"))
        }
    }
}

extension FeatureBlock: Equatable {
    public static func == (a: FeatureBlock, b: FeatureBlock) -> Bool {
        a.channel == b.channel && a.start == b.start && a.count == b.count && a.values == b.values
    }
}
