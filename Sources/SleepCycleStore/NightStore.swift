import Foundation
import GRDB
import SleepCycleFormats

/// The store of nights: one SQLite database (GRDB, WAL) holding every night's final result, and the journal of a
/// night in progress so that a crash or a power cut loses at most the last seconds of it (docs/0008).
///
/// * **Writers and readers.** One recorder writes at a time (`lockForRecording()`); any number of readers
///   (`sessions list` while recording) read a consistent snapshot without ever blocking it (write-ahead log).
/// * **Durability.** `synchronous = FULL`: a committed journal chunk survives a power loss. Each chunk is one
///   transaction; a kill at any moment leaves the database consistent (`PRAGMA integrity_check` is `ok`).
/// * **Schema.** Versioned with GRDB's migrator; a database written by a newer sleepcycle is refused, not damaged.
/// * **Privacy.** A new store's folder is made `0700` and its files `0600`: bedroom audio analysis is private.
public final class NightStore: @unchecked Sendable {
    /// The database file.
    public let path: String
    /// Where reads go: the pool of a store opened to write, or one read-only connection.
    private let reader: any DatabaseReader
    /// nil for a store opened only to read (`existingForReading`).
    private let writer: (any DatabaseWriter)?
    /// The private copy a read-only store is read from when its write-ahead log cannot be read in place.
    private var copy: StoreCopy?
    /// The database file with symbolic links resolved: the store the clips index names as the one that indexed a
    /// clip (`clip.store`).
    private let indexingPath: String

