import Foundation
import SleepCycleBus
import SleepCycleFormats

/// How the sounds of a stereo recording are attributed to two sleepers, one per channel: channel 0 (left) is the
/// `primary` sleeper's, channel 1 (right) the `secondary`'s (the Sleep Cycle SDK's multi-channel model).
///
/// Every event one channel's detector finds is scored on three cues (docs/0009-two-sleepers.md):
/// * **level**: the noise-compensated level difference between the microphones over the event (a sleeper is
///   louder at the microphone nearer them; inverse-square law plus the room's direct-to-reverberant ratio);
/// * **time**: the time difference of arrival from GCC-PHAT (the sound reaches the nearer microphone first), used
///   only when the PHAT peak is clear (its height, a coherence measure) and the delay lies outside the ambiguous
///   zone around zero;
/// * **strength**: the detection probabilities of the event on each channel.
///
/// Each cue gives a value in −1…1 (positive: the primary sleeper); their weighted mean `z` picks the side, and
/// `attributionConfidence = 1 / (1 + e^(−confidenceSlope·|z|))` says how sure that is.
public struct ChannelSeparationConfig: Sendable, Hashable, Codable {
    public enum Preset: String, Sendable, Hashable, Codable, CaseIterable {
        /// Two microphones apart, one near each sleeper (on the bedside tables). Level and time both speak.
        case bedSideMics = "bedside"
        /// A closely spaced pair between the sleepers, its axis along the line joining them (a stereo microphone
        /// or a smart speaker's array at the headboard). Levels barely differ: time of arrival decides.
        case centeredMicArray = "centered"
        /// No spatial cues (microphones in unknown places): the channel where the event is detected more
        /// strongly, and louder, wins.
        case detectionStrengthOnly = "strength"
    }

    /// Weights of the cues for one event type (nil: the config's own).
    public struct EventTypeSettings: Sendable, Hashable, Codable {
        public var levelWeight: Double?
        public var timeWeight: Double?
        public var strengthWeight: Double?
        public var confidenceThreshold: Double?
        public init(levelWeight: Double? = nil, timeWeight: Double? = nil, strengthWeight: Double? = nil,
                    confidenceThreshold: Double? = nil) {
            self.levelWeight = levelWeight; self.timeWeight = timeWeight; self.strengthWeight = strengthWeight
            self.confidenceThreshold = confidenceThreshold
        }
    }

    public var preset: Preset
    /// Distance between the two microphones (metres): bounds the delays searched (distance / speed of sound).
    public var microphoneDistance: Double
    /// Path-length difference (metres) under which a sound counts as coming from the middle: its time difference
    /// is not used (a sound between the sleepers, or a delay the estimate cannot tell from zero).
    public var ambiguousZone: Double
    /// Attributions less sure than this fall back to detection strength: the event goes to the channel whose
    /// detector found it with the higher probability (ties: the louder channel).
    public var confidenceThreshold: Double
    /// Cue weights (any ≥ 0, not all 0).
    public var levelWeight: Double
    public var timeWeight: Double
    public var strengthWeight: Double
    /// The level difference (dB) at which the level cue reaches tanh(1) ≈ 0.76.
    public var levelScaleDB: Double
    /// The PHAT peak height (0…1) at which the time cue counts fully; lower peaks (diffuse or reverberant sound,
    /// two sources at once) count in proportion.
    public var coherenceScale: Double
    /// Sharpness of the confidence curve: |z| = 0.5 gives 1 / (1 + e^(−slope/2)).
    public var confidenceSlope: Double
    /// Per event type overrides of the weights and threshold.
    public var perEventType: [EventType: EventTypeSettings]
    /// Snores of one sleeper sound alike (their 16-d signatures): a snore's cues are joined by those of the snores
    /// within `signatureSeconds` of it, each weighted by `signatureWeight` × its signature's cosine similarity
    /// (when positive). 0 turns it off.
    public var signatureWeight: Double = 1.0
    /// Weight each frequency of the time-difference estimate by its signal-to-noise ratio against the background
    /// just before the event (`GCCPHAT.accumulateNoise`), not only by the phase transform. Off by default: on the
    /// simulated bedrooms it attributed 1.5 points fewer events (docs/0009-two-sleepers.md).
    public var snrWeighting = false
    public var signatureSeconds: Double = 40
    /// How long after an event's end (seconds of audio) the attributor waits for the other channel's detection of
    /// the same sound before deciding.
    public var decisionDelaySeconds: Double
    /// Speed of sound (m/s).
    public var speedOfSound: Double

