import Foundation
import SleepCycleBus
import SleepCycleFormats
import SleepCycleStore

/// One stored night's numbers in a trend report (`sessions report`).
public struct NightTrend: Sendable, Hashable {
    public var sessionId: UUID
    public var startTime: Date
    public var utcOffsetSeconds: Int
    public var state: StoredNight.State
    /// Seconds.
    public var duration: Double
    public var totalSleep: Double
    /// 0–1.
    public var sleepEfficiency: Double
    public var wakeAfterSleepOnset: Double
    public var snoreTime: Double
    public var snoreScore: Double
    /// Median of the night's breathing-rate estimates (breaths/min); nil without one.
    public var breathingBpm: Double?
    public var awakenings: Int

    /// A night from its stored row and its result (the primary sleeper's for a two-sleeper night).
    public init(night: StoredNight, result: AnalysisResult) {
        sessionId = night.id; startTime = night.startTime; utcOffsetSeconds = night.utcOffsetSeconds; state = night.state
        duration = result.endTime.timeIntervalSince(result.startTime)
        let s = result.statistics
        totalSleep = s.totalSleepDuration; sleepEfficiency = s.sleepEfficiency; wakeAfterSleepOnset = s.wakeAfterSleepOnset
        snoreTime = s.snoreTime; snoreScore = s.snoreScore; awakenings = s.numberOfAwakenings
        breathingBpm = ResultCollector.median(result.breathingRates.map(\.bpm))
    }
}

/// Trends across stored nights: a CSV row or an HTML chart per night (`sessions report`, docs/0012-reports.md).
public enum TrendReport {
    public static let csvHeader = "session_id,start_time,state,duration_s,total_sleep_s,sleep_efficiency,"
        + "wake_after_sleep_onset_s,awakenings,snore_time_s,snore_score,breathing_bpm"

    /// One row per night, oldest first; `start_time` in the night's own offset.
    public static func csv(_ nights: [NightTrend]) -> String {
        var out = csvHeader + "\n"
        for n in nights {
            out += [n.sessionId.uuidString, ISO8601Time.string(from: n.startTime, utcOffsetSeconds: n.utcOffsetSeconds),
                    n.state.rawValue, AnalysisResult.fixed(n.duration, 3), AnalysisResult.fixed(n.totalSleep, 3),
                    AnalysisResult.fixed(n.sleepEfficiency, 4), AnalysisResult.fixed(n.wakeAfterSleepOnset, 3),
                    String(n.awakenings), AnalysisResult.fixed(n.snoreTime, 3), AnalysisResult.fixed(n.snoreScore, 2),
                    n.breathingBpm.map { AnalysisResult.fixed($0, 2) } ?? ""].joined(separator: ",") + "\n"
        }
        return out
    }

    /// A metric charted, and how to read it from a night.
    struct Metric: Sendable {
        var id: String, title: String, unit: String
        var value: @Sendable (NightTrend) -> Double?
        /// How a value is written (a count has no decimals).
        var format = "%.1f"
        init(_ id: String, _ title: String, _ unit: String, format: String = "%.1f",
             _ value: @escaping @Sendable (NightTrend) -> Double?) {
            self.id = id; self.title = title; self.unit = unit; self.format = format; self.value = value
        }
    }

    static let metrics: [Metric] = [
        Metric("sleep", "Total sleep", "h", { $0.totalSleep / 3600 }),
        Metric("duration", "Time in bed", "h", { $0.duration / 3600 }),
        Metric("efficiency", "Sleep efficiency", "%", { $0.sleepEfficiency * 100 }),
        Metric("snoring", "Snore time", "min", { $0.snoreTime / 60 }),
        Metric("snorescore", "Snore score", "", { $0.snoreScore }),
        Metric("breathing", "Breathing rate (median)", "/min", { $0.breathingBpm }),
        Metric("awakenings", "Awakenings", "", format: "%.0f", { Double($0.awakenings) }),
    ]

