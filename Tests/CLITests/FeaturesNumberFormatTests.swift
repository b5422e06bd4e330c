import Foundation
import Testing
@testable import sleepcycle

@Suite("features: number formatting")
struct FeaturesNumberFormatTests {
    static func format(_ x: Float, json: Bool = false) -> String {
        var bytes = [UInt8](repeating: 0, count: DecimalFormat.maxBytes)
        let n = bytes.withUnsafeMutableBufferPointer { DecimalFormat.write(x, json: json, to: $0.baseAddress!) }
        #expect(n <= DecimalFormat.maxBytes)
        return String(decoding: bytes[0..<n], as: UTF8.self)
    }

    static func seconds(_ samples: Int64) -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        let n = bytes.withUnsafeMutableBufferPointer {
            DecimalFormat.writeSeconds(samples: samples, sampleRate: 16000, to: $0.baseAddress!)
        }
        return String(decoding: bytes[0..<n], as: UTF8.self)
    }

    @Test func knownOutputs() {
        let cases: [(Float, String)] = [
            (0, "0"), (-0.0, "0"), (1, "1"), (-1, "-1"), (0.5, "0.5"), (100000, "100000"), (999999, "999999"),
            (1_000_000, "1e+06"), (9_999_995, "1e+07"), (123456.7, "123457"), (0.0001, "0.0001"), (0.00001, "0.00001"),
            (1.5e-7, "1.5e-07"), (-3.4028235e38, "-3.40282e+38"), (1e-10, "1e-10"), (6515.625, "6515.63"),
            (-576.1234, "-576.123"), (0.999_999_7, "1"), (Float.leastNonzeroMagnitude, "1.4013e-45"),
        ]
        for (x, s) in cases { #expect(Self.format(x) == s, "\(x)") }
    }

    @Test func nonFiniteValues() {
        #expect(Self.format(.nan) == "nan")
        #expect(Self.format(.infinity) == "inf")
        #expect(Self.format(-.infinity) == "-inf")
        #expect(Self.format(.nan, json: true) == "null")
        #expect(Self.format(-.infinity, json: true) == "null")
    }

    /// Every printed value parses back to within 5e-6 relative (6 significant digits, rounded).
    @Test func roundTripsWithinStatedPrecision() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var worst = 0.0
        for i in 0..<200_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            var bits = UInt32(truncatingIfNeeded: state >> 32)
            if i % 4 == 0 { bits &= 0x807F_FFFF; bits |= UInt32(100 + i % 60) << 23 }  // bias to ±1e-8…1e10
            let x = Float(bitPattern: bits)
            guard x.isFinite else { continue }
            let s = Self.format(x)
            guard let back = Double(s) else { Issue.record("unparseable \(s) for \(x)"); return }
            let err = x == 0 ? abs(back) : abs(back - Double(x)) / abs(Double(x))
            worst = max(worst, err)
            if !(err <= 5e-6 * (1 + 1e-9)) { Issue.record("\(x) printed as \(s): relative error \(err)"); return }
        }
        #expect(worst > 1e-6, "test covers values that need rounding")
    }

    @Test func secondsAreExactDecimals() {
        #expect(Self.seconds(0) == "0")
        #expect(Self.seconds(8000) == "0.5")
        #expect(Self.seconds(512) == "0.032")
        #expect(Self.seconds(1) == "0.0000625")
        #expect(Self.seconds(16000 * 28_800 + 512) == "28800.032")
        #expect(Self.seconds(-512) == "-0.032")
    }
}
