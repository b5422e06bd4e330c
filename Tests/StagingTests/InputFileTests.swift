import Foundation
import SleepCycleBus
import Testing
@testable import Staging

@Suite struct EpochsCSVTests {
    @Test func parsesAnyColumnSubsetInAnyOrder() throws {
        let t = try EpochsCSV.parse("count,time_hours,cosine\r\n3.5,0,-0.25\n# note\n\n4,0.008333,-0.26\n", path: "x.csv")
        #expect(t.count == 2)
        #expect(t.inputs == [.count, .timeHours, .cosine])
        #expect(t[.count] == [3.5, 4])
        #expect(t[.hr] == nil)
    }

    @Test(arguments: [
        ("time_hours,steps\n0,1\n", "x.csv:1: unknown column 'steps'"),
        ("time_hours,count\n0,1\n0.1\n", "x.csv:3: expected 2 fields, found 1"),
        ("time_hours,count\n0,1\n0.1,abc\n", "x.csv:3: 'abc' in column count is not a finite number"),
        ("time_hours,count\n0,nan\n", "x.csv:2: 'nan' in column count is not a finite number"),
        ("time_hours,time_hours\n", "x.csv:1: column 'time_hours' appears twice"),
        ("", "x.csv: empty file"),
        ("time_hours\n", "x.csv: no epoch rows"),
    ])
    func errorsNameFileAndLine(text: String, prefix: String) {
        do {
            _ = try EpochsCSV.parse(text, path: "x.csv")
            Issue.record("expected an error for \(text.debugDescription)")
        } catch let e as StagingError {
            #expect(e.description.hasPrefix(prefix), "\(e.description)")
            #expect(!e.description.contains("\n"))
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test func missingFileIsOneLine() {
        #expect(throws: StagingError.self) { try EpochsCSV.load(path: "/nonexistent/e.csv") }
    }
}

@Suite final class WearableFileTests {
    let files: TemporaryFiles
    init() throws { files = try TemporaryFiles() }

    @Test func heartRateWithHeaderBpmAndRR() throws {
        let p = try files.write("time,bpm,rr_ms\n0,60,\n1.5,,800\n")
        let s = try HeartRateFile.load(path: p)
        #expect(s.count == 2)
        #expect(s[0].time == 0 && s[0].bpm == 60 && s[0].rrMs == nil)
        #expect(s[1].time == 24_000 && s[1].bpm == nil && s[1].rrMs == 800)
    }

    @Test func heartRateWithoutHeaderIsTimeBpm() throws {
        let p = try files.write("10,55\n20 56\n")
        let s = try HeartRateFile.load(path: p)
        #expect(s.map(\.bpm) == [55, 56])
        #expect(s[1].time == 320_000)
    }

    @Test func heartRateISOTimesNeedStart() throws {
        let p = try files.write("time,bpm\n2026-01-01T23:00:10Z,60\n")
        #expect(throws: StagingError.self) { try HeartRateFile.load(path: p) }
        let start = ISO8601DateFormatter().date(from: "2026-01-01T23:00:00Z")!
        #expect(try HeartRateFile.load(path: p, start: start)[0].time == 160_000)
    }

    @Test func heartRateErrorsNameLine() throws {
        let p = try files.write("time,bpm\n0,60\n1,600\n")
        #expect(throws: StagingError(path: p, line: 3, message: "bpm 600.0 outside 20–250")) {
            try HeartRateFile.load(path: p)
        }
        let q = try files.write("time,bpm\n5,60\n1,61\n")
        #expect(throws: StagingError(path: q, line: 3, message: "time goes backwards")) {
            try HeartRateFile.load(path: q)
        }
    }

    @Test func motionCountsAndXYZ() throws {
        let counts = try MotionFile.load(path: files.write("time,count\n0,12\n30,0\n"))
        #expect(counts.map(\.activity) == [12, 0])
        let xyz = try MotionFile.load(path: files.write("0 0 0 1\n0.02 0 0.6 0.8\n0.04 0 0 2\n"))
        #expect(xyz.count == 3)
        #expect(abs(xyz[0].activity) < 1e-12 && abs(xyz[1].activity) < 1e-12 && abs(xyz[2].activity - 1) < 1e-12)
    }

    @Test func motionNeedsKnownColumns() throws {
        let p = try files.write("time,x,y\n0,1,2\n")
        #expect(throws: StagingError(path: p, line: 1, message: "expected columns time,count or time,x,y,z")) {
            try MotionFile.load(path: p)
        }
        let q = try files.write("0,1,2\n")
        #expect(throws: StagingError.self) { try MotionFile.load(path: q) }
    }
}
