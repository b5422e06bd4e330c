import Foundation
import Testing
@testable import HeartSession

@Suite("HRV artefact correction")
struct ArtefactTests {
    /// SplitMix64: the same series on every machine.
    struct Generator {
        var state: UInt64
        mutating func next() -> Double {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
        mutating func gauss() -> Double {
            let u = max(next(), 1e-12), v = next()
            return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
        }
    }

    /// A resting night's RR series (ms): 950 ms, a respiratory swing, a slow wave, beat-to-beat noise.
    static func clean(_ n: Int, seed: UInt64) -> [Double] {
        var g = Generator(state: seed)
        return (0..<n).map { i -> Double in
            let t = Double(i)
            let swing: Double = 35 * sin(t / 2.2) + 20 * sin(t / 40)
            return 950 + swing + 12 * g.gauss()
        }
    }

    enum Kind: CaseIterable { case missed, extra, ectopic }

    /// `clean` with `share` of its beats turned into artefacts of `kinds`, at positions apart from each other.
    static func corrupted(_ clean: [Double], share: Double, kinds: [Kind], seed: UInt64) -> [Double] {
        var g = Generator(state: seed)
        var out: [Double] = []
        var i = 0
        var made = 0
        let wanted = Int(Double(clean.count) * share)
        let spacing = clean.count / max(1, wanted)
        while i < clean.count {
            if made < wanted, i % spacing == spacing / 2, i + 1 < clean.count {
                switch kinds[made % kinds.count] {
                case .missed: out.append(clean[i] + clean[i + 1]); i += 2
                case .extra:
                    let f = 0.25 + 0.5 * g.next()
                    out.append(clean[i] * f); out.append(clean[i] * (1 - f)); i += 1
                case .ectopic:
                    let d = clean[i] * (0.25 + 0.1 * g.next())
                    out.append(clean[i] - d); out.append(clean[i + 1] + d); i += 2
                }
                made += 1
                continue
            }
            out.append(clean[i])
            i += 1
        }
        return out
    }

    @Test(arguments: [0.01, 0.03, 0.05])
    func rmssdAfterCorrectionIsWithin5PercentOfTheCleanSeries(share: Double) throws {
        for seed in UInt64(1)...5 {
            let clean = Self.clean(1_000, seed: seed)
            let reference = try #require(HRV.timeDomain(clean)).rmssd
            for kinds in [[Kind.missed], [.extra], [.ectopic], Kind.allCases] {
                let bad = Self.corrupted(clean, share: share, kinds: kinds, seed: seed &* 7)
                let raw = try #require(HRV.timeDomain(bad)).rmssd
                let (nn, counts) = ArtefactCorrection.correct(bad)
                let fixed = try #require(HRV.timeDomain(nn)).rmssd
                #expect(abs(fixed - reference) / reference < 0.05,
                        "share \(share) \(kinds) seed \(seed): clean \(reference), corrupted \(raw), corrected \(fixed), \(counts)")
                #expect(counts.total >= Int(Double(clean.count) * share * 0.8), "\(counts)")
                #expect(abs(raw - reference) / reference > 0.05, "the artefacts matter: \(raw) vs \(reference)")
            }
        }
    }

    @Test func aCleanSeriesIsLeftAlone() {
        let clean = Self.clean(2_000, seed: 42)
        let (nn, counts) = ArtefactCorrection.correct(clean)
        #expect(counts.total == 0 && nn == clean)
    }
}
