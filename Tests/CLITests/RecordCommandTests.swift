import Foundation
import GRDB
import SleepCycleAudio
import SleepCycleFormats
import SleepCycleStore
import Testing

/// `sleepcycle record` as a user runs it, with no sound card: raw PCM through standard input (and ALSA's `file`
/// plugin), the store, `kill -9` and `--resume`, SIGTERM, faults, and the `sessions` commands.
@Suite(.serialized) final class RecordCommandTests {
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("sleepcycle-record") }

    /// The example night's 16 kHz samples as raw s16le, repeated `times` times.
    static func rawNight(times: Int = 1) throws -> Data {
        let samples = try AnalyzeCommandTests.decodeExample()
        var pcm = [Int16](); pcm.reserveCapacity(samples.count * times)
        // The FLAC's own 16-bit values (libsndfile reads them as x / 32768).
        for _ in 0..<times { for x in samples { pcm.append(Int16(max(-32768, min(32767, (x * 32768).rounded())))) } }
        return pcm.withUnsafeBytes { Data($0) }
    }

    static let rawArgs = ["--input", "-", "--input-format", "s16le", "--rate", "16000", "--channels", "1"]
    static let start = "2026-01-01T23:00:00+01:00"
    static let startDate = ISO8601DateFormatter().date(from: "2026-01-01T22:00:00Z")!

    func storePath(_ name: String = "nights.sqlite") -> String { temp.path(name) }

    /// A running `sleepcycle` whose standard input the test writes, paced or not.
    final class Recorder: @unchecked Sendable {
        let process = Process()
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        nonisolated(unsafe) var out = Data(), err = Data()
        let group = DispatchGroup()

        init(_ arguments: [String]) throws {
            process.executableURL = try #require(BuiltBinary.url)
            process.arguments = arguments
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = stderr
            signal(SIGPIPE, SIG_IGN)
            // A small pipe: what the recorder has not read yet is at most a fraction of a second of audio.
            _ = fcntl(stdin.fileHandleForWriting.fileDescriptor, 1031 /* F_SETPIPE_SZ */, 4096)
            try process.run()
            DispatchQueue.global().async(group: group) { self.out = self.stdout.fileHandleForReading.readDataToEndOfFile() }
            DispatchQueue.global().async(group: group) { self.err = self.stderr.fileHandleForReading.readDataToEndOfFile() }
        }

        /// Writes `data` in 0.1-s pieces at `pace` × real time (nil: as fast as the recorder reads); stops early
        /// (returning the bytes written) when `stop` says so or the recorder is gone.
        @discardableResult
        func feed(_ data: Data, pace: Double?, stop: (Int) -> Bool = { _ in false }) -> Int {
            let piece = 3_200      // 0.1 s of 16 kHz s16le mono
            var written = 0
            let began = Date()
            let fd = stdin.fileHandleForWriting.fileDescriptor
            while written < data.count, !stop(written) {
                let n = min(piece, data.count - written)
                let ok = data.withUnsafeBytes { raw -> Bool in
                    var done = 0
                    while done < n {
                        let w = write(fd, raw.baseAddress! + written + done, n - done)
                        if w < 0 && errno == EINTR { continue }
                        if w <= 0 { return false }
                        done += w
                    }
                    return true
                }
                guard ok else { break }
                written += n
                if let pace {
                    let due = Double(written) / 32_000 / pace
                    let wait = due - Date().timeIntervalSince(began)
                    if wait > 0 { usleep(UInt32(wait * 1e6)) }
                }
            }
            return written
        }

        func closeInput() { try? stdin.fileHandleForWriting.close() }

        func wait() -> (status: Int32, reason: Process.TerminationReason, stdout: String, stderr: String) {
            process.waitUntilExit()
            group.wait()
            return (process.terminationStatus, process.terminationReason, String(decoding: out, as: UTF8.self),
                    String(decoding: err, as: UTF8.self))
        }
    }

    @Test func aNightFromStandardInputIsStoredAndPrinted() throws {
        let store = storePath()
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", store, "--start", Self.start, "--format", "json"],
                                    stdin: try Self.rawNight())
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let id = try #require(json["sessionId"] as? String)
        #expect(json["endTime"] as? String == "2026-01-01T22:03:00.000Z")
        #expect(json["utcOffset"] as? String == "+01:00")
        #expect(((json["events"] as? [Any])?.count ?? 0) >= 15, "\(json["events"] ?? "")")   // 15 snores and more
        // The same analysis as analyze gives on the same samples.
        let analyzed = try AnalyzeCommandTests.analyze([AnalyzeCommandTests.repo.appendingPathComponent("Fixtures/example-night.flac").path,
                                                        "--format", "json", "--start", Self.start])
        let events = { (s: String) in s.components(separatedBy: "\"events\"")[1].components(separatedBy: "\"statistics\"")[0] }
        #expect(events(analyzed.stdout) == events(r.stdout))
        // Stored: complete, and shown exactly as printed.
        let list = try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "json"])
        #expect(list.status == 0 && list.stdout.contains("\"state\": \"complete\"") && list.stdout.contains(id), "\(list.stdout)")
        let shown = try BuiltBinary.run(["sessions", "show", String(id.prefix(8)), "--store", store, "--format", "json"])
        #expect(shown.status == 0 && shown.stdout == r.stdout, "\(shown.stderr)")
        #expect(try NightStore(path: store).integrityCheck() == "ok")
    }

    /// SIGTERM, and SIGHUP (the terminal or the ssh session closed: it killed the recorder like `kill -9`, leaving
    /// the night interrupted and its last events lost).
    @Test(arguments: [SIGTERM, SIGHUP])
    func aStopSignalMidNightStoresACompleteResult(signal: Int32) throws {
        let store = storePath()
        let recorder = try Recorder(["record"] + Self.rawArgs + ["--store", store, "--start", Self.start, "--format", "json"])
        let data = try Self.rawNight()
        let began = Date()
        var listed: BuiltBinary.Run?
        recorder.feed(data, pace: 20) { written in
            // Reading the store while it records: the night is listed as recording, and the reader is not held up.
            if listed == nil, Date().timeIntervalSince(began) > 2 {
                listed = try? BuiltBinary.run(["sessions", "list", "--store", store, "--format", "json"])
            }
            // 80 s of the night (counted in bytes, not wall time: on a loaded machine the recorder reads slower).
            return written >= 80 * 32_000 && listed != nil
        }
        #expect(listed?.status == 0 && listed?.stdout.contains("\"state\": \"recording\"") == true, "\(listed?.stdout ?? "")")
        kill(recorder.process.processIdentifier, signal)
        recorder.closeInput()
        let r = recorder.wait()
        #expect(r.reason == .exit && r.status == 0, "\(r.status) \(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let nights = try NightStore(path: store).nights()
        #expect(nights.count == 1 && nights[0].state == .complete)
        #expect(json["endTime"] as? String == ISO8601Time.utcString(from: nights[0].endTime))
        #expect(nights[0].endTime.timeIntervalSince(Self.startDate) > 40)
    }

    /// The recorder is killed (`kill -9`) at 21 random moments of a paced feed and resumed each time: the store stays
    /// sound, at most 2 s of the analysed audio before each kill is lost (plus 0.25 s of scheduling delay at the 30×
    /// feed), and the final result equals an uninterrupted night's outside the windows around the interruptions: from
    /// 20 s before the journal's end (the
    /// events the detector had not decided yet) to 180 s after the audio came back (the producers warming up again:
    /// the detector's noise floor, its 90-s sustained-speech window and the echo rule's last 20 segments, which on a
    /// quiet stretch take longer than 90 s to gather — with 90 s a movement event 95 s after a resume differed about
    /// one run in three — and the breathing window).
    @Test func killedAndResumed21TimesTheNightSurvives() throws {
        let store = storePath()
        let data = try Self.rawNight(times: 12)         // 36 minutes: the 21 sessions end after about 18
        let bytesPerSecond = 32_000
        var rng = SystemRandomNumberGenerator()
        var offset = 0                                   // bytes of the night the next recorder starts at
        var windows: [(Double, Double)] = []
        var sessionId: String?
        for kill in 0...21 {
            var arguments = ["record"] + Self.rawArgs + ["--store", store, "--format", "json",
                "--start", ISO8601Time(date: Self.startDate.addingTimeInterval(Double(offset) / Double(bytesPerSecond)),
                                       utcOffsetSeconds: 3600).description]
            if kill > 0 { arguments.insert("--resume", at: 1) }
            let recorder = try Recorder(arguments)
            let remaining = data[offset...]
            if kill == 21 {
                recorder.feed(Data(remaining), pace: nil)
                recorder.closeInput()
                let r = recorder.wait()
                #expect(r.status == 0, "\(r.stderr)")
                let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
                #expect(json["sessionId"] as? String == sessionId)
                try compareWithUninterrupted(json, windows: windows)
                break
            }
            let runFor = Double.random(in: 0.8...2.5, using: &rng)       // seconds of wall time at 30× real time
            let began = Date()
            let fed = recorder.feed(Data(remaining), pace: 30) { _ in Date().timeIntervalSince(began) > runFor }
            Foundation.kill(recorder.process.processIdentifier, SIGKILL)
            recorder.closeInput()
            let r = recorder.wait()
            #expect(r.reason == .uncaughtSignal, "kill \(kill): \(r.stderr)")
            let s = try NightStore(path: store)
            #expect(try s.integrityCheck() == "ok", "kill \(kill)")
            let night = try #require(try s.nights().last)
            #expect(night.state == .interrupted, "kill \(kill)")
            sessionId = sessionId ?? night.id.uuidString
            #expect(night.id.uuidString == sessionId)
            let fedUntil = Double(offset + fed) / Double(bytesPerSecond)
            let journaled = night.endTime.timeIntervalSince(Self.startDate)
            // What was fed but not journaled: at most 2 s of audio (the pipe holds 0.13 s, a block 0.5 s, a chunk 0.5 s),
            // plus what a 30× feed gets ahead while a loaded machine holds the journal writer back for up to 0.35 s of
            // wall time (10.5 s of audio; in real time the same delay is 0.35 s of audio). The parallel test suites on
            // two cores held it back 0.11 s at times (5.4 s of lag against a 0.1-s allowance), and once 0.25 s in a
            // clean-clone CI run (9.6 s against a 0.25-s allowance).
            #expect(fedUntil - journaled <= 2.0 + 30 * 0.35, "kill \(kill): fed to \(fedUntil) s, journaled to \(journaled) s")
            // The next recorder starts a few seconds of audio later (the downtime).
            offset += fed + bytesPerSecond * Int.random(in: 1...5, using: &rng)
            offset -= offset % 2
            windows.append((journaled - 20, Double(offset) / Double(bytesPerSecond) + 180))
            if offset >= data.count - bytesPerSecond * 30 { offset = data.count - bytesPerSecond * 30 }
        }
    }

    /// A `--hr` path that cannot be read (missing, a folder) is one line and exit 66 before the night starts: no
    /// night is left in the store.
    @Test func anUnreadableWearablePathLeavesNoNight() throws {
        let store = storePath("hr-bad.sqlite")
        for path in [temp.path("missing.jsonl"), temp.url.path] {
            let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", store, "--hr", path], stdin: Data(count: 64_000))
            #expect(r.status == 66 && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        #expect(try NightStore(path: store).nights().isEmpty)
    }

    /// `record --hr` follows a wearable's JSON lines; with `--wearable-key` its readings are journaled encrypted, a
    /// killed night cannot be resumed (or read) without the key, and with it the night's heart session is whole.
    @Test func wearableReadingsAreFollowedAndEncryptedAtRest() throws {
        let store = storePath("wear.sqlite")
        let key = temp.path("wear.key"), wrong = temp.path("wrong.key")
        try Data((String(repeating: "ab", count: 32) + "\n").utf8).write(to: URL(fileURLWithPath: key))
        try Data(String(repeating: "cd", count: 32).utf8).write(to: URL(fileURLWithPath: wrong))
        // 9 minutes of beats (Unix times from the night's start), as a Bluetooth bridge would have appended them.
        var t = 0.0, lines = "", beat = 0
        while t < 540 {
            let rr = beat % 2 == 0 ? 960.0 : 1040.0
            beat += 1
            t += rr / 1000
            lines += "{\"timestamp\": \(Self.startDate.timeIntervalSince1970 + t), \"deviceId\": \"strap\", \"rrIntervals\": [\(rr)]}\n"
        }
        let hr = temp.path("hr.jsonl")
        try Data(lines.utf8).write(to: URL(fileURLWithPath: hr))
        let data = try Self.rawNight(times: 3)          // 9 minutes
        let args = ["record"] + Self.rawArgs + ["--store", store, "--format", "json", "--start", Self.start, "--hr", hr,
                                                "--wearable-key", key]
        let fed = try crash(args, feeding: data, seconds: 200)       // 200 s, then kill -9
        let s = try NightStore(path: store)
        let night = try #require(try s.nights().last)
        let journal = try s.journal(of: night.id).reduce(Data()) { $0 + $1.records }
        #expect(journal.count > 0)
        #expect(!String(decoding: journal, as: UTF8.self).contains("heartRate"))
        #expect(String(decoding: journal, as: UTF8.self).contains("sealed"))
        // Without the key (or with another) the night is not resumed; nothing is changed.
        for extra in [[String](), ["--wearable-key", wrong]] {
            let r = try BuiltBinary.run(["record", "--resume"] + Self.rawArgs + ["--store", store, "--hr", hr] + extra,
                                        stdin: Data())
            #expect(r.status != 0 && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
            #expect(r.stderr.contains("key") && !r.stderr.contains("unsupported configuration"), "\(r.stderr)")
            // A wrong key's line names the store, the night and the key file.
            if !extra.isEmpty {
                #expect(r.stderr.contains(store) && r.stderr.contains(night.id.uuidString) && r.stderr.contains(wrong),
                        "\(r.stderr)")
            }
        }
        #expect(try NightStore(path: store).nights().last?.state == .interrupted)
        let resumed = try Recorder(["record", "--resume"] + Self.rawArgs + ["--store", store, "--format", "json",
                                    "--start", ISO8601Time(date: Self.startDate.addingTimeInterval(Double(fed) / 32_000),
                                                           utcOffsetSeconds: 3600).description,
                                    "--hr", hr, "--wearable-key", key])
        resumed.feed(Data(data[fed...]), pace: nil)
        resumed.closeInput()
        let r = resumed.wait()
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let summary = try #require((json["heart"] as? [String: Any])?["summary"] as? [String: Any])
        // Every beat of the night once: those journaled before the kill and those read again after it are not doubled.
        #expect(abs((summary["rmssd_ms"] as? Double ?? 0) - 80) < 1, "\(summary)")
        #expect(abs(Double(summary["sample_count"] as? Int ?? 0) - 540) < 15, "\(summary)")
    }

    /// Events, breathing rates and stages outside the windows around the interruptions equal those of the same
    /// audio analysed without interruption.
    private func compareWithUninterrupted(_ json: [String: Any], windows: [(Double, Double)]) throws {
        let reference = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", storePath("reference.sqlite"),
                                             "--format", "json", "--start", Self.start],
                                            stdin: try Self.rawNight(times: 12))
        #expect(reference.status == 0, "\(reference.stderr)")
        let ref = try #require(try JSONSerialization.jsonObject(with: Data(reference.stdout.utf8)) as? [String: Any])
        let parse = ISO8601DateFormatter()
        parse.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func seconds(_ s: Any?) -> Double { (s as? String).flatMap { parse.date(from: $0) }.map { $0.timeIntervalSince(Self.startDate) } ?? -1 }
        func outside(_ a: Double, _ b: Double) -> Bool { !windows.contains { a < $0.1 && b > $0.0 } }
        typealias Event = (type: String, start: Double, end: Double)
        func events(_ j: [String: Any]) -> [Event] {
            (j["events"] as? [[String: Any]] ?? []).map { ($0["type"] as? String ?? "", seconds($0["start"]), seconds($0["end"])) }
                .filter { outside($0.start, $0.end) }
        }
        // The same events: each has one of its type overlapping it in the other night. The detector starts afresh at
        // a resume (its adaptive noise floor, its echo history), and its state converges towards the uninterrupted
        // one's without ever equalling it to the last bit: an event's ends may move by a frame, and an event on the
        // edge of its threshold (a snore's 0.3-s tail; the example night's faint 1.2-s movement at 22.7 s, which
        // came out differently in about one run in three even minutes after a resume) may be on one side only. The
        // night repeats the example 12 times, so such a borderline event recurs: its 1.1-s movement 18 s into each
        // repetition flips even between repetitions of the uninterrupted night, and one CI run had it on one side only
        // 5 times out of about 90 events. Up to 10 % of the events (at least 4) may be such, none longer than 2 s;
        // audio lost outside the windows would lose snores and talk, most of them longer (9 of the example's 15 snores).
        let mine = events(json), theirs = events(ref)
        func unmatched(_ a: [Event], _ b: [Event]) -> [Event] {
            a.filter { e in !b.contains { $0.type == e.type && $0.start < e.end && $0.end > e.start } }
        }
        let missing = unmatched(theirs, mine), extra = unmatched(mine, theirs)
        let describe = { (list: [Event]) in list.map { "\($0.type) \($0.start)–\($0.end) s" } }
        #expect((missing + extra).allSatisfy { $0.end - $0.start < 2 }
                    && missing.count + extra.count <= max(4, theirs.count / 10),
                "missing \(describe(missing)), extra \(describe(extra)) of \(theirs.count) events")
        let moved = mine.filter { e in theirs.contains { $0.type == e.type && abs($0.start - e.start) < 0.001 && abs($0.end - e.end) < 0.001 } }
        // 85 %: since segments are cut every 2 s inside long sounds, more event ends sit on a cut that can move by
        // a frame after a resume (78 of 87 alike in one CI run; 90 % held with 5-s cuts).
        #expect(Double(moved.count) >= 0.85 * Double(mine.count), "\(moved.count) of \(mine.count) events exactly alike")
        #expect(mine.count >= 20, "only \(mine.count) events outside the windows")
        func rates(_ j: [String: Any]) -> [String] {
            (j["breathingRates"] as? [[String: Any]] ?? []).filter { outside(seconds($0["timestamp"]) - 30, seconds($0["timestamp"]) + 30) }
                .map { "\($0["timestamp"]!) \($0["bpm"]!)" }
        }
        #expect(rates(json) == rates(ref))
    }

    /// Runs `arguments`, feeds it `data` at 30× real time until `seconds` of it are in, then `kill -9`s it: a crash.
    /// Returns the bytes fed.
    @discardableResult
    func crash(_ arguments: [String], feeding data: Data, seconds: Int) throws -> Int {
        let recorder = try Recorder(arguments)
        let fed = recorder.feed(data, pace: 30) { $0 >= 32_000 * seconds }
        #expect(fed >= 32_000 * seconds)
        Thread.sleep(forTimeInterval: 1)
        Foundation.kill(recorder.process.processIdentifier, SIGKILL)
        recorder.closeInput()
        #expect(recorder.wait().reason == .uncaughtSignal)
        return fed
    }

    /// Where the store's last night's journal ends: seconds from `startDate`, and that time as a `--start`.
    func journalEnd(_ store: String) throws -> (seconds: Double, start: String) {
        let seconds = try #require(try NightStore(path: store).nights().last).endTime.timeIntervalSince(Self.startDate)
        return (seconds, ISO8601Time(date: Self.startDate.addingTimeInterval(seconds), utcOffsetSeconds: 3600).description)
    }

    /// A night's --duration end and --alarm-command survive a crash: a plain `record --resume` (docs/raspberry-pi.md's
    /// unit) ran on past the end, and the alarm rang (`smartAlarm`) without its command. Past the end, the resume
    /// stores the night as the journal left it.
    @Test func aResumedNightKeepsItsDurationAndAlarmCommand() throws {
        let store = storePath("kept.sqlite"), log = storePath("alarm.log")
        let night = try Self.rawNight()
        try crash(["record"] + Self.rawArgs + ["--store", store, "--start", Self.start, "--duration", "3m",
                   "--alarm", "23:02", "--alarm-window", "1m",
                   "--alarm-command", "echo \"$SLEEPCYCLE_ALARM_RULE\" >> '\(log)'"], feeding: night, seconds: 40)
        let (journaled, back) = try journalEnd(store)
        var rest = Data(night[(Int(journaled * 16_000) * 2)...])
        rest.append(Data(count: 32_000 * 60))
        let arguments: [String] = ["record", "--resume"] + Self.rawArgs + ["--store", store, "--format", "json", "--start", back]
        let resumed = try BuiltBinary.run(arguments, stdin: rest)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any])
        #expect(json["endTime"] as? String == "2026-01-01T22:03:00.000Z", "\(json["endTime"] ?? "")")
        #expect((json["smartAlarm"] as? [String: Any])?["firedAt"] != nil)
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1, "the alarm command ran \(lines.count) times")
        // Past its end the night is stored as it was; --alarm-command is refused for a night without an alarm.
        let other = storePath("over.sqlite")
        try crash(["record"] + Self.rawArgs + ["--store", other, "--start", Self.start, "--duration", "1m"],
                  feeding: night, seconds: 20)
        let refused = try BuiltBinary.run(["record", "--resume"] + Self.rawArgs + ["--store", other, "--alarm-command", "true"],
                                          stdin: Data(count: 32_000))
        #expect(refused.status == 64 && refused.stderr.contains("has no alarm"), "\(refused.stderr)")
        let late = try BuiltBinary.run(["record", "--resume"] + Self.rawArgs + ["--store", other, "--format", "json", "--start",
                                        ISO8601Time(date: Self.startDate.addingTimeInterval(600), utcOffsetSeconds: 3600).description],
                                       stdin: Data(count: 32_000 * 10))
        #expect(late.status == 0, "\(late.stderr)")
        let stored = try #require(try NightStore(path: other).nights().last)
        #expect(stored.state == .complete && stored.endTime.timeIntervalSince(Self.startDate) < 60)
    }

    /// `--clips` across a crash: every event of the chosen types has its clip or is counted, with its reason, in
    /// `clipsDropped`. The clips still to be written at the crash, and the talking event held at it and decided on
    /// resume, went missing without a word.
    @Test func clipsTheCrashTookAreCountedAsDropped() throws {
        let store = storePath("clips.sqlite"), clips = temp.path("clips")
        let night = try Self.rawNight()
        try crash(["record"] + Self.rawArgs + ["--store", store, "--start", Self.start, "--clips", clips],
                  feeding: night, seconds: 150)
        let (journaled, back) = try journalEnd(store)
        let rest = Data(night[(Int(journaled * 16_000) * 2)...])
        let resumed = try BuiltBinary.run(["record", "--resume"] + Self.rawArgs + ["--store", store, "--format", "json",
                                           "--start", back], stdin: rest)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any])
        let events = json["events"] as? [[String: Any]] ?? []
        let unclipped = events.filter { ["snoring", "talking", "coughing"].contains($0["type"] as? String ?? "") && $0["clip"] == nil }
        #expect(events.contains { $0["type"] as? String == "talking" }, "the held talking event is kept")
        let warning = (json["warnings"] as? [[String: Any]] ?? []).first { $0["code"] as? String == "clipsDropped" }
        let message = warning?["message"] as? String ?? ""
        #expect(!unclipped.isEmpty && message.hasPrefix("\(unclipped.count) event(s) of the chosen types have no audio clip"),
                "\(unclipped.count) without a clip: \(message)")
        #expect(message.contains("decided after the recording was interrupted"), "\(message)")
    }

    /// The per-type limit and the size cap hold across a crash: the resumed run counts the clips written before it
    /// (it started from nothing, and a night ended with 4 snoring clips for `--clips-per-type 2`), and the files on
    /// disk are the clips the result names.
    @Test func clipLimitsHoldAcrossAResume() throws {
        let night = try Self.rawNight()
        for (name, limit) in [("per-type", ["--clips-per-type", "2"]), ("size", ["--clips-max-size", "500000"])] {
            let store = storePath("\(name).sqlite"), clips = temp.path("clips-\(name)")
            try crash(["record"] + Self.rawArgs + ["--store", store, "--start", Self.start, "--clips", clips] + limit,
                      feeding: night, seconds: 90)
            let (journaled, back) = try journalEnd(store)
            let resumed = try BuiltBinary.run(["record", "--resume"] + Self.rawArgs + ["--store", store, "--format", "json",
                                               "--start", back], stdin: Data(night[(Int(journaled * 16_000) * 2)...]))
            #expect(resumed.status == 0, "\(resumed.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(resumed.stdout.utf8)) as? [String: Any])
            let named = (json["events"] as? [[String: Any]] ?? []).compactMap { e in
                (e["clip"] as? String).map { (type: e["type"] as? String ?? "", path: $0) }
            }
            let files = (FileManager.default.enumerator(atPath: clips)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".flac") }
            #expect(Set(files) == Set(named.map(\.path)), "\(name): files \(files.sorted()) named \(named.map(\.path).sorted())")
            if name == "per-type" {
                #expect(Dictionary(grouping: named, by: \.type).values.allSatisfy { $0.count <= 2 }, "\(named)")
            } else {
                let bytes = files.reduce(0) { total, file in
                    total + ((try? FileManager.default.attributesOfItem(atPath: clips + "/" + file)[.size] as? Int) ?? 0)
                }
                #expect(bytes <= 500_000 && !files.isEmpty, "\(bytes) bytes of clips")
            }
        }
    }

    /// An alarm command that fails is a silent alarm: the recorder says so (it said nothing).
    @Test func aFailingAlarmCommandIsAWarning() throws {
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", storePath("fail.sqlite"), "--start", Self.start,
                                     "--alarm", "23:01", "--alarm-window", "1m", "--alarm-command", "exit 3"],
                                    stdin: Data(count: 32_000 * 240))
        #expect(r.status == 0 && r.stderr.contains("the alarm command exited with status 3"), "\(r.status) \(r.stderr)")
    }

    /// A --start days after the interrupted night's last audio is refused (the gap would be analysed as missing
    /// input for minutes, and it is another night); one before it is a warning.
    @Test func resumeTimesAreChecked() throws {
        let store = storePath("times.sqlite")
        try crash(["record"] + Self.rawArgs + ["--store", store, "--start", Self.start], feeding: try Self.rawNight(),
                  seconds: 40)
        func resume(at offset: Double) throws -> BuiltBinary.Run {
            try BuiltBinary.run(["record", "--resume"] + Self.rawArgs + ["--store", store, "--start",
                                 ISO8601Time(date: Self.startDate.addingTimeInterval(offset), utcOffsetSeconds: 3600).description],
                                stdin: Data(count: 32_000 * 5))
        }
        let late = try resume(at: 3 * 86_400)
        #expect(late.status == 64 && late.stderr.split(separator: "\n").count == 1 && late.stderr.contains("48 h"),
                "\(late.status) \(late.stderr)")
        #expect(try NightStore(path: store).nights().last?.state == .interrupted)
        // `list` gives an interrupted night's duration so far (its source was stored with 0 when it began).
        let listed = try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "json"])
        let night = try #require((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])?.last)
        let duration = try #require((night["source"] as? [String: Any])?["durationSec"] as? Double)
        #expect(night["state"] as? String == "interrupted" && duration > 30, "\(night)")
        let early = try resume(at: -3600)
        #expect(early.status == 0 && early.stderr.contains("is before night"), "\(early.status) \(early.stderr)")
    }

    @Test func durationStopsTheNight() throws {
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", storePath(), "--format", "json", "-v",
                                     "--start", Self.start, "--duration", "30s"], stdin: try Self.rawNight())
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let end = try #require(json["endTime"] as? String)
        // The source itself ends at the limit: exactly 30 s of audio, however loaded the machine.
        #expect(end == "2026-01-01T22:00:30.000Z", "\(end)")
        #expect(r.stderr.contains("stopping: --duration reached"), "\(r.stderr)")
        // Samples replaced before the limit are still reported: the limit ends the input as its own end would.
        var floats = [Float](repeating: 0.01, count: 16_000 * 10)
        for i in stride(from: 8_000, to: 16_000 * 4, by: 16_000) { floats[i] = .nan }
        let bad = floats.withUnsafeBytes { Data($0) }
        let limited = try BuiltBinary.run(["record", "--input", "-", "--input-format", "f32le", "--store", storePath("nan.sqlite"),
                                           "--format", "json", "--duration", "5s"], stdin: bad)
        #expect(limited.status == 0, "\(limited.stderr)")
        let warned = try #require(try JSONSerialization.jsonObject(with: Data(limited.stdout.utf8)) as? [String: Any])
        let codes = (warned["warnings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(codes.contains("invalidSamples") && limited.stderr.contains("replaced by silence"), "\(codes) \(limited.stderr)")
    }

    @Test func storeProblemsAreOneLineBeforeCapture() throws {
        let file = temp.path("plain")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", file + "/a/nights.sqlite"], stdin: try Self.rawNight())
        #expect(r.status == 73 && r.stderr.split(separator: "\n").count == 1, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("cannot create its folder") && r.stderr.contains("(a file is in the way)")
                && !r.stderr.contains("operation could not be completed"), "\(r.stderr)")
        // A second recorder on the same store is refused at once; the first is not disturbed.
        let store = storePath()
        let first = try Recorder(["record"] + Self.rawArgs + ["--store", store, "--format", "json"])
        first.feed(try Self.rawNight(), pace: 50) { $0 > 32_000 * 20 }
        let second = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", store], stdin: Data(count: 64_000))
        #expect(second.status == 75 && second.stderr.contains("another recorder"), "\(second.status) \(second.stderr)")
        // Also through a hard or a symbolic link to the store (the lock file goes by name; the store itself is locked).
        let hard = storePath("hard.sqlite"), soft = storePath("soft.sqlite")
        #expect(link(store, hard) == 0 && symlink(store, soft) == 0)
        for other in [hard, soft] {
            let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", other], stdin: Data(count: 64_000))
            #expect(r.status == 75 && r.stderr.contains("under another name"), "\(other): \(r.status) \(r.stderr)")
        }
        // A size cap that is not a number of bytes is a usage error, not silently no cap (or a cap of nothing).
        for cap in ["abc", "1e3", "-1"] {
            let r = try BuiltBinary.shell("SLEEPCYCLE_STORE_MAX_BYTES=\(cap) exec \"$0\" record --input - --store '\(storePath("capped.sqlite"))' < /dev/null")
            #expect(r.status == 64 && r.stderr.contains("SLEEPCYCLE_STORE_MAX_BYTES='\(cap)' is not a size"), "\(cap): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: storePath("capped.sqlite")))
        // So is a --resume meanwhile: the night being recorded is not interrupted, the store is busy.
        let resume = try BuiltBinary.run(["record", "--resume"] + Self.rawArgs + ["--store", store], stdin: Data(count: 64_000))
        #expect(resume.status == 75 && resume.stderr.contains("being recorded by another recorder"),
                "\(resume.status) \(resume.stderr)")
        first.closeInput()
        #expect(first.wait().status == 0)
        // An input that ends at once: nothing recorded, nothing stored.
        let empty = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", storePath("empty.sqlite")], stdin: Data([1]))
        #expect(empty.status == 66 && empty.stderr.contains("no audio was recorded"), "\(empty.status) \(empty.stderr)")
        #expect(try NightStore(path: storePath("empty.sqlite")).nights().isEmpty)
        // Without --start the night is in the machine's offset as the C library reads TZ, POSIX zone strings too
        // (`UTC+14` is 14 h behind UTC; Foundation read it as +14:00, and `CET-1CEST,…` as UTC).
        for (zone, offset) in [("UTC+14", "-14:00"), ("CET-1CEST,M3.5.0,M10.5.0/3", nil), ("UTC", "+00:00")] {
            let tz = try BuiltBinary.shell("head -c 32000 /dev/zero | TZ='\(zone)' \"$0\" record " + Self.rawArgs.joined(separator: " ")
                + " --store '\(storePath("tz.sqlite"))' --no-status --format json")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(tz.stdout.utf8)) as? [String: Any], "\(tz.stderr)")
            let expected = offset ?? (TimeZone(identifier: "Europe/Paris")!.secondsFromGMT() == 7200 ? "+02:00" : "+01:00")
            #expect(json["utcOffset"] as? String == expected, "TZ=\(zone): \(json["utcOffset"] ?? "")")
        }
        // Standard input closed (`<&-`): the first read fails; no night is left behind for `--resume` to pick.
        let closedStore = storePath("closed.sqlite")
        let closed = try BuiltBinary.shell("\"$0\" record --input - --store '\(closedStore)' --no-status <&-")
        #expect(closed.status == 66 && closed.stderr.split(separator: "\n").count == 1, "\(closed.status) \(closed.stderr)")
        #expect(try NightStore(path: closedStore).nights().isEmpty)
        // An audio file given as raw PCM (a FLAC file was 83 s of noise and exit 0): one line, 65, no night.
        let fileStore = storePath("file.sqlite")
        let flac = AnalyzeCommandTests.repo.appendingPathComponent("Fixtures/example-night.flac").path
        let given = try BuiltBinary.run(["record", "--input", flac, "--store", fileStore, "--clips", temp.path("fileclips"),
                                         "--no-status"])
        #expect(given.status == 65 && given.stderr.split(separator: "\n").count == 1
                && given.stderr.contains("example-night.flac: is a FLAC file, not headerless PCM"), "\(given.stderr)")
        #expect(given.stdout.isEmpty)
        // A file is looked at before anything is made: no store, no clips folder.
        #expect(!FileManager.default.fileExists(atPath: fileStore) && !FileManager.default.fileExists(atPath: temp.path("fileclips")))
        // Through a pipe the first bytes are the first audio: refused then, with nothing stored.
        let piped = try BuiltBinary.run(["record", "--input", "-", "--store", fileStore, "--no-status"],
                                        stdin: try Data(contentsOf: URL(fileURLWithPath: flac)))
        #expect(piped.status == 65 && piped.stderr.contains("-: is a FLAC file"), "\(piped.stderr)")
        #expect(try NightStore(path: fileStore).nights().isEmpty)
        // No interrupted night: --resume is a one-line error.
        let none = try BuiltBinary.run(["record", "--resume"] + Self.rawArgs + ["--store", store], stdin: Data(count: 64_000))
        #expect(none.status == 66 && none.stderr.contains("no interrupted night"), "\(none.status) \(none.stderr)")
    }

    /// A full disk (the store's size limit, which SQLite reports like a full disk): the night goes on in memory,
    /// the result is printed with a warning, the exit status says it was not stored, and the store stays sound.
    @Test func aFullStoreKeepsTheNightInMemory() throws {
        let store = storePath()
        let p = Process()
        p.executableURL = BuiltBinary.url
        p.arguments = ["record"] + Self.rawArgs + ["--store", store, "--format", "json", "--start", Self.start]
        p.environment = ProcessInfo.processInfo.environment.merging(["SLEEPCYCLE_STORE_MAX_BYTES": "65536"]) { $1 }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        p.standardInput = input; p.standardOutput = output; p.standardError = errors
        try p.run()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async { errData = errors.fileHandleForReading.readDataToEndOfFile() }
        try input.fileHandleForWriting.write(contentsOf: try Self.rawNight(times: 4))
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let stderr = String(decoding: errData, as: UTF8.self)
        #expect(p.terminationStatus == 74, "\(stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: out) as? [String: Any])
        let codes = (json["warnings"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(codes.contains("notStored"), "\(codes)")
        #expect(try NightStore(path: store).integrityCheck() == "ok")
    }

    @Test func sessionsCommandsOnAStore() throws {
        let store = storePath()
        for start in ["2026-01-01T23:00:00+01:00", "2026-01-02T23:00:00+01:00"] {
            let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", store, "--start", start, "--duration", "60s"],
                                        stdin: try Self.rawNight())
            #expect(r.status == 0, "\(r.stderr)")
        }
        let list = try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "json"])
        let nights = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(nights.count == 2 && nights.allSatisfy { $0["state"] as? String == "complete" && $0["statistics"] is [String: Any] })
        let csv = try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "csv"])
        #expect(csv.stdout.split(separator: "\n").count == 3 && csv.stdout.hasPrefix("session_id,start_time"))
        let text = try BuiltBinary.run(["sessions", "list", "--store", store])
        #expect(text.stdout.contains("2026-01-02 23:00") && text.stdout.contains("complete"), "\(text.stdout)")
        let first = try #require(nights.first?["sessionId"] as? String)
        let out = temp.path("night.json")
        let export = try BuiltBinary.run(["sessions", "export", first, "--store", store, "--output", out])
        let exported = try String(contentsOfFile: out, encoding: .utf8)
        #expect(export.status == 0 && exported.contains(first))
        let textShow = try BuiltBinary.run(["sessions", "show", first, "--store", store])
        // `--duration` ends the source at exactly 60 s of audio: the text shows that end in the night's offset.
        #expect(nights.first?["endTime"] as? String == "2026-01-01T22:01:00.000Z", "\(nights.first?["endTime"] ?? "")")
        #expect(textShow.stdout.contains("recording   23:00:00 → 23:01:00 UTC+01:00"), "\(textShow.stdout)")
        #expect(try BuiltBinary.run(["sessions", "show", "ZZZ", "--store", store]).status == 64)
        // A well-formed id that names no night: the night asked for is missing (66), and the message quotes it.
        let missing = try BuiltBinary.run(["sessions", "show", "00000000", "--store", store])
        #expect(missing.status == 66 && missing.stderr.contains("no night '00000000' in "), "\(missing.stderr)")
        let empty = try BuiltBinary.run(["sessions", "show", "", "--store", store])
        #expect(empty.status == 64 && empty.stderr.contains("(an empty session id) names no night"), "\(empty.stderr)")
        #expect(try BuiltBinary.run(["sessions", "delete", first, "--store", store]).status == 0)
        let pruned = try BuiltBinary.run(["sessions", "prune", "--older-than", "1d", "--store", store])
        #expect(pruned.status == 0 && pruned.stdout.split(separator: "\n").count == 1)
        #expect(try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "json"]).stdout == "[]\n")
        #expect(try BuiltBinary.run(["sessions", "list", "--store", temp.path("none.sqlite")]).stdout == "no nights stored\n")
    }

    /// Another program's database given as the store is refused by every command (exit 65) and left byte for
    /// byte as it was, even one with a table named `night`. For the commands that only read, a missing path and an
    /// empty file hold no nights and stay as they are; a recorder makes its store in the empty file.
    @Test func filesThatAreNotStoresAreLeftAlone() throws {
        for (name, sql) in [("bookmarks.sqlite", "CREATE TABLE bookmarks(u)"), ("own-night.sqlite", "CREATE TABLE night(u)")] {
            let path = storePath(name)
            try DatabaseQueue(path: path).write { try $0.execute(sql: sql) }
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            for command in [["sessions", "list"], ["sessions", "report", "--format", "csv"], ["sessions", "show", "0"],
                            ["sessions", "prune", "--older-than", "1d"], ["record"] + Self.rawArgs + ["--duration", "5s"]] {
                let r = try BuiltBinary.run(command + ["--store", path], stdin: command[0] == "record" ? try Self.rawNight() : nil)
                #expect(r.status == 65, "\(command) \(r.status) \(r.stderr)")
                #expect(r.stderr == "\(path): not a sleepcycle store (it holds other tables); nothing was changed\n", "\(command)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(name) changed")
            #expect(try FileManager.default.contentsOfDirectory(atPath: temp.url.path).filter { $0.hasPrefix(name) } == [name])
        }
        // A file that is not a database at all: the same, for the writing command too (its content is wrong, not
        // its permissions).
        let notes = storePath("notes.txt")
        let text = Data(String(repeating: "not a database, just someone's notes\n", count: 40).utf8)
        try text.write(to: URL(fileURLWithPath: notes))
        for command in [["sessions", "list"], ["sessions", "show", "0"], ["sessions", "report"], ["record"] + Self.rawArgs] {
            let r = try BuiltBinary.run(command + ["--store", notes], stdin: command[0] == "record" ? try Self.rawNight() : nil)
            #expect(r.status == 65 && r.stderr == "\(notes): is not a sleepcycle store (not an SQLite database)\n",
                    "\(command) \(r.status) \(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: notes)) == text)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.url.path).filter { $0.hasPrefix("notes") } == ["notes.txt"])
        let empty = storePath("empty.sqlite"), missing = storePath("missing.sqlite")
        _ = FileManager.default.createFile(atPath: empty, contents: nil)
        for path in [empty, missing] {
            let list = try BuiltBinary.run(["sessions", "list", "--store", path])
            #expect(list.status == 0 && list.stdout == "no nights stored\n", "\(list.stderr)")
            let report = try BuiltBinary.run(["sessions", "report", "--format", "csv", "--store", path])
            #expect(report.status == 0 && report.stdout.split(separator: "\n").count == 1, "\(report.stderr)")
            let show = try BuiltBinary.run(["sessions", "show", "0", "--store", path])
            #expect(show.status == 66 && show.stderr.contains("no store here yet"), "\(show.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: missing))
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", empty, "--duration", "5s"], stdin: try Self.rawNight())
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try NightStore(path: empty).nights().count == 1)
    }

    /// A store the user may only read (someone else's, a backup on read-only media): the commands that only read
    /// work and change nothing, not even beside the store; a deleting command is refused with 73.
    @Test func aStoreTheUserMayOnlyReadCanBeRead() throws {
        let folder = temp.path("readonly")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/nights.sqlite"
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", path, "--duration", "5s"], stdin: try Self.rawNight())
        #expect(r.status == 0, "\(r.stderr)")
        // The store as a recorder that ended and was checkpointed leaves it, without SQLite's write-ahead log and
        // shared-memory files (a reader may not make them). The one connection is closed before they are removed:
        // removing them under an open connection (a store object not yet released) would lose what it holds.
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        let id = try #require(try queue.read { try String.fetchOne($0, sql: "SELECT id FROM night") })
        try queue.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix("-shm") || name.hasSuffix("-wal") {
            try FileManager.default.removeItem(atPath: folder + "/" + name)
        }
        // The test's own folder too: it may have been made while another test's store had set umask 077.
        chmod(temp.url.path, 0o755); chmod(path, 0o644); chmod(path + ".lock", 0o644); chmod(folder, 0o555)
        defer { chmod(folder, 0o755) }
        let listed = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let list = try runAsNobody(["sessions", "list", "--store", path, "--format", "csv"]) else { return }
        #expect(list.status == 0 && list.stdout.contains(id), "\(list.stderr)")
        let show = try runAsNobody(["sessions", "show", String(id.prefix(8)), "--store", path, "--format", "json"])
        #expect(show?.status == 0 && show?.stdout.contains(id) == true, "\(show?.stderr ?? "")")
        let report = try runAsNobody(["sessions", "report", "--format", "csv", "--store", path])
        #expect(report?.status == 0 && report?.stdout.contains(id) == true, "\(report?.stderr ?? "")")
        let delete = try runAsNobody(["sessions", "delete", id, "--store", path])
        #expect(delete?.status == 73 && delete?.stderr.split(separator: "\n").count == 1, "\(delete?.stderr ?? "")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == listed)
        // A store in a folder the user may not enter is an error, not "no nights stored".
        chmod(folder, 0o700)
        let hidden = try runAsNobody(["sessions", "list", "--store", path])
        #expect(hidden?.status == 66 && hidden?.stderr == "\(path): permission denied\n", "\(hidden?.stderr ?? "")")
    }

    /// A new store at `path` with one night begun (state `recording`, no journal).
    static func storeWithANightBegun(at path: String) throws -> (NightStore, UUID) {
        let id = UUID()
        let store = try NightStore(path: path)
        try store.beginNight(id: id, startTime: Date(timeIntervalSince1970: 1_767_304_800), utcOffsetSeconds: 0,
                             source: Data("{}".utf8), header: Data("{}".utf8))
        return (store, id)
    }

    /// A backup of a store copied with its write-ahead log but not its shared-memory file (`-shm` is transient), on
    /// read-only media: an interrupted night lives in the log until a checkpoint, and the immutable main file alone
    /// listed "no nights stored". It is read from a private copy of both, which is removed afterwards.
    @Test func aReadOnlyBackupWithItsLogButNoSharedMemoryIsRead() throws {
        let original = temp.path("live.sqlite")
        let (store, id) = try Self.storeWithANightBegun(at: original)
        let folder = temp.path("backup")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/nights.sqlite"
        try FileManager.default.copyItem(atPath: original, toPath: path)
        try FileManager.default.copyItem(atPath: original + "-wal", toPath: path + "-wal")
        withExtendedLifetime(store) {}
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + "-wal")).count > 0)
        chmod(temp.url.path, 0o755); chmod(path, 0o644); chmod(path + "-wal", 0o644); chmod(folder, 0o555)
        defer { chmod(folder, 0o755) }
        let tmp = temp.path("tmp")
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        chmod(tmp, 0o777)
        guard let list = try runAsNobody(["sessions", "list", "--store", path, "--format", "csv"],
                                         environment: ["TMPDIR": tmp]) else { return }
        #expect(list.status == 0 && list.stdout.contains(id.uuidString), "\(list.stdout) \(list.stderr)")
        // Through a link to it: SQLite keeps the log beside the file the link names.
        let link = temp.path("backup-link.sqlite")
        #expect(symlink(path, link) == 0)
        let linked = try runAsNobody(["sessions", "list", "--store", link, "--format", "csv"], environment: ["TMPDIR": tmp])
        #expect(linked?.status == 0 && linked?.stdout.contains(id.uuidString) == true, "\(linked?.stderr ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["nights.sqlite", "nights.sqlite-wal"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp).isEmpty, "the private copy is removed")
    }

    /// A read-only backup written by the build before the clips index named its store (schema v2): the readers
    /// need nothing v3 added, so it is read as it is rather than refused for want of an upgrade it cannot take.
    @Test func aReadOnlyBackupOfTheLastSchemaIsReadAsItIs() throws {
        let folder = temp.path("v2")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/nights.sqlite"
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", path, "--duration", "2s"],
                                    stdin: Data(count: 32_000 * 3))
        #expect(r.status == 0, "\(r.stderr)")
        let id = try #require(try NightStore(path: path).nights().first?.id)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "ALTER TABLE clip DROP COLUMN store")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v3:%'")
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
        }
        try? FileManager.default.removeItem(atPath: path + ".lock")
        chmod(temp.url.path, 0o755); chmod(path, 0o644); chmod(folder, 0o555)
        defer { chmod(folder, 0o755) }
        guard let list = try runAsNobody(["sessions", "list", "--store", path, "--format", "csv"]) else { return }
        #expect(list.status == 0 && list.stdout.contains(id.uuidString), "\(list.stdout) \(list.stderr)")
        let show = try runAsNobody(["sessions", "show", String(id.uuidString.prefix(8)), "--store", path, "--format", "html"])
        #expect(show?.status == 0 && show?.stdout.contains("<html") == true, "\(show?.stderr ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["nights.sqlite"])
    }

    /// `sessions delete` and `prune` through a symbolic or hard link to a store being recorded under its own name:
    /// refused (75), the night and the store intact. Through a link they deleted the night being recorded (and
    /// through a hard link, whose write-ahead log is its own, damaged the store).
    @Test func aStoreRecordedUnderAnotherNameIsNotDeletedThroughALink() throws {
        let path = temp.path("live.sqlite")
        let (store, id) = try Self.storeWithANightBegun(at: path)
        let lock = try store.lockForRecording()
        lock.recording(id)
        // Checkpointed, as a recorder's store is every few minutes: the file itself then holds the night.
        try DatabaseQueue(path: path).writeWithoutTransaction { try $0.checkpoint(.truncate) }
        let soft = temp.path("soft.sqlite"), hard = temp.path("hard.sqlite")
        #expect(symlink(path, soft) == 0 && link(path, hard) == 0)
        for name in [soft, hard] {
            for command in [["sessions", "delete", id.uuidString], ["sessions", "prune", "--older-than", "0s"]] {
                let r = try BuiltBinary.run(command + ["--store", name])
                #expect(r.status == 75 && r.stderr.contains("under another name"), "\(command) \(name): \(r.status) \(r.stderr)")
            }
        }
        // Nothing else opens it through the hard link either (opening it to write left a frame in a log of its own,
        // which damaged the store once the recorder had gone), nor reads through it (it missed the night being
        // recorded); through the symbolic link, which SQLite resolves to the recorder's own file, reading is fine.
        for command in [["record"] + Self.rawArgs, ["sessions", "list"], ["sessions", "show", id.uuidString]] {
            let r = try BuiltBinary.run(command + ["--store", hard], stdin: Data(count: 32_000))
            #expect(r.status == 75 && r.stderr.contains("a hard link to it"), "\(command): \(r.status) \(r.stderr)")
        }
        let wal = (try? FileManager.default.attributesOfItem(atPath: hard + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "\(wal) bytes of log beside the hard link")
        let listed = try BuiltBinary.run(["sessions", "list", "--store", soft])
        #expect(listed.status == 0 && listed.stdout.contains(id.uuidString) && listed.stdout.contains("recording"),
                "\(listed.stdout) \(listed.stderr)")
        #expect(try store.nights().map(\.id) == [id])
        lock.release()
    }

    /// A store named by one character in the current folder (`--store x`): Foundation's path code trapped (SIGILL).
    @Test func aOneCharacterStoreName() throws {
        let folder = temp.path("one")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", "x", "--duration", "2s"],
                                    stdin: Data(count: 32_000 * 3), directory: URL(fileURLWithPath: folder))
        #expect(r.status == 0, "\(r.status) \(r.stderr)")
        #expect(try NightStore(path: folder + "/x").nights().count == 1)
    }

    /// Nights changed outside sleepcycle never crash a command: each is one line naming the store and the night.
    /// `sessions list` and `report` warn and go on with the other nights; `show`, `export` and `record --resume`
    /// refuse it (65); `delete` removes it.
    @Test func damagedNightsAreSkippedOrRefused() throws {
        let store = storePath()
        let recorded = try BuiltBinary.run(["record"] + Self.rawArgs + ["--store", store, "--start", Self.start, "--duration", "30s"],
                                           stdin: try Self.rawNight())
        #expect(recorded.status == 0, "\(recorded.stderr)")
        let good = try #require(try NightStore(path: store).nights().first?.id.uuidString)
        let ids = (0..<6).map { _ in UUID().uuidString }
        try DatabaseQueue(path: store).write { db in
            for id in ids {
                try db.execute(sql: "INSERT INTO night SELECT ?, startTime, endTime, utcOffsetSeconds, state, source, statistics, "
                               + "header, result, updatedAt FROM night WHERE id = ?", arguments: [id, good])
            }
            // Times no night has (`sessions list` trapped converting the length to Int).
            try db.execute(sql: "UPDATE night SET startTime = 1e308, endTime = -1e308 WHERE id = ?", arguments: [ids[0]])
            // A result starting in 1900 (the per-epoch table of `show --format csv` was sized by the 126 years).
            let result = try #require(try Data.fetchOne(db, sql: "SELECT result FROM night WHERE id = ?", arguments: [ids[1]]))
            var json = try #require(try JSONSerialization.jsonObject(with: result) as? [String: Any])
            json["startTime"] = "1900-01-01T00:00:00Z"
            try db.execute(sql: "UPDATE night SET result = ? WHERE id = ?",
                           arguments: [try JSONSerialization.data(withJSONObject: json), ids[1]])
            // A result that is not JSON (an internal error, exit 70, that stopped the whole report).
            try db.execute(sql: "UPDATE night SET result = X'00FFFE' WHERE id = ?", arguments: [ids[2]])
            // A sleep time no Int holds, in the statistics the text list shows (it trapped).
            try db.execute(sql: "UPDATE night SET statistics = '{\"totalSleepDuration\": 1e300}' WHERE id = ?", arguments: [ids[3]])
            // An interrupted night whose resume header is not JSON.
            try db.execute(sql: "UPDATE night SET state = 'recording', result = NULL, header = X'00' WHERE id = ?",
                           arguments: [ids[4]])
            // An interrupted night whose header has a frame length no pipeline takes (an internal error, exit 70).
            let header = try #require(try Data.fetchOne(db, sql: "SELECT header FROM night WHERE id = ?", arguments: [ids[5]]))
            var settings = try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any])
            settings["frameLength"] = 0
            try db.execute(sql: "UPDATE night SET state = 'recording', result = NULL, header = ? WHERE id = ?",
                           arguments: [try JSONSerialization.data(withJSONObject: settings), ids[5]])
        }
        func damaged(_ id: String, _ problem: String) -> String { "\(store): night \(id) is damaged (\(problem)" }

        let list = try BuiltBinary.run(["sessions", "list", "--store", store])
        #expect(list.status == 0 && list.stderr == "warning: " + damaged(ids[0], "its start or end time is out of range")
                + "); skipped\n", "\(list.status) \(list.stderr)")
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 7 && !list.stdout.contains(ids[0]), "\(list.stdout)")
        #expect(lines.first { $0.hasPrefix(ids[3]) }?.hasSuffix("complete     –") == true, "\(list.stdout)")
        let json = try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "json"])
        #expect(try (JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [Any])?.count == 6)

        for (id, problem) in [(ids[0], "its start or end time is out of range"), (ids[1], "its result lasts more than 31 days"),
                              (ids[2], "its result cannot be read"), (ids[4], "its resume header cannot be read"),
                              (ids[5], "its resume header's settings are invalid: frame length must be")] {
            for command in ["show", "export"] {
                let r = try BuiltBinary.run(["sessions", command, id, "--store", store, "--format", "csv"])
                #expect(r.status == 65 && r.stderr.hasPrefix(damaged(id, problem)), "\(command) \(r.status) \(r.stderr)")
                #expect(r.stderr.split(separator: "\n").count == 1 && r.stdout.isEmpty)
            }
        }
        let resume = try BuiltBinary.run(["record", "--resume", ids[4]] + Self.rawArgs + ["--store", store], stdin: Data(count: 64_000))
        #expect(resume.status == 65 && resume.stderr.hasPrefix(damaged(ids[4], "its resume header cannot be read")),
                "\(resume.status) \(resume.stderr)")

        let report = try BuiltBinary.run(["sessions", "report", "--format", "csv", "--store", store])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.split(separator: "\n").dropFirst().map { String($0.prefix(36)) }.sorted() == [good, ids[3]].sorted())
        let warnings = report.stderr.split(separator: "\n")
        #expect(warnings.count == 5 && warnings.allSatisfy { $0.hasPrefix("warning: \(store): night ") && $0.hasSuffix("; skipped") },
                "\(report.stderr)")

        #expect(try BuiltBinary.run(["sessions", "delete", ids[0], "--store", store]).status == 0)
        let after = try BuiltBinary.run(["sessions", "list", "--store", store])
        #expect(after.status == 0 && after.stderr.isEmpty && after.stdout.split(separator: "\n").count == 7, "\(after.stderr)")
    }

    /// A FIFO as --input that no writer opens: SIGTERM still ends the command (it used to block in `open`), with
    /// one line and no night stored.
    @Test func aFIFOWithNoWriterDoesNotHoldOffSIGTERM() throws {
        let fifo = temp.path("in.fifo"), store = storePath()
        #expect(mkfifo(fifo, 0o600) == 0)
        let recorder = try Recorder(["record", "--input", fifo, "--store", store])
        // Wait until it has the FIFO open (its signal handling is in place by then), at most 60 s.
        let pid = recorder.process.processIdentifier
        let fds = "/proc/\(pid)/fd"
        func hasFIFOOpen() -> Bool {
            ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).contains {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)) == fifo
            }
        }
        for _ in 0..<600 where !hasFIFOOpen() { usleep(100_000) }
        #expect(hasFIFOOpen())
        usleep(300_000)
        kill(pid, SIGTERM)
        let began = Date()
        let r = recorder.wait()
        #expect(Date().timeIntervalSince(began) < 5)
        #expect(r.reason == .exit && r.status == 66, "\(r.status) \(r.stderr)")
        #expect(r.stderr.contains("SIGTERM before anything was written to the FIFO"), "\(r.stderr)")
        #expect(try NightStore(path: store).nights().isEmpty)
    }

    /// A FIFO whose writer is already waiting: the recorder reads all of it. (Looking at an input for an audio
    /// file's header must not open a FIFO: closing it again killed the writer with SIGPIPE.)
    @Test func aFIFOWithItsWriterWaitingIsReadWhole() throws {
        let fifo = temp.path("waiting.fifo"), raw = temp.path("ten.s16le"), store = storePath("fifo.sqlite")
        #expect(mkfifo(fifo, 0o600) == 0)
        try Data(try Self.rawNight().prefix(32_000 * 10)).write(to: URL(fileURLWithPath: raw))
        let r = try BuiltBinary.shell("cat '\(raw)' > '\(fifo)' & sleep 0.5; timeout 60 \"$0\" record --input '\(fifo)' "
            + "--store '\(store)' --no-status --format json; status=$?; wait; exit $status")
        #expect(r.status == 0, "\(r.status) \(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect((json["source"] as? [String: Any])?["durationSec"] as? Double == 10)
    }

    @Test func anAlarmCommandRunsOnceWithTheRuleAndTime() throws {
        let marker = temp.path("alarm.txt")
        let r = try BuiltBinary.run(["record"] + Self.rawArgs + [
            "--store", storePath(), "--start", "2026-01-01T06:59:00+01:00", "--alarm", "07:01", "--alarm-window", "1m",
            "--alarm-command", "echo \"$SLEEPCYCLE_ALARM_RULE $SLEEPCYCLE_ALARM_TIME\" >> '\(marker)'; echo ALARM-OUT",
            "--format", "json",
        ], stdin: try Self.rawNight())
        #expect(r.status == 0, "\(r.stderr)")
        // The command's own output goes to standard error: standard output is the night's JSON, whole.
        #expect(!r.stdout.contains("ALARM-OUT") && (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8))) != nil)
        usleep(300_000)
        let lines = try String(contentsOfFile: marker, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.hasSuffix("Z") == true)
    }
}
