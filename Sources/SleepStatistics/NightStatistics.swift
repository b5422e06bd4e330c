import SleepCycleBus

/// Night statistics from a hypnogram and snore events, with the conventions of the AASM Manual for the Scoring
/// of Sleep (v2.6, 2020, "Sleep scoring data" and the definitions in Iber et al. 2007) as used by the
/// sleepcycle JSON contract. All times are stream time (`SampleTime`, 16 kHz samples since the session
/// started); durations are in samples too (`AnalysisClock.seconds(_:)` converts). The engine turns them into
/// ISO strings and seconds.
///
/// * time in bed: from `bedStart` (default: the first epoch's start) to `bedEnd` (default: the last epoch's end).
/// * sleep onset: start of the first non-awake epoch; `sleepOnsetLatency` = onset − bedStart.
/// * `finalWakeTime`: end of the last non-awake epoch (the final awakening). nil when there was no sleep; all
///   other statistics except `sleepStageDurations.awake` and snoring are then 0.
/// * `totalSleepDuration`: sum of light, deep and REM epochs.
/// * `sleepEfficiency`: totalSleepDuration / time in bed (0–1).
/// * `wakeAfterSleepOnset` (WASO): awake time between onset and `finalWakeTime`.
/// * `numberOfAwakenings`: awake runs between onset and `finalWakeTime` lasting at least
///   `minimumAwakening` (default one 30-s epoch); the final awakening is not counted.
/// * `snoreTime`: length of the union of snoring events; `snoreSessions`: snoring events merged when the gap
///   between them is at most `snoreMergeGap` (default 60 s).
/// * `sleepStageDurations`: time per stage over the hypnogram (awake included).
public struct NightStatistics: Sendable, Equatable {
    public struct Interval: Sendable, Equatable {
        public var start: SampleTime
        public var end: SampleTime
        public init(start: SampleTime, end: SampleTime) { self.start = start; self.end = end }
    }

    public var totalSleepDuration: SampleTime
    public var sleepOnsetLatency: SampleTime
    public var sleepEfficiency: Double
    public var finalWakeTime: SampleTime?
    public var numberOfAwakenings: Int
    public var wakeAfterSleepOnset: SampleTime
    public var snoreTime: SampleTime
    public var snoreSessions: [Interval]
    public var sleepStageDurations: [SleepStage: SampleTime]
    /// Time in bed used for the efficiency.
    public var timeInBed: SampleTime

    public struct Parameters: Sendable {
        /// Shortest awake run counted as an awakening.
        public var minimumAwakening: SampleTime = AnalysisClock.samples(seconds: 30)
        /// Longest gap between snoring events of one session.
        public var snoreMergeGap: SampleTime = AnalysisClock.samples(seconds: 60)
        public init() {}
    }

    /// - Parameters:
    ///   - hypnogram: stage epochs (or merged intervals) in time order, not overlapping.
    ///   - snoring: snoring intervals (any order, may overlap).
    public init(hypnogram: [StageEpoch], snoring: [Interval] = [], bedStart: SampleTime? = nil,
                bedEnd: SampleTime? = nil, parameters: Parameters = Parameters()) {
        let epochs = hypnogram.sorted { $0.start < $1.start }
        let bedStart = bedStart ?? epochs.first?.start ?? 0
        let bedEnd = bedEnd ?? epochs.last?.end ?? bedStart
        timeInBed = max(0, bedEnd - bedStart)

        var durations = Dictionary(uniqueKeysWithValues: SleepStage.allCases.map { ($0, SampleTime(0)) })
        for e in epochs { durations[e.stage, default: 0] += e.end - e.start }
        sleepStageDurations = durations

        let sessions = Self.mergedSessions(snoring, gap: parameters.snoreMergeGap)
        snoreSessions = sessions
        snoreTime = Self.mergedSessions(snoring, gap: 0).reduce(0) { $0 + $1.end - $1.start }

        let sleep = epochs.filter { $0.stage != .awake }
        guard let onset = sleep.first?.start, let finalWake = sleep.last?.end else {
            totalSleepDuration = 0; sleepOnsetLatency = 0; sleepEfficiency = 0; finalWakeTime = nil
            numberOfAwakenings = 0; wakeAfterSleepOnset = 0
            return
        }
        finalWakeTime = finalWake
        sleepOnsetLatency = max(0, onset - bedStart)
        totalSleepDuration = sleep.reduce(0) { $0 + $1.end - $1.start }
        sleepEfficiency = timeInBed > 0 ? min(1, Double(totalSleepDuration) / Double(timeInBed)) : 0

        var waso: SampleTime = 0, awakenings = 0, run: SampleTime = 0
        for e in epochs where e.start >= onset && e.end <= finalWake {
            if e.stage == .awake {
                waso += e.end - e.start
                run += e.end - e.start
            } else {
                if run > 0 && run >= parameters.minimumAwakening { awakenings += 1 }
                run = 0
            }
        }
        wakeAfterSleepOnset = waso
        numberOfAwakenings = awakenings
    }

    /// Intervals sorted and merged when the gap between them is at most `gap` (overlaps always merge).
    public static func mergedSessions(_ intervals: [Interval], gap: SampleTime) -> [Interval] {
        var out: [Interval] = []
        for i in intervals.sorted(by: { $0.start < $1.start }) where i.end > i.start {
            if let last = out.last, i.start - last.end <= gap { out[out.count - 1].end = max(last.end, i.end) }
            else { out.append(i) }
        }
        return out
    }
}

extension NightStatistics {
    /// Statistics from the stager's hypnogram and the session's snoring events.
    public init(hypnogram: [StageEpoch], events: [SoundEvent], bedStart: SampleTime? = nil,
                bedEnd: SampleTime? = nil, parameters: Parameters = Parameters()) {
        self.init(hypnogram: hypnogram,
                  snoring: events.filter { $0.type == .snoring }.map { Interval(start: $0.start, end: $0.end) },
                  bedStart: bedStart, bedEnd: bedEnd, parameters: parameters)
    }
}
