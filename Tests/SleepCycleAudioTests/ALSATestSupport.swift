import Foundation
@testable import SleepCycleAudio

/// Test PCMs built on ALSA's `file` plugin: capture reads `infile` (raw interleaved samples in the
/// negotiated format, S16_LE here) through a `null` slave, so real alsa-lib code runs without a sound card.
/// The plugin is not paced in real time and replays stale data past the end of `infile`, so tests pass
/// `maxFrames` equal to the file's length.
enum FilePluginPCM {
    static let name = "sctest"

    /// ALSA configuration text defining `pcm.sctest` on `infile`.
    static func config(infile: String) -> String { ALSACaptureSource.filePluginConfig(name: name, infile: infile) }

    /// Writes `samples` as raw S16_LE to a fresh temporary file and returns its path.
    static func writeRaw(_ samples: [Int16]) throws -> String {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sleepcycle-live-\(UUID().uuidString).raw")
        let data = samples.withUnsafeBufferPointer { Data(buffer: $0) }   // little-endian host
        try data.write(to: url)
        return url.path
    }

    /// Deterministic pseudo-random S16 samples (a 64-bit LCG, Knuth MMIX constants) that include both
    /// extremes, so the S16 → Float scaling is checked at ±full scale.
    static func samples(count: Int, seed: UInt64 = 1) -> [Int16] {
        var state = seed
        var out = (0..<count).map { _ -> Int16 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int16(truncatingIfNeeded: state >> 48)
        }
        if count > 2 { out[0] = .min; out[1] = .max }
        return out
    }
}

/// A fault script for the choke point: `script(call, n)` is asked before the n-th call (0-based, counted
/// per call kind) and returns a negative errno to inject, or nil for the real call.
final class ScriptedFaults: ALSAFaultInjector, @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [ALSACall: Int] = [:]
    private let script: @Sendable (ALSACall, Int) -> Int32?

    init(_ script: @escaping @Sendable (ALSACall, Int) -> Int32?) { self.script = script }

    func fault(for call: ALSACall) -> Int32? {
        let n = lock.withLock { () -> Int in
            let n = counts[call, default: 0]
            counts[call] = n + 1
            return n
        }
        return script(call, n)
    }

    func count(_ call: ALSACall) -> Int { lock.withLock { counts[call, default: 0] } }
}

/// Every read of `source` until `.end`.
func readAll(_ source: any AudioSource) throws -> [SourceRead] {
    var out: [SourceRead] = []
    while true {
        let r = try source.read()
        if case .end = r { return out }
        out.append(r)
    }
}

/// Checks that reads tile the timeline from 0 with no hole or overlap; returns the end position.
func tiledEnd(_ reads: [SourceRead]) -> Int64? {
    var position: Int64 = 0
    for r in reads {
        switch r {
        case .audio(let s, let c):
            guard s == position else { return nil }
            position += Int64(c[0].count)
        case .gap(let s, let l, _):
            guard s == position, l > 0 else { return nil }
            position += l
        case .end:
            return nil
        }
    }
    return position
}

func gapFrames(_ reads: [SourceRead], _ reason: SourceGapReason) -> Int64 {
    reads.reduce(0) { sum, r in
        if case .gap(_, let l, let why) = r, why == reason { return sum + l }
        return sum
    }
}
