import Testing
@testable import EventDetection
@Test func debugSignatureDistance() throws {
    let sig = try SnoreSignature.builtIn()
    let bg = TestSignals.background(1e-4)
    func s(_ p: [Int], _ base: Float) throws -> [Float] {
        let a = try TestSignals.segments(TestSignals.frames(seconds: 10, background: bg, events: [(5, 6.2, TestSignals.snorerShape(peaks: p, level: 3e-2, base: base))]))
        return sig.normalise(a[0].rawSignature)
    }
    let cands: [([Int], Float)] = [([3, 9], 0.02), ([16, 27], 0.3), ([16, 27], 0.02), ([2], 0.05), ([4, 8, 12], 0.1), ([10, 20, 30], 0.01), ([1, 3], 0.5), ([25, 35], 0.05), ([6], 1.0)]
    let v = try cands.map { try s($0.0, $0.1) }
    for i in 0..<v.count { print("D", i, (0..<v.count).map { String(format: "%.2f", 1 - SnorerClustering.dot(v[i], v[$0])) }.joined(separator: " ")) }
}
