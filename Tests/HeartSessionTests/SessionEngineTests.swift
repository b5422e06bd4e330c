import Foundation
import Testing
@testable import HeartSession
import SleepCycleBus

@Suite("heart session engine")
struct SessionEngineTests {
    /// Beats of 1000 ± 40 ms alternating (RMSSD 80 ms, SDNN ≈ 40 ms), one reading per beat, timed by the beats.
    static func beats(_ n: Int, from t0: Int64 = 0) -> [BiosignalSample] {
        var t = t0
        return (0..<n).map { i in
            let rr = i % 2 == 0 ? 960.0 : 1040.0
            t += Int64(rr)
            return BiosignalSample(timestampMs: t, rrMs: [rr])
        }
    }

    @Test func framesEveryEmitIntervalOverTheWindowAndASummary() throws {
        let engine = SessionEngine()
        var events: [SessionEvent] = []
        let config = SessionConfig(mode: .breathing, profile: ComputeProfile(windowSec: 30, emitIntervalSec: 10))
        let id = try engine.start(config: config, sessionId: "s1") { events.append($0) }
        #expect(engine.getStatus() == .running)
        for b in Self.beats(120) { try engine.push(b) }           // 120 s of beats from 960 ms
        try engine.stop(sessionId: id)
        #expect(engine.getStatus() == .idle)
        guard case .started(_, .breathing, _, let start)? = events.first else { Issue.record("no session_started"); return }
        #expect(start == 960)
        let frames = events.compactMap { e -> SessionMetrics? in if case .frame(_, let m) = e { m } else { nil } }
        // A frame at 10, 20, … s after the first reading, up to the last (120,000 ms): 11 frames.
        #expect(frames.map(\.endMs) == (1...11).map { 960 + Int64($0) * 10_000 })
        // Frames before 20 beats have no HRV ("latest valid sample": null); later ones hold the window's 30 beats.
        #expect(frames[0].rmssdMs == nil && frames[0].hrMeanBpm != nil)
        let full = frames[5]
        #expect(full.startMs == full.endMs - 30_000 && full.sampleCount == 30)
        #expect(abs((full.rmssdMs ?? 0) - 80) < 1e-9 && abs((full.meanNNMs ?? 0) - 1000) < 1e-9 && full.pnn50 == 100)
        guard case .summary(_, let summary)? = events.last else { Issue.record("no summary"); return }
        #expect(summary.sampleCount == 120 && summary.startMs == 960 && summary.endMs == 120_000)
        #expect(events.allSatisfy { if case .biosignal = $0 { false } else { true } })
    }

    /// Every window is (end − window, end]: the first full one (ending exactly a window after the session's first
    /// reading) held both its ends, 13 readings of a reading every 5 s in a 60-s window where every later one holds 12.
    @Test func theFirstFullWindowIsHalfOpenLikeTheRest() throws {
        let engine = SessionEngine()
        var frames: [SessionMetrics] = []
        let config = SessionConfig(mode: .focus, profile: ComputeProfile(windowSec: 60, emitIntervalSec: 30))
        let id = try engine.start(config: config, sessionId: "s") { if case .frame(_, let m) = $0 { frames.append(m) } }
        for k in 0...36 { try engine.push(BiosignalSample(timestampMs: Int64(k) * 5_000, hrBpm: 60 + Double(k % 7))) }
        try engine.stop(sessionId: id)
        #expect(frames.map(\.endMs) == [30_000, 60_000, 90_000, 120_000, 150_000, 180_000])
        #expect(frames.map(\.values.sampleCount) == [7, 12, 12, 12, 12, 12])
        let window = (1...12).map { 60 + Double($0 % 7) }
        #expect(frames[1].values.hrMeanBpm == window.reduce(0, +) / 12)
    }

    /// A wearable off for longer than the window (here three years): no frame for the empty windows of the gap
    /// (there were 19 million of them at one every 5 s), and frames resume with the readings, on the same schedule.
    @Test func aGapLongerThanTheWindowHasNoEmptyFrames() throws {
        for raw in [false, true] {
            let engine = SessionEngine()
            var events: [SessionEvent] = []
            let config = SessionConfig(mode: .focus, profile: ComputeProfile(windowSec: 30, emitIntervalSec: 5),
                                       includeRaw: raw)
            let id = try engine.start(config: config, sessionId: "s1") { events.append($0) }
            let gap: Int64 = 3 * 365 * 86_400_000 + 123
            for b in Self.beats(60) + Self.beats(60, from: gap) { try engine.push(b) }
            try engine.stop(sessionId: id)
            let frames = events.compactMap { e -> SessionMetrics? in if case .frame(_, let m) = e { m } else { nil } }
            #expect(frames.count < 40, "\(frames.count) frames")
            #expect(frames.allSatisfy { $0.sampleCount > 0 })
            // Every frame still ends on the schedule of the first reading (960 ms + k · 5 s).
            #expect(frames.allSatisfy { ($0.endMs - 960) % 5_000 == 0 })
            #expect(frames.contains { $0.startMs > gap } && frames.contains { $0.endMs < 61_000 })
            let rawCount = events.reduce(0) { n, e in if case .biosignal(_, let s, _, _) = e { n + s.count } else { n } }
            #expect(rawCount == (raw ? 120 : 0))
            guard case .summary(_, let summary)? = events.last else { Issue.record("no summary"); return }
            #expect(summary.sampleCount == 120)
        }
    }

