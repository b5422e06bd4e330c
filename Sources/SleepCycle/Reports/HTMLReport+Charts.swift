import Foundation
import SleepCycleBus
import SleepCycleFormats

/// The SVG charts of a session's report, all on the shared time axis, each with a text alternative (`<title>`,
/// `<desc>`) and its data as a table behind a `<details>`.
extension HTMLReportWriter {
    static let stageRows: [SleepStage] = [.awake, .rem, .light, .deep]

    /// YASA's hypnogram (`yasa.plot_hypnogram`): a step plot, wake at the top, then REM (in red), light, deep. Each
    /// stage interval is one `<line class="step">` carrying its stage and times.
    func hypnogramSection() -> String {
        let rowHeight = 28.0, top = 6.0
        let plotHeight = rowHeight * Double(Self.stageRows.count)
        let height = top + plotHeight + 22
        func y(_ s: SleepStage) -> Double { top + rowHeight / 2 + Double(Self.stageRows.firstIndex(of: s)!) * rowHeight }
        let intervals = result.sleepStageIntervals
        var out = heading("Hypnogram", "hypnogram")
        let svgId = "\(id)-hypnogram-chart"
        out += "<figure>\n<svg id=\"\(svgId)\" class=\"chart hypnogram\" viewBox=\"0 0 \(HTMLPage.n(Self.width)) "
            + "\(HTMLPage.n(height))\" role=\"img\" aria-labelledby=\"\(svgId)-t \(svgId)-d\" \(axisAttributes()) "
            + "data-count=\"\(intervals.count)\">\n"
        out += "<title id=\"\(svgId)-t\">Hypnogram: sleep stages through the night</title>\n"
        out += "<desc id=\"\(svgId)-d\">\(HTMLPage.escape(hypnogramDescription()))</desc>\n"
        for s in Self.stageRows {
            out += "<line class=\"grid\" x1=\"\(HTMLPage.n(Self.left))\" x2=\"\(HTMLPage.n(Self.width - Self.right))\" "
                + "y1=\"\(HTMLPage.n(y(s)))\" y2=\"\(HTMLPage.n(y(s)))\"/>"
                + "<text x=\"\(HTMLPage.n(Self.left - 8))\" y=\"\(HTMLPage.n(y(s) + 4))\" text-anchor=\"end\">\(Self.stageName(s))</text>\n"
        }
        out += timeTicks(top: top, height: plotHeight)
        // The vertical connectors between consecutive intervals, then the steps over them.
        var connector = ""
        for (a, b) in zip(intervals, intervals.dropFirst()) where b.start == a.end {
            connector += "M\(HTMLPage.n(x(b.start))) \(HTMLPage.n(y(a.stage)))V\(HTMLPage.n(y(b.stage)))"
        }
        if !connector.isEmpty { out += "<path class=\"connector\" d=\"\(connector)\"/>\n" }
        for i in intervals {
            out += "<line class=\"step stage-\(i.stage.rawValue)\" x1=\"\(HTMLPage.n(x(i.start)))\" x2=\"\(HTMLPage.n(x(i.end)))\" "
                + "y1=\"\(HTMLPage.n(y(i.stage)))\" y2=\"\(HTMLPage.n(y(i.stage)))\" data-stage=\"\(i.stage.rawValue)\" "
                + "data-start=\"\(ISO8601Time.utcString(from: i.start))\" data-end=\"\(ISO8601Time.utcString(from: i.end))\"/>\n"
        }
        out += "</svg>\n"
        out += "<details><summary>Hypnogram as a table (\(AnalysisResult.counted(intervals.count, "interval")))</summary>"
            + "<div class=\"scroll\"><table>\n"
            + "<thead><tr><th>From</th><th>To</th><th>Stage</th><th class=\"num\">Duration</th></tr></thead><tbody>\n"
        for i in intervals {
            out += "<tr><td>\(clock(i.start))</td><td>\(clock(i.end))</td><td>\(Self.stageName(i.stage))</td>"
                + "<td class=\"num\">\(AnalysisResult.hm(i.end.timeIntervalSince(i.start)))</td></tr>\n"
        }
        out += "</tbody></table></div></details>\n</figure>\n"
        return out
    }

