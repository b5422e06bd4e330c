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
    /// Keyed by epoch start: a later epoch for the same start (e.g. a whole-night Viterbi pass published at
    /// `.sessionEnding`) replaces the online one.
    private(set) var epochs: [SampleTime: StageEpoch] = [:]
    private(set) var health = AudioHealthTimeline()
    private(set) var gapCount = 0
    private(set) var gapSamples: SampleTime = 0
    private(set) var overrunCount = 0
    private(set) var alarm: AlarmFired?

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
            observers?.events.yield(SleepEvent(e, clock: clock, sessionId: info.id))
        case .breathingRate(let b):
            breathing.append(b)
            observers?.breathingRates.yield(BreathingRate(timestamp: clock.date(of: b.time), bpm: b.bpm,
                                                          confidence: b.confidence, sessionId: info.id,
                                                          channel: b.channel))
        case .sleepStage(let s):
            epochs[s.start] = s
            observers?.sleepStages.yield(SleepStageInterval(stage: s.stage, start: clock.date(of: s.start),
                                                            end: clock.date(of: s.end)))
        case .sleepStageRevised(let s):
            epochs[s.start] = s
        case .alarm(let a):
            alarm = a
            observers?.alarms.yield(AlarmRinging(time: clock.date(of: a.time), rule: a.rule, sessionId: info.id))
        case .healthChanged(let h):
            health.record(h)
            observers?.audioHealth.yield(AudioHealthUpdate(status: h.status, start: clock.date(of: h.time), end: nil,
                                                           channel: h.channel))
        case .gap(let g):
            gapCount += 1
            gapSamples += g.length
            if g.reason == .overrun { overrunCount += 1 }
        default:
            break
        }
    }

    func result(end: SampleTime, source: SourceSummary, droppedObserverItems: Int) -> AnalysisResult {
        let clock = info.clock
        // Events end within the analysed audio (an event still open at the end is closed there).
        let soundEvents = events.values.compactMap { e -> SoundEvent? in
            guard e.start < end else { return nil }
            var e = e
            e.end = min(e.end, end)
            return e
        }.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        let stageEpochs = epochs.values.sorted { $0.start < $1.start }
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
        var audio = AudioStatistics()
        audio.healthIntervals = health.intervals(end: end).map {
            AudioHealthUpdate(status: $0.status, start: clock.date(of: $0.start), end: clock.date(of: $0.end),
                              channel: $0.channel)
        }
        audio.gapCount = gapCount
        audio.gapDuration = AnalysisClock.seconds(gapSamples)
        audio.overrunCount = overrunCount
        return AnalysisResult(
            sessionId: info.id, startTime: clock.start, endTime: clock.date(of: end), source: source,
            events: soundEvents.map { SleepEvent($0, clock: clock, sessionId: info.id) },
            breathingRates: breathing.map {
                BreathingRate(timestamp: clock.date(of: $0.time), bpm: $0.bpm, confidence: $0.confidence,
                              sessionId: info.id, channel: $0.channel)
            },
            sleepStageIntervals: intervals,
            statistics: PipelineBuilder.statistics(epochs: stageEpochs, events: soundEvents, end: end, clock: clock),
            audioStatistics: audio, analysedSamples: end, droppedObserverItems: droppedObserverItems,
            smartAlarm: alarmOption.map { option in
                let spec = option.spec(clock: clock)
                return SmartAlarmResult(alarmTime: clock.date(of: spec.alarmTime), windowStart: clock.date(of: spec.windowStart),
                                        firedAt: alarm.map { clock.date(of: $0.time) }, rule: alarm?.rule)
            })
    }
}
