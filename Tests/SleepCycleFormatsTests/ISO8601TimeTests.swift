import Foundation
import Testing
@testable import SleepCycleFormats

@Suite struct ISO8601TimeTests {
    @Test func formatsUTCMillisecondsExactly() {
        #expect(ISO8601Time.utcString(from: Date(timeIntervalSince1970: 946_764_000)) == "2000-01-01T22:00:00.000Z")
        #expect(ISO8601Time.utcString(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601Time.utcString(from: Date(timeIntervalSince1970: 951_782_400.0625)) == "2000-02-29T00:00:00.063Z")
        #expect(ISO8601Time.utcString(from: Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    @Test func parsesEveryOffsetFormOfTheContract() throws {
        let utc = try ISO8601Time.parse("2026-01-01T22:00:00Z")
        for text in ["2026-01-01T23:00:00+01:00", "2026-01-01T23:00:00+0100", "2026-01-01T23:00:00+01",
                     "2026-01-01 23:00:00+01:00", "2026-01-01T23:00+01:00"] {
            let t = try ISO8601Time.parse(text)
            #expect(t.date == utc.date, "\(text)")
            #expect(t.utcOffsetSeconds == 3600, "\(text)")
        }
        #expect(try ISO8601Time.parse("2026-01-01T17:30:00-04:30").date == utc.date)
        #expect(try ISO8601Time.parse("2026-01-01T22:00:00.250Z").date.timeIntervalSince(utc.date) == 0.25)
        #expect(try ISO8601Time.parse("2026-01-01T22:00:00,5z").date.timeIntervalSince(utc.date) == 0.5)
        #expect(try ISO8601Time.parse("2026-01-01T23:00:00+01:00").description == "2026-01-01T23:00:00.000+01:00")
    }

