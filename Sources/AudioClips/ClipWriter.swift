import Foundation
import SleepCycleAudio
import SleepCycleBus
import SleepCycleDSP
import SleepCycleFormats

/// Encodes, encrypts and writes clips on a thread of its own, and keeps the night within its size cap and per-type
/// limit.
///
/// * Files: `<directory>/<folder>/<event id>-<type>.flac` (`.flac.enc` with a key), folders created 0700 and files
///   0600 (bedroom audio is private). Each file is written to a hidden temporary name in the same folder and renamed
///   into place, so a crash never leaves a partial clip under a clip's name; with a key, only ciphertext is written.
/// * Limits: a clip that would pass `maxClipsPerType` replaces the type's least probable clip if it is more probable
///   (else it is dropped unwritten); after each write, while the night's clips pass `maxBytesPerNight`, the least
///   probable clip is given up and its file removed. Only files this writer created are ever removed: a clip that
///   replaced a file of the same name (an earlier run over the same recording) stays when given up.
/// * A failing write (a full disk, a removed folder) drops that clip with its reason; the night goes on.
/// * A queued clip holds the ring's blocks of its audio (shared with the ring, not copied, until the ring lets them
///   go); the queue keeps at most `maxQueuedBytes` of such blocks alive and `submit` waits beyond that, so memory stays
///   bounded while a burst of events (a snoring bout) is written beside a fast analysis.
final class ClipWriter: @unchecked Sendable {
    struct Job: Sendable {
        var event: SoundEvent
        var channel: Int
        /// The clip's audio: blocks shared with the ring (the copy is made here, on the writer's thread).
        var audio: ClipAudio
        var sampleRate: Int
        var integerBits: Int?
        var sessionId: String
        var firstFrame: Int64 { audio.from }
        var bytes: Int { audio.bytes }
    }

    private struct Kept {
        var ready: AudioClipReady
        var probability: Double
        var file: String?
        /// The event's sleeper with two sleepers (the per-type limit is per sleeper), else nil.
        var sleeper: AudioChannel?
    }

    let config: AudioClipsConfig
    let output: ClipOutput
    static let maxQueuedBytes = 16 << 20
    private var queuedBytes = 0
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var done: [ClipDelivery] = []
    private var busy = false
    private var closing = false
    private var thread: Thread?
    // Writer thread only:
    private var kept: [Int: Kept] = [:]
    private var totalBytes: Int64 = 0
    private var madeFolders: Set<String> = []

    init(config: AudioClipsConfig, output: ClipOutput) throws(ClipError) {
        self.config = config
        self.output = output
        if let directory = output.directory { try AudioClipsFolder.prepare(directory) }
    }

    /// Counts a resumed night's earlier clips (before the thread starts): kept as this night's own, so that the
    /// limits hold across the resume and giving one up removes its file.
    func seed(_ earlier: [EarlierClip]) {
        condition.lock()
        defer { condition.unlock() }
        precondition(thread == nil, "seed before the first clip")
        for e in earlier where e.clip.status == .written {
            let file = e.clip.path.flatMap { path in output.directory.map { $0 + "/" + path } }
            kept[e.clip.eventId] = Kept(ready: e.clip, probability: e.probability, file: file, sleeper: e.channel)
            totalBytes += Int64(e.clip.bytes)
        }
    }

    /// Removes what an interrupted run left of the clips of `events` (whose clips a resume gives up): a complete
    /// file under the name the writer gives it, and the temporary files in the night's folders.
    func removeLeftovers(of events: [SoundEvent]) {
        guard let directory = output.directory else { return }
        var folders = Set<String>()
        for e in events {
            let folder = directory + "/" + output.folderName(e.channel)
            folders.insert(folder)
            let name = String(format: "%05d-%@.flac", e.id, e.type.rawValue)
            for file in [name, name + ".enc"] { _ = PathEncoding.withCString(folder + "/" + file) { unlink($0) } }
        }
        for folder in folders {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            where name.hasPrefix(".clip-") && name.hasSuffix(".tmp") {
                _ = PathEncoding.withCString(folder + "/" + name) { unlink($0) }
            }
            removeIfEmpty(folder)
        }
    }

