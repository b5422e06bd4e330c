import Foundation
import Testing
@testable import SleepCycleFormats

@Suite struct CSVTableTests {
    func parse(_ text: String) throws -> CSVTable { try CSVTable.parse(Array(text.utf8), path: "x.csv") }

    @Test func quotedHeadersBOMAndCRLF() throws {
        let t = try parse("\u{FEFF}\"time\",\"bpm\"\r\n0,60\r\n\"1.5\",\"61\"\r\n")
        #expect(t.separator == .comma)
        #expect(t.records.map(\.fields) == [["time", "bpm"], ["0", "60"], ["1.5", "61"]])
        #expect(t.records.map(\.line) == [1, 2, 3])
    }

    @Test func semicolonsWithDecimalCommas() throws {
        let t = try parse("time;bpm\n0;60,5\n30;\"61,25\"\n")
        #expect(t.separator == .semicolon)
        #expect(t.records[1].fields == ["0", "60,5"])
        #expect(t.number("60,5") == 60.5 && t.number("61,25") == 61.25)
        #expect(t.number("1,2,3") == nil)
        #expect(try parse("a,b\n1,2\n").number("1,5") == nil)     // a comma separates fields there
    }

    @Test func quotingRulesOfRFC4180() throws {
        let t = try parse("name,note\n\"a, b\",\"say \"\"hi\"\"\"\n\"two\nlines\",x\nlast,y\n")
        #expect(t.records[1].fields == ["a, b", "say \"hi\""])
        #expect(t.records[2].fields == ["two\nlines", "x"])
        #expect(t.records[3].line == 5)
    }

    @Test func tabsSpacesCommentsAndBlankLines() throws {
        let spaces = try parse("# exported\n\n  10 55\n20\t56\n")
        #expect(spaces.separator == .spaces)
        #expect(spaces.records.map(\.fields) == [["10", "55"], ["20", "56"]])
        let tabs = try parse("time\tbpm\n0\t60\n")
        #expect(tabs.separator == .tab && tabs.records[1].fields == ["0", "60"])
        #expect(try parse("a,b\r1,2\r").records.count == 2)    // old Mac line ends
    }

    @Test func errorsNameTheLine() {
        #expect(throws: InputFileError(path: "x.csv", line: 2, message: "a quoted field is not closed")) {
            try parse("a,b\n\"open,1\n")
        }
    }

    @Test func numbersAreFinite() throws {
        let t = try parse("a\n1\n")
        #expect(t.number("1e300") == 1e300)
        #expect(t.number("1e400") == nil && t.number("inf") == nil && t.number("nan") == nil && t.number("") == nil)
    }

    @Test func filesThatAreNotTextAreRefusedAtOnce() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("csv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let binary = dir.appendingPathComponent("b.csv").path
        try Data([0x74, 0x69, 0, 0x6D]).write(to: URL(fileURLWithPath: binary))
        #expect(throws: InputFileError.self) { try CSVTable.load(path: binary) }
        do { _ = try CSVTable.load(path: dir.path); Issue.record("a directory was read") } catch {
            #expect(error.description.hasSuffix("is a directory") && error.kind == .unreadable)
        }
        do { _ = try CSVTable.load(path: dir.appendingPathComponent("none.csv").path) } catch {
            #expect(error.description.hasSuffix("no such file") && error.kind == .unreadable)
        }
        // A symbolic link loop is named as one, not as a missing file.
        let loop = dir.appendingPathComponent("loop.csv").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        do { _ = try CSVTable.load(path: loop) } catch { #expect(error.description.contains("symbolic link")) }
    }
}
