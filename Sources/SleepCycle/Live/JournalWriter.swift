import Foundation
import SleepCycleBus
import SleepCycleStore

/// Writes a night's journal to the store on a thread of its own, so the analysis never waits for the disk.
///
/// The analysis thread hands over chunks (`append`); the writer commits whatever is pending, one transaction per
/// round, at once. When the store fails (a full disk), the chunks stay in memory, `problem` says so, and the
/// writer tries again every `retryInterval`; nothing already stored is touched. `finish` writes what is left and
/// stores the night's result.
final class JournalWriter: @unchecked Sendable {
    let store: NightStore
    let night: UUID
    private let clockStart: Date
    private let retryInterval: TimeInterval
    private let condition = NSCondition()
    private var pending: [JournalChunk] = []
    private var nextSequence: Int64
    private var closing = false
    private var thread: Thread?
    private var done = false
    /// The problem and the night's time of the first chunk it kept from the store, while there is one.
    private var failure: (error: StoreError, since: Date)?
    /// Problems that happened during the night and were resolved (for the result's warnings).
    private var pastProblems: [String] = []

    /// - Parameters:
    ///   - nextSequence: the sequence number of the next chunk (0 for a new night; after the journal's last for a
    ///     resumed one).
    init(store: NightStore, night: UUID, clockStart: Date, nextSequence: Int64, retryInterval: TimeInterval = 5) {
        self.store = store
        self.night = night
        self.clockStart = clockStart
        self.nextSequence = nextSequence
        self.retryInterval = retryInterval
        let thread = Thread { [self] in run() }
        thread.name = "sleepcycle.journal"
        self.thread = thread
        thread.start()
    }

    /// Hands over the records of the stretch ending at `position` (never blocks on the disk).
    func append(records: Data, position: SampleTime, clipFiles: [String] = []) {
        condition.lock()
        pending.append(JournalChunk(sequence: nextSequence, position: position, records: records, clipFiles: clipFiles))
        nextSequence += 1
        condition.signal()
        condition.unlock()
    }

    /// A one-line problem while the journal is held in memory, else nil.
    var problem: String? {
        condition.lock(); defer { condition.unlock() }
        guard let failure else { return nil }
        return "journal kept in memory (\(pending.count) chunk(s)): \(failure.error.message)"
    }

    /// Writes what is pending (as far as the store lets it) and stops the thread; returns the store problems the
    /// night had, one line each (for the result's warnings). Idempotent.
    func drain() -> [String] {
        condition.lock()
        closing = true
        condition.broadcast()
        while !done { condition.wait() }
        var problems = pastProblems
        if let failure {
            problems.append("\(failure.error.message) from \(ISO8601Time.utcString(from: failure.since)) to the end of "
                + "the night: the last \(pending.count) journal chunk(s) were only in memory")
        }
        condition.unlock()
        return problems
    }

    /// Stores the night's result (one transaction: the night becomes complete and its journal is dropped, since
    /// the result holds everything the journal did): a two-sleeper night's separated result, with the primary
    /// sleeper's statistics for `sessions list` (as `sessions report` takes them), else the result itself.
    func complete(result: AnalysisResult, separated: SeparatedAnalysisResult? = nil) throws(StoreError) {
        let statistics = separated?.session(.primary).statistics ?? result.statistics
        try store.completeNight(id: night, endTime: result.endTime, source: Data(result.source.jsonString().utf8),
                                statistics: Data(statistics.jsonString().utf8),
                                result: Data((separated?.jsonString() ?? result.jsonString()).utf8))
    }

    /// The night's time (the recording's clock, not the wall clock: they differ for a file replayed or a night
    /// resumed) at the end of the stretch that ends at `position`.
    private func nightTime(_ position: SampleTime) -> Date {
        clockStart.addingTimeInterval(AnalysisClock.seconds(position))
    }

    private func run() {
        condition.lock()
        defer { done = true; condition.broadcast(); condition.unlock() }
        while true {
            while pending.isEmpty && !closing { condition.wait() }
            if pending.isEmpty && closing { return }
            let batch = pending
            condition.unlock()
            let end = nightTime(batch.last?.position ?? 0)
            var error: StoreError?
            do { try store.appendJournal(night: night, chunks: batch, endTime: end) } catch let e { error = e }
            condition.lock()
            if let error {
                if failure == nil { failure = (error, nightTime(batch.first?.position ?? 0)) }
                if closing { return }
                // Wait before trying again, unless the night ends meanwhile.
                _ = condition.wait(until: Date().addingTimeInterval(retryInterval))
            } else {
                pending.removeFirst(batch.count)
                if let past = failure {
                    pastProblems.append("\(past.error.message); the journal was kept in memory from "
                        + "\(ISO8601Time.utcString(from: past.since)) to \(ISO8601Time.utcString(from: end)) and then written")
                    failure = nil
                }
            }
        }
    }
}
