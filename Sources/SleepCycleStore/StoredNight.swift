import Foundation

/// One night in the store, as `sessions list` shows it. The store keeps the engine's data as opaque JSON (the
/// resume header, the journal's chunks, the result); only the columns below are its own.
public struct StoredNight: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        /// A recorder is adding to it now.
        case recording
        /// It was being recorded and the recorder stopped without finishing it (a crash, a power loss): it can be
        /// resumed.
        case interrupted
        /// Its final result is stored.
        case complete
    }

    public var id: UUID
    public var startTime: Date
    /// The end of the audio analysed so far (the journal's last position), or of the night once complete.
    public var endTime: Date
    public var utcOffsetSeconds: Int
    public var state: State
    /// The result's `source` object (JSON), and its `statistics` object once complete.
    public var source: Data
    public var statistics: Data?
    /// What the engine needs to resume the night (its own JSON).
    public var header: Data
}

/// One chunk of a night's journal: the records of about a second of audio, in the order they happened.
public struct JournalChunk: Sendable, Hashable {
    public var sequence: Int64
    /// The analysis-timeline position (16 kHz samples) the night had reached after this chunk.
    public var position: Int64
    public var records: Data
    /// Audio-clip files written during the chunk (absolute paths): indexed with the night, so that deleting the night
    /// removes them.
    public var clipFiles: [String]

    public init(sequence: Int64, position: Int64, records: Data, clipFiles: [String] = []) {
        self.sequence = sequence; self.position = position; self.records = records; self.clipFiles = clipFiles
    }
}
