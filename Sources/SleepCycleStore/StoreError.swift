import SleepCycleFormats

/// A problem with the night store, printed as one line naming the store: `<path>: <message>`.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The store cannot be created or opened for writing (a read-only folder, not a database, …).
        case unwritable
        /// The disk (or the database's size limit) is full: nothing more can be written for now.
        case full
        /// Another recorder holds the store.
        case busy
        /// The database is damaged, another program's, or of a newer schema than this build knows.
        case unusable
        /// One night's stored data cannot be read (changed outside sleepcycle); the other nights can be.
        case damaged
        /// Anything else SQLite reports (an I/O error).
        case failed
    }

    public var kind: Kind
    public var path: String
    public var message: String

    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind; self.path = path; self.message = message
    }

    public var description: String { "\(MessageText.path(path)): \(message)" }
}

extension StoreError {
    /// One night of the store cannot be read (`.damaged`): `<path>: night <id> is damaged (<problem>)`.
    public init(damaged night: DamagedNight, path: String) {
        self.init(.damaged, path: path, message: "night \(MessageText.field(night.id)) is damaged (\(night.problem))")
    }
}
