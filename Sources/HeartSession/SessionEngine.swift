// A heart session after Synheart's session engine: beats in, frames over a sliding window every emit interval and a
// summary at the end, with the metric keys of the contract (docs/0011).
import Foundation

/// What a session is for: `focus` (a steady task) or `breathing` (paced breathing); both compute the same metrics
/// today, and the mode is reported with the session.
public enum SessionMode: String, Sendable, Codable, CaseIterable { case focus, breathing }

/// How often and over how much a session computes (Synheart's `ComputeProfile`).
public struct ComputeProfile: Sendable, Hashable, Codable {
    /// The sliding window a frame's metrics are computed over (s).
    public var windowSec: Double
    /// A frame every this often (s).
    public var emitIntervalSec: Double
    /// A raw `biosignal_frame` every this often (s), when raw frames are asked for.
    public var rawEmitIntervalSec: Double
    public init(windowSec: Double = 60, emitIntervalSec: Double = 5, rawEmitIntervalSec: Double = 1) {
        self.windowSec = windowSec; self.emitIntervalSec = emitIntervalSec; self.rawEmitIntervalSec = rawEmitIntervalSec
    }
}

/// A session's settings (Synheart's `SessionConfig`); also read from a dictionary or JSON with the same keys.
public struct SessionConfig: Sendable, Hashable, Codable {
    public var mode: SessionMode
    public var profile: ComputeProfile
    /// Also emit `biosignal_frame`s with the raw samples.
    public var includeRaw: Bool
    public init(mode: SessionMode = .focus, profile: ComputeProfile = ComputeProfile(), includeRaw: Bool = false) {
        self.mode = mode; self.profile = profile; self.includeRaw = includeRaw
    }

    /// From `{"mode": "focus", "windowSec": 60, "emitIntervalSec": 5, "rawEmitIntervalSec": 1, "includeRaw": false}`
    /// (every key optional).
    public init(dictionary: [String: Any]) throws(SessionError) {
        self.init()
        for (key, value) in dictionary {
            switch key {
            case "mode":
                guard let text = value as? String, let m = SessionMode(rawValue: text) else {
                    throw SessionError("mode must be focus or breathing")
                }
                mode = m
            case "windowSec", "emitIntervalSec", "rawEmitIntervalSec":
                guard let number = (value as? NSNumber)?.doubleValue else { throw SessionError("\(key) must be a number") }
                switch key {
                case "windowSec": profile.windowSec = number
                case "emitIntervalSec": profile.emitIntervalSec = number
                default: profile.rawEmitIntervalSec = number
                }
            case "includeRaw":
                guard let flag = value as? Bool else { throw SessionError("includeRaw must be true or false") }
                includeRaw = flag
            default:
                throw SessionError("unknown session setting '\(key)'")
            }
        }
        if let problem { throw SessionError(problem) }
    }

    public init(json: Data) throws(SessionError) {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw SessionError("a session config is a JSON object")
        }
        try self.init(dictionary: object)
    }

    /// A one-line problem with the settings, or nil.
    public var problem: String? {
        let p = profile
        if !(p.windowSec >= 5 && p.windowSec <= 3600) { return "window \(p.windowSec) s must be 5–3600 s" }
        if !(p.emitIntervalSec >= 0.5 && p.emitIntervalSec <= p.windowSec) {
            return "emit interval \(p.emitIntervalSec) s must be 0.5 s to the window"
        }
        if !(p.rawEmitIntervalSec >= 0.1 && p.rawEmitIntervalSec <= 3600) { return "raw emit interval must be 0.1–3600 s" }
        return nil
    }
}

/// A problem with a session's settings or use, one line.
public struct SessionError: Error, CustomStringConvertible, Sendable, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

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

