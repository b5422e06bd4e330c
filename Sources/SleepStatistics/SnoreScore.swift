import SleepCycleBus

/// A night's snore score: snoring time weighted by how loud it was, per hour in bed — SnoreLab's idea (a score
/// from time and loudness, "quiet", "loud" and "epic" snoring), with this project's definition (docs/0012):
///
///     snoreScore = Σ weight(snore) · duration(snore) [minutes]  /  time in bed [hours]
///
/// `weight` comes from the snore's prominence, its level (`levelDb`, the loudest 1-s Leq during it) above the
/// night's background (the median 30-s level): 1 below 10 dB ("quiet"), 2 from 10 dB ("loud"), 3 from 20 dB
/// ("epic"). A snore of unknown level, or a night without a background level, weighs 1. Measured against the
/// night's own background, the score does not depend on the microphone's gain. Overlapping snores (the same sound
/// on two microphones) count once, at the louder weight. Scale: 0 without snoring; an hour of quiet snoring in an
/// 8-hour night is 7.5; snoring loudly a third of the night is 40.
public enum SnoreScore {
    /// Prominence (dB above background) from which a snore weighs 2 and 3.
    public static let loudProminenceDb = 10.0
    public static let epicProminenceDb = 20.0

    public static func weight(levelDb: Double?, backgroundLevelDb: Double?) -> Double {
        guard let levelDb, let backgroundLevelDb else { return 1 }
        let prominence = levelDb - backgroundLevelDb
        return prominence >= epicProminenceDb ? 3 : prominence >= loudProminenceDb ? 2 : 1
    }

    /// The score of `snores` (any order, may overlap) over `timeInBed` samples; 0 when there was no time in bed.
    public static func score(snores: [NightStatistics.Interval], backgroundLevelDb: Double?,
                             timeInBed: SampleTime) -> Double {
        guard timeInBed > 0 else { return 0 }
        // Sweep the snores' edges: each stretch of time counts once, at the highest weight covering it.
        var edges: [(time: SampleTime, weight: Double, opens: Bool)] = []
        for s in snores where s.end > s.start {
            let w = weight(levelDb: s.levelDb, backgroundLevelDb: backgroundLevelDb)
            edges.append((s.start, w, true))
            edges.append((s.end, w, false))
        }
        edges.sort { ($0.time, $0.opens ? 1 : 0) < ($1.time, $1.opens ? 1 : 0) }
        var open: [Double: Int] = [:]
        var weighted = 0.0
        var last: SampleTime = 0
        for e in edges {
            if let top = open.keys.max() { weighted += top * Double(e.time - last) }
            last = e.time
            if e.opens { open[e.weight, default: 0] += 1 } else {
                open[e.weight, default: 1] -= 1
                if open[e.weight] == 0 { open[e.weight] = nil }
            }
        }
        let minutes = AnalysisClock.seconds(SampleTime(weighted.rounded())) / 60
        let hours = AnalysisClock.seconds(timeInBed) / 3600
        return minutes / hours
    }
}
