import Foundation
import SleepCycleBus
import AudioHealth

/// The outcome of one session (Sleep Cycle SDK `AnalysisResult`); serialised by `AnalysisResult.jsonString()`.
public struct AnalysisResult: Sendable, Hashable {
    public var sessionId: UUID
    public var startTime: Date
    public var endTime: Date
    /// Offset from UTC of the sleeper's clock (from `--start`), seconds east: clock times in the text summary and
    /// the alarm are read in it. The JSON's timestamps stay UTC.
    public var utcOffsetSeconds: Int = 0
    public var source: SourceSummary
    public var events: [SleepEvent]
    public var breathingRates: [BreathingRate]
    public var sleepStageIntervals: [SleepStageInterval]
    public var statistics: SleepSessionStatistics
    public var audioStatistics: AudioStatistics
    /// The sound level of each 30-s epoch with audio (`LoudnessEpoch`), in time order.
    public var loudness: [LoudnessEpoch] = []
    /// Samples analysed (16 kHz timeline, gaps included).
    public var analysedSamples: SampleTime
    /// Items lost by slow stream observers during the session.
    public var droppedObserverItems: Int
    /// When the smart alarm fired and which rule fired it (only when an alarm was set).
    public var smartAlarm: SmartAlarmResult? = nil
    /// The heart session over a wearable's readings, when there were any in the recording.
    public var heart: HeartReport? = nil
    /// Problems that did not stop the analysis (a damaged file, wearable samples outside the recording, …).
    public var warnings: [AnalysisWarning] = []
}

/// The smart alarm's decision on this recording (`analyze --alarm HH:MM [--alarm-window 30m]`).
public struct SmartAlarmResult: Sendable, Hashable {
    /// The alarm time asked for and the start of its window.
    public var alarmTime: Date
    public var windowStart: Date
    /// When it fired (or would have fired), and the rule: `lightSleep`, `movement` or `deadline`.
    public var firedAt: Date?
    public var rule: String?
    public init(alarmTime: Date, windowStart: Date, firedAt: Date?, rule: String?) {
        self.alarmTime = alarmTime; self.windowStart = windowStart; self.firedAt = firedAt; self.rule = rule
    }
}

extension AnalysisResult {
    /// The result under another session id (the events' ids follow): for a stream whose id is known only once it
    /// has been read to its end.
    public func withSessionId(_ id: UUID) -> AnalysisResult {
        var copy = self
        copy.sessionId = id
        for i in copy.events.indices { copy.events[i].sessionId = id }
        for i in copy.breathingRates.indices { copy.breathingRates[i].sessionId = id }
        return copy
    }
}
