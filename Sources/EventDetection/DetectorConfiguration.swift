import SleepCycleBus

/// Tunable thresholds of the detector. Every default is documented in docs/0005-event-detection.md; the built-in
/// model was trained with these segmentation settings, so change them only together with re-training.
public struct DetectorConfiguration: Sendable, Hashable {
    /// Exponential smoothing time constant of the per-band power before minimum tracking (seconds).
    public var floorSmoothingSec: Double = 0.2
    /// Length of one minimum-statistics sub-window (seconds).
    public var floorSubWindowSec: Double = 1.0
    /// Number of sub-windows: the floor is the minimum over the last `floorSubWindows × floorSubWindowSec`.
    public var floorSubWindows: Int = 6
    /// Bias compensation of the minimum (linear power factor; 3.0 ≈ +4.8 dB: the minimum of a few-frame-smoothed periodogram lies well below the mean, cf. Martin 2001; measured on generated backgrounds so that ≤ 1 % of background frames exceed `offThresholdDb`).
    public var floorBias: Float = 3.0
    /// Lowest floor per mel band (mel power units, about −100 dB re full scale): digital silence never
    /// makes dither look like an event.
    public var absoluteFloorPower: Float = 1e-8

    /// A segment opens when the frame SNR (dB over the floor, best band group) reaches this. At 9 dB, a fifth of
    /// the snores 5 dB over the bed and two fifths of those at 0 dB never opened a segment (fold-2 conditions with
    /// quiet breathing; docs/0005-event-detection-log.md, "On threshold 7 dB"); the frames this adds are mostly
    /// background, which the screen takes.
    public var onThresholdDb: Float = 7
    /// An open segment continues while the frame SNR stays at or above this.
    public var offThresholdDb: Float = 4
    /// Gaps below the off threshold up to this long are bridged (seconds).
    public var bridgeGapSec: Double = 0.3
    /// Segments shorter than this are discarded (seconds).
    public var minSegmentSec: Double = 0.15
    /// Segments are cut at this length and classified piecewise (seconds). 2 s, not longer: when the sleeper's
    /// sounds are no louder than their breathing (low SNR, a distant or turned-away sleeper), the peak-relative
    /// end (`splitDropDb`) never separates them, and a snore inside a long stretch of breathing was classified
    /// with it, as breathing. Chosen on fold 2's conditions (docs/0005).
    public var maxSegmentSec: Double = 2.0
    /// An open segment also ends (after the bridge gap) when the frame SNR stays more than this below the
    /// segment's peak SNR (dB): sounds that follow each other above the background — a snore and the audible
    /// breath after it, coughs in a burst — are classified one by one instead of as one mixed segment.
    public var splitDropDb: Float = 10

    /// An event is reported only when its class probability is at least this.
    public var minProbability: Double = 0.5
    /// Prior weights on the final class probabilities of each segment (classes not listed: 1): each probability is
    /// multiplied by its class's weight and the vector renormalised before the class and `minProbability` are
    /// decided — a shift of the operating point, as if the class were that much more common than in training.
    /// Empty by default (the model's own probabilities).
    public var classWeights: [EventType: Double] = [:]
    /// A finished event (after merging) is reported only when its probability reaches its class's value here
    /// (classes not listed: `minProbability`). Coughing 0.7: cough events at 0.5–0.7 are mostly breathing or
    /// background next to real coughs; snoring loses recall when raised. Talking 0.6: the F1 of 0.5 with a third
    /// fewer false talking events on nights without talk. Chosen on the comparison nights; figures in docs/0005.
    public var minEventProbability: [EventType: Double] = [.coughing: 0.7, .talking: 0.6]
    /// A finished event of a class listed in both that lasts at least `longEventSec[type]` is reported from
    /// `minLongEventProbability[type]` instead (seconds). Empty by default: an operating-point knob, like
    /// `classWeights`. Measured for coughing (0.7 s from 0.5: bursts of coughs pass, a lone click or knock does not): it
    /// raised coughing F1 on the unseen conditions but more than doubled false coughs on sneezes, crackling fire and
    /// clocks on the evaluation nights, so it is off (docs/0005-event-detection-log.md, "Long cough events").
    public var longEventSec: [EventType: Double] = [:]
    public var minLongEventProbability: [EventType: Double] = [:]