    /// Where the store is when neither `--store` nor anything else says: `$SLEEPCYCLE_STORE`, else
    /// `$XDG_DATA_HOME/sleepcycle/nights.sqlite`, else `~/.local/share/sleepcycle/nights.sqlite`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit = environment["SLEEPCYCLE_STORE"], !explicit.isEmpty { return explicit }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/sleepcycle/nights.sqlite" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/sleepcycle/nights.sqlite"
    }

    /// Opens (creating it and its folder if needed) the store at `path`. A missing file, an empty one and an
    /// SQLite database with no tables become a new store; any other database is looked at read-only first and
    /// refused unchanged unless it is a sleepcycle store this build knows.
    ///
    /// - Parameter maximumBytes: a size limit (rounded to whole pages); writing beyond it fails as a full disk
    ///   does. nil: no limit but the disk's.
    /// - Throws: `StoreError` naming the path: `.unwritable` (a folder that cannot be made or written),
    ///   `.unusable` (a file that is not a database, damaged, another program's database, or written by a newer
    ///   sleepcycle).
    public init(path: String, maximumBytes: Int64? = nil) throws(StoreError) {
        self.path = path
        try Self.refuseWhileRecordedUnderAnotherName(path, reading: false)
        _ = try Self.contents(of: path)
        try Self.makeFolder(for: path)
        let existed = FileManager.default.fileExists(atPath: path)
        do {
            let oldMask = umask(0o077)
            defer { umask(oldMask) }
            let pool = try DatabasePool(path: path, configuration: Self.configuration(maximumBytes: maximumBytes))
            try Self.migrator.migrate(pool)
            reader = pool
            writer = pool
            indexingPath = PathEncoding.resolved(path) ?? path
        } catch let error as StoreError {
            throw error
        } catch {
            throw Self.storeError(error, path: path, doing: existed ? "opening the store" : "creating the store")
        }
    }

    /// The connections' settings; a read-only connection takes only the page cache's.
    private static func configuration(maximumBytes: Int64? = nil) -> Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in
            // Appends and small reads: a 512 KiB page cache per connection keeps memory flat as the store grows.
            try db.execute(sql: "PRAGMA cache_size = -512")
            // The readers of the pool are read-only connections; the rest concerns the writer.
            guard !db.configuration.readonly else { return }
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // Free pages go back to the file system (a completed night's journal is dropped): set before the first
            // table exists, a no-op afterwards. The write-ahead log is truncated to 4 MB after checkpoints.
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "PRAGMA journal_size_limit = 4194304")
            if let maximumBytes {
                // The cap is for the database and its write-ahead log together: the log is checkpointed every tenth
                // of the cap (at most the 4 MB it is truncated to anyway) and truncated to it, and the database
                // gets the rest but twice that (the log overshoots by a transaction before its checkpoint). It grew
                // to 4 MB beside a 200-KB cap.
                let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                let logBytes = min(4_194_304, maximumBytes / 10)
                try db.execute(sql: "PRAGMA max_page_count = \(max(8, (maximumBytes - 2 * logBytes) / pageSize))")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(max(1, logBytes / pageSize))")
                try db.execute(sql: "PRAGMA journal_size_limit = \(logBytes)")
            }
        }
        return configuration
    }

    /// Opens the store at `path` only if there is one: nil for a missing file, an empty one or an SQLite database
    /// with no tables, which are left as they are (for the commands that only read).
    ///
    /// - Throws: as `init(path:maximumBytes:)`.
    public static func existing(path: String, maximumBytes: Int64? = nil) throws(StoreError) -> NightStore? {
        guard try contents(of: path) != .nothing else { return nil }
        return try NightStore(path: path, maximumBytes: maximumBytes)
    }

    /// Opens the store at `path` to read it only, as `existing(path:)` does but without writing to it, so that a
    /// store on read-only media or owned by someone else can be read (SQLite may leave the empty write-ahead log
    /// and shared-memory files a reader of such a database makes beside it). A store written by an older
    /// sleepcycle is upgraded first (which needs write access), since this build reads only its own schema.
    /// Writing to the store returned fails with `.unwritable`.
    ///
    /// - Throws: as `init(path:maximumBytes:)`.
    public static func existingForReading(path: String) throws(StoreError) -> NightStore? {
        try refuseWhileRecordedUnderAnotherName(path, reading: true)
        switch try contents(of: path) {
        case .nothing: return nil
        case .olderStore:
            do {
                return try NightStore(path: path)
            } catch where error.kind == .unwritable && (try? readableUnchanged(path)) == true {
                // A backup on read-only media, written by an earlier build whose schema the readers can read as it is.
                return try NightStore(readingOnly: path)
            }
        case .store: return try NightStore(readingOnly: path)
        }
    }

    private init(readingOnly path: String) throws(StoreError) {
        self.path = path
        indexingPath = PathEncoding.resolved(path) ?? path
        do {
            (reader, copy) = try Self.readOnlyQueue(path: path, configuration: Self.configuration())
            writer = nil
        } catch {
            throw Self.storeError(error, path: path, doing: "opening the store")
        }
    }

    /// A read-only connection to the database at `path`. A write-ahead-log database needs its shared-memory file
    /// even to be read, and a reader that may not create it (a folder it cannot write) is refused with
    /// SQLITE_READONLY or SQLITE_CANTOPEN. Nobody is writing it then: a writer would have made the shared-memory
    /// file. Without a log the file is opened as immutable, which needs no such file. With one (a backup of a store
    /// copied with its `-wal` but not its `-shm`: an interrupted night lives in the log until a checkpoint), the
    /// immutable file alone would read as empty, so the store and its log are read from a private copy.
    static func readOnlyQueue(path: String, configuration: Configuration = Configuration()) throws
        -> (queue: DatabaseQueue, copy: StoreCopy?) {
        var configuration = configuration
        configuration.readonly = true
        func opened(_ path: String) throws -> DatabaseQueue {
            // GRDB reads the schema as it opens the connection: the refusal comes from the initialiser.
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            _ = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_master") }
            return queue
        }
        do {
            return (try opened(path), nil)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY || error.resultCode == .SQLITE_CANTOPEN {
            // SQLite keeps the log beside the file a link names (a store opened through a link to it).
            let real = PathEncoding.resolved(path) ?? path
            var st = stat()
            guard PathEncoding.withCString(real + "-wal", { stat($0, &st) }) == 0, st.st_size > 0 else {
                return (try DatabaseQueue(path: immutableURI(path), configuration: configuration), nil)
            }
            let copy = try StoreCopy(of: real)
            return (try opened(copy.path), copy)
        }
    }

    /// `path` as an SQLite URI that opens the file as immutable (no locking, no shared memory).
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?immutable=1"
    }

    /// Whether the readers can read the store at `path` without upgrading it: the migrations since v2 only add
    /// columns no reader selects.
    private static func readableUnchanged(_ path: String) throws -> Bool {
        let (queue, copy) = try readOnlyQueue(path: path)
        defer { withExtendedLifetime(copy) {} }
        return try queue.read { db in
            try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations").contains("v2: the clips index")
        }
    }

    /// What a file holds, as far as the store is concerned.
    enum Contents { case nothing, store, olderStore }

    /// Looks at the file at `path` read-only: `.nothing` for a missing or empty file, a database with no tables or
    /// one whose creation failed (an empty migrations table and nothing else), `.store` for a sleepcycle store of
    /// this build's schema, `.olderStore` for one an older build wrote.
    ///
    /// - Throws: `.unusable` for another program's database (tables, but no `grdb_migrations` table listing this
    ///   schema's first migration), for a store written by a newer sleepcycle (a migration this build does not
    ///   know), for a file that is not a database and for a path that is not a regular file. In every case the
    ///   file is left as it was.
    static func contents(of path: String) throws(StoreError) -> Contents {
        // SQLite opens a store (and makes its -wal and -shm files) by a UTF-8 name: a name with other bytes would be
        // created under a different, escaped name.
        if path.unicodeScalars.contains(where: { PathEncoding.rawByte($0) != nil }) {
            throw StoreError(.unwritable, path: path, message: "the store's name is not UTF-8 (SQLite takes UTF-8 file "
                + "names): choose another")
        }
        var st = stat()
        guard PathEncoding.withCString(path, { stat($0, &st) }) == 0 else { return .nothing }
        // A device or a FIFO is no database; SQLite would open it and make its journal beside it (in /dev).
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError(.unusable, path: path, message: "is not a regular file (a store is an SQLite database file)")
        }
        guard st.st_size > 0 else { return .nothing }
        do {
            let (queue, copy) = try readOnlyQueue(path: path)
            defer { withExtendedLifetime(copy) {} }
            return try queue.read { db throws -> Contents in
                let tables = try String.fetchAll(db, sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                    """)
                guard !tables.isEmpty else { return .nothing }
                // A store whose creation failed (a full disk) has the migrator's table and nothing in it yet.
                if tables == ["grdb_migrations"], try Int.fetchOne(db, sql: "SELECT count(*) FROM grdb_migrations") == 0 {
                    return .nothing
                }
                let known = migrator.migrations
                let applied = tables.contains("grdb_migrations")
                    ? try String.fetchSet(db, sql: "SELECT identifier FROM grdb_migrations") : []
                guard let first = known.first, applied.contains(first) else {
                    throw StoreError(.unusable, path: path, message: "not a sleepcycle store (it holds other tables); "
                        + "nothing was changed")
                }
                guard applied.isSubset(of: known) else {
                    throw StoreError(.unusable, path: path, message: "written by a newer sleepcycle (its schema is "
                        + "unknown to this build); not changed")
                }
                return applied == Set(known) ? .store : .olderStore
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw storeError(error, path: path, doing: "opening the store")
        }
    }

    /// The schema, one migration per version (docs/0008 describes each table).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: nights and their journal") { db in
            try db.create(table: "night") { t in
                t.primaryKey("id", .text)
                t.column("startTime", .double).notNull()              // seconds since 1970 (UTC)
                t.column("endTime", .double).notNull()
                t.column("utcOffsetSeconds", .integer).notNull()
                t.column("state", .text).notNull().check { ["recording", "complete"].contains($0) }
                t.column("source", .blob).notNull()                   // the result's `source` object (JSON)
                t.column("statistics", .blob)                         // the result's `statistics` once complete
                t.column("header", .blob).notNull()                   // the engine's resume header (JSON)
                t.column("result", .blob)                             // the whole result (JSON) once complete
                t.column("updatedAt", .double).notNull()
            }
            try db.create(index: "night_startTime", on: "night", columns: ["startTime"])
            try db.create(table: "journal") { t in
                t.column("nightId", .text).notNull().references("night", onDelete: .cascade)
                t.column("sequence", .integer).notNull()
                t.column("position", .integer).notNull()              // analysis samples (16 kHz) after the chunk
                t.column("records", .blob).notNull()                  // the engine's records (JSON)
                t.primaryKey(["nightId", "sequence"])
            }
        }
        migrator.registerMigration("v2: the clips index") { db in
            try db.create(table: "clip") { t in
                t.column("nightId", .text).notNull().references("night", onDelete: .cascade)
                t.column("path", .text).notNull()                     // absolute path of a clip file written
                t.primaryKey(["nightId", "path"])
            }
        }
        migrator.registerMigration("v3: the store that indexed each clip") { db in
            // The store file (symbolic links resolved) whose recorder indexed the clip: deleting the night from a copy
            // of the store must not remove the files the original still lists. NULL in rows an older build wrote.
            try db.alter(table: "clip") { t in t.add(column: "store", .text) }
        }
        return migrator
    }

    // MARK: - Recording

    /// Takes the store for a recorder: a second recorder on the same store is refused (`.busy`) rather than
    /// interleaving two nights' writes. Released when the returned lock is released or the process ends (also by a
    /// crash: the kernel drops the lock, and the night left `recording` then reads as `interrupted`).
    public func lockForRecording() throws(StoreError) -> RecorderLock {
        try RecorderLock(storePath: path)
    }

    /// Starts a night (state `recording`).
    public func beginNight(id: UUID, startTime: Date, utcOffsetSeconds: Int, source: Data,
                           header: Data) throws(StoreError) {
        try write("starting a night") { db in
            try db.execute(sql: """
                INSERT INTO night (id, startTime, endTime, utcOffsetSeconds, state, source, header, updatedAt)
                VALUES (?, ?, ?, ?, 'recording', ?, ?, ?)
                """, arguments: [id.uuidString, startTime.timeIntervalSince1970, startTime.timeIntervalSince1970,
                                 utcOffsetSeconds, source, header, Date().timeIntervalSince1970])
        }
    }

    /// Puts an interrupted night back into `recording` (its resume), with an updated header.
    public func reopenNight(id: UUID, header: Data) throws(StoreError) {
        try write("resuming a night") { db in
            try db.execute(sql: "UPDATE night SET state = 'recording', header = ?, updatedAt = ? WHERE id = ?",
                           arguments: [header, Date().timeIntervalSince1970, id.uuidString])
            guard db.changesCount == 1 else {
                throw StoreError(.failed, path: path, message: "no night \(id.uuidString) to resume")
            }
        }
    }

    /// Appends journal chunks (each with its sequence number) in one transaction, and moves the night's end.
    public func appendJournal(night id: UUID, chunks: [JournalChunk], endTime: Date) throws(StoreError) {
        guard !chunks.isEmpty else { return }
        try write("writing the journal") { db in
            for chunk in chunks {
                try db.execute(sql: "INSERT INTO journal (nightId, sequence, position, records) VALUES (?, ?, ?, ?)",
                               arguments: [id.uuidString, chunk.sequence, chunk.position, chunk.records])
                for file in chunk.clipFiles {
                    try db.execute(sql: "INSERT OR IGNORE INTO clip (nightId, path, store) VALUES (?, ?, ?)",
                                   arguments: [id.uuidString, file, indexingPath])
                }
            }
            try db.execute(sql: "UPDATE night SET endTime = ?, updatedAt = ? WHERE id = ?",
                           arguments: [endTime.timeIntervalSince1970, Date().timeIntervalSince1970, id.uuidString])
        }
    }

    /// Stores a night's final result (state `complete`) and drops its journal, in one transaction.
    public func completeNight(id: UUID, endTime: Date, source: Data, statistics: Data, result: Data) throws(StoreError) {
        try write("storing the night's result") { db in
            try db.execute(sql: """
                UPDATE night SET state = 'complete', endTime = ?, source = ?, statistics = ?, result = ?, updatedAt = ?
                WHERE id = ?
                """, arguments: [endTime.timeIntervalSince1970, source, statistics, result, Date().timeIntervalSince1970,
                                 id.uuidString])
            guard db.changesCount == 1 else {
                throw StoreError(.failed, path: path, message: "no night \(id.uuidString) to complete")
            }
            try db.execute(sql: "DELETE FROM journal WHERE nightId = ?", arguments: [id.uuidString])
        }
        reclaimSpace()
    }

    /// Returns the pages of deleted rows to the file system and truncates the write-ahead log (best effort: a
    /// reader holding an old snapshot only delays it).
    private func reclaimSpace() {
        try? writer?.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA incremental_vacuum")
            try db.checkpoint(.truncate)
        }
    }

    // MARK: - Reading (never blocks a recorder)

    /// Every night that can be read, oldest first (`listing()` also names those that cannot).
    public func nights() throws(StoreError) -> [StoredNight] {
        try listing().nights
    }

    /// Every night, oldest first, and the rows that cannot be read as nights (`DamagedNight`).
    public func listing() throws(StoreError) -> NightListing {
        let recordingNight = RecorderLock.recordingNight(storePath: path)
        return try read("listing the nights") { db in
            var listing = NightListing(nights: [], damaged: [])
            for row in try Row.fetchAll(db, sql: """
                SELECT id, startTime, endTime, utcOffsetSeconds, state, source, statistics, header FROM night
                ORDER BY startTime, id
                """) {
                switch Self.night(row, recordingNight: recordingNight) {
                case .night(let night): listing.nights.append(night)
                case .damaged(let damage): listing.damaged.append(damage)
                }
            }
            return listing
        }
    }

    /// One night, by id; nil when there is none.
    ///
    /// - Throws: `.damaged` when its row cannot be read as a night.
    public func night(_ id: UUID) throws(StoreError) -> StoredNight? {
        let listing = try listing()
        if let damaged = listing.damaged.first(where: { UUID(uuidString: $0.id) == id }) {
            throw StoreError(damaged: damaged, path: path)
        }
        return listing.nights.first { $0.id == id }
    }

    /// The most recent interrupted night, if any.
    public func latestInterrupted() throws(StoreError) -> StoredNight? {
        try nights().last { $0.state == .interrupted }
    }

    /// A complete night's result (JSON).
    ///
    /// - Throws: `.damaged` when the stored value is not text or bytes.
    public func result(of id: UUID) throws(StoreError) -> Data? {
        let value = try read("reading a result") { db in
            try DatabaseValue.fetchOne(db, sql: "SELECT result FROM night WHERE id = ?", arguments: [id.uuidString])
        }
        guard let value, !value.isNull else { return nil }
        guard let data = Data.fromDatabaseValue(value) else {
            throw StoreError(damaged: DamagedNight(id: id.uuidString, problem: "its result is not JSON"), path: path)
        }
        return data
    }

    /// A night's journal, in order.
    ///
    /// - Throws: `.damaged` when a chunk's columns are not of their types.
    public func journal(of id: UUID) throws(StoreError) -> [JournalChunk] {
        let rows = try read("reading a journal") { db in
            try Row.fetchAll(db, sql: "SELECT sequence, position, records FROM journal WHERE nightId = ? ORDER BY sequence",
                             arguments: [id.uuidString])
        }
        return try rows.map { row throws(StoreError) in
            guard let sequence = Int64.fromDatabaseValue(row["sequence"]),
                  let position = Int64.fromDatabaseValue(row["position"]),
                  let records = Data.fromDatabaseValue(row["records"]) else {
                throw StoreError(damaged: DamagedNight(id: id.uuidString, problem: "its journal cannot be read"), path: path)
            }
            return JournalChunk(sequence: sequence, position: position, records: records)
        }
    }

    /// `PRAGMA integrity_check`: `ok` for a sound database.
    public func integrityCheck() throws(StoreError) -> String {
        try read("checking the database") { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
        }
    }

    /// The database file's size in bytes (with its write-ahead log).
    public var sizeInBytes: Int64 {
        [path, path + "-wal"].reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value ?? 0)
        }
    }

    // MARK: - Maintenance

    /// Clip files a deletion left where they are, because another store may still list them.
    public struct KeptClips: Sendable, Equatable {
        public enum Reason: Sendable, Equatable {
            /// The store that indexed them is another file that lists them for this night: the night was deleted
            /// from a copy of that store.
            case listedThere
            /// The store that indexed them could not be looked at (a folder the user may not search, a file they
            /// may not read, a damaged database): kept rather than taken from a store that may still list them.
            case unchecked
        }
        public let night: UUID
        public let files: Int
        /// The store that indexed them (symbolic links resolved).
        public let store: String
        public let reason: Reason
    }

    /// Deletes a night, its journal and its audio clips; false if there is no such night. A night being recorded is
    /// refused. Clips another store indexed (this one is a copy of it) are kept and reported to `kept`.
    @discardableResult
    public func delete(_ id: UUID, kept: (KeptClips) -> Void = { _ in }) throws(StoreError) -> Bool {
        if RecorderLock.recordingNight(storePath: path) == id {
            throw StoreError(.busy, path: path, message: "night \(id.uuidString) is being recorded; stop the recorder first")
        }
        // Checked again: a recorder may have started under another name since the store was opened.
        try Self.refuseWhileRecordedUnderAnotherName(path, reading: false)
        let (deleted, rows) = try write("deleting a night") { db in
            let rows = try Self.clipRows(db, of: [id])
            try db.execute(sql: "DELETE FROM night WHERE id = ?", arguments: [id.uuidString])
            return (db.changesCount == 1, rows)
        }
        removeClips(rows, kept: kept)
        reclaimSpace()
        return deleted
    }

    /// Deletes the nights that started before `date` (a night being recorded is kept) with their clips; returns
    /// their ids. A damaged night goes too when its id is a session id and its stored start is a number before
    /// `date`; one whose start cannot be read is kept (its age is unknown: `delete` removes it). Clips are kept as
    /// `delete` keeps them.
    public func prune(startedBefore date: Date, kept: (KeptClips) -> Void = { _ in }) throws(StoreError) -> [UUID] {
        // Checked again: a recorder may have started under another name since the store was opened.
        try Self.refuseWhileRecordedUnderAnotherName(path, reading: false)
        let recording = RecorderLock.recordingNight(storePath: path)
        let listing = try listing()
        let damaged = Set(listing.damaged.map(\.id))
        let oldDamaged = try read("reading the damaged nights' start") { db in
            try String.fetchAll(db, sql: "SELECT id FROM night WHERE typeof(startTime) IN ('integer', 'real') AND startTime < ?",
                                arguments: [date.timeIntervalSince1970])
        }.filter(damaged.contains).compactMap(UUID.init(uuidString:))
        let old = (listing.nights.filter { $0.startTime < date }.map(\.id) + oldDamaged).filter { $0 != recording }
        let rows = try write("pruning nights") { db in
            let rows = try Self.clipRows(db, of: old)
            for id in old { try db.execute(sql: "DELETE FROM night WHERE id = ?", arguments: [id.uuidString]) }
            return rows
        }
        removeClips(rows, kept: kept)
        reclaimSpace()
        return old
    }

    /// A store a recorder is writing under another name is not written through this one, nor opened at all through
    /// a hard link (`RecorderLock.heldUnderAnotherName`). SQLite keeps its write-ahead log beside the name it opens:
    /// a hard link's is a second log for the same database — opening it to write left a frame there that damaged
    /// the store once the recorder had gone, and a reader through it does not see the night being recorded. A
    /// symbolic link resolves to the recorder's own file and log, so reading through one is fine; writing is not
    /// (a delete through a link deleted the night being recorded, which this name's lock file does not name).
    static func refuseWhileRecordedUnderAnotherName(_ path: String, reading: Bool) throws(StoreError) {
        guard RecorderLock.heldUnderAnotherName(storePath: path) else { return }
        var st = stat()
        let hardLink = PathEncoding.withCString(path, { stat($0, &st) }) == 0 && st.st_nlink > 1
        // Reading is safe where SQLite opens the recorder's own file name: one name only (the other is a symbolic
        // link to it), or the recorder records to the name this one resolves to.
        guard !reading || (hardLink && !RecorderLock.isHeld(storePath: PathEncoding.resolved(path) ?? path)) else {
            return
        }
        throw StoreError(.busy, path: path, message: "a recorder is writing this store under another name (a "
            + (hardLink ? "hard link" : "link") + " to it); stop the recorder first, or use the name it records to")
    }

    /// A row of the clips index.
    private struct ClipRow {
        let night: UUID
        let path: String
        let store: String?
    }

    private static func clipRows(_ db: Database, of nights: [UUID]) throws -> [ClipRow] {
        try nights.flatMap { id in
            try Row.fetchAll(db, sql: "SELECT path, store FROM clip WHERE nightId = ? ORDER BY path",
                             arguments: [id.uuidString]).compactMap { row in
                // Converted without trapping: the index is a file anyone can edit.
                String.fromDatabaseValue(row["path"]).map {
                    ClipRow(night: id, path: $0, store: String.fromDatabaseValue(row["store"]))
                }
            }
        }
    }

    /// Removes the clips of deleted nights that this store indexed, and reports the others, night by night.
    private func removeClips(_ rows: [ClipRow], kept: (KeptClips) -> Void) {
        struct Key: Hashable { let store: String; let night: UUID }
        var owners: [Key: Owner] = [:]
        var mine: [String] = []
        var others: [Key: (reason: KeptClips.Reason, files: [String])] = [:]
        for row in rows {
            // A row an older build indexed names no store: removed, as that build would have.
            guard let store = row.store else { mine.append(row.path); continue }
            let key = Key(store: store, night: row.night)
            let owner = owners[key] ?? owner(of: row.night, indexedBy: store)
            owners[key] = owner
            switch owner {
            case .thisStore: mine.append(row.path)
            case .unchecked: others[key, default: (.unchecked, [])].files.append(row.path)
            case .lists(let paths):
                if paths.contains(row.path) { others[key, default: (.listedThere, [])].files.append(row.path) }
                else { mine.append(row.path) }
            }
        }
        // A folder that holds kept clips is not swept for unindexed clip files: they may be the other store's.
        Self.remove(clipFiles: mine, sparing: Set(others.values.flatMap(\.files).map { PathEncoding.folder(of: $0) }))
        for (key, value) in others.sorted(by: { ($0.key.store, $0.key.night.uuidString) < ($1.key.store, $1.key.night.uuidString) }) {
            kept(KeptClips(night: key.night, files: value.files.count, store: key.store, reason: value.reason))
        }
    }

    /// Whose the clips of a deleted night that another store file indexed are.
    private enum Owner {
        /// This store's: they go with the night.
        case thisStore
        /// That store lists these paths for the night: they are kept.
        case lists(Set<String>)
        /// That store could not be looked at (permissions, a damaged database): kept.
        case unchecked
    }

    /// Whose the clips of `night` that the store `other` (a `clip.store`) indexed are: this store's when `other` is
    /// this store — the same name, the same file by another name (a hard link), no file there any more (this store
    /// was moved or renamed, or the one it was copied from removed), or a file there that is no store (anything
    /// made at a moved store's old path); else the other store's for the paths it lists, or unchecked when it
    /// cannot be read (a folder the user may not search, a file they may not read, a damaged database).
    private func owner(of night: UUID, indexedBy other: String) -> Owner {
        if other == indexingPath { return .thisStore }
        var theirs = stat(), mine = stat()
        guard PathEncoding.withCString(other, { stat($0, &theirs) }) == 0 else {
            return errno == ENOENT || errno == ENOTDIR ? .thisStore : .unchecked
        }
        if PathEncoding.withCString(path, { stat($0, &mine) }) == 0, theirs.st_dev == mine.st_dev,
           theirs.st_ino == mine.st_ino {
            return .thisStore
        }
        guard (theirs.st_mode & S_IFMT) == S_IFREG else { return .thisStore }
        guard PathEncoding.withCString(other, { access($0, R_OK) }) == 0 else { return .unchecked }
        do {
            let (queue, copy) = try Self.readOnlyQueue(path: other)
            defer { withExtendedLifetime(copy) {} }
            return .lists(Set(try queue.read { db in
                try String.fetchAll(db, sql: "SELECT path FROM clip WHERE nightId = ?", arguments: [night.uuidString])
            }))
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB
                    || (error.resultCode == .SQLITE_ERROR && (error.message ?? "").hasPrefix("no such table")) {
            return .thisStore      // not a database, or another program's: it lists nothing
        } catch {
            return .unchecked      // a store that cannot be read (damaged, locked): it may still list them
        }
    }

    /// The clip files indexed for `nights`.
    public func clipFiles(of night: UUID) throws(StoreError) -> [String] {
        try read("reading the clips index") { db in try Self.clipFiles(db, of: [night]) }
    }

    private static func clipFiles(_ db: Database, of nights: [UUID]) throws -> [String] {
        // Only `path`: a read-only backup written by an older build has no `store` column.
        try nights.flatMap { id in
            try String.fetchAll(db, sql: "SELECT path FROM clip WHERE nightId = ? ORDER BY path", arguments: [id.uuidString])
        }
    }

    /// Removes the clip files of deleted nights (the files the index lists: files the recorder wrote), then their
    /// folders when that leaves them empty. A file already gone is no problem. In those folders — each named by the
    /// night's session id and made by the recorder — files named as clips are (`00042-snoring.flac[.enc]`, or a
    /// clip's temporary `.clip-<UUID>.tmp`) go too: a clip written in the last instant before a crash, whose record
    /// the journal had not yet committed.
    ///
    /// A listed path is removed only when it looks like a clip in a session folder (`isClipName` inside a folder named
    /// by a UUID): the index is a file anyone can edit, and a row naming another file must not delete it.
    private static func remove(clipFiles files: [String], sparing spared: Set<String> = []) {
        var folders = Set<String>()
        for file in files where isClipPath(file) {
            _ = PathEncoding.withCString(file) { unlink($0) }
            folders.insert(PathEncoding.folder(of: file))
        }
        for folder in folders.subtracting(spared) {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where isClipName(name) {
                _ = PathEncoding.withCString(folder + "/" + name) { unlink($0) }
            }
            _ = PathEncoding.withCString(folder) { rmdir($0) }   // fails unless empty
        }
    }

    /// A clip's name in a folder named by a session id: the only files the index may make us delete.
    static func isClipPath(_ path: String) -> Bool {
        let folder = (PathEncoding.folder(of: path) as NSString).lastPathComponent
        return isClipName((path as NSString).lastPathComponent) && UUID(uuidString: folder) != nil
    }

    /// `00042-snoring.flac`, `00042-snoring.flac.enc` or `.clip-<UUID>.tmp`: the names the clip writer gives.
    static func isClipName(_ name: String) -> Bool {
        if name.hasPrefix(".clip-") && name.hasSuffix(".tmp") { return name.count == 6 + 36 + 4 }
        let parts = name.split(separator: "-", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 5, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber) else {
            return false
        }
        let rest = parts[1].hasSuffix(".flac.enc") ? parts[1].dropLast(9) : parts[1].hasSuffix(".flac") ? parts[1].dropLast(5) : nil
        return rest.map { ["snoring", "talking", "coughing", "movement"].contains(String($0)) } ?? false
    }

    // MARK: - Helpers

    /// A row of `night` as a night, or what is wrong with it. Each column is converted without trapping (GRDB's
    /// subscripts stop the process on a value of the wrong type) and checked against what the commands assume:
    /// finite times in `StoredNight.timeRange`, an end not before the start and at most `StoredNight.longestSpan`
    /// after it, an offset within ±18 h, and `source` and `statistics` JSON objects (`sessions list --format json`
    /// prints them as they are).
    private static func night(_ row: Row, recordingNight: UUID?) -> ReadRow {
        let idValue: DatabaseValue = row["id"]
        let idText = String.fromDatabaseValue(idValue) ?? idValue.description
        func damaged(_ problem: String) -> ReadRow { .damaged(DamagedNight(id: idText, problem: problem)) }
        guard let id = UUID(uuidString: idText) else { return damaged("its id is not a session id") }
        guard let start = Double.fromDatabaseValue(row["startTime"]), let end = Double.fromDatabaseValue(row["endTime"])
        else { return damaged("its start or end time is not a number") }
        guard StoredNight.timeRange.contains(start), StoredNight.timeRange.contains(end) else {
            return damaged("its start or end time is out of range")
        }
        guard end >= start else { return damaged("it ends before it starts") }
        guard end - start <= StoredNight.longestSpan else {
            return damaged("it lasts more than \(Int(StoredNight.longestSpan / 86_400)) days")
        }
        guard let offset = Int.fromDatabaseValue(row["utcOffsetSeconds"]), abs(offset) <= ISO8601Time.maxOffsetSeconds
        else { return damaged("its UTC offset is out of range") }
        let stored = String.fromDatabaseValue(row["state"])
        guard let stored, stored == "complete" || stored == "recording" else { return damaged("its state is unknown") }
        guard let source = Data.fromDatabaseValue(row["source"]), isJSONObject(source) else {
            return damaged("its source is not a JSON object")
        }
        let statisticsValue: DatabaseValue = row["statistics"]
        let statistics = Data.fromDatabaseValue(statisticsValue)
        guard statisticsValue.isNull || statistics.map(isJSONObject) == true else {
            return damaged("its statistics are not a JSON object")
        }
        guard let header = Data.fromDatabaseValue(row["header"]) else { return damaged("it has no resume header") }
        let state: StoredNight.State = stored == "complete" ? .complete : id == recordingNight ? .recording : .interrupted
        return .night(StoredNight(id: id, startTime: Date(timeIntervalSince1970: start),
                                  endTime: Date(timeIntervalSince1970: end), utcOffsetSeconds: offset, state: state,
                                  source: source, statistics: statistics, header: header))
    }

    private enum ReadRow {
        case night(StoredNight)
        case damaged(DamagedNight)
    }

    /// A JSON object in UTF-8 (`sessions list --format json` copies the bytes into its UTF-8 output).
    private static func isJSONObject(_ data: Data) -> Bool {
        data.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{")
            && (try? JSONSerialization.jsonObject(with: data)) is [String: Any]
    }

    private func write<T>(_ doing: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        guard let writer else {
            throw StoreError(.unwritable, path: path, message: "opened only to read; cannot write while \(doing)")
        }
        do { return try writer.write(body) } catch let error as StoreError { throw error } catch {
            throw Self.storeError(error, path: path, doing: doing)
        }
    }

    private func read<T>(_ doing: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do { return try reader.read(body) } catch let error as StoreError { throw error } catch {
            throw Self.storeError(error, path: path, doing: doing)
        }
    }

    /// The one place SQLite's result codes become `StoreError`s.
    static func storeError(_ error: any Error, path: String, doing: String) -> StoreError {
        guard let db = error as? DatabaseError else {
            return StoreError(.failed, path: path, message: "\(doing) failed (\(error))")
        }
        let detail = db.message.map { " (\($0))" } ?? ""
        switch db.resultCode {
        case .SQLITE_FULL:
            return StoreError(.full, path: path, message: "the disk or the store's size limit is full while \(doing)")
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
            return StoreError(.unwritable, path: path, message: "cannot write the store while \(doing)\(detail)")
        case .SQLITE_NOTADB:
            return StoreError(.unusable, path: path, message: "is not a sleepcycle store (not an SQLite database)")
        case .SQLITE_CORRUPT:
            return StoreError(.unusable, path: path, message: "the database is damaged (\(doing))\(detail)")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.busy, path: path, message: "the store is busy (\(doing))\(detail)")
        default:
            return StoreError(.failed, path: path, message: "\(doing) failed\(detail)")
        }
    }

    /// Makes the store's folder (0700) when it does not exist.
    private static func makeFolder(for path: String) throws(StoreError) {
        // Not Foundation's `deletingLastPathComponent`, which trapped on `--store x` (`PathEncoding.folder`).
        let folder = PathEncoding.folder(of: path)
        guard !folder.isEmpty, folder != "/" else { return }
        if let failure = PathEncoding.makeFolders(folder) {
            throw StoreError(.unwritable, path: path, message: "cannot create its folder \(MessageText.path(folder)) "
                + "(\(failure == ENOTDIR ? "a file is in the way" : String(cString: strerror(failure))))")
        }
    }
}

/// A store and its write-ahead log copied into a private temporary folder (mode 0700), removed with the copy: how a
/// store whose log cannot be read in place is read (`NightStore.readOnlyQueue`).
final class StoreCopy: @unchecked Sendable {
    let directory: String
    let path: String

    init(of original: String) throws(StoreError) {
        var template = Array((NSTemporaryDirectory() + "/sleepcycle-store-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw StoreError(.unwritable, path: original, message: "cannot make a temporary folder to read its "
                + "write-ahead log from: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        path = directory + "/store.sqlite"
        do {
            try FileManager.default.copyItem(atPath: original, toPath: path)
            try FileManager.default.copyItem(atPath: original + "-wal", toPath: path + "-wal")
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw StoreError(.unwritable, path: original, message: "cannot copy it and its write-ahead log to read them "
                + "(\(directory)): \(error.localizedDescription)")
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
