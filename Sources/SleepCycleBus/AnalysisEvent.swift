import Foundation
import SleepCycleDSP

/// Stream time: samples since the session started, at the analysis rate (`AnalysisClock.sampleRate`, 16 kHz).
/// Everything on the bus is timed with it; wall-clock time is `AnalysisClock.date(of:)`.
public typealias SampleTime = Int64

/// Maps stream time to wall-clock time through the session's start date. Never reads the system clock.
public struct AnalysisClock: Sendable, Hashable {
    public static let sampleRate = 16_000
    public var start: Date
    public init(start: Date) { self.start = start }
    public func date(of t: SampleTime) -> Date { start.addingTimeInterval(Double(t) / Double(Self.sampleRate)) }
    public static func seconds(_ t: SampleTime) -> Double { Double(t) / Double(sampleRate) }

    /// The longest time span the timeline represents (±100 years); user-supplied times beyond it are refused.
    public static let maxSeconds: Double = 100 * 366 * 86_400

    /// `seconds` on the timeline, rounded to the nearest sample. Saturating: NaN is 0 and values beyond
    /// ±`maxSeconds` are clamped, so a conversion never traps. Check user input with `checkedSamples(seconds:)`.
    public static func samples(seconds: Double) -> SampleTime {
        guard !seconds.isNaN else { return 0 }
        let s = max(-maxSeconds, min(maxSeconds, seconds))
        return SampleTime((s * Double(sampleRate)).rounded())
    }

    /// `seconds` on the timeline, or nil when it is not finite or beyond ±`maxSeconds` (user input: a CSV time of
    /// `1e300` is an error to report, not a time).
    public static func checkedSamples(seconds: Double) -> SampleTime? {
        guard seconds.isFinite, abs(seconds) <= maxSeconds else { return nil }
        return SampleTime((seconds * Double(sampleRate)).rounded())
    }
}

public enum AudioChannel: Int, Sendable, Hashable, Codable, CaseIterable {
    case primary = 0, secondary = 1
    public var name: String { self == .primary ? "primary" : "secondary" }
}

/// Analysis-rate audio, one array per channel, all the same length, starting at `start`.
public struct AudioBlock: Sendable {
    public var start: SampleTime
    public var channels: [[Float]]
    public var frameCount: Int { channels.first?.count ?? 0 }
    public var end: SampleTime { start + SampleTime(frameCount) }
    public init(start: SampleTime, channels: [[Float]]) { self.start = start; self.channels = channels }
}

/// Why audio is missing from the timeline.
public enum GapReason: String, Sendable, Codable {
    case overrun        // capture could not keep up (ALSA xrun); samples lost
    case missingInput   // no audio arrived (device vanished, host stopped pushing buffers)
    case late           // an injected buffer arrived after a hole in the timeline
}

/// A stretch of the timeline with no audio.
public struct AudioGap: Sendable, Codable {
    public var start: SampleTime
    public var length: SampleTime
    public var reason: GapReason
    public init(start: SampleTime, length: SampleTime, reason: GapReason) {
        self.start = start; self.length = length; self.reason = reason
    }
}

public enum EventType: String, Sendable, Hashable, Codable, CaseIterable {
    case snoring, talking, coughing, movement
}

public enum EventSource: String, Sendable, Codable { case audio, accelerometer }

/// A two-sleeper candidate event and the cues the attributor measured on it (`ChannelAttributor`): what deciding its
/// sleeper needs once its audio is gone.
public struct AttributionCandidate: Sendable, Codable {
    /// The detection, tagged with the channel whose detector found it.
    public var event: SoundEvent
    /// Level difference primary − secondary (dB), and the two channels' (noise-compensated) energies.
    public var levelDifferenceDB: Double
    public var energyPrimary: Double
    public var energySecondary: Double
    /// The time cue: delay (samples; positive: the primary microphone heard it first) and the PHAT peak height.
    public var delayLag: Double?
    public var delayHeight: Float?
    /// The level and time cues alone (−1…1), shared with neighbouring snores.
    public var cueZ: Double
    /// A talking event the detector holds for the sustained-speech rule (not yet a candidate).
    public var held: Bool

    public init(event: SoundEvent, levelDifferenceDB: Double, energyPrimary: Double, energySecondary: Double,
                delayLag: Double?, delayHeight: Float?, cueZ: Double, held: Bool) {
        self.event = event; self.levelDifferenceDB = levelDifferenceDB
        self.energyPrimary = energyPrimary; self.energySecondary = energySecondary
        self.delayLag = delayLag; self.delayHeight = delayHeight; self.cueZ = cueZ; self.held = held
    }
}

