import Foundation
import SleepCycleBus
import SleepCycleFormats

extension AnalysisResult {
    /// A readable night summary (`analyze --format text`). Clock times are in the recording's own offset
    /// (`utcOffsetSeconds`, from `--start`), named on the first lines. For stereo input, a sound heard on both
    /// microphones at once counts once (overlapping events of a type are merged across channels).
    public func textSummary() -> String {
        var out = textHeader()
        out.append("  session     \(sessionId.uuidString)")
        out.append("")
        out += textSections() + Self.textWarnings(warnings)
        return out.joined(separator: "\n") + "\n"
    }

    /// The closing Warnings section (nothing when there are none).
    static func textWarnings(_ warnings: [AnalysisWarning]) -> [String] {
        warnings.isEmpty ? [] : ["", "Warnings"] + warnings.map { "  " + $0.message }
    }

    /// The summary's first lines: the night, the source, the recording's span.
    func textHeader() -> [String] {
        let offset = utcOffsetSeconds
        let zone = offset == 0 ? "UTC" : "UTC" + ISO8601Time.offsetString(offset)
        func t(_ d: Date) -> String { ISO8601Time.LocalParts(date: d, utcOffsetSeconds: offset).clock() }
        return ["Night of \(ISO8601Time.LocalParts(date: startTime, utcOffsetSeconds: offset).dateString) — "
                    + (source.path == "-" ? "standard input" : MessageText.path(source.path)),
                "  recording   \(t(startTime)) → \(t(endTime)) \(zone) (\(Self.hm(source.durationSec))), "
                    + "\(source.sampleRate) Hz, \(source.channels == 1 ? "mono" : "\(source.channels) channels")"]
    }

    /// `n` and `noun`, plural unless one: "1 snore", "2 snores".
    public static func counted(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    static func hm(_ seconds: Double) -> String {
        // Short, non-zero durations (a cough, a word) keep a decimal: "0.2 s", not "0 s".
        if seconds > 0 && seconds < 9.95 { return String(format: "%.1f s", seconds) }
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600) h \(String(format: "%02d", (s % 3600) / 60)) min"
            : s >= 60 ? "\(s / 60) min \(String(format: "%02d", s % 60)) s" : "\(s) s"
    }

