// A heart session's settings (Synheart's `SessionConfig`, `ComputeProfile`, modes) and its error type.
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
    /// Correct artefacts (`ArtefactCorrection`) before HRV; off, RR intervals are taken as NN intervals as they are.
    public var correctsArtefacts: Bool
    public init(mode: SessionMode = .focus, profile: ComputeProfile = ComputeProfile(), includeRaw: Bool = false,
                correctsArtefacts: Bool = true) {
        self.mode = mode; self.profile = profile; self.includeRaw = includeRaw; self.correctsArtefacts = correctsArtefacts
    }

    /// From `{"mode": "focus", "windowSec": 60, "emitIntervalSec": 5, "rawEmitIntervalSec": 1, "includeRaw": false,
    /// "artifactCorrection": true}` (every key optional).
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
            case "includeRaw", "artifactCorrection":
                guard let flag = value as? Bool else { throw SessionError("\(key) must be true or false") }
                if key == "includeRaw" { includeRaw = flag } else { correctsArtefacts = flag }
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
