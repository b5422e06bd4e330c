import SleepCycleBus

/// Night statistics from a hypnogram and snore events, with the conventions of the AASM Manual for the Scoring
/// of Sleep (v2.6, 2020, "Sleep scoring data" and the definitions in Iber et al. 2007) and of YASA's
/// `sleep_statistics` (Vallat & Walker 2021, eLife 10:e70092; yasa.readthedocs.io) as used by the sleepcycle JSON
/// contract; docs/0012-reports.md compares them. All times are stream time (`SampleTime`, 16 kHz samples since the session
/// started); durations are in samples too (`AnalysisClock.seconds(_:)` converts). The engine turns them into
/// ISO strings and seconds.
///
/// * time in bed: from `bedStart` (default: the first epoch's start) to `bedEnd` (default: the last epoch's end).
/// * sleep onset: start of the first non-awake epoch; `sleepOnsetLatency` = onset − bedStart.
/// * `finalWakeTime`: end of the last non-awake epoch (the final awakening). nil when there was no sleep; all
///   other statistics except `sleepStageDurations.awake` and snoring are then 0.
/// * `totalSleepDuration`: sum of light, deep and REM epochs.
/// * `sleepEfficiency`: totalSleepDuration / time in bed (0–1).
/// * `sleepPeriodTime` (SPT): from sleep onset to `finalWakeTime` (YASA's "first to last period of sleep").
/// * `wakeAfterSleepOnset` (WASO): awake time within the sleep period (YASA: wake within SPT).
/// * `remLatency`: from sleep onset to the first REM epoch (AASM; YASA's `Lat_REM` counts from the start of the
///   record instead); nil without REM.
/// * `sleepStagePercentages`: light, deep and REM time as percentages (0–100) of `totalSleepDuration` (YASA's
///   `%N1`… `%REM`).
/// * `snoreScore`: snoring time weighted by loudness, per hour in bed (`SnoreScore`).
/// * `numberOfAwakenings`: awake runs between onset and `finalWakeTime` lasting at least
///   `minimumAwakening` (default one 30-s epoch); the final awakening is not counted.
/// * `snoreTime`: length of the union of snoring events; `snoreSessions`: snoring events merged when the gap
///   between them is at most `snoreMergeGap` (default 60 s).
/// * `sleepStageDurations`: time per stage over the hypnogram (awake included).
public struct NightStatistics: Sendable, Equatable {
    public struct Interval: Sendable, Equatable {
        public var start: SampleTime
        public var end: SampleTime
        /// A snore's level in dBFS (`snoreScore`'s loudness), nil when unknown.
        public var levelDb: Double?
        public init(start: SampleTime, end: SampleTime, levelDb: Double? = nil) {
            self.start = start; self.end = end; self.levelDb = levelDb
        }
    }

    public var totalSleepDuration: SampleTime
    public var sleepOnsetLatency: SampleTime
    public var sleepEfficiency: Double
    public var finalWakeTime: SampleTime?
    public var numberOfAwakenings: Int
    public var wakeAfterSleepOnset: SampleTime
    public var sleepPeriodTime: SampleTime
    /// nil without REM (or without sleep).
    public var remLatency: SampleTime?
    /// Per sleep stage (light, deep, rem): percentage of `totalSleepDuration`, 0–100; empty without sleep.
    public var sleepStagePercentages: [SleepStage: Double]
    public var snoreScore: Double
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
    ///   - backgroundLevelDb: the night's background level (dBFS) that snores' loudness is measured against.
    public init(hypnogram: [StageEpoch], snoring: [Interval] = [], bedStart: SampleTime? = nil,
                bedEnd: SampleTime? = nil, backgroundLevelDb: Double? = nil, parameters: Parameters = Parameters()) {
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
        snoreScore = SnoreScore.score(snores: snoring, backgroundLevelDb: backgroundLevelDb, timeInBed: timeInBed)

        let sleep = epochs.filter { $0.stage != .awake }
        guard let onset = sleep.first?.start, let finalWake = sleep.last?.end else {
            totalSleepDuration = 0; sleepOnsetLatency = 0; sleepEfficiency = 0; finalWakeTime = nil
            numberOfAwakenings = 0; wakeAfterSleepOnset = 0; sleepPeriodTime = 0; remLatency = nil
            sleepStagePercentages = [:]
            return
        }
        finalWakeTime = finalWake
        sleepPeriodTime = finalWake - onset
        remLatency = sleep.first { $0.stage == .rem }.map { $0.start - onset }
        sleepOnsetLatency = max(0, onset - bedStart)
        totalSleepDuration = sleep.reduce(0) { $0 + $1.end - $1.start }
        sleepEfficiency = timeInBed > 0 ? min(1, Double(totalSleepDuration) / Double(timeInBed)) : 0
        var percentages: [SleepStage: Double] = [:]
        for stage in SleepStage.allCases where stage != .awake {
            percentages[stage] = 100 * Double(durations[stage] ?? 0) / Double(totalSleepDuration)
        }
        sleepStagePercentages = percentages

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
    /// `levels`: each event's level in dBFS by event id (for the snore score).
    public init(hypnogram: [StageEpoch], events: [SoundEvent], bedStart: SampleTime? = nil,
                bedEnd: SampleTime? = nil, levels: [Int: Double] = [:], backgroundLevelDb: Double? = nil,
                parameters: Parameters = Parameters()) {
        self.init(hypnogram: hypnogram,
                  snoring: events.filter { $0.type == .snoring }.map {
                      Interval(start: $0.start, end: $0.end, levelDb: levels[$0.id])
                  },
                  bedStart: bedStart, bedEnd: bedEnd, backgroundLevelDb: backgroundLevelDb, parameters: parameters)
    }
}
