import Foundation
import SleepCycleBus
import SleepCycleFormats
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
        ("time_hours,cosine\n0,1e308\n", "x.csv:2: '1e308' in column cosine is out of range (these features"),
        ("time_hours,cosine\n0,1.5\n", "x.csv:2: '1.5' in column cosine is out of range (a cosine lies in −1…1)"),
        ("time_hours,count\n0.5,1\n0.2,1\n", "x.csv:3: '0.2' in column time_hours goes back in time"),
    ])
    func errorsNameFileAndLine(text: String, prefix: String) {
        do {
            _ = try EpochsCSV.parse(text, path: "x.csv")
            Issue.record("expected an error for \(text.debugDescription)")
        } catch let e as InputFileError {
            #expect(e.description.hasPrefix(prefix), "\(e.description)")
            #expect(!e.description.contains("\n"))
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test func quotedHeadersAndSemicolonsWithDecimalCommas() throws {
        let t = try EpochsCSV.parse("\u{FEFF}\"time_hours\";\"count\";\"cosine\"\r\n0;1,5;-0,25\r\n", path: "x.csv")
        #expect(t[.count] == [1.5] && t[.cosine] == [-0.25])
    }

    @Test func missingFileIsOneLine() {
        #expect(throws: InputFileError.self) { try EpochsCSV.load(path: "/nonexistent/e.csv") }
    }
}

