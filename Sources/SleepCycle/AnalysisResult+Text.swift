import Foundation
import SleepCycleBus

extension AnalysisResult {
    /// A readable night summary (`analyze --format text`). Times are UTC, as in the JSON.
    public func textSummary() -> String {
        var out: [String] = []
        func t(_ d: Date) -> String { String(ISO8601Milliseconds.string(from: d).dropFirst(11).prefix(8)) }
        func hm(_ seconds: Double) -> String {
            // Short, non-zero durations (a cough, a word) keep a decimal: "0.2 s", not "0 s".
            if seconds > 0 && seconds < 9.95 { return String(format: "%.1f s", seconds) }
            let s = Int(seconds.rounded())
            return s >= 3600 ? "\(s / 3600) h \(String(format: "%02d", (s % 3600) / 60)) min"
                : s >= 60 ? "\(s / 60) min \(String(format: "%02d", s % 60)) s" : "\(s) s"
        }
        out.append("Night of \(ISO8601Milliseconds.string(from: startTime).prefix(10)) — \(source.path)")
        out.append("  recording   \(t(startTime)) → \(t(endTime)) UTC (\(hm(source.durationSec))), "
                   + "\(source.sampleRate) Hz, \(source.channels == 1 ? "mono" : "\(source.channels) channels")")
        out.append("  session     \(sessionId.uuidString)")
        out.append("")
        out.append("Sleep")
        if let wake = statistics.finalWakeTime {
            let s = statistics
            out.append("  asleep      \(hm(s.totalSleepDuration)) (efficiency \(Int((s.sleepEfficiency * 100).rounded())) %), "
                       + "fell asleep after \(hm(s.sleepOnsetLatency)), final wake \(t(wake))")
            out.append("  awakenings  \(s.numberOfAwakenings)")
            let parts = SleepStage.allCases.map { "\($0.rawValue) \(hm(s.sleepStageDurations[$0] ?? 0))" }
            out.append("  stages      " + parts.joined(separator: ", "))
        } else {
            out.append("  no sleep scored" + (sleepStageIntervals.isEmpty ? " (no stage epochs)" : ""))
        }
        out.append("")
        out.append("Sounds")
        if events.isEmpty {
            out.append("  no events detected")
        } else {
            for type in EventType.allCases {
                let list = events.filter { $0.type == type }
                guard !list.isEmpty else { continue }
                let total = list.reduce(0) { $0 + $1.end.timeIntervalSince($1.start) }
                out.append("  \(type.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0))  "
                           + "\(list.count) event\(list.count == 1 ? "" : "s"), \(hm(total))")
            }
            if statistics.snoreTime > 0 {
                out.append("  snore time \(hm(statistics.snoreTime)) in \(statistics.snoreSessions.count) session(s)")
            }
            for s in snorers {
                out.append("  snorer \(s.snorer + 1)   \(s.snoreCount) snores, \(hm(s.snoreTime))")
            }
        }
        out.append("")
        out.append("Breathing")
        if breathingRates.isEmpty {
            out.append("  no breathing-rate estimates")
        } else {
            let bpm = breathingRates.map(\.bpm).sorted()
            out.append("  \(breathingRates.count) estimates, median \(String(format: "%.1f", bpm[bpm.count / 2])) "
                       + "breaths/min (range \(String(format: "%.1f", bpm.first!))–\(String(format: "%.1f", bpm.last!)))")
        }
        if let alarm = smartAlarm {
            out.append("")
            out.append("Smart alarm")
            out.append("  window      \(t(alarm.windowStart)) → \(t(alarm.alarmTime)) UTC")
            if let fired = alarm.firedAt, let rule = alarm.rule {
                out.append("  fired       \(t(fired)) (rule: \(rule))")
            } else {
                out.append("  fired       not within the recording")
            }
        }
        out.append("")
        out.append("Audio input")
        for h in audioStatistics.healthIntervals {
            let end = h.end ?? endTime
            let channel = h.channel.map { " [\($0.name)]" } ?? ""
            out.append("  \(t(h.start))–\(t(end))  \(h.status.rawValue)\(channel) (\(hm(end.timeIntervalSince(h.start))))")
        }
        if audioStatistics.gapCount > 0 {
            out.append("  \(audioStatistics.gapCount) gap(s), \(hm(audioStatistics.gapDuration)) missing")
        }
        return out.joined(separator: "\n") + "\n"
    }
}
