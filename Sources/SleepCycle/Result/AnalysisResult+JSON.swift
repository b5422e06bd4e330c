import Foundation
import SleepCycleBus
import SleepCycleFormats

extension AnalysisResult {
    /// The JSON of the `analyze --format json` contract (docs/json.md): keys in the contract's order, UTC
    /// millisecond timestamps, durations in seconds, numbers rounded to fixed decimals. Deterministic: the same
    /// result gives the same bytes. Ends with a newline.
    public func jsonString() -> String {
        var w = JSONText(expectedBytes: expectedJSONBytes)
        write(to: &w)
        return w.text + "\n"
    }

    /// About 230 bytes per event (plus 130 for a snore's signature), 110 per breathing rate, 120 per interval.
    var expectedJSONBytes: Int {
        2_000 + events.count * 230 + events.filter { $0.signature != nil }.count * 130
            + breathingRates.count * 110 + loudness.count * 130 + (sleepStageIntervals.count + audioStatistics.healthIntervals.count
                + statistics.snoreSessions.count) * 120
    }

    /// The result as a JSON object; with `channel`, as one sleeper's session of a separated result: `channel`
    /// first, no `source` (the separated result has one for both) and no `warnings` (likewise).
    func write(to w: inout JSONText, channel: AudioChannel? = nil) {
        w.object { w in
            if let channel { w.key("channel"); w.string(channel.name) }
            w.key("sessionId"); w.string(sessionId.uuidString)
            w.key("startTime"); w.date(startTime)
            w.key("endTime"); w.date(endTime)
            w.key("utcOffset"); w.string(Self.offsetText(utcOffsetSeconds))
            if channel == nil { w.key("source"); source.write(to: &w) }
            let stereo = source.channels > 1
            w.key("events"); w.array(events) { w, e in
                w.object { w in
                    w.key("type"); w.string(e.type.rawValue)
                    w.key("start"); w.date(e.start)
                    w.key("end"); w.date(e.end)
                    w.key("probability"); w.number(e.probability, 3)
                    w.key("source"); w.string(e.source.rawValue)
                    if stereo || e.channel != nil { w.key("channel"); w.string((e.channel ?? .primary).name) }
                    if e.type == .snoring, let sig = e.signature {
                        w.key("signature"); w.inlineArray(sig.map { Self.fixed(Double($0), 5) })
                    }
                    if let snorer = e.snorer { w.key("snorer"); w.int(snorer) }
                    if let a = e.attributionConfidence { w.key("attributionConfidence"); w.number(a, 3) }
                    if let level = e.levelDb { w.key("levelDb"); w.number(level, 2) }
                    if let clip = e.clip {
                        w.key("clip"); w.string(clip.path)
                        w.key("clipStart"); w.date(clip.start)
                        w.key("clipEnd"); w.date(clip.end)
                        w.key("clipStartFrame"); w.int(Int(clip.startFrame))
                    }
                }
            }
            w.key("breathingRates"); w.array(breathingRates) { w, b in
                w.object { w in
                    w.key("timestamp"); w.date(b.timestamp)
                    w.key("bpm"); w.number(b.bpm, 2)
                    w.key("confidence"); w.number(b.confidence, 3)
                    if stereo || b.channel != nil { w.key("channel"); w.string((b.channel ?? .primary).name) }
                }
            }
            w.key("sleepStageIntervals"); w.array(sleepStageIntervals) { w, s in
                w.object { w in
                    w.key("stage"); w.string(s.stage.rawValue)
                    w.key("start"); w.date(s.start)
                    w.key("end"); w.date(s.end)
                }
            }
            w.key("statistics"); statistics.write(to: &w)
            if events.contains(where: { $0.snorer != nil }) {
                w.key("snorers"); w.array(snorers) { w, s in
                    w.object { w in
                        w.key("snorer"); w.int(s.snorer)
                        w.key("snoreCount"); w.int(s.snoreCount)
                        w.key("snoreTime"); w.number(s.snoreTime, 3)
                    }
                }
            }
            if let alarm = smartAlarm {
                w.key("smartAlarm"); w.object { w in
                    w.key("alarmTime"); w.date(alarm.alarmTime)
                    w.key("windowStart"); w.date(alarm.windowStart)
                    w.key("firedAt"); if let t = alarm.firedAt { w.date(t) } else { w.null() }
                    w.key("rule"); if let r = alarm.rule { w.string(r) } else { w.null() }
                }
            }
            w.key("audioStatistics"); w.object { w in
                w.key("healthIntervals"); w.array(audioStatistics.healthIntervals) { w, h in
                    w.object { w in
                        w.key("status"); w.string(h.status.rawValue)
                        w.key("start"); w.date(h.start)
                        w.key("end"); w.date(h.end ?? endTime)
                        if let c = h.channel { w.key("channel"); w.string(c.name) }
                    }
                }
                w.key("gapCount"); w.int(audioStatistics.gapCount)
                w.key("gapDuration"); w.number(audioStatistics.gapDuration, 3)
                w.key("overrunCount"); w.int(audioStatistics.overrunCount)
            }
            w.key("loudness"); w.array(loudness) { w, l in
                w.object { w in
                    w.key("start"); w.date(l.start)
                    w.key("end"); w.date(l.end)
                    w.key("levelDb"); w.number(l.levelDb, 2)
                }
            }
            if let heart { w.key("heart"); heart.write(to: &w, recordingStart: startTime) }
            if channel == nil { Self.write(warnings: warnings, to: &w) }
        }
    }

