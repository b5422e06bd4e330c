// PolyphaseFilterBankCache: bounded by bytes and count, least recently used dropped first, rebuilt tables identical.
import Foundation
import Testing
@testable import SleepCycleDSP

@Suite("Polyphase filter bank cache")
struct PolyphaseFilterBankCacheTests {
    /// A wide transition band and 40 dB: 6 taps (stride 8) per phase, so the 16 000 phases of an odd rate take 512 kB
    /// and build quickly in a debug build.
    static let cheap = ResamplerQuality(passbandEdge: 0.5, stopbandEdge: 1.5, attenuationDB: 40)
    /// Odd input rates coprime with 16 000 (L = 16 000 phases each, like 44 101 Hz with the standard quality).
    static let oddRates = (0..<24).map { 8_001 + 2 * $0 }.filter { $0 % 5 != 0 }

    static func bytes(_ rate: Int) -> Int {
        PolyphaseFilterBank(inputRate: rate, outputRate: 16_000, quality: cheap).byteCount
    }

    @Test("Opening many odd rates keeps the cache within its byte budget; the latest rates stay cached")
    func manyOddRatesStayWithinBudget() {
        let tableBytes = Self.bytes(8_001)
        #expect(tableBytes == 16_000 * 8 * 4)
        let cache = PolyphaseFilterBankCache(byteBudget: 4 * tableBytes)
        var first: PolyphaseFilterBank?
        for rate in Self.oddRates {
            let bank = cache.bank(inputRate: rate, outputRate: 16_000, quality: Self.cheap)
            if first == nil { first = bank }
            #expect(bank.upFactor == 16_000 && bank.byteCount == tableBytes)
            #expect(cache.byteCount <= cache.byteBudget && cache.count <= 4, "after \(rate) Hz: \(cache.byteCount) B")
        }
        #expect(cache.count == 4 && cache.buildCount == Self.oddRates.count)
        for rate in Self.oddRates.suffix(4) { _ = cache.bank(inputRate: rate, outputRate: 16_000, quality: Self.cheap) }
        #expect(cache.buildCount == Self.oddRates.count, "the four latest rates are hits")
        let rebuilt = cache.bank(inputRate: Self.oddRates[0], outputRate: 16_000, quality: Self.cheap)
        #expect(cache.buildCount == Self.oddRates.count + 1)
        #expect(rebuilt.coefficients == first?.coefficients, "a dropped table is rebuilt identical")
    }

    @Test("The least recently used table is dropped first; a hit makes a table the most recent")
    func leastRecentlyUsedFirst() {
        let cache = PolyphaseFilterBankCache(byteBudget: 3 * Self.bytes(8_001))
        func use(_ rate: Int) { _ = cache.bank(inputRate: rate, outputRate: 16_000, quality: Self.cheap) }
        for rate in [8_001, 8_003, 8_007] { use(rate) }
        use(8_001)            // now 8 003 is the least recently used
        use(8_009)            // drops 8 003
        #expect(cache.buildCount == 4 && cache.count == 3)
        use(8_001); use(8_007); use(8_009)
        #expect(cache.buildCount == 4, "8 001, 8 007 and 8 009 are still cached")
        use(8_003)
        #expect(cache.buildCount == 5, "8 003 was dropped")
    }

    @Test("Small tables are capped by count; a table larger than the budget is cached alone")
    func countCapAndOversizedTable() {
        let byCount = PolyphaseFilterBankCache(byteBudget: .max, maxBanks: 3)
        for rate in [8_000, 12_000, 10_000, 14_000, 9_000] {
            _ = byCount.bank(inputRate: rate, outputRate: 16_000, quality: .standard)
            #expect(byCount.count <= 3)
        }
        #expect(byCount.count == 3 && byCount.buildCount == 5)

        let tiny = PolyphaseFilterBankCache(byteBudget: 1_000)
        _ = tiny.bank(inputRate: 8_001, outputRate: 16_000, quality: Self.cheap)
        _ = tiny.bank(inputRate: 8_001, outputRate: 16_000, quality: Self.cheap)
        #expect(tiny.count == 1 && tiny.buildCount == 1 && tiny.byteCount == Self.bytes(8_001))
        _ = tiny.bank(inputRate: 8_003, outputRate: 16_000, quality: Self.cheap)
        #expect(tiny.count == 1 && tiny.buildCount == 2)
    }

    @Test("Resamplers opened at many odd rates (16 MB tables) leave the shared cache within its budget")
    func resamplersAtOddRates() throws {
        let shared = PolyphaseFilterBankCache.shared
        for rate in [44_103, 44_107, 44_109, 44_111, 44_113] {
            let resampler = try Resampler(inputRate: rate)
            #expect(resampler.implementation == "polyphase")
            #expect(shared.byteCount <= shared.byteBudget && shared.count <= shared.maxBanks, "after \(rate) Hz")
        }
    }

    @Test("The shared cache keeps at least two of the largest tables, so one or two rates per process never rebuild")
    func sharedBudget() {
        let shared = PolyphaseFilterBankCache.shared
        #expect(shared.byteBudget >= 2 * PolyphaseFilterBank.maxCoefficients * MemoryLayout<Float>.stride)
        #expect(shared.maxBanks >= 2)
        let odd = PolyphaseFilterBank(inputRate: 44_101, outputRate: 16_000, quality: .standard)
        #expect(odd.coefficients.count <= PolyphaseFilterBank.maxCoefficients)
    }
}