    /// Removes a night's folder that giving up its clips left empty (`rmdir` fails unless it is): a night whose
    /// clips were all given up leaves no folder behind, and `sessions delete` has no indexed clip to find it by.
    /// The next clip in it makes it again.
    private func removeIfEmpty(_ folder: String) {
        if PathEncoding.withCString(folder, { rmdir($0) }) == 0 { madeFolders.remove(folder) }
    }

    func submit(_ job: Job) {
        condition.lock()
        if thread == nil {
            let t = Thread { [self] in run() }
            t.name = "sleepcycle.clips"
            thread = t
            t.start()
        }
        let bytes = job.bytes
        while !queue.isEmpty && queuedBytes + bytes > Self.maxQueuedBytes { condition.wait() }
        queue.append(job)
        queuedBytes += bytes
        condition.broadcast()
        condition.unlock()
    }

    /// Outcomes finished since the last call, in order.
    func takeCompleted() -> [ClipDelivery] {
        condition.lock()
        defer { condition.unlock() }
        guard !done.isEmpty else { return [] }
        let out = done
        done = []
        return out
    }

    /// Waits until every submitted clip is written (or dropped) and stops the thread.
    func finish() {
        condition.lock()
        closing = true
        condition.broadcast()
        while thread != nil && (!queue.isEmpty || busy) { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while queue.isEmpty && !closing { condition.wait() }
            if queue.isEmpty { break }
            let job = queue.removeFirst()
            queuedBytes -= job.bytes
            busy = true
            condition.broadcast()
            condition.unlock()
            var outcomes = write(job)
            // The samples are for a receiver only: without one they would pile up here until the analysing thread
            // takes the outcomes, which at the end of a session is after every last clip is written (30 clips of
            // 6 min at 44.1 kHz were 0.9 GB).
            if output.receiver == nil { for i in outcomes.indices { outcomes[i].samples = .float([]) } }
            condition.lock()
            done += outcomes
            busy = false
            condition.broadcast()
        }
        thread = nil
        condition.broadcast()
        condition.unlock()
    }

    // MARK: - One clip

