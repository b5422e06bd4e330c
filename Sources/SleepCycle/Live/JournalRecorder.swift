import Foundation
import SleepCycleBus

/// The bus observer that journals a live night: it collects `JournalRecord`s in bus order and, every
/// `chunkSamples` of audio (and at a gap and at the end), hands them to the `JournalWriter` as one chunk. Registered
/// after every consumer and the result collector, and not during a replay (the journal is not written twice).
final class JournalRecorder {
    private let writer: JournalWriter
    private let chunkSamples: SampleTime
    private var records: [JournalRecord] = []
    private var lastCut: SampleTime
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = []
        return e
    }()

    /// - Parameter chunkSeconds: audio per chunk; the journal is at most this far behind the analysis, plus the
    ///   writer's commit (the contract: a crash loses at most the last 2 s).
    init(writer: JournalWriter, start: SampleTime, chunkSeconds: Double = 0.5) {
        self.writer = writer
        self.lastCut = start
        self.chunkSamples = AnalysisClock.samples(seconds: chunkSeconds)
    }

    func observe(_ event: AnalysisEvent) {
        if let record = JournalRecord(event) { records.append(record) }
        switch event {
        case .audio(let block) where block.end - lastCut >= chunkSamples: cut(at: block.end)
        case .gap(let g): cut(at: g.start + g.length)
        case .sessionEnding(let end): cut(at: end)
        default: break
        }
    }

    private func cut(at position: SampleTime) {
        guard !records.isEmpty else { return }
        // JSONEncoder cannot fail on these plain values; an encoding failure would lose only this chunk.
        if let data = try? encoder.encode(records) { writer.append(records: data, position: position) }
        records.removeAll(keepingCapacity: true)
        lastCut = position
    }
}
