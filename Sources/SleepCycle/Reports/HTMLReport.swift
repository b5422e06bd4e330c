import Foundation
import SleepCycleBus
import SleepCycleFormats

/// How an HTML report links what is outside it.
public struct HTMLReportOptions: Sendable {
    /// The URL (relative to the report, or absolute) an event's clip plays from; nil: the clip is listed without a
    /// player (an encrypted clip, or a clip whose folder is unknown).
    public var clipURL: @Sendable (EventClip) -> String?
    /// Whether a clip's file is known to be gone (a stored night's clip removed since): listed as not found.
    public var clipMissing: @Sendable (EventClip) -> Bool
    public init(clipURL: @escaping @Sendable (EventClip) -> String? = { _ in nil },
                clipMissing: @escaping @Sendable (EventClip) -> Bool = { _ in false }) {
        self.clipURL = clipURL
        self.clipMissing = clipMissing
    }
}

extension AnalysisResult {
    /// The night as one self-contained HTML page (`analyze --format html`, docs/0012-reports.md): hypnogram, events
    /// on a shared time axis, breathing rate and loudness, statistics, snorers, audio health, clips. Clock times are
    /// in the recording's own offset. Deterministic.
    public func htmlReport(options: HTMLReportOptions = HTMLReportOptions()) -> String {
        var body = HTMLReportWriter.header(of: self, separation: nil)
        body += "<main>\n" + HTMLReportWriter.warningsSection(warnings, level: 2)
            + HTMLReportWriter(result: self, id: "n", options: options).sections() + "</main>\n"
        return HTMLPage.document(title: HTMLReportWriter.title(of: self), body: body)
    }
}

extension SeparatedAnalysisResult {
    /// A two-sleeper night as one HTML page: the recording, then each sleeper's report.
    public func htmlReport(options: HTMLReportOptions = HTMLReportOptions()) -> String {
        guard let first = sessions.first else { return HTMLPage.document(title: "sleepcycle", body: "") }
        var body = HTMLReportWriter.header(of: first, separation: config.preset.rawValue)
        body += "<main>\n" + HTMLReportWriter.warningsSection(warnings, level: 2)
        for (i, session) in sessions.enumerated() {
            let channel = AudioChannel(rawValue: i)!
            let name = channel == .primary ? "Primary sleeper (left channel)" : "Secondary sleeper (right channel)"
            body += "<section class=\"sleeper\" aria-labelledby=\"\(channel.name)-title\">\n"
            body += "<h2 id=\"\(channel.name)-title\">\(name)</h2>\n"
            body += "<p class=\"meta\">session \(session.sessionId.uuidString)</p>\n"
            body += HTMLReportWriter(result: session, id: channel.name, options: options, level: 3).sections()
            body += "</section>\n"
        }
        body += "</main>\n"
        return HTMLPage.document(title: HTMLReportWriter.title(of: first), body: body)
    }
}

/// Writes one session's sections. Every chart shares the time axis `x(_:)` (the session's start to its end).
struct HTMLReportWriter {
    let result: AnalysisResult
    /// Prefix of the element ids (several sessions on one page).
    let id: String
    let options: HTMLReportOptions
    /// Heading level of the sections (2 on a one-sleeper page, 3 inside a sleeper's section).
    var level = 2

    static let width = 1000.0, left = 84.0, right = 12.0

    init(result: AnalysisResult, id: String, options: HTMLReportOptions, level: Int = 2) {
        self.result = result; self.id = id; self.options = options; self.level = level
    }

    static func title(of r: AnalysisResult) -> String {
        "Night of \(ISO8601Time.LocalParts(date: r.startTime, utcOffsetSeconds: r.utcOffsetSeconds).dateString) — "
            + (r.source.path == "-" ? "standard input" : MessageText.path(r.source.path))
    }

