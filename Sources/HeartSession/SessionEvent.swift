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

    /// One JSON object: `{"type": "session_started" | "session_frame" | "biosignal_frame" | "session_summary", …}`.
    public var jsonLine: String {
        var object: [String: Any]
        switch self {
        case .started(let id, let mode, let profile, let start):
            object = ["type": "session_started", "session_id": id, "mode": mode.rawValue, "start_ms": start,
                      "window_sec": profile.windowSec, "emit_interval_sec": profile.emitIntervalSec]
        case .frame(let id, let metrics):
            object = ["type": "session_frame", "session_id": id, "metrics": metrics.dictionary]
        case .biosignal(let id, let samples, let start, let end):
            object = ["type": "biosignal_frame", "session_id": id, "start_ms": start, "end_ms": end,
                      "samples": samples.map { s -> [String: Any] in
                          var d: [String: Any] = ["timestamp_ms": s.timestampMs]
                          if let hr = s.hrBpm { d["hr_bpm"] = hr }
                          if !s.rrMs.isEmpty { d["rr_ms"] = s.rrMs }
                          return d
                      }]
        case .summary(let id, let metrics):
            object = ["type": "session_summary", "session_id": id, "metrics": metrics.dictionary]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