    /// The sections Sleep, Sounds, Breathing, Smart alarm and Audio input.
    func textSections() -> [String] {
        var out: [String] = []
        let offset = utcOffsetSeconds
        let zone = offset == 0 ? "UTC" : "UTC" + ISO8601Time.offsetString(offset)
        func t(_ d: Date) -> String { ISO8601Time.LocalParts(date: d, utcOffsetSeconds: offset).clock() }
        func hm(_ seconds: Double) -> String { Self.hm(seconds) }
        out.append("Sleep")
        let unusable = audioStatistics.healthIntervals.filter { $0.status != .healthy }
            .reduce(0.0) { $0 + ($1.end ?? endTime).timeIntervalSince($1.start) }
        if let wake = statistics.finalWakeTime {
            let s = statistics
            out.append("  asleep      \(hm(s.totalSleepDuration)) (efficiency \(Int((s.sleepEfficiency * 100).rounded())) %), "
                       + "fell asleep after \(hm(s.sleepOnsetLatency)), final wake \(t(wake))")
            out.append("  awakenings  \(s.numberOfAwakenings)")
            let parts = SleepStage.allCases.map { "\($0.rawValue) \(hm(s.sleepStageDurations[$0] ?? 0))" }
            out.append("  stages      " + parts.joined(separator: ", "))
            let shares = SleepStage.allCases.filter { $0 != .awake }.map {
                "\($0.rawValue) \(Int((s.sleepStagePercentages[$0] ?? 0).rounded())) %"
            }
            out.append("  of sleep    " + shares.joined(separator: ", "))
            out.append("  in bed      \(hm(s.timeInBed)), sleep period \(hm(s.sleepPeriodTime)), awake after onset "
                       + "\(hm(s.wakeAfterSleepOnset)), REM " + (s.remLatency.map { "after \(hm($0))" } ?? "none"))
        } else {
            let channels = Double(max(1, Set(audioStatistics.healthIntervals.map(\.channel)).count))
            let why = sleepStageIntervals.isEmpty && unusable / channels >= 0.5 * endTime.timeIntervalSince(startTime)
                ? " (no usable audio: the input is flat or missing for most of the recording)"
                : sleepStageIntervals.isEmpty ? " (no stage epochs)" : ""
            // Epochs scored awake throughout are scored: no sleep among them (the statistics are then all 0).
            let scored = sleepStageIntervals.reduce(0.0) { $0 + $1.end.timeIntervalSince($1.start) }
            out.append(sleepStageIntervals.isEmpty ? "  no sleep scored" + why
                       : "  no sleep: awake throughout the \(hm(scored)) scored")
        }
        out.append("")
        out.append("Sounds")
        if events.isEmpty {
            out.append("  no events detected")
        } else {
            for type in EventType.allCases {
                let sounds = Self.sounds(events.filter { $0.type == type })
                guard !sounds.isEmpty else { continue }
                let total = sounds.reduce(0) { $0 + $1.end.timeIntervalSince($1.start) }
                out.append("  \(type.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0))  "
                           + "\(Self.counted(sounds.count, "event")), \(hm(total))")
            }
            if statistics.snoreTime > 0 {
                out.append("  snore time \(hm(statistics.snoreTime)) in \(statistics.snoreSessions.count) session(s), "
                           + "snore score \(String(format: "%.1f", statistics.snoreScore))")
            }
            for s in snorers {
                out.append("  snorer \(s.snorer)   \(Self.counted(s.snoreCount, "snore")), \(hm(s.snoreTime))")
            }
            let clips = events.compactMap(\.clip)
            if let first = clips.first {
                let folder = PathEncoding.folder(of: first.path)
                out.append("  clips       \(clips.count) in \(folder)/ (of the clips folder)")
            }
        }
        out.append("")
        out.append("Breathing")
        if breathingRates.isEmpty {
            out.append("  no breathing-rate estimates")
        } else {
            let bpm = breathingRates.map(\.bpm).sorted()
            out.append("  \(breathingRates.count) estimates, median \(String(format: "%.1f", ResultCollector.median(bpm) ?? 0)) "
                       + "breaths/min (range \(String(format: "%.1f", bpm.first!))–\(String(format: "%.1f", bpm.last!)))")
        }
        if let heart {
            out.append("")
            out.append("Heart (wearable)")
            out.append(contentsOf: heart.textLines(time: t, zone: zone))
        }
        if let alarm = smartAlarm {
            out.append("")
            out.append("Smart alarm")
            out.append("  window      \(t(alarm.windowStart)) → \(t(alarm.alarmTime)) \(zone)")
            if let fired = alarm.firedAt, let rule = alarm.rule {
                // The alarm rings on the stages as they were scored at the time; the hypnogram above is the
                // whole-night pass, which may differ (a light-sleep alarm on a night re-scored deep).
                out.append("  fired       \(t(fired)) (rule: \(rule)\(rule == "lightSleep" ? ", on the stages scored live" : ""))")
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
        return out
    }

    /// Distinct sounds among events of one type: events overlapping in time (the same sound on both microphones)
    /// are merged into one span.
    static func sounds(_ events: [SleepEvent]) -> [DateInterval] {
        var merged: [DateInterval] = []
        for e in events.sorted(by: { $0.start < $1.start }) {
            if let last = merged.last, e.start < last.end {
                merged[merged.count - 1] = DateInterval(start: last.start, end: max(last.end, e.end))
            } else {
                merged.append(DateInterval(start: e.start, end: max(e.start, e.end)))
            }
        }
        return merged
    }
}

extension SeparatedAnalysisResult {
    /// A readable summary of a two-sleeper night: the recording, then a section per sleeper (their sleep, their
    /// sounds with how surely they were attributed, their breathing and their microphone's health).
    public func textSummary() -> String {
        guard let first = sessions.first else { return "" }
        var out = first.textHeader()
        out.append("  separation  \(config.preset.rawValue) (two sleepers, one per channel)")
        for (index, session) in sessions.enumerated() {
            let channel = AudioChannel(rawValue: index)!
            out.append("")
            out.append("\(channel == .primary ? "Primary" : "Secondary") sleeper (\(channel == .primary ? "left" : "right") "
                       + "channel) — session \(session.sessionId.uuidString)")
            let confidences = session.events.compactMap(\.attributionConfidence)
            if !confidences.isEmpty {
                let sure = confidences.filter { $0 >= config.confidenceThreshold }.count
                out.append("  attributed  \(confidences.count) event(s), \(sure) with confidence ≥ "
                           + String(format: "%.2f", config.confidenceThreshold))
            }
            out += session.textSections().map { $0.isEmpty ? $0 : "  " + $0 }
        }
        out += AnalysisResult.textWarnings(warnings)
        return out.joined(separator: "\n") + "\n"
    }
}
