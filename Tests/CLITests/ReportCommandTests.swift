import Foundation
import SleepCycleFormats
import Testing

/// `--format csv|html` of `analyze` and `sessions show`, `sessions list --format csv` and `sessions report`, run as a
/// user runs them: the CSV read back equals the JSON's numbers.
@Suite(.serialized) final class ReportCommandTests {
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("sleepcycle-report") }

    static let example = DocumentationExamplesTests.repo.appendingPathComponent("Fixtures/example-night.flac").path
    static func isoDate(_ s: String) -> Date? { ISO8601Time(s)?.date }
    static func date(_ any: Any?) -> Date? { (any as? String).flatMap { isoDate($0) } }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func csv(_ text: String) throws -> [[String]] {
        try CSVTable.parse(Array(text.utf8), path: "csv").records.map(\.fields)
    }

    /// Seconds of the union of `spans` inside [a, b).
    static func covered(_ spans: [(Date, Date)], _ a: Date, _ b: Date) -> Double {
        var merged: [(Date, Date)] = []
        for s in spans.sorted(by: { $0.0 < $1.0 }) {
            if let last = merged.last, s.0 <= last.1 { merged[merged.count - 1].1 = max(last.1, s.1) } else { merged.append(s) }
        }
        return merged.reduce(0) { $0 + max(0, min(b, $1.1).timeIntervalSince(max(a, $1.0))) }
    }

    /// Every CSV cell recomputed from the JSON: the stage at the epoch's middle, each event type's seconds, the mean
    /// breathing rate, the audio-health status and the epoch's level.
    @Test func theCSVReadBackEqualsTheJSON() throws {
        let start = "2026-03-14T23:10:00+01:00"
        let j = try BuiltBinary.run(["analyze", Self.example, "--format", "json", "--start", start, "--no-progress"])
        let c = try BuiltBinary.run(["analyze", Self.example, "--format", "csv", "--start", start, "--no-progress"])
        #expect(j.status == 0 && c.status == 0, "\(j.stderr)\(c.stderr)")
        let json = try Self.json(j.stdout)
        let rows = try Self.csv(c.stdout)
        #expect(rows.first == ["epoch_start", "stage", "snoring_s", "talking_s", "coughing_s", "movement_s", "breathing_bpm",
                               "audio_health", "level_db"])
        let startTime = try #require(Self.date(json["startTime"])), endTime = try #require(Self.date(json["endTime"]))
        #expect(rows.count - 1 == Int((endTime.timeIntervalSince(startTime) / 30).rounded(.up)))
        let events = try #require(json["events"] as? [[String: Any]])
        let stages = try #require(json["sleepStageIntervals"] as? [[String: Any]])
        let rates = try #require(json["breathingRates"] as? [[String: Any]])
        let health = try #require((json["audioStatistics"] as? [String: Any])?["healthIntervals"] as? [[String: Any]])
        let loudness = try #require(json["loudness"] as? [[String: Any]])
        #expect(!loudness.isEmpty && !rates.isEmpty && !events.isEmpty)
        var snoring = 0.0
        for (i, row) in rows.dropFirst().enumerated() {
            let a = startTime.addingTimeInterval(Double(i) * 30), b = min(endTime, a.addingTimeInterval(30))
            #expect(row[0].hasSuffix("+01:00"), "epoch_start in the recording's offset: \(row[0])")
            #expect(Self.isoDate(row[0]) == a)
            let middle = a.addingTimeInterval(b.timeIntervalSince(a) / 2)
            let stage = stages.first { Self.date($0["start"])! <= middle && middle < Self.date($0["end"])! }?["stage"] as? String
            #expect(row[1] == (stage ?? ""))
            for (column, type) in ["snoring", "talking", "coughing", "movement"].enumerated() {
                let spans = events.filter { $0["type"] as? String == type }.map { (Self.date($0["start"])!, Self.date($0["end"])!) }
                let expected = Self.covered(spans, a, b)
                #expect(abs(Double(row[2 + column])! - expected) < 0.0005, "\(type) in epoch \(i)")
                if type == "snoring" { snoring += Double(row[2])! }
            }
            let inEpoch = rates.filter { let t = Self.date($0["timestamp"])!; return a <= t && t < b }.map { $0["bpm"] as! Double }
            if inEpoch.isEmpty { #expect(row[6] == "") } else {
                #expect(abs(Double(row[6])! - inEpoch.reduce(0, +) / Double(inEpoch.count)) < 0.005)
            }
            let status = health.first { Self.date($0["start"])! <= a && b <= Self.date($0["end"])! }?["status"] as? String
            #expect(row[7] == status)
            let level = loudness.first { Self.date($0["start"]) == a }?["levelDb"] as? Double
            #expect(row[8] == (level.map { _ in row[8] } ?? ""))
            if let level { #expect(Double(row[8]) == level) }
        }
        let statistics = try #require(json["statistics"] as? [String: Any])
        #expect(abs(snoring - (statistics["snoreTime"] as! Double)) < 0.002)
        // The snores carry their level, and the statistics the new keys.
        #expect(events.filter { $0["type"] as? String == "snoring" }.allSatisfy { $0["levelDb"] is Double })
        for key in ["timeInBed", "sleepPeriodTime", "wakeAfterSleepOnset", "remLatency", "sleepStagePercentages", "snoreScore"] {
            #expect(statistics.keys.contains(key), "statistics.\(key)")
        }
        #expect(statistics["remLatency"] is NSNull)   // the example night has no REM
    }

    /// A two-sleeper night's CSV: the contract's columns and `sleeper`, both sleepers' epochs.
    @Test func twoSleepersCSV() throws {
        let file = DocumentationExamplesTests.repo.appendingPathComponent("Fixtures/two-sleepers.flac").path
        let c = try BuiltBinary.run(["analyze", file, "--channel-separation", "bedside", "--format", "csv", "--no-progress"])
        #expect(c.status == 0, "\(c.stderr)")
        let rows = try Self.csv(c.stdout)
        #expect(rows.first?.last == "sleeper" && rows.first?.count == 10)
        let sleepers = Set(rows.dropFirst().map { $0.last! })
        #expect(sleepers == ["primary", "secondary"])
    }

    /// Nights recorded into a store: `sessions list --format csv` carries the new statistics, `sessions show
    /// --format csv|html` the night's reports, `sessions report` a row (or bars) per night.
    @Test func storedNightsReportAndTrends() throws {
        let store = temp.path("nights.sqlite")
        for day in 1...3 {
            let r = try BuiltBinary.run(["record"] + RecordCommandTests.rawArgs
                                            + ["--store", store, "--start", "2026-01-0\(day)T23:00:00+01:00", "--duration", "60s"],
                                        stdin: try RecordCommandTests.rawNight())
            #expect(r.status == 0, "\(r.stderr)")
        }
        let list = try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "json"])
        let nights = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        let listCSV = try Self.csv(try BuiltBinary.run(["sessions", "list", "--store", store, "--format", "csv"]).stdout)
        let header = try #require(listCSV.first)
        #expect(listCSV.count == 4)
        for (night, row) in zip(nights, listCSV.dropFirst()) {
            let s = try #require(night["statistics"] as? [String: Any])
            func cell(_ name: String) -> String { row[header.firstIndex(of: name)!] }
            #expect(Double(cell("time_in_bed_s")) == s["timeInBed"] as? Double)
            #expect(Double(cell("wake_after_sleep_onset_s")) == s["wakeAfterSleepOnset"] as? Double)
            #expect(Double(cell("snore_score")) == s["snoreScore"] as? Double)
            #expect(Double(cell("light_pct")) == (s["sleepStagePercentages"] as? [String: Any])?["light"] as? Double)
        }

        let report = try BuiltBinary.run(["sessions", "report", "--last", "2", "--format", "csv", "--store", store])
        #expect(report.status == 0, "\(report.stderr)")
        let trend = try Self.csv(report.stdout)
        #expect(trend.count == 3)
        #expect(trend.first?.prefix(4) == ["session_id", "start_time", "state", "duration_s"])
        #expect(trend.dropFirst().map { $0[0] } == nights.suffix(2).map { $0["sessionId"] as! String })
        #expect(trend[1][1] == "2026-01-02T23:00:00.000+01:00")
        let second = try #require(nights[1]["statistics"] as? [String: Any])
        #expect(Double(trend[1][4]) == second["totalSleepDuration"] as? Double)
        #expect(Double(trend[1][9]) == second["snoreTime"] as? Double)

        let html = temp.path("trends.html")
        #expect(try BuiltBinary.run(["sessions", "report", "--store", store, "--output", html]).status == 0)
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.contains("3 night(s)"))
        #expect(page.components(separatedBy: "<rect class=\"bar\"").count - 1 >= 3 * 6)
        #expect(try BuiltBinary.run(["sessions", "report", "--last", "0", "--store", store]).status == 64)
        let negative = try BuiltBinary.run(["sessions", "report", "--last", "-1", "--store", store])
        #expect(negative.status == 64 && negative.stderr.contains("--last must be at least 1 (got -1)"), "\(negative.stderr)")
        let empty = try BuiltBinary.run(["sessions", "report", "--format", "csv", "--store", temp.path("none.sqlite")])
        #expect(empty.status == 0 && empty.stdout.split(separator: "\n").count == 1)

        let first = try #require(nights.first?["sessionId"] as? String)
        let showCSV = try BuiltBinary.run(["sessions", "show", first, "--store", store, "--format", "csv"])
        #expect(showCSV.status == 0 && showCSV.stdout.hasPrefix("epoch_start,stage,"))
        // A night stopped at 60 s (and the half second its last block carried): two epochs and a short one.
        #expect((3...4).contains(try Self.csv(showCSV.stdout).count))
        let showHTML = try BuiltBinary.run(["sessions", "show", first, "--store", store, "--format", "html"])
        // The night ends at 23:01:00 and the seconds its last blocks carried (more when the machine is busy).
        #expect(showHTML.stdout.contains("<svg id=\"n-hypnogram-chart\"") && showHTML.stdout.contains("23:00:00 → 23:01:0")
                && showHTML.stdout.contains(" UTC+01:00"))
    }

    /// The HTML goes through `--output`'s rules: an input is refused, a FIFO or device written through.
    @Test func htmlOutputFollowsTheOutputRules() throws {
        let refused = try BuiltBinary.run(["analyze", Self.example, "--format", "html", "--output", Self.example, "--no-progress"])
        #expect(refused.status == 73 && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        let devnull = try BuiltBinary.run(["analyze", Self.example, "--format", "html", "--output", "/dev/null", "--no-progress"])
        #expect(devnull.status == 0)
        let bad = temp.path("bad.json")
        try "{}".write(toFile: bad, atomically: true, encoding: .utf8)
        let r = try BuiltBinary.run(["report-dev", bad])
        #expect(r.status == 65 && r.stderr.contains("bad.json") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
    }
}