    public init(preset: Preset, microphoneDistance: Double, ambiguousZone: Double, confidenceThreshold: Double,
                levelWeight: Double, timeWeight: Double, strengthWeight: Double, levelScaleDB: Double = 3,
                coherenceScale: Double = 0.25, confidenceSlope: Double = 6,
                perEventType: [EventType: EventTypeSettings] = [:], decisionDelaySeconds: Double = 20,
                speedOfSound: Double = 343) {
        self.preset = preset; self.microphoneDistance = microphoneDistance; self.ambiguousZone = ambiguousZone
        self.confidenceThreshold = confidenceThreshold; self.levelWeight = levelWeight; self.timeWeight = timeWeight
        self.strengthWeight = strengthWeight; self.levelScaleDB = levelScaleDB; self.coherenceScale = coherenceScale
        self.confidenceSlope = confidenceSlope; self.perEventType = perEventType
        self.decisionDelaySeconds = decisionDelaySeconds; self.speedOfSound = speedOfSound
    }

    /// Microphones on the two bedside tables, up to 3 m apart. Movement comes from the whole body and the bed, not
    /// the head, so its time difference weighs half.
    public static let bedSideMics = ChannelSeparationConfig(
        preset: .bedSideMics, microphoneDistance: 3.0, ambiguousZone: 0.03, confidenceThreshold: 0.6,
        levelWeight: 0.5, timeWeight: 1.0, strengthWeight: 0.2, levelScaleDB: 6, coherenceScale: 0.05,
        perEventType: [.movement: EventTypeSettings(timeWeight: 0.4)])

    /// A pair 5–30 cm apart between the sleepers (default 20 cm; delays up to 0.6 ms, 9 samples at 16 kHz).
    public static let centeredMicArray = ChannelSeparationConfig(
        preset: .centeredMicArray, microphoneDistance: 0.20, ambiguousZone: 0.02, confidenceThreshold: 0.6,
        levelWeight: 1.0, timeWeight: 1.0, strengthWeight: 0.2, levelScaleDB: 1.5, coherenceScale: 0.05,
        perEventType: [.movement: EventTypeSettings(levelWeight: 0.5, timeWeight: 0.6)])

    /// Detection strength only: the level of the event on each channel (the signal's strength) and the detection
    /// probabilities (the detector's), no time difference. The level weighs more: a detector that found a sound
    /// only on the far microphone says less than the 10 dB by which the near one heard it louder.
    public static func detectionStrengthOnly(levelWeight: Double = 1.0, strengthWeight: Double = 0.5)
        -> ChannelSeparationConfig {
        ChannelSeparationConfig(preset: .detectionStrengthOnly, microphoneDistance: 0, ambiguousZone: 0,
                                confidenceThreshold: 0, levelWeight: levelWeight, timeWeight: 0,
                                strengthWeight: strengthWeight)
    }

    /// The preset's default configuration.
    public static func preset(_ preset: Preset) -> ChannelSeparationConfig {
        switch preset {
        case .bedSideMics: .bedSideMics
        case .centeredMicArray: .centeredMicArray
        case .detectionStrengthOnly: .detectionStrengthOnly()
        }
    }

    /// The largest delay searched, in samples at the analysis rate (0: time is not used).
    public var maxLagSamples: Int {
        guard timeWeight > 0 || perEventType.values.contains(where: { ($0.timeWeight ?? 0) > 0 }),
              microphoneDistance > 0 else { return 0 }
        return max(2, Int((microphoneDistance / speedOfSound * Double(AnalysisClock.sampleRate)).rounded(.up)) + 1)
    }

    /// The weights and threshold for `type`.
    func settings(for type: EventType) -> (level: Double, time: Double, strength: Double, threshold: Double) {
        let o = perEventType[type]
        return (o?.levelWeight ?? levelWeight, o?.timeWeight ?? timeWeight, o?.strengthWeight ?? strengthWeight,
                o?.confidenceThreshold ?? confidenceThreshold)
    }