    func hypnogramDescription() -> String {
        let s = result.statistics
        guard let wake = s.finalWakeTime else {
            return result.sleepStageIntervals.isEmpty ? "No sleep stages were scored." : "No sleep was scored: awake throughout."
        }
        let onset = result.startTime.addingTimeInterval(s.sleepOnsetLatency)
        let parts = SleepStage.allCases.map { "\(Self.stageName($0).lowercased()) \(AnalysisResult.hm(s.sleepStageDurations[$0] ?? 0))" }
        return "Fell asleep at \(clock(onset)), final wake at \(clock(wake)) (\(Self.zone(result))). Time per stage: "
            + parts.joined(separator: ", ") + ". \(s.numberOfAwakenings) awakening(s)."
    }

    /// A row per event type and one for the audio input's health; each event a `<rect>` (a link to its clip when
    /// it has one, so that the keyboard reaches it).
    func eventsSection() -> String {
        let rowHeight = 24.0, top = 4.0, bar = 14.0
        let rows: [EventType] = EventType.allCases
        let plotHeight = rowHeight * Double(rows.count + 1)
        let height = top + plotHeight + 22
        let events = result.events
        let svgId = "\(id)-events-chart"
        var out = heading("Events", "events")
        out += "<ul class=\"legend\" aria-hidden=\"true\">" + rows.map {
            "<li><span class=\"ev-\($0.rawValue)\" style=\"background:var(--\($0.rawValue))\"></span>\($0.rawValue)</li>"
        }.joined() + "</ul>\n"
        // With clip links inside, a group (an image's children are hidden from assistive technology).
        let role = events.contains { $0.clip != nil } ? "group" : "img"
        out += "<figure>\n<svg id=\"\(svgId)\" class=\"chart timeline\" viewBox=\"0 0 \(HTMLPage.n(Self.width)) "
            + "\(HTMLPage.n(height))\" role=\"\(role)\" aria-labelledby=\"\(svgId)-t \(svgId)-d\" \(axisAttributes()) "
            + "data-count=\"\(events.count)\">\n"
        out += "<title id=\"\(svgId)-t\">Events through the night, one row per kind, and the audio input's health</title>\n"
        let counts = rows.map { t in "\(events.filter { $0.type == t }.count) \(t.rawValue)" }
        // Stereo without separation: an event per channel, so a sound both microphones heard is two of them; the
        // text summary counts sounds. Both counts, so that the two agree.
        var perChannel = ""
        if Set(events.compactMap(\.channel)).count > 1 {
            let sounds = rows.map { t in "\(AnalysisResult.sounds(events.filter { $0.type == t }).count) \(t.rawValue)" }
            perChannel = " Each channel's detections are listed: a sound heard on both microphones is two events. As "
                + "distinct sounds: \(sounds.joined(separator: ", ")) (as the text summary counts them)."
        }
        out += "<desc id=\"\(svgId)-d\">\(counts.joined(separator: ", ")) events.\(perChannel) The table below lists each one.</desc>\n"
        for (i, t) in rows.enumerated() {
            let yc = top + rowHeight * (Double(i) + 0.5)
            out += "<line class=\"grid\" x1=\"\(HTMLPage.n(Self.left))\" x2=\"\(HTMLPage.n(Self.width - Self.right))\" "
                + "y1=\"\(HTMLPage.n(yc))\" y2=\"\(HTMLPage.n(yc))\"/><text x=\"\(HTMLPage.n(Self.left - 8))\" "
                + "y=\"\(HTMLPage.n(yc + 4))\" text-anchor=\"end\">\(t.rawValue)</text>\n"
        }
        let healthY = top + rowHeight * Double(rows.count) + (rowHeight - bar) / 2
        out += "<text x=\"\(HTMLPage.n(Self.left - 8))\" y=\"\(HTMLPage.n(healthY + bar / 2 + 4))\" text-anchor=\"end\">audio</text>\n"
        out += timeTicks(top: top, height: plotHeight)
        for h in result.audioStatistics.healthIntervals {
            let end = h.end ?? result.endTime
            out += "<rect class=\"h-\(h.status.rawValue)\" x=\"\(HTMLPage.n(x(h.start)))\" y=\"\(HTMLPage.n(healthY))\" "
                + "width=\"\(HTMLPage.n(max(0.5, x(end) - x(h.start))))\" height=\"\(HTMLPage.n(bar))\"><title>audio "
                + "\(h.status.rawValue) \(clock(h.start))–\(clock(end))</title></rect>\n"
        }
        for e in events {
            let row = rows.firstIndex(of: e.type)!
            let yv = top + rowHeight * Double(row) + (rowHeight - bar) / 2
            let x0 = x(e.start), x1 = max(x(e.end), x0 + 1)
            let rect = "<rect class=\"ev ev-\(e.type.rawValue)\" x=\"\(HTMLPage.n(x0))\" y=\"\(HTMLPage.n(yv))\" "
                + "width=\"\(HTMLPage.n(x1 - x0))\" height=\"\(HTMLPage.n(bar))\" data-type=\"\(e.type.rawValue)\" "
                + "data-start=\"\(ISO8601Time.utcString(from: e.start))\" data-end=\"\(ISO8601Time.utcString(from: e.end))\">"
                + "<title>\(HTMLPage.escape(eventLabel(e)))</title></rect>"
            if e.clip != nil {
                out += "<a class=\"clip-link\" href=\"#\(id)-clip-\(e.id)\">\(rect)</a>\n"
            } else {
                out += rect + "\n"
            }
        }
        out += "</svg>\n"
        if !perChannel.isEmpty { out += "<p class=\"meta\">\(perChannel.dropFirst())</p>\n" }
        out += "<details><summary>All \(events.count) events as a table</summary><div class=\"scroll\"><table>\n"
            + "<thead><tr><th>Start</th><th>Kind</th><th class=\"num\">Duration</th><th class=\"num\">Level</th>"
            + "<th class=\"num\">Probability</th>" + (result.source.channels > 1 ? "<th>Channel</th>" : "")
            + "</tr></thead><tbody>\n"
        for e in events {
            out += "<tr><td>\(clock(e.start))</td><td>"
                + (e.clip != nil ? "<a href=\"#\(id)-clip-\(e.id)\">\(e.type.rawValue)</a>" : e.type.rawValue)
                + "</td><td class=\"num\">\(AnalysisResult.hm(e.end.timeIntervalSince(e.start)))</td>"
                + "<td class=\"num\">\(e.levelDb.map { String(format: "%.0f dBFS", $0) } ?? "")</td>"
                + "<td class=\"num\">\(String(format: "%.2f", e.probability))</td>"
                + (result.source.channels > 1 ? "<td>\(e.channel?.name ?? "")</td>" : "") + "</tr>\n"
        }
        out += "</tbody></table></div></details>\n</figure>\n"
        return out
    }