    /// The exact bytes of each event type: keys sorted, values rounded to 0.001, a missing metric null, a reading's
    /// absent heart rate or RR list left out, whole numbers without a decimal point.
    @Test func eachEventsLineIsPinned() {
        let values = HeartMetrics(sampleCount: 30, hrMeanBpm: 62.12345, rmssdMs: 80, meanNNMs: 1000.0004, pnn50: 100,
                                  artifactCount: 2)
        let metrics = SessionMetrics(startMs: 960, endMs: 30_960, values: values)
        #expect(SessionEvent.started(sessionId: "s/1", mode: .breathing,
                                     profile: ComputeProfile(windowSec: 30, emitIntervalSec: 2.5), startMs: 960).jsonLine
                == #"{"emit_interval_sec":2.5,"mode":"breathing","session_id":"s\/1","start_ms":960,"type":"session_started","window_sec":30}"#)
        #expect(SessionEvent.frame(sessionId: "s1", metrics: metrics).jsonLine
                == #"{"metrics":{"artifact_count":2,"baevsky_si":null,"end_ms":30960,"hf_ms2":null,"hr_mean_bpm":62.123,"#
                 + #""hr_sdnn_ms":null,"lf_hf":null,"lf_ms2":null,"mean_nn_ms":1000,"pnn50":100,"rmssd_ms":80,"#
                 + #""sample_count":30,"start_ms":960},"session_id":"s1","type":"session_frame"}"#)
        #expect(SessionEvent.summary(sessionId: "s1", metrics: metrics).jsonLine.hasSuffix(#""type":"session_summary"}"#))
        let samples = [BiosignalSample(timestampMs: 1000, hrBpm: 61.5), BiosignalSample(timestampMs: 1500, rrMs: [980, 1010.5])]
        #expect(SessionEvent.biosignal(sessionId: "s1", samples: samples, startMs: 1000, endMs: 2000).jsonLine
                == #"{"end_ms":2000,"samples":[{"hr_bpm":61.5,"timestamp_ms":1000},{"rr_ms":[980,1010.5],"timestamp_ms":1500}],"#
                 + #""session_id":"s1","start_ms":1000,"type":"biosignal_frame"}"#)
    }

    @Test func rawFramesAndTheContractKeys() throws {
        let engine = SessionEngine()
        var lines: [String] = []
        let id = try engine.start(config: SessionConfig(includeRaw: true)) { lines.append($0.jsonLine) }
        for b in Self.beats(70) { try engine.push(b) }
        try engine.stop(sessionId: id)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count)
        let types = objects.compactMap { $0["type"] as? String }
        #expect(types.first == "session_started" && types.last == "session_summary")
        #expect(types.contains("session_frame"))
        // Every reading is in exactly one raw frame (seconds without a reading have none).
        let raw = objects.filter { $0["type"] as? String == "biosignal_frame" }
        #expect(raw.reduce(0) { $0 + (($1["samples"] as? [Any])?.count ?? 0) } == 70)
        let metrics = try #require(objects.last?["metrics"] as? [String: Any])
        for key in ["hr_mean_bpm", "hr_sdnn_ms", "rmssd_ms", "sample_count", "start_ms", "end_ms", "mean_nn_ms",
                    "pnn50", "baevsky_si", "artifact_count"] {
            #expect(metrics[key] != nil, "\(key)")
        }
    }

    @Test func configFromADictionaryAndMisuse() throws {
        let c = try SessionConfig(dictionary: ["mode": "breathing", "windowSec": 120, "emitIntervalSec": 2, "includeRaw": true])
        #expect(c.mode == .breathing && c.profile.windowSec == 120 && c.profile.emitIntervalSec == 2 && c.includeRaw)
        #expect(try SessionConfig(json: Data("{\"mode\":\"focus\"}".utf8)).mode == .focus)
        #expect(throws: SessionError.self) { try SessionConfig(dictionary: ["mode": "sleep"]) }
        #expect(throws: SessionError.self) { try SessionConfig(dictionary: ["windowSec": 1]) }
        #expect(throws: SessionError.self) { try SessionConfig(dictionary: ["speed": 2]) }
        let engine = SessionEngine()
        #expect(throws: SessionError.self) { try engine.push(BiosignalSample(timestampMs: 0, hrBpm: 60)) }
        let id = try engine.start(config: SessionConfig()) { _ in }
        #expect(throws: SessionError.self) { try engine.start(config: SessionConfig()) { _ in } }
        try engine.push(BiosignalSample(timestampMs: 1000, hrBpm: 60))
        #expect(throws: SessionError.self) { try engine.push(BiosignalSample(timestampMs: 500, hrBpm: 60)) }
        #expect(throws: SessionError.self) { try engine.stop(sessionId: "other") }
        try engine.stop(sessionId: id)
    }
}
