import Foundation
import SleepCycleFormats

/// The store's recorder lock: an advisory `flock(2)` on `<store>.lock`, held while a recorder writes, with the
/// recorder's process id and the night it records written in the file. A second recorder is refused instead of
/// interleaving two nights; a reader tells a night being recorded from an interrupted one by whether the lock is
/// held. The kernel releases the lock when its holder dies (a `kill -9`, a power cut), so an interrupted night is
/// never mistaken for a live one.
public final class RecorderLock: @unchecked Sendable {
    private var fd: Int32
    private var databaseFd: Int32 = -1
    private let path: String

    init(storePath: String) throws(StoreError) {
        path = storePath + ".lock"
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(.unwritable, path: storePath, message: "cannot create the lock file (\(String(cString: strerror(errno))))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.contents(fd: fd).pid.map { " (process \($0))" } ?? ""
            close(fd)
            fd = -1
            throw StoreError(.busy, path: storePath, message: "another recorder is using this store\(holder); one "
                + "recorder per store: stop it, or give this one another --store")
        }
        // The database file itself is locked too: a hard link or a symbolic link is the same store under another
        // name, with a lock file of its own (a second recorder through a hard link lost a night or damaged the
        // store). flock is independent of SQLite's own (fcntl) locks.
        databaseFd = open(storePath, O_RDONLY | O_CLOEXEC)
        // A command that only looks whether a recorder holds it (`heldUnderAnotherName`) holds it shared for an
        // instant: a few tries tell that from a recorder.
        var locked = false
        for attempt in 0..<10 where databaseFd >= 0 {
            if flock(databaseFd, LOCK_EX | LOCK_NB) == 0 { locked = true; break }
            if attempt < 9 { usleep(20_000) }
        }
        if databaseFd >= 0, !locked {
            close(databaseFd)
            databaseFd = -1
            release()
            throw StoreError(.busy, path: storePath, message: "another recorder is using this store under another name "
                + "(a link to it); one recorder per store: stop it, or give this one another --store")
        }
    }

    deinit { release() }

    /// Notes the night being recorded (nil: none yet).
    public func recording(_ night: UUID?) {
        guard fd >= 0 else { return }
        let text = "\(getpid()) \(night?.uuidString ?? "-")\n"
        _ = ftruncate(fd, 0)
        _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    /// Releases the lock (idempotent).
    public func release() {
        if databaseFd >= 0 { close(databaseFd); databaseFd = -1 }
        guard fd >= 0 else { return }
        _ = ftruncate(fd, 0)
        close(fd)
        fd = -1
    }

    /// The night a live recorder is recording in the store at `storePath`, if one holds its lock.
    static func recordingNight(storePath: String) -> UUID? {
        if let night = recordingNight(lockOf: storePath) { return night }
        // Through a symbolic link: the recorder's lock file is beside the file the link names.
        guard let resolved = PathEncoding.resolved(storePath), resolved != storePath else { return nil }
        return recordingNight(lockOf: resolved)
    }

    private static func recordingNight(lockOf storePath: String) -> UUID? {
        let fd = open(storePath + ".lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil           // nobody holds it
        }
        return contents(fd: fd).night
    }

    /// Whether a recorder holds the database file at `storePath` under another name (a symbolic or hard link to
    /// it): its night cannot be told from this name's lock file, and a write through a hard link goes to a log of
    /// its own beside it (two logs for one database damage it), so the commands that write refuse.
    static func heldUnderAnotherName(storePath: String) -> Bool {
        if isHeld(storePath: storePath) { return false }     // held under this very name
        let database = open(storePath, O_RDONLY | O_CLOEXEC)
        guard database >= 0 else { return false }
        defer { close(database) }
        guard flock(database, LOCK_SH | LOCK_NB) == 0 else { return true }
        flock(database, LOCK_UN)
        return false
    }

    /// Whether a recorder holds the lock file of the store named `storePath` (that very name).
    static func isHeld(storePath: String) -> Bool {
        let lock = open(storePath + ".lock", O_RDONLY | O_CLOEXEC)
        guard lock >= 0 else { return false }
        defer { close(lock) }
        guard flock(lock, LOCK_SH | LOCK_NB) == 0 else { return true }
        flock(lock, LOCK_UN)
        return false
    }

    private static func contents(fd: Int32) -> (pid: Int32?, night: UUID?) {
        var buffer = [CChar](repeating: 0, count: 128)
        let n = pread(fd, &buffer, buffer.count - 1, 0)
        guard n > 0 else { return (nil, nil) }
        let parts = String(cString: buffer).split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        return (parts.first.flatMap { Int32($0) }, parts.count > 1 ? UUID(uuidString: parts[1]) : nil)
    }
}
