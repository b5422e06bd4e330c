import Foundation
import SleepCycleBus

/// Night statistics computed from what the session has, used until the SleepStatistics module's function is wired
/// in `PipelineBuilder.statistics` (see docs/0004-bus-and-engine.md).
///
/// Conventions (AASM scoring manual terms, Berry et al. 2020): time in bed = the analysed night; total sleep time =
/// epochs scored light/deep/REM; sleep onset latency = start of the first sleep epoch; final wake time = end of the
/// last sleep epoch; an awakening = a run of awake epochs between two sleep epochs; snore time = summed snoring
/// events; snore sessions = snoring events merged across gaps under 10 s. With no sleep epoch every value is 0 and
/// `finalWakeTime` nil, as the JSON contract fixes.
public enum SessionStatisticsFallback {
    public static let snoreMergeGapSeconds = 10.0

    public static func compute(epochs: [StageEpoch], events: [SoundEvent], end: SampleTime,
                               clock: AnalysisClock) -> SleepSessionStatistics {
        var stats = SleepSessionStatistics()
        let sorted = epochs.sorted { $0.start < $1.start }
        guard let firstSleep = sorted.first(where: { $0.stage != .awake }),
              let lastSleep = sorted.last(where: { $0.stage != .awake }) else { return stats }
        var durations: [SleepStage: Double] = [:]
        for e in sorted { durations[e.stage, default: 0] += AnalysisClock.seconds(e.end - e.start) }
        for s in SleepStage.allCases { stats.sleepStageDurations[s] = durations[s] ?? 0 }
        stats.totalSleepDuration = SleepStage.allCases.filter { $0 != .awake }.reduce(0) { $0 + (durations[$1] ?? 0) }
        stats.sleepOnsetLatency = AnalysisClock.seconds(firstSleep.start)
        stats.sleepEfficiency = end > 0 ? min(1, stats.totalSleepDuration / AnalysisClock.seconds(end)) : 0
        stats.finalWakeTime = clock.date(of: lastSleep.end)
        var awakenings = 0, inWake = false
        for e in sorted where e.start >= firstSleep.start && e.end <= lastSleep.end {
            if e.stage == .awake { if !inWake { awakenings += 1; inWake = true } } else { inWake = false }
        }
        stats.numberOfAwakenings = awakenings
        let snores = events.filter { $0.type == .snoring }.sorted { $0.start < $1.start }
        stats.snoreTime = snores.reduce(0) { $0 + AnalysisClock.seconds($1.end - $1.start) }
        let mergeGap = AnalysisClock.samples(seconds: snoreMergeGapSeconds)
        var sessions: [(SampleTime, SampleTime)] = []
        for s in snores {
            if let last = sessions.last, s.start - last.1 < mergeGap {
                sessions[sessions.count - 1].1 = max(last.1, s.end)
            } else {
                sessions.append((s.start, s.end))
            }
        }
        stats.snoreSessions = sessions.map { DateInterval(start: clock.date(of: $0.0), end: clock.date(of: $0.1)) }
        return stats
    }
}