/// A detected sound event (or accelerometer movement).
public struct SoundEvent: Sendable, Identifiable, Codable {
    /// Unique within a session, increasing in order of detection.
    public var id: Int
    public var type: EventType
    public var start: SampleTime
    public var end: SampleTime
    /// Calibrated probability that the event is of `type` (0…1).
    public var probability: Double
    public var source: EventSource
    /// nil for mono input.
    public var channel: AudioChannel?
    /// 16-d snore signature (snoring only).
    public var signature: [Float]?
    /// With channel separation: how sure the attribution of the event to `channel`'s sleeper is (0.5…1); nil
    /// otherwise.
    public var attributionConfidence: Double?
    public init(id: Int, type: EventType, start: SampleTime, end: SampleTime, probability: Double,
                source: EventSource = .audio, channel: AudioChannel? = nil, signature: [Float]? = nil,
                attributionConfidence: Double? = nil) {
        self.id = id; self.type = type; self.start = start; self.end = end; self.probability = probability
        self.source = source; self.channel = channel; self.signature = signature
        self.attributionConfidence = attributionConfidence
    }
}

/// One breathing-rate estimate, timed at the centre of its analysis window.
public struct BreathingEstimate: Sendable, Codable {
    public var time: SampleTime
    public var bpm: Double
    public var confidence: Double
    public var channel: AudioChannel?
    public init(time: SampleTime, bpm: Double, confidence: Double, channel: AudioChannel? = nil) {
        self.time = time; self.bpm = bpm; self.confidence = confidence; self.channel = channel
    }
}

/// New samples of the breathing envelope since the last update ("only new samples" semantics).
public struct BreathingTraceChunk: Sendable {
    public var start: SampleTime
    /// Samples per second of `values` (about 10 Hz).
    public var rateHz: Double
    public var values: [Float]
    /// nil for mono input.
    public var channel: AudioChannel?
    public init(start: SampleTime, rateHz: Double, values: [Float], channel: AudioChannel? = nil) {
        self.start = start; self.rateHz = rateHz; self.values = values; self.channel = channel
    }
}

public enum SleepStage: String, Sendable, Hashable, Codable, CaseIterable {
    case awake, light, deep, rem
}

/// One scored stretch (normally one 30-s epoch).
public struct StageEpoch: Sendable {
    public var start: SampleTime
    public var end: SampleTime
    public var stage: SleepStage
    /// With channel separation: whose hypnogram the epoch belongs to; nil otherwise.
    public var channel: AudioChannel?
    public init(start: SampleTime, end: SampleTime, stage: SleepStage, channel: AudioChannel? = nil) {
        self.start = start; self.end = end; self.stage = stage; self.channel = channel
    }
}

public enum AudioHealthStatus: String, Sendable, Hashable, Codable {
    case healthy, flatline, missingInput
}

/// The audio input's health changed to `status` at `time`.
public struct AudioHealthChange: Sendable, Codable {
    public var time: SampleTime
    public var status: AudioHealthStatus
    public var channel: AudioChannel?
    public init(time: SampleTime, status: AudioHealthStatus, channel: AudioChannel? = nil) {
        self.time = time; self.status = status; self.channel = channel
    }
}

/// The input's sound level over one second of one channel: the mean power (mean square of the samples, full scale
/// = 1) of the analysis frames centred in [`start`, `end`), from their RMS (`FeatureLayout.rms`).
public struct LevelReading: Sendable, Codable, Hashable {
    public var start: SampleTime
    public var end: SampleTime
    /// Mean of the frames' RMS² (linear power; a full-scale square wave is 1).
    public var power: Double
    /// nil for mono input.
    public var channel: AudioChannel?
    public init(start: SampleTime, end: SampleTime, power: Double, channel: AudioChannel? = nil) {
        self.start = start; self.end = end; self.power = power; self.channel = channel
    }

    /// `power` in dBFS (10·log10, full-scale square wave 0 dBFS, a full-scale sine −3 dBFS), floored at
    /// `floorDb` so that digital silence is a number.
    public var levelDb: Double { Self.decibels(power) }

    /// −120 dBFS: below the quantisation noise of 24-bit audio.
    public static let floorDb = -120.0

    /// 10·log10(power), floored at `floorDb`.
    public static func decibels(_ power: Double) -> Double {
        guard power.isFinite, power > 0 else { return floorDb }
        return max(floorDb, 10 * log10(power))
    }
}

