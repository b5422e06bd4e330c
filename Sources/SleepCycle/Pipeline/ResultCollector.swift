import Foundation
import SleepCycleBus
import AudioHealth

/// Collects what the session's consumers publish and builds the `AnalysisResult`; forwards items to the
/// observer streams as they happen. A bus observer, registered after every consumer.
final class ResultCollector {
    let info: SessionInfo
    let observers: SessionObservers?
    private(set) var events: [Int: SoundEvent] = [:]
    private(set) var breathing: [BreathingEstimate] = []
    /// The per-second sound levels, per channel (nil: mono), in time order.
    private(set) var levels: [AudioChannel?: [LevelReading]] = [:]
    /// Keyed by hypnogram (the sleeper's channel with channel separation) and epoch start: a later epoch for the
    /// same start (e.g. a whole-night Viterbi pass published at `.sessionEnding`) replaces the online one.
    private(set) var epochs: [EpochKey: StageEpoch] = [:]
    struct EpochKey: Hashable {
        var channel: AudioChannel?
        var start: SampleTime
        init(_ e: StageEpoch) { channel = e.channel; start = e.start }
    }
    /// With channel separation, each sleeper's session id (events and rates stream out under it); set from the
    /// engine's actor while the analysis thread reads it.
    var sessionIds: [AudioChannel: UUID] {
        get { idLock.lock(); defer { idLock.unlock() }; return ids }
        set { idLock.lock(); ids = newValue; idLock.unlock() }
    }
    private var ids: [AudioChannel: UUID] = [:]
    private let idLock = NSLock()
    private(set) var health = AudioHealthTimeline()
    private(set) var gapCount = 0
    private(set) var gapSamples: SampleTime = 0
    private(set) var overrunCount = 0
    private(set) var alarm: AlarmFired?
    /// Each event's written clip, and the clips given up (their reasons, first few kept for the warning).
    private(set) var clips: [Int: AudioClipReady] = [:]
    private(set) var droppedClips = 0
    private(set) var droppedClipReasons: [String] = []
    /// The heart session's frames on whole 5 minutes, and its night summary.
    private(set) var heartFrames: [HeartFrame] = []
    private(set) var heartSummary: HeartFrame?

    /// The alarm asked for, if any (the result reports it even when the recording ends before it fires).
    var alarmOption: PipelineOptions.AlarmOption?
    /// True while a resumed night's journal is replayed: its items are collected but not sent to the observer
    /// streams again (an app already saw them; an alarm command must not run twice).
    var replaying = false

    init(info: SessionInfo, observers: SessionObservers?) {
        self.info = info
        self.observers = observers
    }

    func observe(_ event: AnalysisEvent) {
        let clock = info.clock
        let observers = replaying ? nil : self.observers
        switch event {
        case .eventEnded(let e):
            events[e.id] = e
            observers?.events.yield(SleepEvent(e, clock: clock, sessionId: sessionId(e.channel)))
        case .breathingRate(let b):
            breathing.append(b)
            observers?.breathingRates.yield(BreathingRate(timestamp: clock.date(of: b.time), bpm: b.bpm,
                                                          confidence: b.confidence, sessionId: sessionId(b.channel),
                                                          channel: b.channel))
        case .sleepStage(let s):
            epochs[EpochKey(s)] = s
            observers?.sleepStages.yield(SleepStageInterval(stage: s.stage, start: clock.date(of: s.start),
                                                            end: clock.date(of: s.end), channel: s.channel))
        case .sleepStageRevised(let s):
            epochs[EpochKey(s)] = s
        case .level(let l):
            levels[l.channel, default: []].append(l)
        case .alarm(let a):
            alarm = a
            observers?.alarms.yield(AlarmRinging(time: clock.date(of: a.time), rule: a.rule, sessionId: info.id))
        case .healthChanged(let h):
            health.record(h)
            observers?.audioHealth.yield(AudioHealthUpdate(status: h.status, start: clock.date(of: h.time), end: nil,
                                                           channel: h.channel))
        case .clip(let c):
            if c.status == .written {
                clips[c.eventId] = c
            } else {
                clips[c.eventId] = nil
                droppedClips += 1
                if let reason = c.reason, !droppedClipReasons.contains(reason), droppedClipReasons.count < 3 {
                    droppedClipReasons.append(reason)
                }
            }
        case .heartFrame(let f):
            if f.end % HeartReport.frameInterval == 0 { heartFrames.append(f) }
        case .heartSummary(let f):
            heartSummary = f
        case .gap(let g):
            gapCount += 1
            gapSamples += g.length
            if g.reason == .overrun { overrunCount += 1 }
        default:
            break
        }
    }

    /// The session id of `channel`'s items: the sleeper's with channel separation, else the session's.
    func sessionId(_ channel: AudioChannel?) -> UUID {
        channel.flatMap { sessionIds[$0] } ?? info.id
    }