    /// Throws a one-line description of the first invalid parameter.
    public func validate() throws {
        func check(_ ok: Bool, _ message: String) throws {
            if !ok { throw ChannelSeparationError(message) }
        }
        try check(microphoneDistance.isFinite && microphoneDistance >= 0 && microphoneDistance <= 5,
                  "microphone distance must be 0…5 m, got \(microphoneDistance)")
        try check(ambiguousZone.isFinite && ambiguousZone >= 0, "ambiguous zone must be ≥ 0 m, got \(ambiguousZone)")
        try check((0...1).contains(confidenceThreshold), "confidence threshold must be 0…1, got \(confidenceThreshold)")
        try check(levelScaleDB.isFinite && levelScaleDB > 0, "level scale must be > 0 dB, got \(levelScaleDB)")
        try check(coherenceScale.isFinite && coherenceScale > 0 && coherenceScale <= 1,
                  "coherence scale must be in (0, 1], got \(coherenceScale)")
        try check(confidenceSlope.isFinite && confidenceSlope > 0, "confidence slope must be > 0, got \(confidenceSlope)")
        try check(decisionDelaySeconds.isFinite && (0...120).contains(decisionDelaySeconds),
                  "decision delay must be 0…120 s, got \(decisionDelaySeconds)")
        // Weights are relative; the bound keeps their sums and products finite (1e308 + 1e308 is infinite, and the
        // confidence then NaN).
        try check(signatureWeight.isFinite && (0...1000).contains(signatureWeight),
                  "signature weight must be 0…1000, got \(signatureWeight)")
        try check(signatureSeconds.isFinite && (0...300).contains(signatureSeconds),
                  "signature span must be 0…300 s, got \(signatureSeconds)")
        try check(speedOfSound.isFinite && speedOfSound > 100, "speed of sound must be > 100 m/s, got \(speedOfSound)")
        for type in EventType.allCases {
            let s = settings(for: type)
            try check([s.level, s.time, s.strength].allSatisfy { (0...1000).contains($0) },
                      "\(type.rawValue): cue weights must be 0…1000")
            try check(s.level + s.time + s.strength > 0, "\(type.rawValue): at least one cue weight must be > 0")
            try check((0...1).contains(s.threshold), "\(type.rawValue): confidence threshold must be 0…1")
        }
        // The largest lag the frames hold is half a frame, less the rounding margin of `maxLagSamples`.
        let longest = Double(ChannelAttributor.gccFrameLength / 2 - 2) / Double(AnalysisClock.sampleRate) * speedOfSound
        try check(maxLagSamples < ChannelAttributor.gccFrameLength / 2,
                  "microphone distance \(microphoneDistance) m is too large for the 32-ms frames (at most "
                  + String(format: "%.2f", (longest * 100).rounded(.down) / 100) + " m at a speed of sound of \(speedOfSound) m/s)")
    }
}

/// An invalid channel-separation setting.
public struct ChannelSeparationError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// The settings file could not be opened or read (missing, a directory, no permission), rather than holding
    /// bad settings.
    public var unreadable = false
    public init(_ description: String, unreadable: Bool = false) { self.description = description; self.unreadable = unreadable }
}

extension ChannelSeparationConfig {
    /// A decoding error in a person's words: the setting it is about and what was wrong with it.
    static func describe(_ error: DecodingError) -> String {
        func name(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "the settings" : "'" + path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") + "'"
        }
        switch error {
        case .typeMismatch(let type, let c), .valueNotFound(let type, let c):
            let what = type == Double.self ? "a number" : type == Bool.self ? "true or false"
                : type == String.self ? "a string" : "\(type)".hasPrefix("Dictionary") ? "an object"
                : "\(type)".hasPrefix("Array") ? "an array" : "a \(type)"
            return "\(name(c.codingPath)) must be \(what)"
        case .keyNotFound(let key, let c):
            return "\(name(c.codingPath + [key])) is missing"
        case .dataCorrupted(let c):
            return "\(name(c.codingPath)) is not valid (\(c.debugDescription))"
        @unknown default:
            return "not valid channel-separation settings"
        }
    }

    /// `base` with the settings of the JSON object in the file at `path` (any of the config's keys; per event
    /// type: `"perEventType": {"movement": {"timeWeight": 0.4}}`), validated.
    /// - Throws: `ChannelSeparationError` naming the file and the problem.
    public static func load(path: String, over base: ChannelSeparationConfig) throws -> ChannelSeparationConfig {
        let data: Data
        do {
            data = Data(try InputFile.read(path, limit: 1 << 20))
        } catch {
            throw ChannelSeparationError("\(error.description) (the channel-separation settings)",
                                         unreadable: error.kind == .unreadable)
        }
        do {
            let parsed: Any
            do { parsed = try JSONSerialization.jsonObject(with: data) } catch {
                throw ChannelSeparationError("\(path): not valid JSON")
            }
            guard let given = parsed as? [String: Any] else {
                throw ChannelSeparationError("\(path): the channel-separation settings must be a JSON object")
            }
            var merged = try JSONSerialization.jsonObject(with: JSONEncoder().encode(base)) as! [String: Any]
            let known = Set(merged.keys).union(["perEventType"])
            if let unknown = given.keys.sorted().first(where: { !known.contains($0) }) {
                throw ChannelSeparationError("\(path): unknown channel-separation setting '\(unknown)'")
            }
            for (key, value) in given {
                if key == "perEventType", let types = value as? [String: Any],
                   var old = merged[key] as? [String: Any] {
                    for (type, settings) in types { old[type] = settings }
                    merged[key] = old
                } else {
                    merged[key] = value
                }
            }
            let config: ChannelSeparationConfig
            do {
                config = try JSONDecoder().decode(ChannelSeparationConfig.self, from: JSONSerialization.data(withJSONObject: merged))
            } catch let error as DecodingError {
                throw ChannelSeparationError("\(path): \(Self.describe(error))")
            }
            try config.validate()
            return config
        } catch let error as ChannelSeparationError {
            throw ChannelSeparationError(error.description.hasPrefix(path) ? error.description : "\(path): \(error.description)")
        } catch {
            throw ChannelSeparationError("\(path): not valid channel-separation settings (\(error))")
        }
    }
}