    private func write(_ job: Job) -> [ClipDelivery] {
        let e = job.event
        let samples = job.audio.samples(channel: job.channel)
        var out: [ClipDelivery] = []
        let sr = Int64(AnalysisClock.sampleRate), r = Int64(job.sampleRate)
        var ready = AudioClipReady(
            eventId: e.id, type: e.type, status: .written, start: (job.firstFrame * sr + r / 2) / r,
            end: ((job.firstFrame + Int64(samples.frameCount)) * sr + r / 2) / r, firstFrame: job.firstFrame,
            frameCount: samples.frameCount, sampleRate: job.sampleRate, path: nil, encrypted: output.key != nil, bytes: 0)
        func drop(_ reason: String) -> [ClipDelivery] {
            var d = ready
            d.status = .dropped; d.reason = reason; d.path = nil; d.bytes = 0; d.encrypted = false
            return out + [ClipDelivery(clip: d, event: e, samples: .float([]))]
        }
        // The per-type limit (per sleeper with two sleepers, so that one sleeper's events cannot take all of them):
        // make room by giving up the least probable clip of the type, if this one beats it.
        if let limit = config.maxClipsPerType {
            let ofType = kept.values.filter { $0.ready.type == e.type && $0.sleeper == e.channel }
            if ofType.count >= limit, let weakest = ofType.min(by: { ($0.probability, -$0.ready.eventId) < ($1.probability, -$1.ready.eventId) }) {
                // The same words as a clip dropped unwritten: the warning lists each reason once.
                let reason = "more probable \(e.type.rawValue) events "
                    + (e.channel.map { "of the \($0.name) sleeper " } ?? "")
                    + "kept their clips (limit \(limit) per type" + (e.channel == nil ? ")" : " and sleeper)")
                guard e.probability > weakest.probability else { return drop(reason) }
                out.append(giveUp(weakest.ready.eventId, reason: reason))
            }
        }
        guard let directory = output.directory else {
            kept[e.id] = Kept(ready: ready, probability: e.probability, file: nil, sleeper: e.channel)
            return out + [ClipDelivery(clip: ready, event: e, samples: samples)]
        }
        let folder = output.folderName(e.channel)
        let name = String(format: "%05d-%@.flac", e.id, e.type.rawValue) + (output.key != nil ? ".enc" : "")
        let relative = folder + "/" + name
        let time = String(format: "%.6f", Double(job.firstFrame) / Double(job.sampleRate))
        var bytes: [UInt8]
        do {
            bytes = try FLACMemoryEncoder.encode(samples, sampleRate: job.sampleRate, integerBits: job.integerBits,
                title: "sleepcycle \(e.type.rawValue) event \(e.id)",
                comment: "session \(job.sessionId); first sample at \(time) s (frame \(job.firstFrame) at "
                    + "\(job.sampleRate) Hz) from the start of the recording", name: relative)
            if let key = output.key { bytes = try ClipContainer.seal(bytes, key: key) }
        } catch {
            return drop("cannot encode the clip: \(error)")
        }
        let folderPath = directory + "/" + folder
        let path = folderPath + "/" + name
        var existed = false
        do throws(ClipError) {
            if !madeFolders.contains(folderPath) {
                try Self.makeFolder(folderPath)
                madeFolders.insert(folderPath)
            }
            var st = stat()
            existed = PathEncoding.withCString(path) { lstat($0, &st) } == 0
            try Self.writeAtomically(bytes, to: path, folder: folderPath, sync: output.durable)
        } catch {
            return drop("cannot write clips into \(folderPath): \(error.message)")
        }
        ready.path = relative
        ready.bytes = bytes.count
        // A clip whose name was already taken replaced an earlier run's clip of the same event (the same recording
        // gives the same session and event ids), which that run's result names: it is never removed, even if this
        // run gives the clip up.
        kept[e.id] = Kept(ready: ready, probability: e.probability, file: existed ? nil : path, sleeper: e.channel)
        totalBytes += Int64(bytes.count)
        out.append(ClipDelivery(clip: ready, event: e, samples: samples))
        // The night's size cap: give up the least probable clips (possibly this one) until it fits.
        if let cap = config.maxBytesPerNight {
            while totalBytes > cap, let weakest = kept.values.min(by: { ($0.probability, -$0.ready.eventId) < ($1.probability, -$1.ready.eventId) }) {
                let reason = "the night's clips reached the size cap (\(cap) bytes); more probable events kept theirs"
                if weakest.ready.eventId == e.id {
                    // Its own delivery only: clips given up before it in this loop keep theirs (removing the last
                    // delivery took one of those, whose file was gone with no record of it).
                    out.removeAll { $0.clip.eventId == e.id }
                    _ = giveUp(e.id, reason: reason)
                    return drop(reason)
                }
                out.append(giveUp(weakest.ready.eventId, reason: reason))
            }
        }
        return out
    }

    /// Removes a kept clip (and its file) and returns its `.dropped` outcome.
    private func giveUp(_ id: Int, reason: String) -> ClipDelivery {
        let k = kept.removeValue(forKey: id)!
        if let file = k.file {
            _ = PathEncoding.withCString(file) { unlink($0) }
            removeIfEmpty(PathEncoding.folder(of: file))
        }
        totalBytes -= Int64(k.ready.bytes)
        var d = k.ready
        d.status = .dropped; d.reason = reason; d.path = nil; d.bytes = 0
        return ClipDelivery(clip: d, event: SoundEvent(id: id, type: d.type, start: d.start, end: d.end,
                                                       probability: k.probability), samples: .float([]))
    }

    // MARK: - Files

    private static func makeFolder(_ path: String) throws(ClipError) {
        if let failure = PathEncoding.makeFolders(path) {
            throw ClipError(path: path, message: failure == ENOTDIR ? "not a folder"
                : "cannot create the folder (\(String(cString: strerror(failure))))")
        }
    }