    func eventLabel(_ e: SleepEvent) -> String {
        "\(e.type.rawValue) \(clock(e.start)), \(AnalysisResult.hm(e.end.timeIntervalSince(e.start)))"
            + (e.levelDb.map { String(format: ", %.0f dBFS", $0) } ?? "")
    }

    /// Breathing rate (breaths/min) and loudness (30-s Leq, dBFS) through the night, one chart each.
    func breathingAndLoudnessSection() -> String {
        var out = heading("Breathing and loudness", "breathing")
        let rates = result.breathingRates.sorted { $0.timestamp < $1.timestamp }
        out += lineChart(name: "breathing", title: "Breathing rate through the night (breaths per minute)",
                         unit: "/min", points: rates.map { ($0.timestamp, $0.bpm) }, maxGap: 300,
                         empty: "No breathing-rate estimates.",
                         summary: rates.isEmpty ? "" : {
                             let bpm = rates.map(\.bpm).sorted()
                             return String(format: "%d estimates, median %.1f breaths/min, from %.1f to %.1f.",
                                           bpm.count, ResultCollector.median(bpm) ?? 0, bpm.first!, bpm.last!)
                         }(), column: "Breaths per minute", time: "Window's middle")
        let levels = result.loudness
        out += lineChart(name: "loudness", title: "Loudness through the night (30-s level, dBFS)", unit: " dB",
                         points: levels.map { ($0.start.addingTimeInterval($0.end.timeIntervalSince($0.start) / 2), $0.levelDb) },
                         maxGap: 90, empty: "No sound-level readings.",
                         summary: levels.isEmpty ? "" : {
                             let db = levels.map(\.levelDb).sorted()
                             return String(format: "%d epochs, median %.1f dBFS, from %.1f to %.1f dBFS.",
                                           db.count, ResultCollector.median(db) ?? 0, db.first!, db.last!)
                         }(), column: "Level, dBFS (30 s)", time: "Epoch's middle")
        return out
    }

