import Foundation
import SleepCycleBus
import SleepCycleFormats

/// One 30-s epoch of a night, as the per-epoch table (`analyze --format csv`) and the HTML report show it.
public struct EpochRow: Sendable, Hashable {
    public var start: Date
    public var end: Date
    /// The stage scored at the epoch's middle; nil where nothing was scored.
    public var stage: SleepStage?
    /// Seconds of each event type in the epoch (overlapping events of a type count once).
    public var eventSeconds: [EventType: Double]
    /// Mean of the breathing-rate estimates timed in the epoch; nil without one.
    public var breathingBpm: Double?
    /// The audio-health status that covers most of the epoch (a tie goes to the worse status).
    public var audioHealth: AudioHealthStatus?
    /// The epoch's Leq in dBFS (`AnalysisResult.loudness`); nil without audio.
    public var levelDb: Double?
}

extension AnalysisResult {
    /// Epoch length of the table (the stager's).
    public static let epochSeconds = 30.0

    /// The night as 30-s epochs from `startTime` to `endTime` (the last one may be shorter).
    public func epochRows() -> [EpochRow] {
        let total = endTime.timeIntervalSince(startTime)
        guard total > 0 else { return [] }
        let count = Int((total / Self.epochSeconds).rounded(.up))
        func index(_ d: Date) -> Int { Int((d.timeIntervalSince(startTime) / Self.epochSeconds).rounded(.down)) }
        var rows = (0..<count).map { i in
            EpochRow(start: startTime.addingTimeInterval(Double(i) * Self.epochSeconds),
                     end: min(endTime, startTime.addingTimeInterval(Double(i + 1) * Self.epochSeconds)),
                     stage: nil, eventSeconds: [:], breathingBpm: nil, audioHealth: nil, levelDb: nil)
        }
        // Each span adds its overlap with every epoch it touches.
        func spread(_ start: Date, _ end: Date, _ add: (Int, Double) -> Void) {
            let first = max(0, index(start)), last = min(count - 1, index(end))
            guard end > start, first <= last else { return }
            for i in first...last {
                let overlap = min(end, rows[i].end).timeIntervalSince(max(start, rows[i].start))
                if overlap > 0 { add(i, overlap) }
            }
        }
        for s in sleepStageIntervals {
            spread(s.start, s.end) { i, _ in
                let middle = rows[i].start.addingTimeInterval(rows[i].end.timeIntervalSince(rows[i].start) / 2)
                if s.start <= middle && middle < s.end { rows[i].stage = s.stage }
            }
        }
        for type in EventType.allCases {
            for sound in Self.sounds(events.filter { $0.type == type }) {
                spread(sound.start, sound.end) { i, seconds in rows[i].eventSeconds[type, default: 0] += seconds }
            }
        }
        var rates: [Int: (sum: Double, count: Int)] = [:]
        for b in breathingRates where b.timestamp >= startTime && b.timestamp < endTime {
            rates[index(b.timestamp), default: (0, 0)].sum += b.bpm
            rates[index(b.timestamp), default: (0, 0)].count += 1
        }
        for (i, r) in rates where i < count { rows[i].breathingBpm = r.sum / Double(r.count) }
        var health = [[AudioHealthStatus: Double]](repeating: [:], count: count)
        for h in audioStatistics.healthIntervals {
            spread(h.start, h.end ?? endTime) { i, seconds in health[i][h.status, default: 0] += seconds }
        }
        let severity: [AudioHealthStatus: Int] = [.healthy: 0, .flatline: 1, .missingInput: 2]
        for i in 0..<count {
            rows[i].audioHealth = health[i].max { ($0.value, severity[$0.key]!) < ($1.value, severity[$1.key]!) }?.key
        }
        for l in loudness {
            let i = index(l.start)
            if i >= 0 && i < count { rows[i].levelDb = l.levelDb }
        }
        return rows
    }

    /// The contract's per-epoch CSV header.
    public static let epochCSVHeader =
        "epoch_start,stage,snoring_s,talking_s,coughing_s,movement_s,breathing_bpm,audio_health,level_db"

    /// The per-epoch table as CSV (RFC 4180, `\n` line ends): the contract's header, then a row per 30-s epoch.
    /// `epoch_start` is ISO 8601 in the recording's own offset; empty cells where there is nothing (no stage
    /// scored, no breathing estimate, no audio). Numbers are rounded as in the JSON.
    public func epochCSV() -> String {
        var out = Self.epochCSVHeader + "\n"
        out += epochCSVRows(suffix: "")
        return out
    }

    func epochCSVRows(suffix: String) -> String {
        let rows = epochRows()
        var out = ""
        out.reserveCapacity(rows.count * 90)
        for r in rows {
            let cells: [String] = [
                ISO8601Time.string(from: r.start, utcOffsetSeconds: utcOffsetSeconds),
                r.stage?.rawValue ?? "",
            ] + EventType.allCases.map { Self.fixed(r.eventSeconds[$0] ?? 0, 3) } + [
                r.breathingBpm.map { Self.fixed($0, 2) } ?? "",
                r.audioHealth?.rawValue ?? "",
                r.levelDb.map { Self.fixed($0, 2) } ?? "",
            ]
            out += cells.joined(separator: ",") + suffix + "\n"
        }
        return out
    }
}

extension SeparatedAnalysisResult {
    /// Both sleepers' per-epoch tables in one CSV: the contract's columns and a last one, `sleeper`
    /// (`primary`/`secondary`), the primary sleeper's rows first.
    public func epochCSV() -> String {
        var out = AnalysisResult.epochCSVHeader + ",sleeper\n"
        for (i, session) in sessions.enumerated() {
            out += session.epochCSVRows(suffix: "," + AudioChannel(rawValue: i)!.name)
        }
        return out
    }
}