    /// One self-contained HTML page: a bar chart per metric (a bar per night) and the table of every night.
    public static func html(_ nights: [NightTrend]) -> String {
        var body = "<header>\n<h1>Sleep trends</h1>\n<p class=\"meta\">\(nights.count) night(s)"
        if let first = nights.first, let last = nights.last {
            body += ", \(day(first)) to \(day(last))"
        }
        body += ". Definitions: docs/0012-reports.md.</p>\n</header>\n<main>\n"
        guard !nights.isEmpty else {
            return HTMLPage.document(title: "Sleep trends", body: body + "<p>No nights stored.</p>\n</main>\n")
        }
        for m in metrics {
            body += "<h2 id=\"trend-\(m.id)\">\(m.title)</h2>\n" + barChart(nights, metric: m)
        }
        body += "<h2 id=\"trend-table\">Nights</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>Night</th>"
            + metrics.map { "<th class=\"num\">\($0.title)\($0.unit.isEmpty ? "" : " (\($0.unit))")</th>" }.joined()
            + "<th>State</th></tr></thead><tbody>\n"
        for n in nights {
            // The night's own offset too: two nights at 23:00 in different zones looked alike.
            let zone = n.utcOffsetSeconds == 0 ? "UTC" : "UTC" + ISO8601Time.offsetString(n.utcOffsetSeconds)
            body += "<tr><td>\(day(n)) \(zone)</td>" + metrics.map { m in
                "<td class=\"num\">\(m.value(n).map { String(format: m.format, $0) } ?? "–")</td>"
            }.joined() + "<td>\(n.state.rawValue)</td></tr>\n"
        }
        body += "</tbody></table></div>\n</main>\n"
        return HTMLPage.document(title: "Sleep trends", body: body)
    }

    /// An axis value with the precision its size needs (8, 7.5, 0.25).
    static func axisLabel(_ v: Double) -> String {
        v == 0 ? "0" : abs(v) >= 10 ? String(format: "%.0f", v) : abs(v) >= 1 ? String(format: "%.1f", v) : String(format: "%.2g", v)
    }

    static func day(_ n: NightTrend) -> String {
        let p = ISO8601Time.LocalParts(date: n.startTime, utcOffsetSeconds: n.utcOffsetSeconds)
        return p.dateString + " " + String(p.clock().prefix(5))
    }

    static func barChart(_ nights: [NightTrend], metric m: Metric) -> String {
        let width = 1000.0, left = 70.0, right = 10.0, top = 8.0, plotHeight = 120.0, height = top + plotHeight + 24
        let values = nights.map(m.value)
        let largest = values.compactMap { $0 }.max() ?? 0
        let hi = largest > 0 ? largest : 1
        let slot = (width - left - right) / Double(nights.count)
        let barWidth = max(1, slot * 0.7)
        let svgId = "trend-\(m.id)-chart"
        let known = values.compactMap { $0 }
        let unit = m.unit.isEmpty ? "" : " " + m.unit
        func f(_ v: Double) -> String { String(format: m.format, v) }
        let summary = known.isEmpty ? "No values."
            : "From \(f(known.min()!)) to \(f(known.max()!))\(unit), mean "
                + String(format: "%.1f", known.reduce(0, +) / Double(known.count)) + "\(unit)."
        var out = "<figure>\n<svg id=\"\(svgId)\" class=\"chart trend\" viewBox=\"0 0 \(HTMLPage.n(width)) \(HTMLPage.n(height))\" "
            + "role=\"img\" aria-labelledby=\"\(svgId)-t \(svgId)-d\">\n<title id=\"\(svgId)-t\">\(m.title) per night</title>\n"
            + "<desc id=\"\(svgId)-d\">\(summary)</desc>\n"
        for v in [0, hi / 2, hi] {
            let y = top + plotHeight - v / hi * plotHeight
            out += "<line class=\"grid\" x1=\"\(HTMLPage.n(left))\" x2=\"\(HTMLPage.n(width - right))\" y1=\"\(HTMLPage.n(y))\" "
                + "y2=\"\(HTMLPage.n(y))\"/><text x=\"\(HTMLPage.n(left - 6))\" y=\"\(HTMLPage.n(y + 4))\" text-anchor=\"end\">"
                + axisLabel(v) + unit + "</text>\n"
        }
        let labelEvery = max(1, Int((Double(nights.count) / 10).rounded(.up)))
        for (i, n) in nights.enumerated() {
            let x = left + slot * Double(i) + (slot - barWidth) / 2
            if let v = values[i] {
                let h = max(0, v) / hi * plotHeight
                out += "<rect class=\"bar\" style=\"fill:var(--accent)\" x=\"\(HTMLPage.n(x))\" y=\"\(HTMLPage.n(top + plotHeight - h))\" "
                    + "width=\"\(HTMLPage.n(barWidth))\" height=\"\(HTMLPage.n(h))\"><title>\(day(n)): "
                    + String(format: m.format, v) + "\(m.unit.isEmpty ? "" : " " + m.unit)</title></rect>\n"
            }
            if i % labelEvery == 0 {
                out += "<text x=\"\(HTMLPage.n(x + barWidth / 2))\" y=\"\(HTMLPage.n(top + plotHeight + 16))\" text-anchor=\"middle\">"
                    + "\(String(day(n).dropFirst(5).prefix(5)))</text>\n"
            }
        }
        return out + "</svg>\n</figure>\n"
    }
}