/// A heart-rate observation from a wearable: bpm, an RR interval, or both.
public struct HeartRateSample: Sendable, Codable {
    public var time: SampleTime
    public var bpm: Double?
    public var rrMs: Double?
    public init(time: SampleTime, bpm: Double? = nil, rrMs: Double? = nil) {
        self.time = time; self.bpm = bpm; self.rrMs = rrMs
    }
}

/// Heart-rate and HRV values over a span of readings (the HRV Task Force's definitions; docs/0011). HRV values are nil
/// when the span holds too few beats after artefact correction ("latest valid sample": nothing rather than a wrong
/// number); `hrMeanBpm` is nil only without any reading.
public struct HeartMetrics: Sendable, Codable, Hashable {
    /// Beats (NN intervals after correction) in the span, or heart-rate readings when there are no RR intervals.
    public var sampleCount: Int
    public var hrMeanBpm: Double?
    /// SD of the NN intervals (ms, n − 1).
    public var hrSdnnMs: Double?
    /// Root mean square of successive NN differences (ms).
    public var rmssdMs: Double?
    public var meanNNMs: Double?
    /// Successive differences over 50 ms, % of the differences.
    public var pnn50: Double?
    /// Baevsky's stress index (50-ms histogram).
    public var baevskySI: Double?
    /// Low- (0.04–0.15 Hz) and high-frequency (0.15–0.4 Hz) power (ms²) and their ratio; nil under 2 minutes of beats.
    public var lfMs2: Double?
    public var hfMs2: Double?
    public var lfHf: Double?
    /// Beats corrected as artefacts (missed, extra, ectopic, long/short).
    public var artifactCount: Int
    public init(sampleCount: Int = 0, hrMeanBpm: Double? = nil, hrSdnnMs: Double? = nil, rmssdMs: Double? = nil,
                meanNNMs: Double? = nil, pnn50: Double? = nil, baevskySI: Double? = nil, lfMs2: Double? = nil,
                hfMs2: Double? = nil, lfHf: Double? = nil, artifactCount: Int = 0) {
        self.sampleCount = sampleCount; self.hrMeanBpm = hrMeanBpm; self.hrSdnnMs = hrSdnnMs; self.rmssdMs = rmssdMs
        self.meanNNMs = meanNNMs; self.pnn50 = pnn50; self.baevskySI = baevskySI
        self.lfMs2 = lfMs2; self.hfMs2 = hfMs2; self.lfHf = lfHf; self.artifactCount = artifactCount
    }
}

/// A heart session's frame on the bus: `metrics` over the sliding window `start..<end`, and the mean heart rate of
/// its last emit interval `intervalStart..<end` alone (the per-epoch heart rate staging reads).
public struct HeartFrame: Sendable, Codable, Hashable {
    public var start: SampleTime
    public var end: SampleTime
    public var intervalStart: SampleTime
    public var intervalHrMeanBpm: Double?
    public var metrics: HeartMetrics
    public init(start: SampleTime, end: SampleTime, intervalStart: SampleTime, intervalHrMeanBpm: Double?,
                metrics: HeartMetrics) {
        self.start = start; self.end = end; self.intervalStart = intervalStart
        self.intervalHrMeanBpm = intervalHrMeanBpm; self.metrics = metrics
    }
}

/// Accelerometer activity (counts or magnitude of x,y,z), from a wearable or phone.
///
/// A sample can stand for several readings (`count`): `activity` is then their mean, and consumers weigh it by
/// `count` (the stager's per-epoch mean is the readings' mean, however they were grouped). `binned(_:every:)` makes
/// such samples from a file's readings, so that a night of 50-Hz accelerometer rows is not millions of bus events.
public struct MotionSample: Sendable, Codable {
    public var time: SampleTime
    public var activity: Double
    /// How many readings `activity` is the mean of (≥ 1).
    public var count: Int
    public init(time: SampleTime, activity: Double, count: Int = 1) {
        self.time = time; self.activity = activity; self.count = max(1, count)
    }

