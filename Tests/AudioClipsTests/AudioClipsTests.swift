import Foundation
@testable import AudioClips
@testable import SleepCycleAudio
import SleepCycleBus
import Testing

@Suite("audio clips")
struct AudioClipsTests {
    /// A 75-s night with a short event in the middle, one at the very start, one at the very end, a 15-s event (a clip
    /// of the event itself) and a 65-s event (its first 60 s).
    static let seconds = 75.0
    static func events(duration: Double) -> [ScriptedEvent] {
        [ScriptedEvent(id: 1, from: 0.2, to: 0.9),
         ScriptedEvent(id: 2, .talking, from: 20, to: 21.3),
         ScriptedEvent(id: 3, .coughing, from: 25, to: 40),
         ScriptedEvent(id: 4, .talking, from: 5, to: 70, decideAt: duration),
         ScriptedEvent(id: 5, from: duration - 0.5, to: duration - 0.1, decideAt: duration + 1)]
    }

    @Test(arguments: [(8_000, 1_000), (16_000, 16_384), (16_000, 777), (44_100, 16_384), (44_100, 1_234), (48_000, 4_096)])
    func clipsHoldTheSourceSamplesExactly(rate: Int, blockFrames: Int) throws {
        let folder = try ClipFolder()
        let frames = Int(Self.seconds * Double(rate))
        let signal = testSignal(frames: frames, seed: UInt64(rate))
        try writeWAV(folder.path("night.wav"), rate: rate, channels: [signal])
        let outcomes = try playClips(path: folder.path("night.wav"), blockFrames: blockFrames,
                                     events: Self.events(duration: Self.seconds), directory: folder.path("clips"))
        #expect(outcomes.count == 5)
        #expect(outcomes.allSatisfy { $0.status == .written && $0.sampleRate == rate })
        let byId = Dictionary(uniqueKeysWithValues: outcomes.map { ($0.eventId, $0) })
        let r = Double(rate)
        func frame(_ s: Double) -> Int64 { Int64((s * r).rounded(.down)) }
        let ten = Int((10 * r).rounded())
        // Clips start on a whole millisecond: moved back by less than one step of rate / gcd(rate, 1000) frames.
        var (a, b) = (rate, 1000)
        while b != 0 { (a, b) = (b, a % b) }
        let step = rate / a
        for c in outcomes { #expect(Int(c.firstFrame) % step == 0) }
        // At the very start: the 10 s from the first sample.
        #expect(byId[1]?.firstFrame == 0 && byId[1]?.frameCount == ten)
        // In the middle: 10 s centred on the event.
        let two = try #require(byId[2])
        #expect(two.frameCount == ten)
        #expect(abs(Double(two.firstFrame) + Double(ten) / 2 - 20.65 * r) <= Double(step))
        // 15 s: the event whole, from its first to its last frame.
        let three = try #require(byId[3])
        #expect(frame(25) - three.firstFrame < step
                && Int(three.firstFrame) + three.frameCount == Int((40 * r).rounded(.up)))
        // 65 s: its first 60 s.
        #expect(frame(5) - byId[4]!.firstFrame < step && byId[4]?.frameCount == Int((60 * r).rounded()))
        // At the very end: the last 10 s (and up to a step more).
        let five = try #require(byId[5])
        #expect(Int(five.firstFrame) + five.frameCount == frames && (ten..<(ten + step)).contains(five.frameCount))
        // Every clip is the source's samples at its offsets, bit for bit, at the source's rate.
        for c in outcomes {
            let path = try #require(c.path)
            #expect(path == String(format: "night/%05d-%@.flac", c.eventId, c.type.rawValue))
            let clip = try readClip(folder.path("clips/" + path))
            #expect(clip.rate == rate)
            let expected = Array(signal[Int(c.firstFrame)..<(Int(c.firstFrame) + c.frameCount)])
            #expect(clip.samples == expected, "event \(c.eventId) at \(rate) Hz")
            #expect(c.start == AnalysisClock.samples(seconds: Double(c.firstFrame) / r))
        }
        // Private: the folder is 0700, the files 0600, and no temporary file is left.
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.path("clips/night"))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let file = try FileManager.default.attributesOfItem(atPath: folder.path("clips/night/00001-snoring.flac"))
        #expect((file[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(folder.files.filter { $0.hasPrefix("clips/") }.count == 5)
    }

    @Test func stereoClipsComeFromTheEventsChannel() throws {
        let folder = try ClipFolder()
        let rate = 22_050, frames = 30 * rate
        let left = testSignal(frames: frames, seed: 1), right = testSignal(frames: frames, seed: 2)
        try writeWAV(folder.path("two.wav"), rate: rate, channels: [left, right])
        let outcomes = try playClips(path: folder.path("two.wav"), blockFrames: 4_096, events: [
            ScriptedEvent(id: 1, from: 10, to: 11, channel: .primary),
            ScriptedEvent(id: 2, from: 12, to: 13, channel: .secondary),
        ], directory: folder.path("clips"))
        #expect(outcomes.count == 2)
        for c in outcomes {
            let clip = try readClip(folder.path("clips/" + (c.path ?? "")))
            let source = c.eventId == 1 ? left : right
            #expect(clip.samples == Array(source[Int(c.firstFrame)..<(Int(c.firstFrame) + c.frameCount)]))
        }
    }

    @Test func thePerTypeLimitKeepsTheMostProbableAndRemovesTheRest() throws {
        let folder = try ClipFolder()
        try writeWAV(folder.path("n.wav"), rate: 16_000, channels: [testSignal(frames: 60 * 16_000, seed: 3)])
        var config = AudioClipsConfig()
        config.maxClipsPerType = 2
        let outcomes = try playClips(path: folder.path("n.wav"), blockFrames: 8_000, events: [
            ScriptedEvent(id: 1, from: 5, to: 6, probability: 0.6),
            ScriptedEvent(id: 2, from: 10, to: 11, probability: 0.9),
            ScriptedEvent(id: 3, from: 15, to: 16, probability: 0.7),
            ScriptedEvent(id: 4, from: 20, to: 21, probability: 0.95),
            ScriptedEvent(id: 5, .coughing, from: 25, to: 26, probability: 0.5),
        ], config: config, directory: folder.path("clips"))
        var kept: [Int: AudioClipReady] = [:]
        for c in outcomes { kept[c.eventId] = c.status == .written ? c : nil }
        #expect(Set(kept.keys) == [2, 4, 5])
        #expect(folder.files == ["clips/night/00002-snoring.flac", "clips/night/00004-snoring.flac",
                                 "clips/night/00005-coughing.flac", "n.wav"])
        #expect(outcomes.filter { $0.status == .dropped }.allSatisfy { $0.reason?.contains("limit 2 per type") == true })
    }

    /// A new clip that first pushes out an older one and is then given up itself: both are given up, each with
    /// its record (the older one's record was lost and its file removed, so a result named a file not there).
    @Test func aClipGivenUpAfterMakingRoomKeepsTheRecordOfWhatItPushedOut() throws {
        let folder = try ClipFolder()
        try writeWAV(folder.path("n.wav"), rate: 16_000, channels: [testSignal(frames: 60 * 16_000, seed: 4)])
        var config = AudioClipsConfig()
        config.maxBytesPerNight = 700_000       // two 10-s clips of this noise (~280 kB each)
        let outcomes = try playClips(path: folder.path("n.wav"), blockFrames: 8_000, events: [
            ScriptedEvent(id: 1, from: 5, to: 6, probability: 0.9),
            ScriptedEvent(id: 2, from: 10, to: 11, probability: 0.5),
            ScriptedEvent(id: 3, from: 20, to: 38, probability: 0.6),      // a ~20-s clip
        ], config: config, directory: folder.path("clips"))
        var last: [Int: AudioClipReady] = [:]
        for c in outcomes { last[c.eventId] = c }
        #expect(last.filter { $0.value.status == .written }.keys.sorted() == [1], "\(outcomes.map { ($0.eventId, $0.status) })")
        #expect(folder.files == ["clips/night/00001-snoring.flac", "n.wav"])
    }

    /// A resume gives up the clips of the events its journal has no clip record for: a file one of them had written
    /// in the instant before the crash (its record lost) and the crash's temporary files go, nothing else.
    @Test func aResumeRemovesWhatTheCrashLeftOfTheClipsItGivesUp() throws {
        let folder = try ClipFolder()
        try FileManager.default.createDirectory(atPath: folder.path("clips/night"), withIntermediateDirectories: true)
        let names = ["00003-snoring.flac", "00004-talking.flac.enc", ".clip-\(UUID().uuidString).tmp",
                     "00001-snoring.flac", "notes.txt"]
        for name in names { try Data("x".utf8).write(to: URL(fileURLWithPath: folder.path("clips/night/" + name))) }
        _ = try AudioClips(config: .default, output: ClipOutput(directory: folder.path("clips"), folderName: { _ in "night" }),
                           unclipped: [SoundEvent(id: 3, type: .snoring, start: 0, end: 16_000, probability: 0.9),
                                       SoundEvent(id: 4, type: .talking, start: 0, end: 16_000, probability: 0.9)])
        #expect(folder.files == ["clips/night/00001-snoring.flac", "clips/night/notes.txt"])
    }

    /// A night whose clips are all given up leaves no empty folder (with two sleepers and a crash, `sessions
    /// delete` left one: nothing indexed named it); a later clip makes the folder again.
    @Test func aFolderLeftEmptyByGivenUpClipsIsRemoved() throws {
        let folder = try ClipFolder()
        try writeWAV(folder.path("n.wav"), rate: 16_000, channels: [testSignal(frames: 60 * 16_000, seed: 4)])
        var config = AudioClipsConfig()
        config.maxBytesPerNight = 100_000       // less than one 10-s clip of this noise (~280 kB)
        let outcomes = try playClips(path: folder.path("n.wav"), blockFrames: 8_000, events: [
            ScriptedEvent(id: 1, from: 5, to: 6, probability: 0.9),
            ScriptedEvent(id: 2, from: 30, to: 31, probability: 0.8),
        ], config: config, directory: folder.path("clips"))
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.status == .dropped })
        #expect(folder.files == ["n.wav"])
        #expect(!FileManager.default.fileExists(atPath: folder.path("clips/night")))
        #expect(FileManager.default.fileExists(atPath: folder.path("clips")))

        // Given up one after the other (a per-type limit of one, the second more probable): the folder is made
        // again for the clip that stays.
        config = AudioClipsConfig()
        config.maxClipsPerType = 1
        let again = try playClips(path: folder.path("n.wav"), blockFrames: 8_000, events: [
            ScriptedEvent(id: 1, from: 5, to: 6, probability: 0.6),
            ScriptedEvent(id: 2, from: 30, to: 31, probability: 0.9),
        ], config: config, directory: folder.path("clips"))
        #expect(again.last?.status == .written && again.last?.eventId == 2)
        #expect(folder.files == ["clips/night/00002-snoring.flac", "n.wav"])
    }

    /// A resume's leftovers in a folder that holds nothing else: the folder goes with them.
    @Test func aResumesLeftoversAloneInTheirFolderTakeIt() throws {
        let folder = try ClipFolder()
        try FileManager.default.createDirectory(atPath: folder.path("clips/night"), withIntermediateDirectories: true)
        for name in ["00003-snoring.flac", ".clip-\(UUID().uuidString).tmp"] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: folder.path("clips/night/" + name)))
        }
        _ = try AudioClips(config: .default, output: ClipOutput(directory: folder.path("clips"), folderName: { _ in "night" }),
                           unclipped: [SoundEvent(id: 3, type: .snoring, start: 0, end: 16_000, probability: 0.9)])
        #expect(!FileManager.default.fileExists(atPath: folder.path("clips/night")))
    }

    @Test func theSizeCapGivesUpTheLeastProbableClips() throws {
        let folder = try ClipFolder()
        try writeWAV(folder.path("n.wav"), rate: 16_000, channels: [testSignal(frames: 60 * 16_000, seed: 4)])
        // One 10-s clip of this noise is about 280 kB: a 700-kB cap holds two.
        var config = AudioClipsConfig()
        config.maxBytesPerNight = 700_000
        let outcomes = try playClips(path: folder.path("n.wav"), blockFrames: 8_000, events: [
            ScriptedEvent(id: 1, from: 5, to: 6, probability: 0.8),
            ScriptedEvent(id: 2, from: 10, to: 11, probability: 0.6),
            ScriptedEvent(id: 3, from: 15, to: 16, probability: 0.9),
            ScriptedEvent(id: 4, from: 20, to: 21, probability: 0.7),
        ], config: config, directory: folder.path("clips"))
        var kept: [Int: AudioClipReady] = [:]
        for c in outcomes { kept[c.eventId] = c.status == .written ? c : nil }
        #expect(Set(kept.keys) == [1, 3])
        #expect(kept.values.map(\.bytes).reduce(0, +) <= 700_000 && kept.values.allSatisfy { $0.bytes > 250_000 })
        #expect(folder.files == ["clips/night/00001-snoring.flac", "clips/night/00003-snoring.flac", "n.wav"])
    }

    @Test func encryptedClipsRoundTripAndNothingPlainTouchesTheDisk() throws {
        let folder = try ClipFolder()
        let signal = testSignal(frames: 40 * 16_000, seed: 5)
        try writeWAV(folder.path("n.wav"), rate: 16_000, channels: [signal])
        let keyBytes = (0..<32).map { UInt8($0 * 7 + 1) }
        let key = try ClipKey(bytes: keyBytes)
        let outcomes = try playClips(path: folder.path("n.wav"), blockFrames: 8_000, events: [
            ScriptedEvent(id: 7, from: 12, to: 14),
        ], directory: folder.path("clips"), key: key)
        let c = try #require(outcomes.first)
        #expect(c.encrypted && c.path == "night/00007-snoring.flac.enc")
        #expect(folder.files == ["clips/night/00007-snoring.flac.enc", "n.wav"])
        let sealed = try [UInt8](Data(contentsOf: folder.url.appendingPathComponent("clips/night/00007-snoring.flac.enc")))
        #expect(sealed.starts(with: Array("SCCLIPv1AESG".utf8)))
        #expect(!sealed.starts(with: Array("fLaC".utf8)) && !Data(sealed).contains(Data("fLaC".utf8)))
        let plain = try ClipContainer.open(sealed, key: key, name: "clip")
        try Data(plain).write(to: folder.url.appendingPathComponent("plain.flac"))
        let clip = try readClip(folder.path("plain.flac"))
        #expect(clip.samples == Array(signal[Int(c.firstFrame)..<(Int(c.firstFrame) + c.frameCount)]))

        // A wrong key, and any changed byte (header, nonce, ciphertext, tag) or a cut-off file, fail with one line.
        let wrong = try ClipKey(bytes: keyBytes.map { $0 ^ 1 })
        #expect(throws: ClipError.self) { try ClipContainer.open(sealed, key: wrong, name: "clip") }
        for index in [3, 10, 15, 40, sealed.count / 2, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x20
            #expect(throws: ClipError.self) { try ClipContainer.open(tampered, key: key, name: "clip") }
        }
        #expect(throws: ClipError.self) { try ClipContainer.open(Array(sealed.dropLast(5)), key: key, name: "clip") }
        do {
            _ = try ClipContainer.open(sealed, key: wrong, name: "x.flac.enc")
        } catch {
            #expect(error.description == "x.flac.enc: cannot decrypt: wrong key, or the file was altered or truncated")
        }
    }

    @Test func keyFilesAreRawOrHex() throws {
        let folder = try ClipFolder()
        let raw = (0..<32).map { UInt8($0) }
        try Data(raw).write(to: folder.url.appendingPathComponent("raw.key"))
        try Data((raw.map { String(format: "%02X", $0) }.joined() + "\n").utf8).write(to: folder.url.appendingPathComponent("hex.key"))
        try Data("too short".utf8).write(to: folder.url.appendingPathComponent("bad.key"))
        let a = try ClipKey.load(path: folder.path("raw.key")), b = try ClipKey.load(path: folder.path("hex.key"))
        let sealed = try ClipContainer.seal([1, 2, 3], key: a)
        #expect(try ClipContainer.open(sealed, key: b, name: "x") == [1, 2, 3])
        #expect(throws: ClipError.self) { try ClipKey.load(path: folder.path("bad.key")) }
        #expect(throws: ClipError.self) { try ClipKey.load(path: folder.path("missing.key")) }
    }

    @Test func aHoleInTheInputIsSilenceAndAShortPreRollDropsTheClip() throws {
        var config = AudioClipsConfig()
        config.preRollSeconds = 60
        var clips = try AudioClips(config: config, output: ClipOutput(directory: nil, folderName: { _ in "n" }))
        let info = SessionInfo(id: UUID(), clock: AnalysisClock(start: Date()), sourceSampleRate: 8_000, channelCount: 1)
        _ = clips.handle(.sessionStarted(info))
        // 0–5 s of audio, a hole 5–7 s, audio 7–70 s (8 kHz, all ones).
        func block(_ from: Double, _ to: Double) -> AnalysisEvent {
            .sourceAudio(SourceAudioBlock(sampleRate: 8_000, origin: 0, start: Int64(from * 8_000),
                                          samples: .int16([[Int16](repeating: 16_384, count: Int((to - from) * 8_000))]),
                                          integerBits: 16))
        }
        var out = clips.handle(block(0, 5)) + clips.handle(block(7, 20))
        // An event 5.5–6.5 s: its clip (1–11 s) holds the hole as silence.
        out += clips.handle(.eventEnded(SoundEvent(id: 1, type: .snoring, start: 88_000, end: 104_000, probability: 0.9)))
        out += clips.handle(block(20, 70))
        // An event at 2–3 s decided at 70 s: its audio is older than the 60-s pre-roll.
        out += clips.handle(.eventEnded(SoundEvent(id: 2, type: .snoring, start: 32_000, end: 48_000, probability: 0.9)))
        out += clips.handle(.sessionEnding(at: 70 * 16_000)) + clips.handle(.sessionEnded(at: 70 * 16_000))
        let outcomes = out.compactMap { if case .clip(let c) = $0 { c } else { nil } }
        #expect(outcomes.count == 2)
        let first = try #require(outcomes.first { $0.eventId == 1 })
        #expect(first.status == .written && first.firstFrame == 8_000 && first.frameCount == 80_000)
        let second = try #require(outcomes.first { $0.eventId == 2 })
        #expect(second.status == .dropped && second.reason?.contains("pre-roll") == true)
        #expect(clips.longestReach >= 67)
    }

    /// The automatic pre-roll holds the decision delay plus the clip: `--clip-length 10m` got 150 s, so a talking
    /// event decided 108 s after its end had a 150-s clip that did not even reach it, and several events the same one.
    @Test func theAutomaticPreRollHoldsALongClip() throws {
        var config = AudioClipsConfig()
        config.clipLength = 600
        config.maxClipLength = 600
        #expect(config.automaticPreRoll == 708 && AudioClipsConfig().automaticPreRoll == 150)
        config.eventTypes = [.snoring]
        #expect(config.automaticPreRoll == 618 && AudioClipsConfig(eventTypes: [.coughing]).automaticPreRoll == 60)
        config.eventTypes = [.talking]
        var clips = try AudioClips(config: config, output: ClipOutput(directory: nil, folderName: { _ in "n" }))
        _ = clips.handle(.sessionStarted(SessionInfo(id: UUID(), clock: AnalysisClock(start: Date()),
                                                     sourceSampleRate: 8_000, channelCount: 1)))
        func blocks(_ from: Int, _ to: Int) -> [AnalysisEvent] {
            stride(from: from, to: to, by: 10).map {
                .sourceAudio(SourceAudioBlock(sampleRate: 8_000, origin: 0, start: Int64($0 * 8_000),
                                              samples: .int16([[Int16](repeating: 100, count: 10 * 8_000)]), integerBits: 16))
            }
        }
        var out = blocks(0, 520).flatMap { clips.handle($0) }
        // Talking at 400–403 s, decided at 520 s.
        out += clips.handle(.eventEnded(SoundEvent(id: 1, type: .talking, start: 400 * 16_000, end: 403 * 16_000,
                                                   probability: 0.9)))
        out += blocks(520, 900).flatMap { clips.handle($0) }
        out += clips.handle(.sessionEnding(at: 900 * 16_000)) + clips.handle(.sessionEnded(at: 900 * 16_000))
        let clip = try #require(out.compactMap { if case .clip(let c) = $0 { c } else { nil } }.first)
        #expect(clip.status == .written && clip.firstFrame == 812_000 && clip.frameCount == 600 * 8_000,
                "\(clip.status) \(clip.firstFrame) \(clip.frameCount)")
    }

    @Test func silenceInTheClipWhereTheInputHadAHole() throws {
        let received = Box()
        var clips = try AudioClips(config: .default, output: ClipOutput(directory: nil, folderName: { _ in "n" },
                                                                         receiver: { received.append($0) }))
        _ = clips.handle(.sessionStarted(SessionInfo(id: UUID(), clock: AnalysisClock(start: Date()),
                                                     sourceSampleRate: 8_000, channelCount: 1)))
        let ones = [Float](repeating: 0.25, count: 5 * 8_000)
        _ = clips.handle(.sourceAudio(SourceAudioBlock(sampleRate: 8_000, origin: 0, start: 0, samples: .float([ones]),
                                                       integerBits: nil)))
        _ = clips.handle(.sourceAudio(SourceAudioBlock(sampleRate: 8_000, origin: 0, start: 7 * 8_000,
                                                       samples: .float([ones + ones]), integerBits: nil)))
        _ = clips.handle(.eventEnded(SoundEvent(id: 1, type: .snoring, start: 88_000, end: 104_000, probability: 0.9)))
        _ = clips.handle(.sessionEnded(at: 17 * 16_000))
        let delivery = try #require(received.items.first)
        let samples = delivery.floatSamples
        #expect(samples.count == 80_000)
        #expect(samples[0..<32_000].allSatisfy { $0 == 0.25 })
        #expect(samples[32_000..<48_000].allSatisfy { $0 == 0 })
        #expect(samples[48_000...].allSatisfy { $0 == 0.25 })
    }

    @Test func badSettingsAreRefused() {
        for change in [{ (c: inout AudioClipsConfig) in c.eventTypes = [] }, { $0.clipLength = 0 },
                       { $0.maxClipLength = 5 }, { $0.maxBytesPerNight = 0 }, { $0.maxClipsPerType = 0 },
                       { $0.preRollSeconds = 5 }] {
            var config = AudioClipsConfig()
            change(&config)
            #expect(config.problem != nil)
            #expect(throws: ClipError.self) { try AudioClips(config: config, output: ClipOutput(directory: nil, folderName: { _ in "" })) }
        }
    }
}

extension AudioClipsTests {
    /// Folders are made as `mkdir -p` does, mode 0700; one that cannot be made is named with the system's reason (not
    /// Foundation's "The operation could not be completed").
    @Test func clipFoldersAndTheirFailures() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("clip-folders-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: base) }
        try AudioClipsFolder.prepare(base + "/a/b/c")
        var st = stat()
        #expect(stat(base + "/a/b/c", &st) == 0 && st.st_mode & 0o777 == 0o700)
        try AudioClipsFolder.prepare(base + "/a/b/c")          // an existing folder is fine
        FileManager.default.createFile(atPath: base + "/file", contents: Data())
        for (path, words) in [(base + "/file/x", "Not a directory"), ("/proc/sleepcycle-clips", "No such file or directory")] {
            do {
                try AudioClipsFolder.prepare(path)
                Issue.record("\(path) was made")
            } catch {
                #expect(error.message == "cannot create the clips folder (\(words))", "\(error.message)")
            }
        }
    }
}

final class Box: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [ClipDelivery] = []
    func append(_ d: ClipDelivery) { lock.lock(); list.append(d); lock.unlock() }
    var items: [ClipDelivery] { lock.lock(); defer { lock.unlock() }; return list }
}