/// A frame's or summary's metrics. HRV keys are nil ("latest valid sample": published as null) when the window holds
/// fewer than `HRV.minimumIntervals` beats after artefact correction.
public struct SessionMetrics: Sendable, Hashable {
    public var startMs: Int64
    public var endMs: Int64
    /// Beats (RR intervals) in the window, or heart-rate readings when there are no RR intervals.
    public var sampleCount: Int
    public var hrMeanBpm: Double?
    public var hrSdnnMs: Double?
    public var rmssdMs: Double?
    public var meanNNMs: Double?
    public var pnn50: Double?
    public var baevskySI: Double?
    /// Beats corrected as artefacts (missed, extra, ectopic, long/short).
    public var artifactCount: Int

    /// The contract's keys; a missing value is null.
    public var dictionary: [String: Any] {
        func value(_ x: Double?) -> Any { x.map { ($0 * 1000).rounded() / 1000 } ?? NSNull() }
        return ["start_ms": startMs, "end_ms": endMs, "sample_count": sampleCount, "hr_mean_bpm": value(hrMeanBpm),
                "hr_sdnn_ms": value(hrSdnnMs), "rmssd_ms": value(rmssdMs), "mean_nn_ms": value(meanNNMs),
                "pnn50": value(pnn50), "baevsky_si": value(baevskySI), "artifact_count": artifactCount]
    }

    /// The metrics of `samples` between `start` and `end`.
    static func compute(_ samples: ArraySlice<BiosignalSample>, start: Int64, end: Int64) -> SessionMetrics {
        let rr = samples.flatMap(\.rrMs)
        var m = SessionMetrics(startMs: start, endMs: end, sampleCount: 0, artifactCount: 0)
        if rr.isEmpty {
            let hr = samples.compactMap(\.hrBpm)
            m.sampleCount = hr.count
            m.hrMeanBpm = hr.isEmpty ? nil : hr.reduce(0, +) / Double(hr.count)
            return m
        }
        let (nn, counts) = ArtefactCorrection.correct(rr)
        m.sampleCount = nn.count
        m.artifactCount = counts.total
        m.hrMeanBpm = nn.reduce(0) { $0 + 60_000 / $1 } / Double(nn.count)
        if let h = HRV.timeDomain(nn) {
            m.hrSdnnMs = h.sdnn; m.rmssdMs = h.rmssd; m.meanNNMs = h.meanNN; m.pnn50 = h.pnn50; m.baevskySI = h.baevskySI
        }
        return m
    }
}

/// The session engine (Synheart's `SessionEngine`): `start(config:callback:)`, samples pushed by a provider in time
/// order, `stop(sessionId:)`, `getStatus()`. Frames are timed by the samples' own clock (a file replays exactly; a
/// live provider stamps its readings), so the same samples always give the same frames. One session at a time.
public final class SessionEngine: @unchecked Sendable {
    public enum Status: String, Sendable { case idle, running }
    private let lock = NSLock()
    private var sessionId: String?
    private var config = SessionConfig()
    private var callback: ((SessionEvent) -> Void)?
    private var samples: [BiosignalSample] = []
    private var startMs: Int64?
    private var nextFrameMs: Int64 = 0
    private var nextRawMs: Int64 = 0
    private var rawFrom = 0
    /// The first reading of the latest frame's window (windows only move forward).
    private var frameFrom = 0
    private var lastMs: Int64 = 0

    public init() {}

    public func getStatus() -> Status { lock.withLock { sessionId == nil ? .idle : .running } }

    /// Starts a session; returns its id. `callback` receives every event, on the thread that pushes samples.
    @discardableResult
    public func start(config: SessionConfig, sessionId: String = UUID().uuidString.lowercased(),
                      callback: @escaping (SessionEvent) -> Void) throws(SessionError) -> String {
        if let problem = config.problem { throw SessionError(problem) }
        try locked { () throws(SessionError) in
            guard self.sessionId == nil else { throw SessionError("a session is already running") }
            self.sessionId = sessionId
            self.config = config
            self.callback = callback
            samples = []; startMs = nil; rawFrom = 0; frameFrom = 0
        }
        return sessionId
    }