    private enum CodingKeys: String, CodingKey { case time, activity, count }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // Journals written before readings were grouped have no count: one reading per sample.
        self.init(time: try c.decode(SampleTime.self, forKey: .time), activity: try c.decode(Double.self, forKey: .activity),
                  count: try c.decodeIfPresent(Int.self, forKey: .count) ?? 1)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(time, forKey: .time)
        try c.encode(activity, forKey: .activity)
        if count != 1 { try c.encode(count, forKey: .count) }
    }

    /// `samples` (in time order, as the readers deliver them) grouped by the open intervals between multiples of
    /// `every` samples of the timeline (with `every` dividing the stager's 30-s epoch, no group straddles an epoch):
    /// one sample per run of consecutive readings in one interval, dated at the run's first reading, with their mean
    /// activity and total count. A reading exactly on a multiple stays alone, so a recording that starts or ends on
    /// one (the session's start, a whole number of seconds) splits no group: what lies outside it is counted and
    /// dropped exactly as the single readings would be. An end between two multiples falls inside a group, which
    /// is used whole (it is dated before the end): up to `every` of readings after the end are then used and not
    /// counted as outside. Readings out of time order only split a run, so the epochs' means are the same.
    public static func binned(_ samples: [MotionSample], every: SampleTime) -> [MotionSample] {
        precondition(every > 0, "the grouping interval must be positive")
        /// 2k + 1 inside the open interval (k·every, (k+1)·every), 2k on the multiple k·every.
        func bin(_ t: SampleTime) -> SampleTime {
            let k = t >= 0 ? t / every : -((-t + every - 1) / every)
            return 2 * k + (t == k * every ? 0 : 1)
        }
        var out: [MotionSample] = []
        var i = 0
        while i < samples.count {
            let first = samples[i], b = bin(first.time)
            var sum = 0.0, n = 0
            while i < samples.count, bin(samples[i].time) == b, b & 1 == 1 || n == 0 {
                sum += samples[i].activity * Double(samples[i].count); n += samples[i].count; i += 1
            }
            out.append(MotionSample(time: first.time, activity: sum / Double(n), count: n))
        }
        return out
    }
}

/// A smart-alarm decision: when it fired and which rule fired it.
public struct AlarmFired: Sendable, Codable {
    public var time: SampleTime
    public var rule: String
    public init(time: SampleTime, rule: String) { self.time = time; self.rule = rule }
}

/// Audio at the source's own rate, before resampling (published only when a consumer needs it: audio clips).
public struct SourceAudioBlock: Sendable {
    /// Frames per second of the source.
    public var sampleRate: Int
    /// Where the source's frame 0 lies on the timeline (analysis samples): 0, or where a resumed night's new audio
    /// begins. Frame f of the source lies at `origin` + f · 16000 / `sampleRate`.
    public var origin: SampleTime
    /// The block's first frame, counted at the source rate from the source's start (gaps included).
    public var start: Int64
    /// The analysed channels (1 or 2), as decoded or captured: the 16-bit values of a source of ≤ 16-bit integers,
    /// else floats.
    public var samples: PlanarSamples
    /// Bits of the integer PCM the samples came from (sample · 2^(bits−1) is an integer), nil for float or lossy
    /// sources.
    public var integerBits: Int?
    public var frameCount: Int { samples.frameCount }
    public init(sampleRate: Int, origin: SampleTime, start: Int64, samples: PlanarSamples, integerBits: Int?) {
        self.sampleRate = sampleRate; self.origin = origin; self.start = start; self.samples = samples
        self.integerBits = integerBits
    }
}

/// An audio clip of a sound event: written, or given up (a per-night size cap or per-type limit kept more probable
/// events, or the write failed; a clip written earlier and given up later has its file removed).
public struct AudioClipReady: Sendable, Codable, Hashable {
    public enum Status: String, Sendable, Codable, Hashable { case written, dropped }
    public var eventId: Int
    public var type: EventType
    public var status: Status
    /// The clip's span on the timeline (analysis samples; its first and last sample rounded to the 16 kHz grid).
    public var start: SampleTime
    public var end: SampleTime
    /// The clip's first sample as a frame count at the source rate from the start of the timeline (for a file: the
    /// frame index in the file), its length in frames and the rate.
    public var firstFrame: Int64
    public var frameCount: Int
    public var sampleRate: Int
    /// The file, relative to the clips folder (`<sessionId>/<name>.flac` or `.flac.enc`); nil when dropped before
    /// being written.
    public var path: String?
    public var encrypted: Bool
    /// Size of the file in bytes (0 when dropped).
    public var bytes: Int
    /// Why a clip was dropped (one line), nil when written.
    public var reason: String?
    public init(eventId: Int, type: EventType, status: Status, start: SampleTime, end: SampleTime, firstFrame: Int64,
                frameCount: Int, sampleRate: Int, path: String?, encrypted: Bool, bytes: Int, reason: String? = nil) {
        self.eventId = eventId; self.type = type; self.status = status; self.start = start; self.end = end
        self.firstFrame = firstFrame; self.frameCount = frameCount; self.sampleRate = sampleRate; self.path = path
        self.encrypted = encrypted; self.bytes = bytes; self.reason = reason
    }