    @Test(arguments: [
        ("", "not a date"), ("yesterday", "not a date"), ("2026-13-01T00:00:00Z", "month 13"),
        ("2026-02-30T00:00:00Z", "day 30"), ("2026-01-01", "no time of day"), ("2026-01-01T24:00:00Z", "out of range"),
        ("2026-01-01T23:00:00", "no UTC offset"), ("2026-01-01T23:00:00+25:00", "+25:00 is out of range"),
        ("2026-01-01T23:00:00+18:30", "out of range"), ("2026-01-01T23:00:00+01:60", "out of range"),
        ("2026-01-01T23:00:00Zjunk", "unexpected text"), ("2026-01-01T23:00:00.Z", "no digits"),
    ])
    func refusesWithAReason(_ text: String, reason: String) {
        do {
            _ = try ISO8601Time.parse(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.description.contains(reason), "\(text): \(error.description)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func localTimesTakeTheDefaultOffset() throws {
        let t = try ISO8601Time.parse("2026-01-01T23:00:00", defaultOffsetSeconds: 3600)
        #expect(t.date == (try ISO8601Time.parse("2026-01-01T22:00:00Z")).date)
    }

    @Test func clockTimesInTheOffset() {
        let d = Date(timeIntervalSince1970: 1_767_304_800)   // 2026-01-01T22:00:00Z
        let p = ISO8601Time.LocalParts(date: d, utcOffsetSeconds: 3600)
        #expect(p.dateString == "2026-01-01" && p.clock() == "23:00:00")
        let q = ISO8601Time.LocalParts(date: d, utcOffsetSeconds: 7200)
        #expect(q.dateString == "2026-01-02" && q.clock(milliseconds: true) == "00:00:00.000")
        #expect(ISO8601Time.offsetString(-16200) == "-04:30" && ISO8601Time.offsetString(0) == "Z")
        // Absurd dates format without trapping.
        _ = ISO8601Time.utcString(from: .distantFuture)
        _ = ISO8601Time.utcString(from: Date(timeIntervalSince1970: .infinity))
    }
}

@Suite struct ClockTimeAndDurationTests {
    @Test func alarmTimeIsTheNextOccurrenceInTheOffset() throws {
        let start = try ISO8601Time.parse("2026-01-01T23:00:00+01:00")
        let seven = try #require(ClockTime("07:00"))
        let alarm = seven.nextOccurrence(after: start.date, utcOffsetSeconds: start.utcOffsetSeconds)
        #expect(alarm.timeIntervalSince(start.date) == 8 * 3600)       // 07:00 the next morning, +01:00
        let late = try #require(ClockTime("23:30"))
        #expect(late.nextOccurrence(after: start.date, utcOffsetSeconds: 3600).timeIntervalSince(start.date) == 1800)
        #expect(ClockTime("7:00")?.hour == 7)
    }

    /// A recorder without --start follows its zone: on the night the clocks go back (Berlin, 25 October 2026, 03:00
    /// CEST → 02:00 CET, at 01:00 UTC) 06:45 is 05:45 UTC; a bedtime offset of +02:00 put it at 04:45 UTC, an hour
    /// early. The night they go forward (29 March 2026, at 01:00 UTC), 04:45 UTC; 02:30 does not exist: 03:30 CEST.
    @Test func alarmTimeFollowsTheZoneAcrossADaylightSavingChange() throws {
        func berlin(_ date: Date) -> Int {
            let t = date.timeIntervalSince1970
            let summer = (1_774_746_000.0..<1_792_890_000.0).contains(t)     // 2026-03-29T01:00Z ..< 2026-10-25T01:00Z
            return summer ? 7200 : 3600
        }
        let alarm = try #require(ClockTime("06:45"))
        let autumn = try ISO8601Time.parse("2026-10-24T23:00:00+02:00")
        #expect(ISO8601Time.utcString(from: alarm.nextOccurrence(after: autumn.date, utcOffset: berlin)) == "2026-10-25T05:45:00.000Z")
        #expect(ISO8601Time.utcString(from: alarm.nextOccurrence(after: autumn.date, utcOffsetSeconds: 7200)) == "2026-10-25T04:45:00.000Z")
        let spring = try ISO8601Time.parse("2026-03-28T23:00:00+01:00")
        #expect(ISO8601Time.utcString(from: alarm.nextOccurrence(after: spring.date, utcOffset: berlin)) == "2026-03-29T04:45:00.000Z")
        let skipped = try #require(ClockTime("02:30"))
        #expect(ISO8601Time.utcString(from: skipped.nextOccurrence(after: spring.date, utcOffset: berlin)) == "2026-03-29T01:30:00.000Z")
        // An ordinary night: the same as the fixed offset.
        let winter = try ISO8601Time.parse("2026-01-01T23:00:00+01:00")
        #expect(alarm.nextOccurrence(after: winter.date, utcOffset: berlin) == alarm.nextOccurrence(after: winter.date, utcOffsetSeconds: 3600))
    }

    @Test(arguments: ["7", "25:00", "07:60", "0745", "ab:cd", "07:5", "+7:00", "07:00:00", "٠٧:٠٠"])
    func refusesBadClockTimes(_ text: String) {
        #expect(ClockTime(text) == nil)
    }

    @Test func parsesDurations() throws {
        #expect(try DurationText.parse("30m").seconds == 1800)
        #expect(try DurationText.parse("1h30m").seconds == 5400)
        #expect(try DurationText.parse("45min").seconds == 2700)
        #expect(try DurationText.parse("90s").seconds == 90)
        #expect(try DurationText.parse("30d").seconds == 30 * 86_400)
        #expect(try DurationText.parse("1.5h").seconds == 5400)
        #expect(try DurationText.parse("45", bareUnit: .minutes).seconds == 2700)
        // Zero needs no unit; out of range it is an out-of-range error, not "not a duration".
        #expect(try DurationText.parse("0").seconds == 0 && DurationText.parse("0.0").seconds == 0)
        #expect(throws: DurationText.ParseError(description: "duration '0' is out of range (expected 1s to 12h)")) {
            try DurationText.parse("0", range: 1...(12 * 3600))
        }
        #expect(DurationText(seconds: 5400).description == "1h30m")
    }

    @Test(arguments: ["", "30x", "m30", "1h30", "-5m", "1e400h", "nan", "inf", "45"])
    func refusesBadDurations(_ text: String) {
        #expect(throws: DurationText.ParseError.self) { try DurationText.parse(text) }
    }

    @Test func durationsOutOfRangeAreRefused() {
        #expect(throws: DurationText.ParseError.self) { try DurationText.parse("13h", range: 1...(12 * 3600)) }
        #expect(throws: DurationText.ParseError.self) { try DurationText.parse("0m", range: 1...(12 * 3600)) }
    }
}

@Suite struct MessageTextAndPathTests {
    @Test func fieldsAreCutAndEscaped() {
        let huge = String(repeating: "9", count: 40_000_000)
        let shown = MessageText.field(huge)
        #expect(shown.count < 120 && shown.contains("more characters"))
        #expect(MessageText.field("a\u{1B}[31mred\r\n") == "a\\u{1B}[31mred\\r\\n")
        // A whole message line keeps its end: what is wrong comes after a path that may be thousands of characters.
        let line = MessageText.line("/" + String(repeating: "q", count: 3_000) + ": no such file\u{1B}")
        #expect(line.count < 2_100 && line.hasSuffix(": no such file\\u{1B}") && line.contains("characters left out"))
        #expect(MessageText.line("short: fine") == "short: fine")
        // A right-to-left override in a file name would reorder the rest of the line on a terminal.
        #expect(MessageText.path("night\u{202E}vaw.flac") == "night\\u{202E}vaw.flac")
    }

    /// A path's folder, by bytes: Foundation's `deletingLastPathComponent` traps on a one-character name, which took
    /// `record --store x` down with SIGILL.
    @Test func aPathsFolder() {
        let cases: [(String, String)] = [("x", ""), ("x/", ""), ("ab", ""), ("/x", "/"), ("/", "/"), ("a/x", "a"),
                                         ("./x", "."), ("/a/b/", "/a"), ("a//x", "a/")]
        for (path, folder) in cases { #expect(PathEncoding.folder(of: path) == folder, "\(path)") }
        let raw = PathEncoding.string(fromBytes: [0xFF, UInt8(ascii: "/"), UInt8(ascii: "x")])
        #expect(PathEncoding.bytes(PathEncoding.folder(of: raw)) == [0xFF])
    }

    @Test func nonUTF8FileNamesRoundTrip() {
        let raw: [UInt8] = Array("night-".utf8) + [0xE9, 0xFF] + Array(".wav".utf8)
        let s = PathEncoding.string(fromBytes: raw)
        #expect(PathEncoding.bytes(s) == raw)
        #expect(MessageText.path(s) == "night-\\xE9\\xFF.wav")
        let valid = "nuit-été.wav"
        #expect(PathEncoding.string(fromBytes: Array(valid.utf8)) == valid)
        #expect(PathEncoding.bytes(valid) == Array(valid.utf8))
    }
}