    /// The session's result; with `channel`, only that sleeper's share (channel separation), under their id, and
    /// from `start` on (a sleeper's session started after the data source).
    func result(end: SampleTime, source: SourceSummary, droppedObserverItems: Int,
                channel: AudioChannel? = nil, from start: SampleTime = 0) -> AnalysisResult {
        let clock = info.clock
        let id = sessionId(channel)
        func mine(_ c: AudioChannel?) -> Bool { channel == nil || c == channel }
        // Events end within the analysed audio (an event still open at the end is closed there).
        let soundEvents = events.values.compactMap { e -> SoundEvent? in
            guard e.start < end, e.start >= start, mine(e.channel) else { return nil }
            var e = e
            e.end = min(e.end, end)
            return e
        }.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        // A two-sleeper session's whole result carries the primary sleeper's hypnogram (and statistics); each
        // sleeper's is in their own result.
        let stageEpochs = epochs.values.filter { ($0.channel ?? .primary) == (channel ?? .primary) && $0.start >= start }
            .sorted { $0.start < $1.start }
        var intervals: [SleepStageInterval] = []
        var lastEnd: SampleTime = .min
        for e in stageEpochs {
            if let last = intervals.last, last.stage == e.stage, lastEnd == e.start {
                intervals[intervals.count - 1].end = clock.date(of: e.end)
            } else {
                intervals.append(SleepStageInterval(stage: e.stage, start: clock.date(of: e.start),
                                                    end: clock.date(of: e.end)))
            }
            lastEnd = e.end
        }
        // Channels in a fixed order, so that sums of power are the same in every run.
        let channels = levels.keys.filter { mine($0) }.sorted { ($0?.rawValue ?? -1) < ($1?.rawValue ?? -1) }
        let loudness = Self.loudness(levels: channels.flatMap { levels[$0]! }, from: start, end: end)
        let background = Self.median(loudness.map(\.levelDb))
        var eventLevels: [Int: Double] = [:]
        for e in soundEvents where e.source == .audio {
            if let level = Self.level(of: e, in: levels[e.channel] ?? []) { eventLevels[e.id] = level }
        }
        var audio = AudioStatistics()
        audio.healthIntervals = health.intervals(end: end).filter { mine($0.channel) && $0.end > start }.map {
            AudioHealthUpdate(status: $0.status, start: clock.date(of: max(start, $0.start)), end: clock.date(of: $0.end),
                              channel: $0.channel)
        }
        audio.gapCount = gapCount
        audio.gapDuration = AnalysisClock.seconds(gapSamples)
        audio.overrunCount = overrunCount
        return AnalysisResult(
            sessionId: id, startTime: clock.date(of: start), endTime: clock.date(of: end), source: source,
            events: soundEvents.map { e in
                var event = SleepEvent(e, clock: clock, sessionId: id)
                event.clip = clips[e.id].flatMap { EventClip($0, clock: clock, sourceRate: source.sampleRate) }
                event.levelDb = eventLevels[e.id]
                return event
            },
            breathingRates: breathing.filter { mine($0.channel) && $0.time >= start }.map {
                BreathingRate(timestamp: clock.date(of: $0.time), bpm: $0.bpm, confidence: $0.confidence,
                              sessionId: id, channel: $0.channel)
            },
            sleepStageIntervals: intervals,
            statistics: PipelineBuilder.statistics(epochs: stageEpochs, events: soundEvents, start: start, end: end,
                                                   clock: clock, levels: eventLevels, backgroundLevelDb: background),
            audioStatistics: audio,
            loudness: loudness.map {
                LoudnessEpoch(start: clock.date(of: $0.start), end: clock.date(of: $0.end), levelDb: $0.levelDb)
            }, analysedSamples: end, droppedObserverItems: droppedObserverItems,
            smartAlarm: channel == .secondary ? nil : alarmOption.map { option in
                let spec = option.spec(clock: clock)
                return SmartAlarmResult(alarmTime: clock.date(of: spec.alarmTime), windowStart: clock.date(of: spec.windowStart),
                                        firedAt: alarm.map { clock.date(of: $0.time) }, rule: alarm?.rule)
            },
            // The wearable is the primary sleeper's.
            heart: channel == .secondary ? nil : heartSummary.map { summary in
                HeartReport(start: clock.date(of: summary.start), end: clock.date(of: min(summary.end, end)),
                            summary: summary.metrics,
                            frames: heartFrames.filter { $0.end <= end }.map {
                                HeartReport.Frame(start: clock.date(of: $0.start), end: clock.date(of: $0.end), metrics: $0.metrics)
                            })
            })
    }

    /// 30-s epochs on the timeline's grid (multiples of 30 s), each the mean power of its readings (all channels
    /// given: their power averaged) as Leq in dBFS; epochs without readings are left out.
    static func loudness(levels: [LevelReading], from start: SampleTime, end: SampleTime)
        -> [(start: SampleTime, end: SampleTime, levelDb: Double)] {
        let epoch = AnalysisClock.samples(seconds: 30)
        var sums: [Int64: (power: Double, count: Int)] = [:]
        for l in levels where l.start >= start - AnalysisClock.samples(seconds: 1) && l.start < end {
            let k = l.start >= 0 ? l.start / epoch : (l.start - epoch + 1) / epoch
            sums[k, default: (0, 0)].power += l.power
            sums[k, default: (0, 0)].count += 1
        }
        return sums.keys.sorted().map { k in
            let s = sums[k]!
            return (max(start, k * epoch), min(end, (k + 1) * epoch), LevelReading.decibels(s.power / Double(s.count)))
        }.filter { $0.1 > $0.0 }
    }

    /// An event's level: the loudest reading overlapping it (`readings` in time order), in dBFS.
    static func level(of e: SoundEvent, in readings: [LevelReading]) -> Double? {
        var lo = 0, hi = readings.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if readings[mid].end <= e.start { lo = mid + 1 } else { hi = mid }
        }
        var loudest: Double?
        var i = lo
        while i < readings.count, readings[i].start < max(e.end, e.start + 1) {
            loudest = max(loudest ?? -.infinity, readings[i].power)
            i += 1
        }
        return loudest.map(LevelReading.decibels)
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