    static func header(of r: AnalysisResult, separation: String?) -> String {
        let channels = r.source.channels == 1 ? "mono" : "\(r.source.channels) channels"
        var out = "<header>\n<h1>\(HTMLPage.escape(title(of: r)))</h1>\n"
        out += "<p class=\"meta\">Recording \(clock(r.startTime, r)) → \(clock(r.endTime, r)) \(zone(r)) "
            + "(\(AnalysisResult.hm(r.source.durationSec))), \(r.source.sampleRate) Hz, \(channels)"
            + (separation.map { ", two sleepers (\(HTMLPage.escape($0)) separation)" } ?? "") + ".</p>\n"
        if separation == nil { out += "<p class=\"meta\">Session \(r.sessionId.uuidString)</p>\n" }
        out += "</header>\n"
        return out
    }

    static func zone(_ r: AnalysisResult) -> String {
        r.utcOffsetSeconds == 0 ? "UTC" : "UTC" + ISO8601Time.offsetString(r.utcOffsetSeconds)
    }

    static func clock(_ d: Date, _ r: AnalysisResult, seconds: Bool = true) -> String {
        let c = ISO8601Time.LocalParts(date: d, utcOffsetSeconds: r.utcOffsetSeconds).clock()
        return seconds ? c : String(c.prefix(5))
    }

    func clock(_ d: Date) -> String { Self.clock(d, result) }

    // MARK: - The shared time axis

    var span: Double { max(1e-3, result.endTime.timeIntervalSince(result.startTime)) }

    func x(_ d: Date) -> Double {
        Self.left + d.timeIntervalSince(result.startTime) / span * (Self.width - Self.left - Self.right)
    }

    /// The attributes that let the page's self-check map times to x.
    func axisAttributes() -> String {
        "data-t0=\"\(ISO8601Time.utcString(from: result.startTime))\" data-t1=\"\(ISO8601Time.utcString(from: result.endTime))\" "
            + "data-x0=\"\(HTMLPage.n(Self.left))\" data-x1=\"\(HTMLPage.n(Self.width - Self.right))\""
    }

    /// Vertical grid lines and clock labels at round times (in the recording's offset) below `height`.
    func timeTicks(top: Double, height: Double) -> String {
        let steps: [Double] = [60, 300, 600, 900, 1800, 3600, 7200]
        let step = steps.first { span / $0 <= 10 } ?? 7200
        let offset = Double(result.utcOffsetSeconds)
        var t = ((result.startTime.timeIntervalSince1970 + offset) / step).rounded(.up) * step - offset
        var out = ""
        while t <= result.endTime.timeIntervalSince1970 + 1e-6 {
            let d = Date(timeIntervalSince1970: t)
            let xv = HTMLPage.n(x(d))
            out += "<line class=\"grid\" x1=\"\(xv)\" x2=\"\(xv)\" y1=\"\(HTMLPage.n(top))\" y2=\"\(HTMLPage.n(top + height))\"/>"
            // Labels at the ends lean inwards, clear of the value labels and of the edge.
            let anchor = x(d) < Self.left + 20 ? "start" : x(d) > Self.width - Self.right - 20 ? "end" : "middle"
            out += "<text x=\"\(xv)\" y=\"\(HTMLPage.n(top + height + 14))\" text-anchor=\"\(anchor)\">"
                + "\(Self.clock(d, result, seconds: step < 60))</text>\n"
            t += step
        }
        return out
    }

    func heading(_ text: String, _ anchor: String) -> String {
        "<h\(level) id=\"\(id)-\(anchor)\">\(text)</h\(level)>\n"
    }

    // MARK: - Sections

    func sections() -> String {
        var out = ""
        out += hypnogramSection()
        out += statisticsSection()
        out += eventsSection()
        out += breathingAndLoudnessSection()
        out += snorersSection()
        out += heartRateSection()
        out += smartAlarmSection()
        out += audioHealthSection()
        out += clipsSection()
        return out
    }

