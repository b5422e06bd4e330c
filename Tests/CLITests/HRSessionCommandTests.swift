import Foundation
import Testing

/// `sleepcycle hr-session FILE`, as a user runs it.
@Suite("heart sessions: command line")
final class HRSessionCommandTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/example-night.flac").path
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("sleepcycle-hr") }

    /// 300 beats alternating 960 and 1040 ms, as CSV (time in s, rr_ms) and as JSON lines of the wearable schema.
    func files() throws -> (csv: String, jsonl: String) {
        var t = 0.0, csv = "time,rr_ms\n", jsonl = ""
        for i in 0..<300 {
            let rr = i % 2 == 0 ? 960.0 : 1040.0
            t += rr / 1000
            csv += String(format: "%.3f,%.0f\n", t, rr)
            jsonl += "{\"timestamp\": \(1_767_304_800 + t), \"deviceId\": \"w\", \"source\": \"watch\", "
                + "\"metrics\": {\"hr\": \(60_000 / rr)}, \"rrIntervals\": [\(rr)]}\n"
        }
        let a = temp.path("rr.csv"), b = temp.path("rr.jsonl")
        try Data(csv.utf8).write(to: URL(fileURLWithPath: a))
        try Data(jsonl.utf8).write(to: URL(fileURLWithPath: b))
        return (a, b)
    }

    static func objects(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func jsonLinesFromCSVAndTheWearableSchemaAgree() throws {
        let (csv, jsonl) = try files()
        var summaries: [[String: Any]] = []
        for file in [csv, jsonl] {
            let r = try BuiltBinary.run(["hr-session", file, "--window", "60s", "--emit-interval", "10s"])
            #expect(r.status == 0, "\(r.stderr)")
            let lines = Self.objects(r.stdout)
            #expect(lines.count == r.stdout.split(separator: "\n").count)
            #expect(lines.first?["type"] as? String == "session_started" && lines.last?["type"] as? String == "session_summary")
            let frames = lines.filter { $0["type"] as? String == "session_frame" }
            #expect(frames.count == 29)
            let m = try #require(frames.last?["metrics"] as? [String: Any])
            #expect(abs((m["rmssd_ms"] as? Double ?? 0) - 80) < 0.001 && m["sample_count"] as? Int == 60)
            summaries.append(try #require(lines.last?["metrics"] as? [String: Any]))
        }
        // The same beats as a plain RR list (Polar's RR export, with its header line).
        let list = temp.path("polar.txt")
        try Data(("RR-interval [ms]\n" + (0..<300).map { $0 % 2 == 0 ? "960" : "1040" }.joined(separator: "\n") + "\n").utf8)
            .write(to: URL(fileURLWithPath: list))
        let polar = try BuiltBinary.run(["hr-session", list, "--window", "60s", "--emit-interval", "10s"])
        #expect(polar.status == 0, "\(polar.stderr)")
        summaries.append(try #require(Self.objects(polar.stdout).last?["metrics"] as? [String: Any]))
        #expect(summaries[0]["rmssd_ms"] as? Double == summaries[1]["rmssd_ms"] as? Double)
        #expect(summaries[2]["rmssd_ms"] as? Double == summaries[0]["rmssd_ms"] as? Double)
        #expect(summaries[0]["sample_count"] as? Int == 300 && summaries[0]["artifact_count"] as? Int == 0)
        let raw = try BuiltBinary.run(["hr-session", csv, "--include-raw", "--mode", "breathing"])
        #expect(Self.objects(raw.stdout).contains { $0["type"] as? String == "biosignal_frame" })
        #expect(Self.objects(raw.stdout).first?["mode"] as? String == "breathing")
    }

    @Test func badFilesAreOneLineErrors() throws {
        for (name, content, status, needle) in [
            ("bad.csv", "time,rr_ms\n1,900\n2,abc\n", Int32(65), "bad.csv:3"),
            ("bad.jsonl", "{\"timestamp\": 1, \"rrIntervals\": [900]}\nnot json\n", 65, "bad.jsonl:2"),
            ("range.jsonl", "{\"timestamp\": 1, \"rrIntervals\": [9000]}\n", 65, "range.jsonl:1"),
            ("empty.csv", "time,rr_ms\n", 65, "empty.csv"),
            ("list.txt", "900\n910\nx\n", 65, "list.txt:3"),
            ("short.txt", "900\n50\n", 65, "short.txt:2"),
        ] {
            let path = temp.path(name)
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            let r = try BuiltBinary.run(["hr-session", path])
            #expect(r.status == status, "\(name): \(r.stderr)")
            #expect(r.stdout.isEmpty && r.stderr.split(separator: "\n").count == 1 && r.stderr.contains(needle), "\(r.stderr)")
        }
        let missing = try BuiltBinary.run(["hr-session", temp.path("none.csv")])
        #expect(missing.status == 66)
        let window = try BuiltBinary.run(["hr-session", temp.path("none.csv"), "--window", "10s", "--emit-interval", "20s"])
        #expect(window.status == 64)
    }

    @Test func textForPeople() throws {
        let (csv, _) = try files()
        let r = try BuiltBinary.run(["hr-session", csv, "--format", "text", "--window", "60s", "--emit-interval", "30s"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("heart session (focus), csv readings, window 60 s") == true)
        // A row per frame (every 30 s over 300 s of beats), then the summary's RMSSD of the alternating beats.
        #expect(lines.filter { $0.contains(":") && $0.hasPrefix("0:") }.count == 9)
        #expect(lines.contains { $0.hasPrefix("  RMSSD        80.0 ms, pNN50 100.0 %") })
    }

    @Test func analyzeHrPutsTheHeartSessionInTheResult() throws {
        // An Apple Health export with the night's RR-derived heart rate every 5 s, and the night's JSON-lines beats.
        let start = "2026-01-01T23:00:00+01:00"
        var xml = "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">\n"
        for k in 0..<12 {
            xml += "<Record type=\"HKQuantityTypeIdentifierHeartRate\" sourceName=\"Watch\" unit=\"count/min\" "
                + "startDate=\"2026-01-01 23:00:\(String(format: "%02d", k * 5 % 60)) +0100\" value=\"\(58 + k % 4)\"/>\n"
        }
        xml += "</HealthData>\n"
        let apple = temp.path("export.xml")
        try Data(xml.utf8).write(to: URL(fileURLWithPath: apple))
        let r = try BuiltBinary.run(["analyze", Self.example, "--hr", apple, "--start", start, "--format", "json", "--no-progress"])
        #expect(r.status == 0, "\(r.stderr)")
        let result = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let summary = try #require((result["heart"] as? [String: Any])?["summary"] as? [String: Any])
        #expect(summary["sample_count"] as? Int == 12)
        #expect(abs((summary["hr_mean_bpm"] as? Double ?? 0) - 59.5) < 1e-9)
        #expect(summary["rmssd_ms"] is NSNull && summary["start_ms"] as? Int == 0 && summary["end_ms"] as? Int == 55_000)
        // RR intervals in JSON lines (Unix times from 22:00 UTC) give the night's HRV.
        let (_, jsonl) = try files()
        let rr = try BuiltBinary.run(["analyze", Self.example, "--hr", jsonl, "--start", "2026-01-01T22:00:00Z",
                                      "--format", "json", "--no-progress"])
        #expect(rr.status == 0, "\(rr.stderr)")
        let heart = try #require((try JSONSerialization.jsonObject(with: Data(rr.stdout.utf8)) as? [String: Any])?["heart"]
                                 as? [String: Any])
        let m = try #require(heart["summary"] as? [String: Any])
        #expect(abs((m["rmssd_ms"] as? Double ?? 0) - 80) < 0.001 && (m["sample_count"] as? Int ?? 0) > 150)
    }
}
