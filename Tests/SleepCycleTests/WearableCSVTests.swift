import Foundation
import Testing
@testable import SleepCycle

@Suite final class WearableCSVTests {
    let dir: URL
    private var count = 0
    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("wearable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: dir) }

    func write(_ text: String) throws -> String {
        count += 1
        let url = dir.appendingPathComponent("\(count).csv")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test func heartRateWithHeaderBpmAndRR() throws {
        let s = try HeartRateFile.load(path: write("time,bpm,rr_ms\n0,60,\n1.5,,800\n"))
        #expect(s.count == 2)
        #expect(s[0].time == 0 && s[0].bpm == 60 && s[0].rrMs == nil)
        #expect(s[1].time == 24_000 && s[1].bpm == nil && s[1].rrMs == 800)
    }

    @Test func heartRateWithoutHeaderIsTimeBpm() throws {
        for text in ["10,55\n20,56\n", "10 55\n20  56\n", "10\t55\n20\t56\n"] {
            let s = try HeartRateFile.load(path: write(text))
            #expect(s.map(\.bpm) == [55, 56])
            #expect(s[1].time == 320_000)
        }
    }

    @Test func quotedHeadersSemicolonsAndDecimalCommas() throws {
        let a = try HeartRateFile.load(path: write("\"time\",\"bpm\"\r\n\"0\",\"60\"\r\n30,61\r\n"))
        #expect(a.map(\.bpm) == [60, 61])
        let b = try HeartRateFile.load(path: write("time;bpm\n0;60,5\n30,5;61\n"))
        #expect(b.map(\.bpm) == [60.5, 61] && b[1].time == 488_000)
    }

    @Test func isoTimesNeedTheStartAndTakeItsOffset() throws {
        let p = try write("time,bpm\n2026-01-01T23:00:10Z,60\n2026-01-02T00:00:20,61\n")
        #expect(throws: InputFileError.self) { try HeartRateFile.load(path: p) }
        let start = try ISO8601Time.parse("2026-01-01T23:00:00Z")
        #expect(try HeartRateFile.load(path: p, start: start)[0].time == 160_000)
        // A time without an offset is read in the recording's offset (+01:00 here: 00:00:20 local is 23:00:20Z).
        let paris = try ISO8601Time.parse("2026-01-02T00:00:00+01:00")
        #expect(try HeartRateFile.load(path: p, start: paris)[1].time == 320_000)
    }

    @Test func errorsNameTheLine() throws {
        let p = try write("time,bpm\n0,60\n1,600\n")
        #expect(throws: InputFileError(path: p, line: 3, message: "bpm 600.0 outside 20–250")) {
            try HeartRateFile.load(path: p)
        }
        let q = try write("time,bpm\n5,60\n1,61\n")
        #expect(throws: InputFileError(path: q, line: 3, message: "time goes backwards")) {
            try HeartRateFile.load(path: q)
        }
    }

    /// Huge or non-finite times are refused with the line, never converted (a Double → Int64 trap before).
    @Test(arguments: ["1e300", "-1e20", "0x1p1023", "inf", "nan", "1e10"])
    func hugeTimesAreOneLineErrors(_ time: String) throws {
        let p = try write("time,bpm\n\(time),60\n")
        do {
            _ = try HeartRateFile.load(path: p)
            Issue.record("\(time) accepted")
        } catch {
            #expect(error.line == 2 && !error.description.contains("\n"), "\(error)")
        }
    }

    @Test func aHugeFieldIsNotEchoed() throws {
        let p = try write("time,bpm\n0," + String(repeating: "x", count: 5_000_000) + "\n")
        do { _ = try HeartRateFile.load(path: p) } catch {
            #expect(error.description.count < 300, "\(error.description.count) characters")
        }
    }

    @Test func motionCountsAndXYZ() throws {
        let counts = try MotionFile.load(path: write("time,count\n0,12\n30,0\n"))
        #expect(counts.map(\.activity) == [12, 0])
        let xyz = try MotionFile.load(path: write("0 0 0 1\n0.02 0 0.6 0.8\n0.04 0 0 2\n"))
        #expect(xyz.count == 3)
        #expect(abs(xyz[0].activity) < 1e-12 && abs(xyz[1].activity) < 1e-12 && abs(xyz[2].activity - 1) < 1e-12)
        #expect(throws: InputFileError.self) { try MotionFile.load(path: write("time,x,y,z\n0,1e300,1e300,0\n")) }
    }

    @Test func motionNeedsKnownColumns() throws {
        let p = try write("time,x,y\n0,1,2\n")
        #expect(throws: InputFileError(path: p, line: 1, message: "expected columns time,count or time,x,y,z")) {
            try MotionFile.load(path: p)
        }
        #expect(throws: InputFileError.self) { try MotionFile.load(path: write("0,1,2\n")) }
    }
}
