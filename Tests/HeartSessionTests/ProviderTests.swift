import Foundation
import Testing
import SleepCycleBus
@testable import HeartSession

@Suite("heart session providers")
struct ProviderTests {
    /// Events of a session fed by `provider`, collected from the engine's thread.
    final class Collector: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [SessionEvent] = []
        func add(_ e: SessionEvent) { lock.withLock { items.append(e) } }
        var events: [SessionEvent] { lock.withLock { items } }
        var frames: [SessionMetrics] { events.compactMap { if case .frame(_, let m) = $0 { m } else { nil } } }
        var summary: SessionMetrics? { events.compactMap { if case .summary(_, let m) = $0 { m } else { nil } }.last }
    }

    @Test func replayGivesTheSameFramesAsPushing() throws {
        let beats = MockBiosignalProvider.beats(durationSec: 600, meanBpm: 55, seed: 7)
        let config = SessionConfig(profile: ComputeProfile(windowSec: 120, emitIntervalSec: 30))
        let pushed = Collector()
        let engine = SessionEngine()
        let id = try engine.start(config: config, callback: pushed.add)
        for b in beats { try engine.push(b) }
        try engine.stop(sessionId: id)

        let replayed = Collector()
        let id2 = try engine.start(config: config, provider: ReplayBiosignalProvider(samples: beats), callback: replayed.add)
        try engine.wait()
        #expect(engine.getStatus() == .idle)          // the provider's end ended the session, with its summary
        try engine.stop(sessionId: id2)               // and stopping it then is not an error
        #expect(replayed.frames == pushed.frames && replayed.summary == pushed.summary)
        #expect(pushed.frames.count >= 19 && abs((pushed.summary?.hrMeanBpm ?? 0) - 55) < 1)
    }

    @Test func pacedReplayWaitsByTheReadingsClock() throws {
        // A manual clock: the provider asks to wait the time between readings; nothing sleeps.
        final class Waits: @unchecked Sendable { let lock = NSLock(); var seconds: [Double] = [] }
        let waits = Waits()
        let samples = [0, 1000, 1800, 4800].map { BiosignalSample(timestampMs: Int64($0), hrBpm: 60) }
        let provider = ReplayBiosignalProvider(samples: samples, paced: true) { s in waits.lock.withLock { waits.seconds.append(s) } }
        while try provider.next() != nil {}
        #expect(waits.seconds == [1, 0.8, 3])
    }

    @Test func mockBeatsWithMissedBeatsAreCorrected() throws {
        let clean = MockBiosignalProvider.beats(durationSec: 300, seed: 3)
        let missed = MockBiosignalProvider.beats(durationSec: 300, artefactEvery: 40, seed: 3)
        #expect(missed.count < clean.count)
        let a = HeartMetrics.of(clean), b = HeartMetrics.of(missed)
        #expect(b.artifactCount >= 5)
        #expect(abs((b.rmssdMs ?? 0) - (a.rmssdMs ?? 0)) / (a.rmssdMs ?? 1) < 0.1)
    }

    @Test func pushedReadingsAndStoppingMidway() throws {
        let provider = PushedBiosignalProvider(capacity: 1000)
        let events = Collector()
        let engine = SessionEngine()
        let id = try engine.start(config: SessionConfig(profile: ComputeProfile(windowSec: 30, emitIntervalSec: 10)),
                                  provider: provider, callback: events.add)
        let pusher = Thread {
            for b in MockBiosignalProvider.beats(durationSec: 60) { provider.push(b) }
        }
        pusher.start()
        // Once the engine has read some (it has framed 20 s of them), stop: readings still queued are not read, and the
        // summary covers those that were.
        let deadline = Date().addingTimeInterval(10)
        while events.frames.count < 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        try engine.stop(sessionId: id)
        #expect(engine.getStatus() == .idle)
        #expect(events.summary.map { $0.sampleCount >= 20 } == true)
        while !pusher.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        #expect(provider.droppedCount == 0)
        // A full queue drops its oldest reading and counts it instead of blocking the host.
        let small = PushedBiosignalProvider(capacity: 2)
        for t in 0..<5 { small.push(BiosignalSample(timestampMs: Int64(t), hrBpm: 60)) }
        small.finish()
        #expect(small.droppedCount == 3)
        #expect(try small.next()?.timestampMs == 3)
        #expect(try small.next()?.timestampMs == 4)
        #expect(try small.next() == nil)
    }
}