extension ChannelSeparationConfig {
    private enum CodingKeys: String, CodingKey {
        case preset, microphoneDistance, ambiguousZone, confidenceThreshold, levelWeight, timeWeight, strengthWeight
        case levelScaleDB, coherenceScale, confidenceSlope, perEventType, decisionDelaySeconds, speedOfSound
        case signatureWeight, signatureSeconds, snrWeighting
    }

    // Explicit so that `perEventType` is a JSON object keyed by event type ({"movement": {...}}), as a settings file
    // writes it, rather than the key-value array Swift gives a dictionary with enum keys.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(preset: try c.decode(Preset.self, forKey: .preset),
                  microphoneDistance: try c.decode(Double.self, forKey: .microphoneDistance),
                  ambiguousZone: try c.decode(Double.self, forKey: .ambiguousZone),
                  confidenceThreshold: try c.decode(Double.self, forKey: .confidenceThreshold),
                  levelWeight: try c.decode(Double.self, forKey: .levelWeight),
                  timeWeight: try c.decode(Double.self, forKey: .timeWeight),
                  strengthWeight: try c.decode(Double.self, forKey: .strengthWeight),
                  levelScaleDB: try c.decode(Double.self, forKey: .levelScaleDB),
                  coherenceScale: try c.decode(Double.self, forKey: .coherenceScale),
                  confidenceSlope: try c.decode(Double.self, forKey: .confidenceSlope),
                  decisionDelaySeconds: try c.decode(Double.self, forKey: .decisionDelaySeconds),
                  speedOfSound: try c.decode(Double.self, forKey: .speedOfSound))
        let types = try c.decodeIfPresent([String: EventTypeSettings].self, forKey: .perEventType) ?? [:]
        for (name, settings) in types {
            guard let type = EventType(rawValue: name) else {
                throw DecodingError.dataCorruptedError(forKey: .perEventType, in: c,
                                                       debugDescription: "unknown event type '\(name)'")
            }
            perEventType[type] = settings
        }
        signatureWeight = try c.decodeIfPresent(Double.self, forKey: .signatureWeight) ?? signatureWeight
        signatureSeconds = try c.decodeIfPresent(Double.self, forKey: .signatureSeconds) ?? signatureSeconds
        snrWeighting = try c.decodeIfPresent(Bool.self, forKey: .snrWeighting) ?? snrWeighting
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(preset, forKey: .preset)
        try c.encode(microphoneDistance, forKey: .microphoneDistance)
        try c.encode(ambiguousZone, forKey: .ambiguousZone)
        try c.encode(confidenceThreshold, forKey: .confidenceThreshold)
        try c.encode(levelWeight, forKey: .levelWeight)
        try c.encode(timeWeight, forKey: .timeWeight)
        try c.encode(strengthWeight, forKey: .strengthWeight)
        try c.encode(levelScaleDB, forKey: .levelScaleDB)
        try c.encode(coherenceScale, forKey: .coherenceScale)
        try c.encode(confidenceSlope, forKey: .confidenceSlope)
        try c.encode(Dictionary(uniqueKeysWithValues: perEventType.map { ($0.key.rawValue, $0.value) }),
                     forKey: .perEventType)
        try c.encode(decisionDelaySeconds, forKey: .decisionDelaySeconds)
        try c.encode(speedOfSound, forKey: .speedOfSound)
        try c.encode(signatureWeight, forKey: .signatureWeight)
        try c.encode(signatureSeconds, forKey: .signatureSeconds)
        try c.encode(snrWeighting, forKey: .snrWeighting)
    }
}