    /// `event`'s clip given up before anything was cut or written, for `reason`.
    public static func dropped(_ event: SoundEvent, sampleRate: Int, reason: String) -> AudioClipReady {
        AudioClipReady(eventId: event.id, type: event.type, status: .dropped, start: event.start, end: event.end,
                       firstFrame: 0, frameCount: 0, sampleRate: sampleRate, path: nil, encrypted: false, bytes: 0,
                       reason: reason)
    }
}

/// What a session knows about itself when it starts.
public struct SessionInfo: Sendable {
    public var id: UUID
    public var clock: AnalysisClock
    /// Rate and channel count of the source before resampling.
    public var sourceSampleRate: Int
    public var channelCount: Int
    /// Where this session's audio begins on the timeline: 0, or for a resumed night the position its journal had
    /// reached (what came before is the journal's, not for the producers to judge).
    public var timelineStart: SampleTime
    public init(id: UUID, clock: AnalysisClock, sourceSampleRate: Int, channelCount: Int, timelineStart: SampleTime = 0) {
        self.id = id; self.clock = clock; self.sourceSampleRate = sourceSampleRate; self.channelCount = channelCount
        self.timelineStart = timelineStart
    }
}

/// Everything that happens during an analysis. Ordered by stream time of publication, delivered in FIFO order.
public enum AnalysisEvent: Sendable {
    case sessionStarted(SessionInfo)
    case audio(AudioBlock)
    /// The same audio at the source's rate, published just before the `.audio` blocks that carry it, only when a
    /// consumer asked for it (`AudioClips`).
    case sourceAudio(SourceAudioBlock)
    case features(FeatureBlock)
    case gap(AudioGap)
    case eventStarted(SoundEvent)
    case eventEnded(SoundEvent)
    /// With channel separation: an event one channel's detector found, before it is attributed to a sleeper.
    /// The attributor (`ChannelAttributor`) publishes each sound once, as `.eventStarted` + `.eventEnded` with the
    /// sleeper's channel; nothing else reads candidates.
    case eventCandidate(SoundEvent)
    /// A talking event the detector has found and holds back for the sustained-speech rule (published a minute
    /// and a half later as `.eventStarted` + `.eventEnded`, or dropped as a TV's or a conversation's). Its `id` is
    /// −1 (an id is given when it is published). Only a live night's journal reads it, so that a crash during the
    /// hold does not lose the event: a resume decides it on what the journal knows (`NightReplay`). With channel
    /// separation the attributor measures it (`.candidateMeasured`), and the journal keeps that instead.
    case eventHeld(SoundEvent)
    /// With channel separation: a candidate (or a held talking candidate) with the cues the attributor measured on
    /// it while its audio was in the ring. Only a live night's journal reads it: a resume decides the candidates
    /// still waiting for the attributor at the crash on these cues (`ChannelAttributor.resume`).
    case candidateMeasured(AttributionCandidate)
    case breathingRate(BreathingEstimate)
    case breathingTrace(BreathingTraceChunk)
    case sleepStage(StageEpoch)
    /// The whole-night pass's final decision for an epoch (published at `.sessionEnding`); replaces the online
    /// `.sleepStage` for the same start in the result. Not sent to `sleepStageStream`, which stays causal.
    case sleepStageRevised(StageEpoch)
    case healthChanged(AudioHealthChange)
    /// One second's sound level of a channel (`LevelMeter`).
    case level(LevelReading)
    case heartRate(HeartRateSample)
    /// The heart session's frame (`HeartSession`): HR and HRV over its window, every emit interval. Boxed
    /// (`indirect`), as are the summary and the clip: a frame's 200 bytes inline would make every event that size,
    /// and a night's motion or heart-rate samples are held as events (a 50-Hz accelerometer: 1.4 million a night).
    indirect case heartFrame(HeartFrame)
    /// The heart session's summary over the whole night, at `.sessionEnding` (or a sleeper's `.channelEnding`).
    indirect case heartSummary(HeartFrame)
    case motion(MotionSample)
    case alarm(AlarmFired)
    indirect case clip(AudioClipReady)
    /// With channel separation: one sleeper's session stops while the other's goes on (`stopAnalysis(channel:)`);
    /// that sleeper's whole-night consumers flush as at `.sessionEnding`.
    case channelEnding(AudioChannel, at: SampleTime)
    /// The end of the analysed audio: every consumer flushes what it holds.
    case sessionEnding(at: SampleTime)
    case sessionEnded(at: SampleTime)
}
