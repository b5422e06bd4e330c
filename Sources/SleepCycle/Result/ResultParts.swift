import Foundation
import SleepCycleBus
import AudioHealth

/// A detected sound (or accelerometer) event in wall-clock time, as the Sleep Cycle SDK reports it.
public struct SleepEvent: Sendable, Hashable {
    public var id: Int
    public var type: EventType
    public var start: Date
    public var end: Date
    /// Calibrated probability (0…1).
    public var probability: Double
    public var source: EventSource
    /// nil for mono input.
    public var channel: AudioChannel?
    /// 16-d snore signature (snoring only).
    public var signature: [Float]?
    /// Which snorer this snore belongs to (0, 1, …), after `AnalysisResult.labellingSnorers()`; nil otherwise.
    public var snorer: Int?
    /// With channel separation: how sure the attribution to this sleeper is (0.5…1); nil otherwise.
    public var attributionConfidence: Double?
    /// The event's audio clip (`--clips DIR`), nil without one.
    public var clip: EventClip?
    /// The event's level: the loudest 1-s Leq (dBFS) during it, on its channel (docs/0012); nil when unknown.
    public var levelDb: Double?
    public var sessionId: UUID

    public init(_ event: SoundEvent, clock: AnalysisClock, sessionId: UUID) {
        id = event.id; type = event.type; start = clock.date(of: event.start); end = clock.date(of: event.end)
        probability = event.probability; source = event.source; channel = event.channel
        signature = event.signature; attributionConfidence = event.attributionConfidence; self.sessionId = sessionId
    }
}

/// Where an event's audio clip is and what it holds.
public struct EventClip: Sendable, Hashable {
    /// The file, relative to the clips folder: `<sessionId>/<event id>-<type>.flac` (`.flac.enc` when encrypted).
    public var path: String
    /// The clip's first and last sample in time.
    public var start: Date
    public var end: Date
    /// The clip's first sample as a frame index at the source's rate from the start of the recording (for
    /// `analyze`, the frame index in the input file).
    public var startFrame: Int64
    public init(path: String, start: Date, end: Date, startFrame: Int64) {
        self.path = path; self.start = start; self.end = end; self.startFrame = startFrame
    }

    /// A written clip's place on the session's clock (nil for a clip without a file). `sourceRate` is the rate
    /// `startFrame` counts at (the result's `source.sampleRate`): a night resumed at another rate has clips written
    /// at the earlier rate, whose first frame is converted (rounded) to it.
    init?(_ clip: AudioClipReady, clock: AnalysisClock, sourceRate: Int? = nil) {
        guard let path = clip.path else { return nil }
        var frame = clip.firstFrame
        if let sourceRate, sourceRate != clip.sampleRate, clip.sampleRate > 0 {
            let r = Int64(clip.sampleRate)
            frame = (frame * Int64(sourceRate) + r / 2) / r
        }
        self.init(path: path, start: clock.date(of: clip.start), end: clock.date(of: clip.end), startFrame: frame)
    }
}

/// One breathing-rate estimate (Sleep Cycle SDK `BreathingRate`).
public struct BreathingRate: Sendable, Hashable {
    public var timestamp: Date
    /// Breaths per minute.
    public var bpm: Double
    /// 0…1.
    public var confidence: Double
    public var sessionId: UUID
    public var channel: AudioChannel?
    public init(timestamp: Date, bpm: Double, confidence: Double, sessionId: UUID, channel: AudioChannel? = nil) {
        self.timestamp = timestamp; self.bpm = bpm; self.confidence = confidence; self.sessionId = sessionId
        self.channel = channel
    }
}

/// A stretch of one sleep stage.
public struct SleepStageInterval: Sendable, Hashable {
    public var stage: SleepStage
    public var start: Date
    public var end: Date
    /// With channel separation, whose hypnogram (in `sleepStageStream`); nil otherwise and in a result's sessions.
    public var channel: AudioChannel?
    public init(stage: SleepStage, start: Date, end: Date, channel: AudioChannel? = nil) {
        self.stage = stage; self.start = start; self.end = end; self.channel = channel
    }
}

/// A stretch of constant audio-input health in wall-clock time.
public struct AudioHealthUpdate: Sendable, Hashable {
    public var status: AudioHealthStatus
    public var start: Date
    /// nil while the status lasts (stream updates); set in `AnalysisResult`.
    public var end: Date?
    public var channel: AudioChannel?
    public init(status: AudioHealthStatus, start: Date, end: Date?, channel: AudioChannel? = nil) {
        self.status = status; self.start = start; self.end = end; self.channel = channel
    }
}

/// The night statistics of the JSON contract's `statistics` object (durations in seconds).
public struct SleepSessionStatistics: Sendable, Hashable {
    public var totalSleepDuration: Double = 0
    public var sleepOnsetLatency: Double = 0
    /// Sleep / time in bed, 0…1.
    public var sleepEfficiency: Double = 0
    /// nil when there was no sleep (every other statistic is then 0).
    public var finalWakeTime: Date?
    public var numberOfAwakenings: Int = 0
    public var snoreTime: Double = 0
    public var snoreSessions: [DateInterval] = []
    public var sleepStageDurations: [SleepStage: Double] = [:]
    /// The analysed recording (the night's time in bed), sleep onset to final wake, and the awake time within it
    /// (YASA's TIB, SPT, WASO; docs/0012).
    public var timeInBed: Double = 0
    public var sleepPeriodTime: Double = 0
    public var wakeAfterSleepOnset: Double = 0
    /// Sleep onset to the first REM epoch (AASM); nil without REM.
    public var remLatency: Double?
    /// Light, deep and REM as percentages (0–100) of the total sleep.
    public var sleepStagePercentages: [SleepStage: Double] = [:]
    /// Loudness-weighted snoring minutes per hour in bed (`SnoreScore`, docs/0012).
    public var snoreScore: Double = 0
    public init() {}
}

/// The night's sound level over one 30-s epoch (on the timeline's 30-s grid): Leq in dBFS (docs/0012).
public struct LoudnessEpoch: Sendable, Hashable {
    public var start: Date
    public var end: Date
    public var levelDb: Double
    public init(start: Date, end: Date, levelDb: Double) { self.start = start; self.end = end; self.levelDb = levelDb }
}

/// Audio statistics: the input's health over the night and the holes in it.
public struct AudioStatistics: Sendable, Hashable {
    /// Contiguous, covering the whole analysed audio, `healthy` stretches included (per channel for stereo).
    public var healthIntervals: [AudioHealthUpdate] = []
    /// Holes in the timeline (any length) and their total duration in seconds.
    public var gapCount = 0
    public var gapDuration: Double = 0
    public var overrunCount = 0
    public init() {}
}

/// What the analysed audio was.
public struct SourceSummary: Sendable, Hashable {
    public var path: String
    public var sampleRate: Int
    public var channels: Int
    public var durationSec: Double
    public init(path: String, sampleRate: Int, channels: Int, durationSec: Double) {
        self.path = path; self.sampleRate = sampleRate; self.channels = channels; self.durationSec = durationSec
    }
}
