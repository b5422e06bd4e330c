// What a session takes in (readings) and emits (Synheart's event types, one JSON line each).
import Foundation
import SleepCycleBus

/// One reading of a heart-rate provider: at `timestampMs` (ms from the session's time origin), a heart rate and/or
/// the RR intervals (ms) of the beats that ended then.
public struct BiosignalSample: Sendable, Hashable {
    public var timestampMs: Int64
    public var hrBpm: Double?
    public var rrMs: [Double]
    public init(timestampMs: Int64, hrBpm: Double? = nil, rrMs: [Double] = []) {
        self.timestampMs = timestampMs; self.hrBpm = hrBpm; self.rrMs = rrMs
    }
}

/// What a session emits (Synheart's event types), each as one JSON line (`jsonLine`).
public enum SessionEvent: Sendable {
    case started(sessionId: String, mode: SessionMode, profile: ComputeProfile, startMs: Int64)
    case frame(sessionId: String, metrics: SessionMetrics)
    case biosignal(sessionId: String, samples: [BiosignalSample], startMs: Int64, endMs: Int64)
    case summary(sessionId: String, metrics: SessionMetrics)

    /// One JSON object, keys sorted: `{"type": "session_started" | "session_frame" | "biosignal_frame" |
    /// "session_summary", …}`.
    public var jsonLine: String {
        // JSONEncoder sorts keys by their bytes; JSONSerialization's `.sortedKeys` compares them through ICU
        // collation, about 40 times slower (a day of one-second frames took a minute). The contract's keys are
        // lowercase ASCII and underscores, which both orders sort alike.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

extension SessionEvent: Encodable {
    private enum Key: String, CodingKey {
        case type, sessionId = "session_id", mode, startMs = "start_ms", endMs = "end_ms", windowSec = "window_sec"
        case emitIntervalSec = "emit_interval_sec", metrics, samples
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        switch self {
        case .started(let id, let mode, let profile, let start):
            try c.encode("session_started", forKey: .type)
            try c.encode(id, forKey: .sessionId)
            try c.encode(mode.rawValue, forKey: .mode)
            try c.encode(start, forKey: .startMs)
            try c.encode(profile.windowSec, forKey: .windowSec)
            try c.encode(profile.emitIntervalSec, forKey: .emitIntervalSec)
        case .frame(let id, let metrics):
            try c.encode("session_frame", forKey: .type)
            try c.encode(id, forKey: .sessionId)
            try c.encode(metrics, forKey: .metrics)
        case .biosignal(let id, let samples, let start, let end):
            try c.encode("biosignal_frame", forKey: .type)
            try c.encode(id, forKey: .sessionId)
            try c.encode(start, forKey: .startMs)
            try c.encode(end, forKey: .endMs)
            try c.encode(samples, forKey: .samples)
        case .summary(let id, let metrics):
            try c.encode("session_summary", forKey: .type)
            try c.encode(id, forKey: .sessionId)
            try c.encode(metrics, forKey: .metrics)
        }
    }
}

extension BiosignalSample: Encodable {
    private enum Key: String, CodingKey { case timestampMs = "timestamp_ms", hrBpm = "hr_bpm", rrMs = "rr_ms" }

    /// `timestamp_ms`, then `hr_bpm` and `rr_ms` only when the reading has them.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(timestampMs, forKey: .timestampMs)
        try c.encodeIfPresent(hrBpm, forKey: .hrBpm)
        if !rrMs.isEmpty { try c.encode(rrMs, forKey: .rrMs) }
    }
}