    /// The probability a finished event of `type` lasting `durationSec` needs to be reported
    /// (`minEventProbability`, `minLongEventProbability`, else `minProbability`).
    public func eventThreshold(_ type: EventType, durationSec: Double) -> Double {
        let threshold = minEventProbability[type] ?? minProbability
        guard let long = longEventSec[type], let lower = minLongEventProbability[type], durationSec >= long else {
            return threshold
        }
        return min(threshold, lower)
    }
    /// Sustained speech (a TV, a radio, a conversation in the room) is not reported as talking: a talking event is
    /// dropped when talking events (its own included) cover at least `sustainedSpeechShare` both of the span from
    /// this long before its start to its end and of the span from its start to this long after its end
    /// (`SustainedSpeechGate`); talking events are therefore published this much later (seconds; 0 = off).
    /// 90 s and 0.5 were chosen on the folds 2–3 TV nights (`tv_nights.py`): sleep talk of 1–3 words and monologues
    /// of 6–12 words every 20–60 s keep every second; a programme of held-out voices goes from 77 % to 19 % of its
    /// time reported as talking (docs/0005).
    public var sustainedSpeechWindowSec: Double = 90
    public var sustainedSpeechShare: Double = 0.5
    /// Machines repeat themselves exactly (a ticking clock, a dripping tap): a segment whose onset envelope copies
    /// the ones one, two and three beat periods (0.32–2 s) before it (`EchoTracker`) at least `machineEcho` closely
    /// is classified none; while at least half of the channel's last 20 segments (10 at least) echo at
    /// `machineTickingEcho` or more — a clock is ticking —, `machineEchoWhileTicking` suffices. Set from the echo of
    /// the evaluation nights' segments (at most 0.4 % of event segments reach 0.55, 0–5 % reach 0.4) and the
    /// all-night clocks (`clock_nights.py`, docs/0005). `machineEcho` above 1: off.
    public var machineEcho: Float = 0.55
    public var machineEchoWhileTicking: Float = 0.4
    public var machineTickingEcho: Float = 0.5
    /// Also compare a segment with the sound one, two and three beat periods after it (heard by the time the
    /// context stage decides it): a clock's first ticks, before they have a past to echo. Only with the context
    /// stage (without it segments are decided as they close).
    public var machineEchoAfter = true
    /// Segments of one class at most this far apart are merged into one event (seconds). Snoring is reported per
    /// snore (0: only the abutting pieces of one sound cut at `maxSegmentSec` join), a cough burst as one event, an
    /// utterance as one event, a rustle as one event.
    public var mergeGapSec: [EventType: Double] = [.snoring: 0, .talking: 1.5, .coughing: 1.0, .movement: 1.0]
    /// Snore-bout rule: a snore is reported if another snore-classified segment lies within this time of it
    /// (snores repeat at the breathing period), or if its own probability reaches `isolatedSnoreProbability`.
    public var snoreBoutWindowSec: Double = 12
    public var isolatedSnoreProbability: Double = 0.9

    public init() {}
    public static let `default` = DetectorConfiguration()

    /// Throws `DetectionError.invalidConfiguration` naming the first setting out of its range.
    public func validate() throws {
        func check(_ ok: Bool, _ what: String) throws {
            if !ok { throw DetectionError.invalidConfiguration(what) }
        }
        try check(floorSmoothingSec > 0, "floorSmoothingSec must be > 0")
        try check(floorSubWindowSec > 0 && floorSubWindows >= 1, "floor window must be positive")
        try check(offThresholdDb <= onThresholdDb, "offThresholdDb must not exceed onThresholdDb")
        try check(splitDropDb > 0, "splitDropDb must be > 0")
        try check(minSegmentSec >= 0 && maxSegmentSec > minSegmentSec, "need 0 ≤ minSegmentSec < maxSegmentSec")
        try check((0...1).contains(minProbability), "minProbability must be in 0…1")
        try check(minEventProbability.values.allSatisfy { (0...1).contains($0) }, "minEventProbability must be in 0…1")
        try check(minLongEventProbability.values.allSatisfy { (0...1).contains($0) },
                  "minLongEventProbability must be in 0…1")
        try check(longEventSec.values.allSatisfy { $0 >= 0 && $0.isFinite }, "longEventSec must be finite and ≥ 0")
        try check(classWeights.values.allSatisfy { $0 > 0 && $0.isFinite }, "classWeights must be finite and > 0")
        try check(sustainedSpeechWindowSec >= 0, "sustainedSpeechWindowSec must be ≥ 0")
        try check(machineEcho > 0 && machineEchoWhileTicking > 0 && machineTickingEcho > 0,
                  "machineEcho, machineEchoWhileTicking and machineTickingEcho must be > 0")
        try check(sustainedSpeechShare > 0 && sustainedSpeechShare <= 1, "sustainedSpeechShare must be in (0, 1]")
    }
}

/// Errors of the detection module; `description` is one line naming the file or setting and the problem.
public enum DetectionError: Error, CustomStringConvertible, Sendable {
    case invalidConfiguration(String)
    case modelUnreadable(path: String, reason: String)
    case modelInvalid(path: String, reason: String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let what): return "detector configuration: \(what)"
        case .modelUnreadable(let path, let reason): return "\(path): cannot read event model (\(reason))"
        case .modelInvalid(let path, let reason): return "\(path): invalid event model (\(reason))"
        }
    }
}
