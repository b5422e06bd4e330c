import Foundation
import Testing

/// `sleepcycle hr-session FILE`, as a user runs it.
@Suite("heart sessions: command line")
final class HRSessionCommandTests {
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
}
