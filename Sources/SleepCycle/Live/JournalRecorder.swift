import Foundation
import SleepCycleBus

/// The bus observer that journals a live night: it collects `JournalRecord`s in bus order and, every
/// `chunkSamples` of audio (and at a gap and at the end), hands them to the `JournalWriter` as one chunk. Registered
/// after every consumer and the result collector, and not during a replay (the journal is not written twice).
final class JournalRecorder {
    private let writer: JournalWriter
    private let chunkSamples: SampleTime
    private var records: [JournalRecord] = []
    /// The clips folder (`--clips DIR`), whose files written this chunk go into the store's clips index.
    private let clipsDirectory: String?
    private var clipFiles: [String] = []
    private var lastCut: SampleTime
    /// Seals the wearable readings (`WearableSealing`) when set.
    private let wearableKey: ClipKey?
    private var ended = false
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = []
        return e
    }()

    /// - Parameter chunkSeconds: audio per chunk; the journal is at most this far behind the analysis, plus the
    ///   writer's commit (the contract: a crash loses at most the last 2 s).
    init(writer: JournalWriter, start: SampleTime, clipsDirectory: String? = nil, wearableKey: ClipKey? = nil,
         chunkSeconds: Double = 0.5) {
        self.writer = writer
        self.wearableKey = wearableKey
        self.clipsDirectory = clipsDirectory
        self.lastCut = start
        self.chunkSamples = AnalysisClock.samples(seconds: chunkSeconds)
    }

    func observe(_ event: AnalysisEvent) {
        if let record = JournalRecord(event) {
            records.append(wearableKey.map { WearableSealing.seal(record, key: $0, encoder: encoder) } ?? record)
        }
        if case .clip(let c) = event, c.status == .written, let path = c.path, let clipsDirectory {
            clipFiles.append(URL(fileURLWithPath: clipsDirectory).appendingPathComponent(path).standardizedFileURL.path)
        }
        switch event {
        case .audio(let block) where block.end - lastCut >= chunkSamples: cut(at: block.end)
        case .gap(let g): cut(at: g.start + g.length)
        case .sessionEnding(let end): cut(at: end)
        case .sessionEnded(let end):
            ended = true
            cut(at: end)
        default:
            // What consumers publish in reply to the end (the last audio clips) comes after it: journaled at once.
            if ended { cut(at: lastCut) }
        }
    }

    private func cut(at position: SampleTime) {
        guard !records.isEmpty else { return }
        // JSONEncoder cannot fail on these plain values; an encoding failure would lose only this chunk.
        if let data = try? encoder.encode(records) { writer.append(records: data, position: position, clipFiles: clipFiles) }
        records.removeAll(keepingCapacity: true)
        clipFiles.removeAll()
        lastCut = position
    }
}