    /// Heart rate and HRV from the wearable (the result's `heart`): heart rate every 5 minutes on the shared time axis,
    /// and a table of the night's summary. Nothing without heart data.
    func heartRateSection() -> String {
        guard let heart = result.heart else { return "" }
        var out = heading("Heart", "heart")
        let points = heart.frames.compactMap { f in f.metrics.hrMeanBpm.map { (f.end, $0) } }
        out += lineChart(name: "heart-rate", title: "Heart rate through the night (5-minute mean, bpm)", unit: "",
                         points: points, maxGap: 600,
                         empty: "Heart-rate readings cover less than 5 minutes of the night: the summary below only.",
                         summary: points.isEmpty ? "" : {
                             let bpm = points.map(\.1).sorted()
                             return String(format: "%d five-minute means, median %.1f bpm, from %.1f to %.1f bpm.",
                                           bpm.count, ResultCollector.median(bpm) ?? 0, bpm.first!, bpm.last!)
                         }(), column: "Heart rate, bpm (5-minute mean)", format: "%.1f", time: "Window's end")
        let m = heart.summary
        func row(_ name: String, _ value: Double?, _ format: String) -> String {
            "<tr><th scope=\"row\">\(name)</th><td class=\"num\">\(value.map { String(format: format, $0) } ?? "–")</td></tr>\n"
        }
        out += "<div class=\"scroll\"><table>\n<caption>The night's heart session after artefact correction "
            + "(docs/0011); HRV needs beat-to-beat RR intervals</caption>\n"
        out += "<tr><th scope=\"row\">Readings</th><td class=\"num\">\(m.sampleCount) (\(m.artifactCount) corrected)</td></tr>\n"
        out += row("Mean heart rate", m.hrMeanBpm, "%.1f bpm")
        out += row("RMSSD", m.rmssdMs, "%.1f ms")
        out += row("SDNN", m.hrSdnnMs, "%.1f ms")
        out += row("pNN50", m.pnn50, "%.1f %%")
        out += row("LF/HF", m.lfHf, "%.2f")
        out += row("Stress index (Baevsky)", m.baevskySI, "%.0f")
        out += "</table></div>\n"
        return out
    }

    func statisticsSection() -> String {
        let s = result.statistics
        func row(_ name: String, _ value: String) -> String { "<tr><th scope=\"row\">\(name)</th><td class=\"num\">\(value)</td></tr>\n" }
        func d(_ seconds: Double) -> String { AnalysisResult.hm(seconds) }
        var out = heading("Statistics", "statistics")
        out += "<div class=\"scroll\"><table>\n<caption>Definitions: docs/0012-reports.md (YASA's, REM latency from "
            + "sleep onset)</caption>\n"
        out += row("Time in bed", d(s.timeInBed))
        out += row("Total sleep", d(s.totalSleepDuration))
        out += row("Sleep efficiency", "\(Int((s.sleepEfficiency * 100).rounded())) %")
        out += row("Sleep onset latency", d(s.sleepOnsetLatency))
        out += row("Sleep period", d(s.sleepPeriodTime))
        out += row("Awake after sleep onset", d(s.wakeAfterSleepOnset))
        out += row("REM latency", s.remLatency.map(d) ?? "no REM")
        out += row("Awakenings", "\(s.numberOfAwakenings)")
        out += row("Final wake", s.finalWakeTime.map { clock($0) } ?? "no sleep")
        for stage in SleepStage.allCases {
            let share = stage == .awake ? "" : String(format: " (%.0f %% of sleep)", s.sleepStagePercentages[stage] ?? 0)
            out += row(Self.stageName(stage), d(s.sleepStageDurations[stage] ?? 0) + share)
        }
        out += row("Snoring", "\(d(s.snoreTime)) in \(s.snoreSessions.count) session(s)")
        out += row("Snore score", String(format: "%.1f", s.snoreScore))
        out += "</table></div>\n"
        return out
    }

    func snorersSection() -> String {
        let snorers = result.snorers
        guard !snorers.isEmpty else { return "" }
        var out = heading("Snorers", "snorers")
        out += "<div class=\"scroll\"><table>\n<thead><tr><th>Snorer</th><th class=\"num\">Snores</th>"
            + "<th class=\"num\">Time</th></tr></thead><tbody>\n"
        for s in snorers {
            out += "<tr><td>Snorer \(s.snorer)</td><td class=\"num\">\(s.snoreCount)</td>"
                + "<td class=\"num\">\(AnalysisResult.hm(s.snoreTime))</td></tr>\n"
        }
        return out + "</tbody></table></div>\n"
    }

