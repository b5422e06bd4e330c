import Foundation
import Testing
@testable import SleepCycleFormats

@Suite struct PreorderTreeTextTests {
    @Test func splitsAndLeavesInPreorderWithExactNumbers() throws {
        let text = "x3<=0.1:4 x12<=-1.5e-3:3 0.3 -7.0000005 2"
        let single = try #require(PreorderTreeText.parse(text, featureCount: 13, as: Float.self))
        #expect(single == [.init(feature: 3, number: Float("0.1")!, right: 4),
                           .init(feature: 12, number: Float("-1.5e-3")!, right: 3),
                           .init(feature: 0, number: Float("0.3")!, right: 0),
                           .init(feature: 0, number: Float("-7.0000005")!, right: 0),
                           .init(feature: 0, number: 2, right: 0)])
        let double = try #require(PreorderTreeText.parse(text, featureCount: 13, as: Double.self))
        #expect(double.map(\.number) == [0.1, -0.0015, 0.3, -7.0000005, 2])   // read as Double, not through Float
        #expect(double.map(\.isLeaf) == [false, false, true, true, true])
        #expect(PreorderTreeText.parse("  -0.5  ", featureCount: 1, as: Double.self) == [.init(feature: 0, number: -0.5, right: 0)])
    }

    @Test(arguments: [
        "",                         // no node
        "x0<=1:0 1 2",              // a split whose right child is 0 (would read as a leaf)
        "x0<=1:1 1 2",              // right child where the left one is
        "x0<=1:3 1 2",              // right child past the end
        "1 x0<=1:2",                // a split as the last node
        "x2<=1:2 1 2",              // feature outside featureCount
        "x<=1:2 1 2", "x0<1:2 1 2", "x0<=:2 1 2", "x0<=1 1 2", "x0<=1: 1 2", "x-1<=1:2 1 2",
        "x0<=abc:2 1 2", "x0<=1:2 nan 2", "x0<=inf:2 1 2", "x0<=1:2 1 2e999", "x0<=1:2a 1 2",
    ])
    func malformedTreesAreRejected(_ text: String) {
        #expect(PreorderTreeText.parse(text, featureCount: 2, as: Float.self) == nil)
        #expect(PreorderTreeText.parse(text, featureCount: 2, as: Double.self) == nil)
    }

    /// Every number reads as the standard library's correctly rounded conversion does, on and off the fast path:
    /// shortest float32 and float64 texts (the training scripts' output), long decimals, exponents, and decimals at
    /// or next to the midpoint between two floats (where rounding through Double would go wrong).
    @Test func numbersMatchTheStandardLibrarysConversion() {
        var state: UInt64 = 31
        func next() -> UInt64 {   // Knuth's MMIX linear congruential generator, high bits mixed down
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
        var texts = ["0", "-0", "0.0", "1", "-1", ".5", "5.", "1e5", "-2.5E-3", "1e22", "1e-22", "1e23", "123456789012345678",
                     "1234567890123456789", "9007199254740993", "0.000000000000000000000001", "3.4028235e38", "1e-40",
                     "1.1754944e-38", "16777217", "33554435", "+1", "1e+2"]
        for _ in 0..<4000 {
            let f = Float(bitPattern: UInt32(truncatingIfNeeded: next()) & 0x7fff_ffff | (next() & 1 == 0 ? 0 : 0x8000_0000))
            guard f.isFinite else { continue }
            texts.append(f.description)                          // shortest float32 text
            let above = f.nextUp
            let midpoint = (Double(f) + Double(above)) / 2          // exact in Double
            texts.append(midpoint.description)
            texts.append(String(format: "%.12e", midpoint))
            texts.append(Double(bitPattern: next() & 0x7fff_ffff_ffff_ffff).description)
            texts.append(String(Int64(bitPattern: next()) >> (next() % 60)) + "." + String(next() % 100_000))
        }
        for text in texts {
            let single = Float(text), double = Double(text)
            let parsedSingle = PreorderTreeText.parse(text, featureCount: 1, as: Float.self)?.first?.number
            let parsedDouble = PreorderTreeText.parse(text, featureCount: 1, as: Double.self)?.first?.number
            #expect(parsedSingle?.bitPattern == (single?.isFinite == true ? single?.bitPattern : nil), "\(text)")
            #expect(parsedDouble?.bitPattern == (double?.isFinite == true ? double?.bitPattern : nil), "\(text)")
        }
    }
}
