import Foundation
import GRDB
import Testing
@testable import SleepCycleStore

@Suite final class NightStoreTests {
    let dir: URL
    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
    }
    deinit { try? FileManager.default.removeItem(at: dir) }

    func store(_ name: String = "nights.sqlite", maximumBytes: Int64? = nil) throws -> NightStore {
        try NightStore(path: dir.appendingPathComponent(name).path, maximumBytes: maximumBytes)
    }

    let start = Date(timeIntervalSince1970: 1_767_304_800)

    /// The commands that only read open the store read-only: the database's bytes do not change, every read
    /// works, a write is refused; a store of an older schema is upgraded first, since this build reads only its
    /// own. When even reading needs a file the reader cannot make (a read-only folder), the file is opened as
    /// immutable, through a URI that keeps any character of the path.
    @Test func aStoreOpenedToReadIsNotChanged() throws {
        let s = try store()
        let id = UUID()
        try s.beginNight(id: id, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data("h".utf8))
        try s.completeNight(id: id, endTime: start.addingTimeInterval(60), source: Data("{}".utf8),
                            statistics: Data("{}".utf8), result: Data("{\"r\":3}".utf8))
        let path = s.path
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let reader = try #require(try NightStore.existingForReading(path: path))
        #expect(try reader.nights().map(\.id) == [id])
        #expect(try reader.result(of: id) == Data("{\"r\":3}".utf8))
        #expect(throws: StoreError.self) { _ = try reader.delete(id) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try NightStore.existingForReading(path: dir.appendingPathComponent("none.sqlite").path) == nil)

        // A store an older build wrote (the first migration only) is upgraded, then read.
        let old = dir.appendingPathComponent("old.sqlite").path
        try NightStore.migrator.migrate(DatabaseQueue(path: old), upTo: "v1: nights and their journal")
        #expect(try NightStore.contents(of: old) == .olderStore)
        #expect(try NightStore.existingForReading(path: old)?.nights().isEmpty == true)
        #expect(try NightStore.contents(of: old) == .store)

        // The immutable fallback's URI, for a name with the characters a URI gives meaning to.
        let odd = dir.appendingPathComponent("a night? #1 100% .sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: odd)
        let immutable = try DatabaseQueue(path: NightStore.immutableURI(odd), configuration: {
            var c = Configuration(); c.readonly = true; return c
        }())
        #expect(try immutable.read { try String.fetchOne($0, sql: "SELECT id FROM night") } == id.uuidString)
    }

    /// A size cap holds for the database and its write-ahead log together: a 200-KB cap let the log grow to 4 MB.
    @Test func theSizeCapCountsTheWriteAheadLog() throws {
        let cap: Int64 = 200_000
        let s = try store("capped.sqlite", maximumBytes: cap)
        let id = UUID()
        try s.beginNight(id: id, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data("h".utf8))
        var full = false
        for k in 0..<400 where !full {
            do {
                try s.appendJournal(night: id, chunks: [JournalChunk(sequence: Int64(k), position: Int64(k) * 8000,
                                                                     records: Data(repeating: UInt8(k % 251), count: 2000))],
                                    endTime: start.addingTimeInterval(Double(k) / 2))
            } catch {
                full = true
            }
        }
        #expect(full, "the cap was reached")
        func size(_ suffix: String) -> Int64 {
            ((try? FileManager.default.attributesOfItem(atPath: s.path + suffix))?[.size] as? Int64) ?? 0
        }
        #expect(size("") + size("-wal") <= cap, "database \(size("")) + log \(size("-wal")) bytes")
        let chunks = try s.journal(of: id).count
        #expect(chunks > 20, "most of it is used: \(chunks) chunks")
    }

    /// A store whose creation failed (a full disk: here a size limit of nothing) is made again by the next writer
    /// and read as no store by the readers, not refused as another program's database; a device is not a store.
    @Test func aStoreWhoseCreationFailedIsMadeAgain() throws {
        let path = dir.appendingPathComponent("nights.sqlite").path
        #expect(throws: StoreError.self) { _ = try NightStore(path: path, maximumBytes: 0) }
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try NightStore.contents(of: path) == .nothing)
        #expect(try NightStore.existingForReading(path: path) == nil)
        let s = try NightStore(path: path)
        #expect(try s.nights().isEmpty && NightStore.contents(of: path) == .store)
        #expect(throws: StoreError(.unusable, path: "/dev/null", message: "is not a regular file (a store is an SQLite database file)")) {
            _ = try NightStore(path: "/dev/null")
        }
    }

    @Test func aNightGoesFromRecordingToComplete() throws {
        let s = try store()
        var st = stat()
        #expect(stat(dir.path, &st) == 0 && st.st_mode & 0o777 == 0o700)     // a private folder
        let id = UUID()
        let lock = try s.lockForRecording()
        try s.beginNight(id: id, startTime: start, utcOffsetSeconds: 3600, source: Data("{}".utf8), header: Data("h".utf8))
        lock.recording(id)
        try s.appendJournal(night: id, chunks: [JournalChunk(sequence: 0, position: 8000, records: Data("[1]".utf8)),
                                                JournalChunk(sequence: 1, position: 16000, records: Data("[2]".utf8))],
                            endTime: start.addingTimeInterval(1))
        #expect(try s.nights().map(\.state) == [.recording])
        #expect(try s.journal(of: id).map(\.position) == [8000, 16000])
        #expect(try s.night(id)?.endTime == start.addingTimeInterval(1))
        try s.completeNight(id: id, endTime: start.addingTimeInterval(60), source: Data("{\"a\":1}".utf8),
                            statistics: Data("{\"b\":2}".utf8), result: Data("{\"r\":3}".utf8))
        #expect(try s.nights().map(\.state) == [.complete])
        #expect(try s.result(of: id) == Data("{\"r\":3}".utf8))
        #expect(try s.journal(of: id).isEmpty)
        #expect(try s.integrityCheck() == "ok")
    }

    /// A night left `recording` whose recorder is gone reads as interrupted; one recorder per store.
    @Test func interruptedNightsAndTheRecorderLock() throws {
        let s = try store()
        let id = UUID()
        var lock: RecorderLock? = try s.lockForRecording()
        lock?.recording(id)
        try s.beginNight(id: id, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data())
        #expect(throws: StoreError.self) { try s.lockForRecording() }
        do { _ = try s.lockForRecording() } catch { #expect(error.kind == .busy && error.description.contains("another recorder")) }
        #expect(try s.latestInterrupted() == nil)
        #expect(throws: StoreError.self) { try s.delete(id) }              // being recorded
        lock?.release()
        lock = nil
        #expect(try s.latestInterrupted()?.id == id)
        #expect(try s.nights().first?.state == .interrupted)
        try s.reopenNight(id: id, header: Data("new".utf8))
        #expect(try s.night(id)?.header == Data("new".utf8))
    }

    @Test func deleteAndPrune() throws {
        let s = try store()
        let old = UUID(), recent = UUID()
        try s.beginNight(id: old, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data())
        try s.beginNight(id: recent, startTime: Date(), utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data())
        try s.appendJournal(night: old, chunks: [JournalChunk(sequence: 0, position: 1, records: Data())], endTime: start)
        #expect(try s.prune(startedBefore: Date().addingTimeInterval(-86_400)) == [old])
        #expect(try s.journal(of: old).isEmpty)                            // its journal went with it
        #expect(try s.delete(recent))
        #expect(try !s.delete(recent))
        #expect(try s.nights().isEmpty)
    }

    /// Deleting or pruning a night removes the clip files its recorder indexed, the clip-named files in the same
    /// session folders (a clip written just before a crash), and the folders left empty — and nothing else.
    @Test func aNightsClipsGoWithIt() throws {
        let s = try store()
        let fm = FileManager.default
        let a = UUID(), b = UUID()
        let folderA = dir.appendingPathComponent("clips/\(a.uuidString)"), folderB = dir.appendingPathComponent("clips/\(b.uuidString)")
        for f in [folderA, folderB] { try fm.createDirectory(at: f, withIntermediateDirectories: true) }
        func touch(_ url: URL, _ name: String) throws -> String {
            let path = url.appendingPathComponent(name).path
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let indexed = try touch(folderA, "00002-snoring.flac"), orphan = try touch(folderA, "00003-talking.flac.enc")
        let temporary = try touch(folderA, ".clip-\(UUID().uuidString).tmp")
        let indexedB = try touch(folderB, "00001-coughing.flac")
        let mine = try touch(folderB, "notes.txt"), lookalike = try touch(folderB, "00009-snoring.wav")
        // An index row naming another file (a hand-edited or damaged store): listed, never deleted.
        let elsewhere = try touch(dir, "victim.txt"), clipNamedElsewhere = try touch(dir, "00004-snoring.flac")
        for (id, files) in [(a, [indexed, elsewhere]), (b, [indexedB, clipNamedElsewhere, mine])] {
            try s.beginNight(id: id, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data())
            try s.appendJournal(night: id, chunks: [JournalChunk(sequence: 0, position: 1, records: Data(), clipFiles: files)],
                                endTime: start)
        }
        #expect(try s.clipFiles(of: a) == [indexed, elsewhere].sorted())
        #expect(try s.delete(a))
        #expect(![indexed, orphan, temporary, folderA.path].contains { fm.fileExists(atPath: $0) })
        #expect(try s.prune(startedBefore: Date()) == [b])
        #expect(!fm.fileExists(atPath: indexedB))
        #expect(fm.fileExists(atPath: mine) && fm.fileExists(atPath: lookalike))
        #expect(fm.fileExists(atPath: elsewhere) && fm.fileExists(atPath: clipNamedElsewhere))
        #expect(NightStore.isClipName("00042-movement.flac") && !NightStore.isClipName("0042-snoring.flac")
                && !NightStore.isClipName("00042-sneezing.flac") && !NightStore.isClipName("00042-snoring.flac.bak"))
    }

    /// A copy of a store lists the original's clips. Deleting the night from the copy keeps the files the original
    /// lists and removes only those the copy indexed itself (a night resumed in the copy), without sweeping the
    /// shared session folder; from a store whose original path now holds something else, they all go.
    @Test func aCopysDeleteKeepsWhatTheOriginalLists() throws {
        let fm = FileManager.default
        let original = try store("original.sqlite")
        let id = UUID()
        let folder = dir.appendingPathComponent("clips/\(id.uuidString)")
        try fm.createDirectory(at: folder, withIntermediateDirectories: true)
        func touch(_ name: String) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let first = try touch("00001-snoring.flac"), second = try touch("00002-snoring.flac")
        let unindexed = try touch("00003-talking.flac")      // written by the original's recorder as it crashed
        try original.beginNight(id: id, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data())
        try original.appendJournal(night: id, chunks: [JournalChunk(sequence: 0, position: 1, records: Data(),
                                                                    clipFiles: [first, second])], endTime: start)
        let copyPath = dir.appendingPathComponent("copy.sqlite").path
        for suffix in ["", "-wal"] where fm.fileExists(atPath: original.path + suffix) {
            try fm.copyItem(atPath: original.path + suffix, toPath: copyPath + suffix)
        }
        let copy = try NightStore(path: copyPath)
        let resumed = try touch("00004-coughing.flac")
        try copy.appendJournal(night: id, chunks: [JournalChunk(sequence: 1, position: 2, records: Data(),
                                                                clipFiles: [resumed])], endTime: start)
        var kept: [NightStore.KeptClips] = []
        #expect(try copy.delete(id) { kept.append($0) })
        #expect(kept == [NightStore.KeptClips(night: id, files: 2, store: original.path, reason: .listedThere)])
        #expect([first, second, unindexed].allSatisfy { fm.fileExists(atPath: $0) } && !fm.fileExists(atPath: resumed))

        // The original moved away and another file made at its old path: nothing lists the clips any more.
        let moved = dir.appendingPathComponent("moved.sqlite").path
        for suffix in ["", "-wal", "-shm"] where fm.fileExists(atPath: original.path + suffix) {
            try fm.moveItem(atPath: original.path + suffix, toPath: moved + suffix)
        }
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: original.path))
        kept = []
        #expect(try NightStore(path: moved).delete(id) { kept.append($0) })
        #expect(kept.isEmpty && ![first, second, unindexed, folder.path].contains { fm.fileExists(atPath: $0) })
    }

    /// A store a recorder is writing under its own name is not opened to write through a link: the link's own lock
    /// file does not name the night being recorded (a delete through a symbolic link deleted it; through a hard
    /// link, whose log is its own, it also damaged the store). Reading through a symbolic link sees the live night.
    @Test func aStoreRecordedUnderAnotherNameIsNotWrittenThroughALink() throws {
        let s = try store()
        let id = UUID()
        try s.beginNight(id: id, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data())
        let lock = try s.lockForRecording()
        lock.recording(id)
        // (A hard link opened in this process, where SQLite already has the file open by another name, fails to
        // open at all; `RecordCommandTests.aStoreRecordedUnderAnotherNameIsNotDeletedThroughALink` runs the command.)
        let soft = dir.appendingPathComponent("soft.sqlite").path
        #expect(symlink(s.path, soft) == 0)
        #expect(throws: StoreError.self) { _ = try NightStore(path: soft) }  // not even opened to write
        let reader = try #require(try NightStore.existingForReading(path: soft))
        #expect(try reader.nights().first?.state == .recording)             // read through it: the night is live
        #expect(throws: StoreError.self) { try s.delete(id) }              // by its own name: the night being recorded
        lock.release()
        #expect(try NightStore(path: soft).delete(id))                    // no recorder: through the link is fine
        #expect(try s.nights().isEmpty)
    }

    /// A full disk (here the store's size limit, which SQLite reports the same way) fails the write with `.full`
    /// and leaves what was stored intact.
    @Test func aFullStoreFailsTheWriteAndKeepsWhatItHas() throws {
        let s = try store(maximumBytes: 64 * 1024)
        let id = UUID()
        try s.beginNight(id: id, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data())
        var written = 0
        var failure: StoreError?
        for k in 0..<1000 {
            do {
                try s.appendJournal(night: id, chunks: [JournalChunk(sequence: Int64(k), position: Int64(k),
                                                                     records: Data(repeating: 7, count: 2000))],
                                    endTime: start)
                written += 1
            } catch { failure = error; break }
        }
        #expect(failure?.kind == .full, "\(String(describing: failure))")
        #expect(try s.journal(of: id).count == written)
        #expect(try s.integrityCheck() == "ok")
    }

    @Test func unwritableAndForeignStoresAreOneLineErrors() throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("plain")
        try Data("x".utf8).write(to: file)
        do { _ = try NightStore(path: file.path + "/nights.sqlite"); Issue.record("a store under a file") } catch {
            #expect(error.kind == .unwritable && !error.description.contains("\n"), "\(error)")
        }
        let notDB = dir.appendingPathComponent("notes.sqlite")
        try Data(repeating: 65, count: 4096).write(to: notDB)
        do { _ = try NightStore(path: notDB.path); Issue.record("a text file as store") } catch {
            #expect(error.kind == .unwritable || error.kind == .unusable, "\(error)")
        }
    }

    @Test func aStoreFromANewerSleepcycleIsRefusedUnchanged() throws {
        let path = dir.appendingPathComponent("newer.sqlite").path
        _ = try NightStore(path: path)
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')") }
        do { _ = try NightStore(path: path); Issue.record("a newer schema was opened") } catch {
            #expect(error.kind == .unusable && error.description.contains("newer"), "\(error)")
        }
    }

    /// Another program's SQLite database is looked at read-only and refused: not a table, not a byte, not its
    /// journal mode changes — even when it has a table named `night`.
    @Test func anotherProgramsDatabaseIsRefusedUnchanged() throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, sql) in [("bookmarks.sqlite", "CREATE TABLE bookmarks(u)"),
                            ("own-night.sqlite", "CREATE TABLE night(id, startTime)"),
                            ("other-grdb.sqlite", "CREATE TABLE grdb_migrations(identifier TEXT); "
                                + "INSERT INTO grdb_migrations VALUES ('v1: their schema'); CREATE TABLE t(x)")] {
            let path = dir.appendingPathComponent(name).path
            try DatabaseQueue(path: path).write { try $0.execute(sql: sql) }
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            func refused(_ open: () throws -> Void) {
                do { try open(); Issue.record("\(name) was opened as a store") } catch {
                    #expect((error as? StoreError)?.kind == .unusable, "\(error)")
                    #expect("\(error)" == "\(path): not a sleepcycle store (it holds other tables); nothing was changed")
                }
            }
            refused { _ = try NightStore(path: path) }
            refused { _ = try NightStore.existing(path: path) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(name) changed")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: path + "-shm"))
        }
    }

    /// The commands that only read open a store only where there is one: a missing path, an empty file and a
    /// database with no tables stay as they are. A recorder makes its store in any of them.
    @Test func onlyAnExistingStoreIsOpenedForReading() throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let missing = dir.appendingPathComponent("missing.sqlite").path
        let empty = dir.appendingPathComponent("empty.sqlite").path
        let noTables = dir.appendingPathComponent("no-tables.sqlite").path
        FileManager.default.createFile(atPath: empty, contents: nil)
        try DatabaseQueue(path: noTables).write { try $0.execute(sql: "CREATE TABLE t(x); DROP TABLE t") }
        let noTablesBytes = try Data(contentsOf: URL(fileURLWithPath: noTables))
        #expect(try NightStore.existing(path: missing) == nil && !FileManager.default.fileExists(atPath: missing))
        #expect(try NightStore.existing(path: empty) == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
        #expect(try NightStore.existing(path: noTables) == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: noTables)) == noTablesBytes)
        for path in [missing, empty, noTables] {
            try NightStore(path: path).beginNight(id: UUID(), startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8),
                                                  header: Data())
            #expect(try NightStore.existing(path: path)?.nights().count == 1)
        }
    }

    /// Rows changed outside sleepcycle are set apart as damaged, each with what is wrong, instead of stopping the
    /// process (GRDB's subscripts trap on a value of the wrong type) or giving times the reports cannot handle.
    @Test func damagedRowsAreSetApart() throws {
        let s = try store()
        var ids: [UUID] = []
        for _ in 0..<8 {
            let id = UUID()
            ids.append(id)
            try s.beginNight(id: id, startTime: start, utcOffsetSeconds: 3600, source: Data("{}".utf8), header: Data("h".utf8))
            try s.completeNight(id: id, endTime: start.addingTimeInterval(60), source: Data("{}".utf8),
                                statistics: Data("{}".utf8), result: Data("{}".utf8))
        }
        let edits = ["startTime = 1e308, endTime = -1e308", "startTime = 'late'", "endTime = startTime - 1",
                     "endTime = startTime + 32 * 86400", "utcOffsetSeconds = 1e12", "source = X'00FFFE'",
                     "statistics = '[1]'"]
        let queue = try DatabaseQueue(path: s.path)
        try queue.write { db in
            for (id, edit) in zip(ids, edits) {
                try db.execute(sql: "UPDATE night SET \(edit) WHERE id = ?", arguments: [id.uuidString])
            }
            try db.execute(sql: "INSERT INTO night SELECT 'not-a-uuid', startTime, endTime, utcOffsetSeconds, state, source, "
                + "statistics, header, result, updatedAt FROM night WHERE id = ?", arguments: [ids[7].uuidString])
        }
        let listing = try s.listing()
        #expect(listing.nights.map(\.id) == [ids[7]])
        #expect(Dictionary(uniqueKeysWithValues: listing.damaged.map { ($0.id, $0.problem) }) == [
            ids[0].uuidString: "its start or end time is out of range",
            ids[1].uuidString: "its start or end time is not a number",
            ids[2].uuidString: "it ends before it starts",
            ids[3].uuidString: "it lasts more than 31 days",
            ids[4].uuidString: "its UTC offset is out of range",
            ids[5].uuidString: "its source is not a JSON object",
            ids[6].uuidString: "its statistics are not a JSON object",
            "not-a-uuid": "its id is not a session id",
        ])
        #expect(try s.nights().map(\.id) == [ids[7]])
        do { _ = try s.night(ids[0]); Issue.record("a damaged night was read") } catch {
            #expect(error.kind == .damaged)
            #expect(error.description == "\(s.path): night \(ids[0].uuidString) is damaged (its start or end time is out of range)")
        }
        // A result or a journal chunk of the wrong type is damage too, not a crash or an I/O failure.
        try queue.write { db in
            try db.execute(sql: "UPDATE night SET result = 42 WHERE id = ?", arguments: [ids[7].uuidString])
            try db.execute(sql: "INSERT INTO journal VALUES (?, 0, 'far', X'5B5D')", arguments: [ids[7].uuidString])
        }
        #expect(throws: StoreError(damaged: DamagedNight(id: ids[7].uuidString, problem: "its result is not JSON"), path: s.path)) {
            try s.result(of: ids[7])
        }
        #expect(throws: StoreError(damaged: DamagedNight(id: ids[7].uuidString, problem: "its journal cannot be read"),
                                   path: s.path)) { try s.journal(of: ids[7]) }
        // A damaged night can still be deleted.
        #expect(try s.delete(ids[0]))
        #expect(try s.listing().damaged.count == 7)
        // Pruning takes the damaged nights whose start is a number before the date and whose id is a session id
        // (ids 2–6: their start is `start`) and the night whose result alone is damaged (it lists as a night);
        // ids 1 (its start is 'late') and not-a-uuid stay.
        let pruned = try s.prune(startedBefore: start.addingTimeInterval(1))
        #expect(Set(pruned) == Set(ids[2...7]), "\(pruned)")
        #expect(Set(try s.listing().damaged.map(\.id)) == [ids[1].uuidString, "not-a-uuid"])
    }

    @Test func defaultPathFollowsTheEnvironment() {
        #expect(NightStore.defaultPath(environment: ["SLEEPCYCLE_STORE": "/x/s.sqlite"]) == "/x/s.sqlite")
        #expect(NightStore.defaultPath(environment: ["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/sleepcycle/nights.sqlite")
        #expect(NightStore.defaultPath(environment: ["HOME": "/h"]) == "/h/.local/share/sleepcycle/nights.sqlite")
    }
}
