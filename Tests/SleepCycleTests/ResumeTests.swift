import Foundation
import Testing
@testable import SleepCycle
import SleepCycleFormats

/// A night journaled into the store, cut off as a crash would cut it, and resumed: the result equals that of the
/// same audio with the same hole analysed in one go, outside the window around the interruption.
@Suite final class ResumeTests {
    let dir: URL
    init() throws { dir = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)") }
    deinit { try? FileManager.default.removeItem(at: dir) }

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func exampleNight() throws -> [Float] {
        let source = try AudioFileSource(path: repo.appendingPathComponent("Fixtures/example-night.flac").path)
        var samples: [Float] = []
        while case .audio(_, let channels) = try source.read() { samples += channels[0] }
        return samples
    }

    static func blocks(_ samples: ArraySlice<Float>, size: Int = 8_000) -> [ScriptedSource.Step] {
        blocks([samples], size: size)
    }

    /// Blocks of `size` frames of the channels `signal`.
    static func blocks(_ signal: [ArraySlice<Float>], size: Int = 8_000) -> [ScriptedSource.Step] {
        let range = signal[0].indices
        return stride(from: range.lowerBound, to: range.upperBound, by: size).map { k in
            .audio(signal.map { Array($0[k..<min(k + size, range.upperBound)]) })
        }
    }

    /// `samples` analysed and journaled into `store` as the engine journals a live night (16 kHz mono, blocks of
    /// 0.5 s), then cut off as a crash cuts it: no end of session, no result, the night left interrupted.
    static func journalUntilCut(_ samples: ArraySlice<Float>, store: NightStore, id: UUID, start: Date,
                                utcOffsetSeconds: Int, options: PipelineOptions = PipelineOptions()) throws {
        try journalUntilCut([samples], store: store, id: id, start: start, utcOffsetSeconds: utcOffsetSeconds,
                            options: options)
    }

    /// As above, for the channels `signal` (two with `options.channelSeparation`: two sleepers).
    static func journalUntilCut(_ signal: [ArraySlice<Float>], store: NightStore, id: UUID, start: Date,
                                utcOffsetSeconds: Int, options: PipelineOptions = PipelineOptions()) throws {
        let lock = try store.lockForRecording()
        let channels = signal.count
        let source = ScriptedSource(steps: blocks(signal), channels: channels, live: true)
        let info = SessionInfo(id: id, clock: AnalysisClock(start: start), sourceSampleRate: 16_000,
                               channelCount: channels)
        let pipeline = try AnalysisPipeline(info: info, format: source.format, sourcePath: source.name, options: options)
        var header = NightHeader(sessionId: id, start: start, utcOffsetSeconds: utcOffsetSeconds, sourceName: source.name,
                                 sourceSampleRate: 16_000, sourceChannels: channels, analysisChannels: channels,
                                 frameLength: 1024, hopLength: 512, eventDetection: true, alarm: nil,
                                 useAccelerometer: false, recorderSettings: [:])
        header.channelSeparation = options.channelSeparation
        try store.beginNight(id: id, startTime: start, utcOffsetSeconds: utcOffsetSeconds, source: Data("{}".utf8),
                             header: try JSONEncoder().encode(header))
        lock.recording(id)
        let writer = JournalWriter(store: store, night: id, clockStart: start, nextSequence: 0)
        let recorder = JournalRecorder(writer: writer, start: 0)
        pipeline.observe { recorder.observe($0) }
        for _ in 0..<(signal[0].count / 8_000) { pipeline.process(try source.read()) }
        #expect(writer.drain().isEmpty)
        lock.release()
    }