    /// When the smart alarm rang, or that it did not within the recording (with `--alarm`).
    func smartAlarmSection() -> String {
        guard let alarm = result.smartAlarm else { return "" }
        var out = heading("Smart alarm", "alarm")
        out += "<p>Window \(clock(alarm.windowStart)) → \(clock(alarm.alarmTime)) (\(Self.zone(result))): "
        if let fired = alarm.firedAt, let rule = alarm.rule {
            let why = ["lightSleep": "light sleep or awake for two epochs, on the stages scored live",
                       "movement": "a burst of movement", "deadline": "the alarm time"][rule] ?? rule
            out += "fired at \(clock(fired)) (\(HTMLPage.escape(why))).</p>\n"
        } else {
            out += "not fired within the recording.</p>\n"
        }
        return out
    }

    /// The problems that did not stop the analysis (the result's `warnings`), first on the page.
    static func warningsSection(_ warnings: [AnalysisWarning], level: Int) -> String {
        guard !warnings.isEmpty else { return "" }
        var out = "<section class=\"warnings\" aria-labelledby=\"warnings-title\">\n"
            + "<h\(level) id=\"warnings-title\">Warnings</h\(level)>\n<ul>\n"
        for w in warnings {
            out += "<li><code>\(HTMLPage.escape(w.code.rawValue))</code> \(HTMLPage.escape(w.message))</li>\n"
        }
        return out + "</ul>\n</section>\n"
    }

    func audioHealthSection() -> String {
        var out = heading("Audio input", "audio")
        out += "<div class=\"scroll\"><table>\n<thead><tr><th>From</th><th>To</th><th>Status</th>"
            + (result.source.channels > 1 ? "<th>Channel</th>" : "") + "<th class=\"num\">Duration</th></tr></thead><tbody>\n"
        for h in result.audioStatistics.healthIntervals {
            let end = h.end ?? result.endTime
            out += "<tr><td>\(clock(h.start))</td><td>\(clock(end))</td><td>\(h.status.rawValue)</td>"
                + (result.source.channels > 1 ? "<td>\(h.channel?.name ?? "")</td>" : "")
                + "<td class=\"num\">\(AnalysisResult.hm(end.timeIntervalSince(h.start)))</td></tr>\n"
        }
        out += "</tbody></table></div>\n"
        let a = result.audioStatistics
        if a.gapCount > 0 {
            out += "<p>\(a.gapCount) gap(s) in the audio, \(AnalysisResult.hm(a.gapDuration)) missing.</p>\n"
        }
        return out
    }

    func clipsSection() -> String {
        let withClips = result.events.filter { $0.clip != nil }
        guard !withClips.isEmpty else { return "" }
        var out = heading("Clips", "clips")
        out += "<ul class=\"clips\">\n"
        for e in withClips {
            let clip = e.clip!
            let label = "\(e.type.rawValue) at \(clock(e.start)), \(AnalysisResult.hm(e.end.timeIntervalSince(e.start)))"
                + (e.levelDb.map { String(format: ", %.0f dBFS", $0) } ?? "")
                + (e.channel.map { " (\($0.name) channel)" } ?? "")
            out += "<li id=\"\(id)-clip-\(e.id)\">\(HTMLPage.escape(label))"
            if let url = options.clipURL(clip) {
                out += "<audio controls preload=\"none\" src=\"\(HTMLPage.escape(url))\" aria-label=\"\(HTMLPage.escape(label))\">"
                    + "</audio>"
            } else {
                out += " — <code>\(HTMLPage.escape(clip.path))</code>"
                    + (options.clipMissing(clip) ? " (file not found)"
                       : clip.path.hasSuffix(".enc") ? " (encrypted: sleepcycle clips decrypt)" : "")
            }
            out += "</li>\n"
        }
        return out + "</ul>\n"
    }

    static func stageName(_ s: SleepStage) -> String {
        switch s { case .awake: "Awake"; case .light: "Light"; case .deep: "Deep"; case .rem: "REM" }
    }
}
