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

extension StoredNight {
    /// The longest span a stored night can have, from its start to its end. A night is at most 48 hours of audio
    /// (`record --duration`), but a late `record --resume` adds the hole before it; a month allows for any of
    /// that. A longer span is a damaged time, and would size the per-epoch table (a row per 30 s) and the charts by
    /// it: 1900 to 2026 is 133 million rows.
    public static let longestSpan: TimeInterval = 31 * 86_400

    /// The times a night can have (seconds since 1970): years 0000 to 9999, what the JSON's ISO 8601 times hold.
    public static let timeRange: ClosedRange<Double> = -62_167_219_200 ... 253_402_300_799.999
}

/// A row of the store's `night` table that cannot be read as a night (changed outside sleepcycle, or damaged):
/// `sessions list` and `report` skip it with a warning, `sessions show` refuses it, `sessions delete` removes it.
public struct DamagedNight: Sendable, Hashable {
    /// Its id as stored (a session id unless the id itself is damaged).
    public var id: String
    /// What is wrong, e.g. `it ends before it starts`.
    public var problem: String

    public init(id: String, problem: String) { self.id = id; self.problem = problem }
}

/// The store's nights: those that can be read, and those that cannot.
public struct NightListing: Sendable, Hashable {
    /// Oldest first.
    public var nights: [StoredNight]
    public var damaged: [DamagedNight]
}