    static func write(warnings: [AnalysisWarning], to w: inout JSONText) {
        guard !warnings.isEmpty else { return }
        w.key("warnings"); w.array(warnings) { w, warning in
            w.object { w in
                w.key("code"); w.string(warning.code.rawValue)
                w.key("message"); w.string(warning.message)
            }
        }
    }

    /// The `utcOffset` key: `±HH:MM` (`+00:00` for UTC).
    static func offsetText(_ seconds: Int) -> String {
        seconds == 0 ? "+00:00" : ISO8601Time.offsetString(seconds)
    }

    /// `x` with `decimals` decimals, trailing zeros trimmed to one (e.g. 28800.0, 0.81); `null` if not finite.
    public static func fixed(_ x: Double, _ decimals: Int) -> String {
        guard x.isFinite else { return "null" }
        var s = String(format: "%.\(decimals)f", x)
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s += "0" }
        }
        if s == "-0.0" { s = "0.0" }
        return s
    }
}

extension SourceSummary {
    /// The result's `source` object as JSON (as in `jsonString()`).
    public func jsonString() -> String {
        var w = JSONText()
        write(to: &w)
        return w.text
    }

    func write(to w: inout JSONText) {
        w.object { w in
            w.key("path"); w.string(path)
            w.key("sampleRate"); w.int(sampleRate)
            w.key("channels"); w.int(channels)
            w.key("durationSec"); w.number(durationSec, 3)
        }
    }
}

extension SleepSessionStatistics {
    /// The result's `statistics` object as JSON (as in `jsonString()`).
    public func jsonString() -> String {
        var w = JSONText()
        write(to: &w)
        return w.text
    }

    func write(to w: inout JSONText) {
        let s = self
        w.object { w in
            w.key("totalSleepDuration"); w.number(s.totalSleepDuration, 3)
            w.key("sleepOnsetLatency"); w.number(s.sleepOnsetLatency, 3)
            w.key("sleepEfficiency"); w.number(s.sleepEfficiency, 4)
            w.key("finalWakeTime"); if let t = s.finalWakeTime { w.date(t) } else { w.null() }
            w.key("numberOfAwakenings"); w.int(s.numberOfAwakenings)
            w.key("snoreTime"); w.number(s.snoreTime, 3)
            w.key("snoreSessions"); w.array(s.snoreSessions) { w, i in
                w.object { w in
                    w.key("start"); w.date(i.start)
                    w.key("end"); w.date(i.end)
                }
            }
            w.key("sleepStageDurations"); w.object { w in
                for stage in SleepStage.allCases {
                    w.key(stage.rawValue); w.number(s.sleepStageDurations[stage] ?? 0, 3)
                }
            }
            w.key("timeInBed"); w.number(s.timeInBed, 3)
            w.key("sleepPeriodTime"); w.number(s.sleepPeriodTime, 3)
            w.key("wakeAfterSleepOnset"); w.number(s.wakeAfterSleepOnset, 3)
            w.key("remLatency"); if let r = s.remLatency { w.number(r, 3) } else { w.null() }
            w.key("sleepStagePercentages"); w.object { w in
                for stage in SleepStage.allCases where stage != .awake {
                    w.key(stage.rawValue); w.number(s.sleepStagePercentages[stage] ?? 0, 2)
                }
            }
            w.key("snoreScore"); w.number(s.snoreScore, 2)
        }
    }
}
