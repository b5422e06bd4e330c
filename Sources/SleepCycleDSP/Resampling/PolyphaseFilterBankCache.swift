// The process-wide cache of polyphase phase tables, bounded by a byte budget (least recently used dropped first).
import Foundation

/// Process-wide cache of phase tables: every channel (and every resampler) converting the same rates with the same
/// quality shares one immutable table instead of building its own.
///
/// Bounded, because the tables of odd rates (a tiny gcd with 16 kHz, e.g. 44 101 Hz) hold up to 16 MB each and a
/// long-running host may open files at many of them: at most `byteBudget` bytes and `maxBanks` tables are kept; past
/// that the least recently used are dropped. The table just built is always kept, so one larger than the budget
/// (a custom `ResamplerQuality` with a very narrow transition band) is cached alone. A dropped table lives on in the
/// resamplers that use it (arrays are shared, copy-on-write) and is rebuilt, identical, when its rates come back.
/// The default budget holds three of the largest tables, so a process that converts one or two rates never rebuilds.
final class PolyphaseFilterBankCache: @unchecked Sendable {
    static let shared = PolyphaseFilterBankCache()

    /// Three tables of `PolyphaseFilterBank.maxCoefficients` floats: 48 MB.
    static let defaultByteBudget = 3 * PolyphaseFilterBank.maxCoefficients * MemoryLayout<Float>.stride
    /// Small tables (8–16 kHz up-sampling: a few kB) are capped by count, so lookups stay a short scan.
    static let defaultMaxBanks = 32

    let byteBudget: Int
    let maxBanks: Int

    private struct Key: Hashable { let inputRate: Int, outputRate: Int, quality: ResamplerQuality }
    private let lock = NSLock()
    /// Least recently used first.
    private var entries: [(key: Key, bank: PolyphaseFilterBank)] = []
    private var bytes = 0
    private var builds = 0

    init(byteBudget: Int = defaultByteBudget, maxBanks: Int = defaultMaxBanks) {
        precondition(byteBudget >= 0 && maxBanks >= 1, "a cache needs a budget ≥ 0 and room for one table")
        self.byteBudget = byteBudget
        self.maxBanks = maxBanks
    }

    /// The table for these rates and quality: the cached one, or a new one (built under the lock, so concurrent
    /// resamplers of the same rates build it once).
    func bank(inputRate: Int, outputRate: Int, quality: ResamplerQuality) -> PolyphaseFilterBank {
        let key = Key(inputRate: inputRate, outputRate: outputRate, quality: quality)
        lock.lock()
        defer { lock.unlock() }
        if let i = entries.lastIndex(where: { $0.key == key }) {
            let entry = entries[i]
            if i != entries.count - 1 {
                entries.remove(at: i)
                entries.append(entry)
            }
            return entry.bank
        }
        let bank = PolyphaseFilterBank(inputRate: inputRate, outputRate: outputRate, quality: quality)
        builds += 1
        entries.append((key, bank))
        bytes += bank.byteCount
        while entries.count > 1 && (bytes > byteBudget || entries.count > maxBanks) {
            bytes -= entries.removeFirst().bank.byteCount
        }
        return bank
    }

    /// Bytes of the tables held now.
    var byteCount: Int { lock.withLock { bytes } }
    /// Tables held now.
    var count: Int { lock.withLock { entries.count } }
    /// Tables built so far (a hit builds none).
    var buildCount: Int { lock.withLock { builds } }
}