    /// Writes `bytes` to a new hidden file in `folder` (mode 0600), with `sync` flushes it to the disk, and renames it
    /// to `path`.
    static func writeAtomically(_ bytes: [UInt8], to path: String, folder: String, sync: Bool) throws(ClipError) {
        let temporary = folder + "/.clip-\(UUID().uuidString).tmp"
        let fd = PathEncoding.withCString(temporary) { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
        guard fd >= 0 else { throw ClipError(path: temporary, message: String(cString: strerror(errno))) }
        var offset = 0
        var failure: Int32 = 0
        bytes.withUnsafeBytes { p in
            while offset < p.count {
                let n = Foundation.write(fd, p.baseAddress! + offset, p.count - offset)
                if n < 0 { if errno == EINTR { continue }; failure = errno; break }
                offset += n
            }
        }
        if failure == 0 && sync && fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == 0 && PathEncoding.withCString(temporary, { from in PathEncoding.withCString(path) { rename(from, $0) } }) != 0 {
            failure = errno
        }
        if failure != 0 {
            _ = PathEncoding.withCString(temporary) { unlink($0) }
            throw ClipError(path: path, message: String(cString: strerror(failure)))
        }
    }
}

/// The clips folder.
public enum AudioClipsFolder {
    /// Checks, without creating anything, that `directory` is a writable folder or can be made as one (its nearest
    /// existing ancestor is a writable folder): a command checks this before it reads any input, and the folder is
    /// made only when the analysis starts.
    public static func check(_ directory: String) throws(ClipError) {
        guard !directory.isEmpty else { throw ClipError(.setting, path: directory, message: "the clips folder's path is empty") }
        try checkLink(directory)
        var path = URL(fileURLWithPath: directory).standardizedFileURL.path
        var isFolder = Self.isFolder(path)
        if isFolder == false {
            throw ClipError(.unwritable, path: directory, message: "not a folder (clips need one)")
        }
        while isFolder == nil && path != "/" {
            path = PathEncoding.folder(of: path)
            isFolder = Self.isFolder(path)
        }
        guard isFolder == true, Self.writable(path) else {
            throw ClipError(.unwritable, path: directory, message: path == URL(fileURLWithPath: directory).standardizedFileURL.path
                ? "the clips folder is not writable" : "cannot create the clips folder (\(path) is not a writable folder)")
        }
    }

    /// Whether `path` (links followed) is a folder; nil when nothing is there. By its bytes (`PathEncoding`): a
    /// non-UTF-8 name is that name, not its escaped spelling.
    private static func isFolder(_ path: String) -> Bool? {
        var st = stat()
        guard PathEncoding.withCString(path, { stat($0, &st) }) == 0 else { return nil }
        return (st.st_mode & S_IFMT) == S_IFDIR
    }

    private static func writable(_ path: String) -> Bool {
        PathEncoding.withCString(path) { access($0, W_OK | X_OK) } == 0
    }

    /// A symbolic link that leads nowhere (a loop, a missing target) is named as such: following it fails, and
    /// creating a folder in its place fails with "file exists", which would not say why.
    private static func checkLink(_ directory: String) throws(ClipError) {
        var st = stat()
        guard PathEncoding.withCString(directory, { lstat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFLNK,
              PathEncoding.withCString(directory, { stat($0, &st) }) != 0 else { return }
        let why = errno == ELOOP ? "a loop of symbolic links" : "a symbolic link to a missing folder"
        throw ClipError(.unwritable, path: directory, message: "\(why) (clips need a folder)")
    }

    /// Creates the clips folder (and its parents, mode 0700) if needed, or checks that the existing one is a writable
    /// folder: done before any audio is analysed, so a bad `--clips DIR` fails at once.
    public static func prepare(_ directory: String) throws(ClipError) {
        try checkLink(directory)
        if let isFolder = Self.isFolder(directory) {
            guard isFolder else { throw ClipError(.unwritable, path: directory, message: "not a folder (clips need one)") }
        } else if let failure = PathEncoding.makeFolders(directory) {
            throw ClipError(.unwritable, path: directory,
                            message: "cannot create the clips folder (\(String(cString: strerror(failure))))")
        }
        guard Self.writable(directory) else {
            throw ClipError(.unwritable, path: directory, message: "the clips folder is not writable")
        }
    }
}