    /// A provider's reading. Readings must come in time order; an earlier one is refused.
    public func push(_ sample: BiosignalSample) throws(SessionError) {
        let events = try locked { () throws(SessionError) -> [SessionEvent] in
            guard let id = sessionId else { throw SessionError("no session is running") }
            var out: [SessionEvent] = []
            if startMs == nil {
                startMs = sample.timestampMs
                nextFrameMs = sample.timestampMs + Int64(config.profile.emitIntervalSec * 1000)
                nextRawMs = sample.timestampMs + Int64(config.profile.rawEmitIntervalSec * 1000)
                lastMs = sample.timestampMs
                out.append(.started(sessionId: id, mode: config.mode, profile: config.profile, startMs: sample.timestampMs))
            }
            guard sample.timestampMs >= lastMs else {
                throw SessionError("a reading at \(sample.timestampMs) ms comes before the previous one at \(lastMs) ms")
            }
            out += due(before: sample.timestampMs, id: id)
            samples.append(sample)
            lastMs = sample.timestampMs
            return out
        }
        for e in events { callback?(e) }
    }

    /// Ends the session: the frames still due up to the last reading, then the summary over the whole session.
    public func stop(sessionId: String) throws(SessionError) {
        let (events, callback) = try locked { () throws(SessionError) -> ([SessionEvent], ((SessionEvent) -> Void)?) in
            guard self.sessionId == sessionId else { throw SessionError("no running session \(sessionId)") }
            var out = due(before: lastMs + 1, id: sessionId)
            if config.includeRaw && rawFrom < samples.count {
                // The readings after the last raw boundary.
                out.append(.biosignal(sessionId: sessionId, samples: Array(samples[rawFrom...]),
                                      startMs: nextRawMs - Int64(config.profile.rawEmitIntervalSec * 1000), endMs: lastMs))
            }
            if let start = startMs {
                out.append(.summary(sessionId: sessionId, metrics: SessionMetrics.compute(samples[...], start: start, end: lastMs)))
            }
            let cb = self.callback
            self.sessionId = nil; self.callback = nil; samples = []
            return (out, cb)
        }
        for e in events { callback?(e) }
    }

    private func locked<T>(_ body: () throws(SessionError) -> T) throws(SessionError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// The first reading at or after index `from` that is later than `t` (readings are in time order): the scans
    /// resume where the last frame's left off, so a long session costs its window per frame, not its whole length.
    private func index(after t: Int64, from: Int) -> Int {
        var i = from
        while i < samples.count && samples[i].timestampMs <= t { i += 1 }
        return i
    }

    /// Frames (and raw frames) whose time has come before `time`.
    private func due(before time: Int64, id: String) -> [SessionEvent] {
        var out: [SessionEvent] = []
        let window = Int64(config.profile.windowSec * 1000), emit = Int64(config.profile.emitIntervalSec * 1000)
        while nextFrameMs < time || (config.includeRaw && nextRawMs < time) {
            if config.includeRaw && nextRawMs <= nextFrameMs && nextRawMs < time {
                let upto = index(after: nextRawMs, from: rawFrom)
                if upto > rawFrom {
                    out.append(.biosignal(sessionId: id, samples: Array(samples[rawFrom..<upto]),
                                          startMs: nextRawMs - Int64(config.profile.rawEmitIntervalSec * 1000), endMs: nextRawMs))
                }
                rawFrom = upto
                nextRawMs += Int64(config.profile.rawEmitIntervalSec * 1000)
                continue
            }
            guard nextFrameMs < time else { break }
            // The window (end − window, end], from the session's first reading on.
            let first = startMs ?? 0
            let start = max(first, nextFrameMs - window)
            let lo = start == first ? 0 : index(after: start, from: frameFrom)
            let hi = index(after: nextFrameMs, from: lo)
            frameFrom = lo
            out.append(.frame(sessionId: id, metrics: SessionMetrics.compute(samples[lo..<hi], start: start, end: nextFrameMs)))
            nextFrameMs += emit
        }
        return out
    }
}
