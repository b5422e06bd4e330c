import Foundation
import Testing
@testable import SleepCycleDSP

@Suite("FFT plan cache")
struct FFTPlanCacheTests {
    /// Naive DFT of a real signal (double precision) for checking the transform.
    static func dft(_ x: [Float]) -> [(Double, Double)] {
        let n = x.count
        return (0...(n / 2)).map { k in
            var re = 0.0, im = 0.0
            for (i, v) in x.enumerated() {
                let a = -2 * Double.pi * Double(k * i % n) / Double(n)
                re += Double(v) * cos(a); im += Double(v) * sin(a)
            }
            return (re, im)
        }
    }

    static func transform(_ x: [Float]) -> [Float] {
        let plan = RealFFTPlan.forward(size: x.count)
        let input = FFTBuffer.allocate(x.count), output = FFTBuffer.allocate(2 * plan.binCount)
        defer { FFTBuffer.deallocate(input); FFTBuffer.deallocate(output) }
        for (i, v) in x.enumerated() { input[i] = v }
        plan.execute(input, output)
        return Array(UnsafeBufferPointer(start: output, count: 2 * plan.binCount))
    }

    @Test(arguments: [64, 100, 256])
    func matchesANaiveDFT(n: Int) {
        let x: [Float] = (0..<n).map { i in
            let t = Double(i)
            return Float(sin(t * 0.37) + 0.25 * cos(t * 1.9))
        }
        let ours = Self.transform(x), ref = Self.dft(x)
        for (k, (re, im)) in ref.enumerated() {
            #expect(abs(Double(ours[2 * k]) - re) < 1e-4 * Double(n))
            #expect(abs(Double(ours[2 * k + 1]) - im) < 1e-4 * Double(n))
        }
    }

    @Test func concurrentPlanningAndExecutionAgree() {
        // Many threads ask for the same and for new sizes at once, then transform; every result must equal
        // the single-threaded one and each size must be planned exactly once.
        let sizes = [128, 384, 640, 896, 1152, 2048, 4000, 4096]
        let signals = sizes.map { n in (0..<n).map { Float(sin(Double($0 * 7 % 101))) } }
        let results = UnsafeMutableBufferPointer<[Float]>.allocate(capacity: 64)
        results.initialize(repeating: [])
        defer { results.deallocate() }
        nonisolated(unsafe) let out = results
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            out[i] = Self.transform(signals[i % sizes.count])
        }
        for i in 0..<64 { #expect(results[i] == Self.transform(signals[i % sizes.count])) }
        for n in sizes { #expect(FFTPlanCache.shared.creations(size: n) == 1, "size \(n) planned once") }
    }
}