    /// A polyline of `points` on the shared axis, broken where two points are more than `maxGap` seconds apart, and
    /// its values as a table (`column`: the value's heading, `format` how a value is written).
    func lineChart(name: String, title: String, unit: String, points: [(Date, Double)], maxGap: Double,
                   empty: String, summary: String, column: String, format: String = "%.2f",
                   time: String = "Time") -> String {
        guard !points.isEmpty else { return "<p>\(empty)</p>\n" }
        let top = 8.0, plotHeight = 110.0, height = top + plotHeight + 22
        let values = points.map(\.1)
        // Whole numbers at the bottom, middle and top gridlines, so that each label is its line's value.
        var lo = values.min()!.rounded(.down), hi = values.max()!.rounded(.up)
        if hi - lo < 2 { lo -= 1; hi += 1 }
        if Int(hi - lo) % 2 == 1 { hi += 1 }
        func y(_ v: Double) -> Double { top + (hi - v) / (hi - lo) * plotHeight }
        let svgId = "\(id)-\(name)-chart"
        var out = "<figure>\n<svg id=\"\(svgId)\" class=\"chart \(name)\" viewBox=\"0 0 \(HTMLPage.n(Self.width)) "
            + "\(HTMLPage.n(height))\" role=\"img\" aria-labelledby=\"\(svgId)-t \(svgId)-d\">\n"
        out += "<title id=\"\(svgId)-t\">\(HTMLPage.escape(title))</title>\n<desc id=\"\(svgId)-d\">\(HTMLPage.escape(summary))</desc>\n"
        for v in [lo, (lo + hi) / 2, hi] {
            out += "<line class=\"grid\" x1=\"\(HTMLPage.n(Self.left))\" x2=\"\(HTMLPage.n(Self.width - Self.right))\" "
                + "y1=\"\(HTMLPage.n(y(v)))\" y2=\"\(HTMLPage.n(y(v)))\"/><text x=\"\(HTMLPage.n(Self.left - 8))\" "
                + "y=\"\(HTMLPage.n(y(v) + 4))\" text-anchor=\"end\">\(String(format: "%.0f", v))\(unit)</text>\n"
        }
        out += timeTicks(top: top, height: plotHeight)
        var d = ""
        var last: Date?
        for (t, v) in points {
            let move = last.map { t.timeIntervalSince($0) > maxGap } ?? true
            d += (move ? "M" : "L") + "\(HTMLPage.n(x(t))) \(HTMLPage.n(y(v)))"
            last = t
        }
        out += "<path class=\"series\" d=\"\(d)\"/>\n</svg>\n<figcaption class=\"meta\">\(HTMLPage.escape(summary))</figcaption>\n"
        out += "<details><summary>\(HTMLPage.escape(column)) as a table (\(AnalysisResult.counted(points.count, "value")))"
            + "</summary><div class=\"scroll\"><table>\n<thead><tr><th>\(time)</th><th class=\"num\">\(HTMLPage.escape(column))</th>"
            + "</tr></thead><tbody>\n"
        for (t, v) in points {
            out += "<tr><td>\(clock(t))</td><td class=\"num\">\(String(format: format, v))</td></tr>\n"
        }
        out += "</tbody></table></div></details>\n</figure>\n"
        return out
    }
}