    /// A store that fills up mid-night: the writer keeps the chunks in memory and its warning gives the night's
    /// time of the first chunk not stored (the recording's clock, here a night in 2026-01), not the wall clock.
    @Test func aFullStoreIsReportedAtTheNightsTime() throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let store = try NightStore(path: dir.appendingPathComponent("nights.sqlite").path, maximumBytes: 128 * 1024)
        let start = Date(timeIntervalSince1970: 1_767_304_800), id = UUID()   // 2026-01-01T22:00:00Z
        try store.beginNight(id: id, startTime: start, utcOffsetSeconds: 0, source: Data("{}".utf8), header: Data())
        let writer = JournalWriter(store: store, night: id, clockStart: start, nextSequence: 0, retryInterval: 60)
        // One chunk per 10 s of the night, each 2 KB: the 128-KB store is full after a few minutes' worth.
        for k in 1...100 {
            writer.append(records: Data(repeating: 7, count: 2000), position: SampleTime(k * 10 * 16_000))
            Thread.sleep(forTimeInterval: 0.002)
        }
        let problems = writer.drain()
        let stored = try store.journal(of: id).count
        #expect(stored > 0 && stored < 100)
        let firstUnstored = start.addingTimeInterval(Double(stored + 1) * 10)
        #expect(problems.count == 1)
        #expect(problems.first?.contains("from \(ISO8601Time.utcString(from: firstUnstored)) to the end of the night") == true,
                "\(problems)")
    }

    /// A wearable's file read again from its start on resume (as `record --resume --hr FILE` does): the readings
    /// journaled before the interruption are not counted twice, those after it (and in the hole) once.
    @Test func wearableReadingsPushedAgainOnResumeCountOnce() async throws {
        let night = Array(try Self.exampleNight().prefix(90 * 16_000))
        let crash = 30 * 16_000, back = 40 * 16_000
        let start = Date(timeIntervalSince1970: 1_767_304_800)
        let store = try NightStore(path: dir.appendingPathComponent("hr.sqlite").path)
        let id = UUID()
        // One heart-rate reading every second, at 0.5, 1.5, … 89.5 s.
        let times = (0..<90).map { Double($0) + 0.5 }
        var options = PipelineOptions()
        options.sideInputs = times.map { .heartRate(HeartRateSample(time: AnalysisClock.samples(seconds: $0), bpm: 60)) }
        try Self.journalUntilCut(night[0..<crash], store: store, id: id, start: start, utcOffsetSeconds: 0, options: options)
        let engine = SleepAnalysisEngine()
        try await engine.initialize(store: store)
        let steps = Self.blocks(night[back...])
        let rest = ScriptedSource(steps: steps, live: true)
        _ = try await engine.resumeAnalysis(at: start.addingTimeInterval(40), using: rest)
        for t in times { try await engine.push(heartRate: 60, at: start.addingTimeInterval(t)) }
        // Stopped once every block has been read (the live source then waits for more).
        while rest.reads <= steps.count { try await Task.sleep(nanoseconds: 20_000_000) }
        let resumed = try await engine.stopAnalysis()
        let heart = try #require(resumed.heart)
        #expect(heart.summary.sampleCount == times.count, "\(heart.summary.sampleCount) readings")
    }

    /// The detector holds a talking event for a minute and a half after its end (the sustained-speech rule): a
    /// crash 40 s after the example night's utterance lost it, although its audio had been analysed and the
    /// journal was 0.5 s behind. It is journaled as held and the resume decides it, as the detector decides at a gap.
    @Test func aTalkingEventHeldAtTheCrashIsKept() async throws {
        let night = try Self.exampleNight()
        let crash = 170 * 16_000
        let start = Date(timeIntervalSince1970: 1_767_304_800)
        let store = try NightStore(path: dir.appendingPathComponent("talk.sqlite").path)
        let id = UUID()
        try Self.journalUntilCut(night[0..<crash], store: store, id: id, start: start, utcOffsetSeconds: 0)
        let engine = SleepAnalysisEngine()
        try await engine.initialize(store: store)
        let rest = ScriptedSource(steps: Self.blocks(night[crash...]))
        _ = try await engine.resumeAnalysis(at: start.addingTimeInterval(170), using: rest)
        try await engine.waitForSourceEnd()
        let resumed = try await engine.stopAnalysis()
        let whole = ScriptedSource(steps: Self.blocks(night[...]))
        let info = SessionInfo(id: id, clock: AnalysisClock(start: start), sourceSampleRate: 16_000, channelCount: 1)
        let reference = try AnalysisPipeline(info: info, format: whole.format, sourcePath: whole.name).run(source: whole)
        func talk(_ events: [SleepEvent]) -> [String] {
            events.filter { $0.type == .talking }.map { "\($0.start) \($0.end) \($0.probability)" }
        }
        #expect(talk(reference.events).count == 1)
        #expect(talk(resumed.events) == talk(reference.events))
        #expect(Set(resumed.events.map(\.id)).count == resumed.events.count, "ids are unique")
    }

    /// What the resume makes of the journal's held talking events: one published is not published again, one held
    /// longer than the window was dropped, one still held is decided by the rule on the talk around it.
    @Test func heldTalkingEventsAreDecidedOnTheJournalsTalk() throws {
        func talk(_ from: Double, _ to: Double, id: Int = -1) -> SoundEvent {
            SoundEvent(id: id, type: .talking, start: AnalysisClock.samples(seconds: from),
                       end: AnalysisClock.samples(seconds: to), probability: 0.9, source: .audio)
        }
        let position = AnalysisClock.samples(seconds: 1_000)
        // Published (id 4) and dropped long ago; then an utterance at 912 s, still held at the crash (85 s on).
        var records: [JournalRecord] = [.eventHeld(talk(100, 103)), .eventStarted(talk(100, 103, id: 4)),
                                        .eventEnded(talk(100, 103, id: 4)), .eventHeld(talk(500, 560)),
                                        .eventHeld(talk(912, 915)), .position(position)]
        var decided = try NightReplay(records: records, position: position).undecidedEvents()
        #expect(decided.events.map(\.id) == [5] && decided.events.first?.start == talk(912, 915).start)
        #expect(decided.newIds == 1)
        // The same utterance in the middle of a conversation (talk over most of the 90 s on both sides): dropped.
        let conversation = stride(from: 820.0, to: 1_000, by: 10).filter { $0 != 910 }.map { talk($0, $0 + 8) }
        records.insert(contentsOf: conversation.map { .eventHeld($0) }, at: 4)
        decided = try NightReplay(records: records, position: position).undecidedEvents()
        #expect(decided.events.filter { $0.start == talk(912, 915).start }.isEmpty)
        #expect(decided.events.contains { $0.start == talk(990, 998).start }, "speech on one side only: reported")
    }

    /// Two sleepers: the attributor waits 20 s after a candidate for the other channel's detection of the same sound,
    /// and the detector holds talk for 90 s; a crash lost both (the snores of 60–80 s and the talk at 67 s of the
    /// two-sleeper fixture, cut at 100 s). The journal keeps each candidate with its cues, and the replay of the
    /// interrupted night decides them: it has every event the whole night's analysis has that the detector had found
    /// by the cut (ended 18 s before it), on the same sleeper.
    @Test func twoSleepersCandidatesWaitingAtTheCrashAreKept() throws {
        let source = try AudioFileSource(path: Self.repo.appendingPathComponent("Fixtures/two-sleepers.flac").path)
        var night: [[Float]] = [[], []]
        while case .audio(_, let channels) = try source.read() { night[0] += channels[0]; night[1] += channels[1] }
        let cut = 100 * 16_000
        var options = PipelineOptions()
        options.channelSeparation = .bedSideMics
        let start = Date(timeIntervalSince1970: 1_767_304_800), id = UUID()
        let store = try NightStore(path: dir.appendingPathComponent("two.sqlite").path)
        try Self.journalUntilCut(night.map { $0[0..<cut] }, store: store, id: id, start: start, utcOffsetSeconds: 0,
                                 options: options)
        let night0 = try #require(try store.night(id))
        guard case .two(let replayed) = try store.nightResult(of: night0) else {
            Issue.record("not a two-sleeper result"); return
        }

        let whole = ScriptedSource(steps: Self.blocks(night.map { $0[...] }), channels: 2)
        let info = SessionInfo(id: id, clock: AnalysisClock(start: start), sourceSampleRate: 16_000, channelCount: 2)
        let pipeline = try AnalysisPipeline(info: info, format: whole.format, sourcePath: whole.name, options: options)
        let reference = try #require(pipeline.separatedResult(from: try pipeline.run(source: whole)))
        let found = start.addingTimeInterval(Double(cut) / 16_000 - 18)
        func events(_ r: SeparatedAnalysisResult, until: Date) -> [String] {
            r.sessions.enumerated().flatMap { k, s in
                s.events.filter { $0.end <= until }.map { "\(k) \($0.type) \($0.start) \($0.end)" }
            }
        }
        let expected = events(reference, until: found)
        // 19 with the built-in model: nine snores of each sleeper and the talk.
        #expect(expected.contains { $0.contains("talking") } && expected.count >= 15)
        #expect(events(replayed, until: found) == expected)

        // A resume journals what it decided: a later replay (a second crash, `sessions show` of the resumed night,
        // after the talk's 90 s are over) knows it as published and neither drops nor repeats it.
        let (replay, _, _) = try store.journalReplay(of: night0, key: nil)
        let info2 = SessionInfo(id: id, clock: AnalysisClock(start: start), sourceSampleRate: 16_000, channelCount: 2)
        let resumed = try AnalysisPipeline(info: info2, format: whole.format, sourcePath: whole.name, options: options,
                                           resuming: replay)
        var journaled: [JournalRecord] = []
        resumed.observe { if let r = JournalRecord($0) { journaled.append(r) } }
        resumed.start()
        let decided = try replay.undecidedEvents().events
        #expect(decided.contains { $0.type == .talking } && decided.count >= 3)
        #expect(journaled.filter { if case .eventStarted = $0 { true } else { false } }.count == decided.count)
        let later = NightReplay(records: replay.records + journaled, position: replay.position + 100 * 16_000,
                                separation: options.channelSeparation)
        #expect(try later.undecidedEvents().events.isEmpty)
        #expect(try NightReplay(records: replay.records, position: replay.position + 100 * 16_000,
                                separation: options.channelSeparation).undecidedEvents().events.isEmpty,
                "unjournaled, they would be lost")

        // The journal ends on an audio block whose decisions, published after it, went with the crash (as here:
        // the recorder's next chunk is never cut). A snore whose wait ended on that block (73.8–75.8 s, cut at 96 s)
        // was lost: every event found 18 s before the cut is still published or decided.
        let cut96 = 96 * 16_000, store96 = try NightStore(path: dir.appendingPathComponent("two96.sqlite").path)
        try Self.journalUntilCut(night.map { $0[0..<cut96] }, store: store96, id: id, start: start, utcOffsetSeconds: 0,
                                 options: options)
        let (truncated, _, _) = try store96.journalReplay(of: try #require(try store96.night(id)), key: nil)
        let clock = AnalysisClock(start: start)
        let published = truncated.records.compactMap { record -> SoundEvent? in
            if case .eventStarted(let e) = record { e } else { nil }
        }
        let found96 = start.addingTimeInterval(96 - 18)
        let kept = (published + (try truncated.undecidedEvents().events)).filter { clock.date(of: $0.end) <= found96 }
        func name(_ e: SoundEvent) -> String {
            "\(e.channel?.rawValue ?? -1) \(e.type) \(clock.date(of: e.start)) \(clock.date(of: e.end))"
        }
        #expect(Set(kept.map(name)).count == kept.count, "no event twice")
        #expect(kept.map(name).sorted() == events(reference, until: found96).sorted(), "\(kept.map(name).sorted())")
    }

    @Test func aResumedNightEqualsTheNightWithItsHole() async throws {
        let night = try Self.exampleNight()
        let rate = 16_000
        let crash = 100 * rate, back = 120 * rate
        let start = Date(timeIntervalSince1970: 1_767_304_800)
        let store = try NightStore(path: dir.appendingPathComponent("nights.sqlite").path)
        let id = UUID()

        // The first part, journaled as the engine journals it, then cut off: no end of session, no result.
        try Self.journalUntilCut(night[0..<crash], store: store, id: id, start: start, utcOffsetSeconds: 3600)
        #expect(try store.latestInterrupted()?.id == id)

        // Resumed 20 s later on the rest of the night.
        let engine = SleepAnalysisEngine()
        try await engine.initialize(store: store)
        #expect(try await engine.isResumePossible())
        let rest = ScriptedSource(steps: Self.blocks(night[back...]))
        let resumedId = try await engine.resumeAnalysis(at: start.addingTimeInterval(120), using: rest)
        #expect(resumedId == id)
        try await engine.waitForSourceEnd()
        let resumed = try await engine.stopAnalysis()
        #expect(try store.night(id)?.state == .complete)
        #expect(try store.integrityCheck() == "ok")

        // The same audio with the same hole, in one go.
        let whole = ScriptedSource(steps: Self.blocks(night[0..<crash]) + [.gap(Int64(back - crash))]
                                   + Self.blocks(night[back...]))
        let info = SessionInfo(id: id, clock: AnalysisClock(start: start), sourceSampleRate: rate, channelCount: 1)
        var reference = try AnalysisPipeline(info: info, format: whole.format, sourcePath: whole.name).run(source: whole)
        reference.utcOffsetSeconds = 3600

        #expect(resumed.sessionId == reference.sessionId && resumed.endTime == reference.endTime)
        // Only the events of the last seconds before the interruption differ: the detector decides an event up to
        // ~18 s after it ends (its context stage looks ahead), so those the crash caught undecided are lost. The
        // breathing rates, the hypnogram and the health intervals are the same.
        let windowStart = start.addingTimeInterval(80)
        func outside(_ e: SleepEvent) -> Bool { e.end <= windowStart || e.start >= start.addingTimeInterval(100) }
        let a = resumed.events.filter(outside).map { "\($0.type) \($0.start) \($0.end) \($0.probability)" }
        let b = reference.events.filter(outside).map { "\($0.type) \($0.start) \($0.end) \($0.probability)" }
        #expect(a == b)
        #expect(a.count >= 10)
        #expect(resumed.breathingRates.map { "\($0.timestamp) \($0.bpm)" } == reference.breathingRates.map { "\($0.timestamp) \($0.bpm)" })
        #expect(resumed.sleepStageIntervals == reference.sleepStageIntervals)
        #expect(resumed.audioStatistics == reference.audioStatistics)
        #expect(resumed.audioStatistics.healthIntervals.contains { $0.status == .missingInput && $0.start == start.addingTimeInterval(100) })
        #expect(resumed.source.durationSec == 180)
        #expect(!(try await engine.isResumePossible()))
    }
}
