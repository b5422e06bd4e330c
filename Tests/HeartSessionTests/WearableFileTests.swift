import Foundation
import Testing
import SleepCycleBus
import SleepCycleFormats
@testable import HeartSession

@Suite("wearable files in one schema")
struct WearableFileTests {
    static let start = ISO8601Time("2023-04-22T07:00:00+02:00")!

    static func parse(_ text: String, origin: ISO8601Time? = start) throws -> WearableFile.Contents {
        // U+00D1 stands for the lone byte 0xD1 (not UTF-8), as a damaged export has it.
        let bytes = text.unicodeScalars.contains("\u{00D1}")
            ? text.unicodeScalars.map { $0 == "\u{00D1}" ? 0xD1 : UInt8($0.value) } : Array(text.utf8)
        return try WearableFile.parse(bytes, path: "night.hr", origin: origin)
    }

    /// The one-line error of `text`, which must fail.
    static func error(_ text: String) -> String {
        do {
            _ = try parse(text)
            Issue.record("expected an error for \(text.prefix(60))")
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func everyFormatGivesTheSameReadings() throws {
        // 07:00:05 and 07:00:10 at +02:00, 62 and 64 bpm, written by five exports.
        let t1 = Self.start.date.addingTimeInterval(5), t2 = Self.start.date.addingTimeInterval(10)
        let files: [(String, WearMetrics.Source)] = [
            ("{\"timestamp\": \"2023-04-22T05:00:05Z\", \"deviceId\": \"strap\", \"metrics\": {\"hr\": 62}}\n"
             + "{\"timestamp\": \"2023-04-22T07:00:10+02:00\", \"metrics\": {\"hr\": 64, \"steps\": 0}}\n", .jsonLines),
            ("[{\"dateTime\": \"04/22/23 07:00:05\", \"value\": {\"bpm\": 62, \"confidence\": 2}},"
             + " {\"dateTime\": \"04/22/23 07:00:10\", \"value\": {\"bpm\": 64, \"confidence\": 3}}]", .fitbit),
            ("""
             <?xml version="1.0" encoding="UTF-8"?>
             <HealthData locale="en_US">
              <Record type="HKQuantityTypeIdentifierStepCount" startDate="2023-04-22 07:00:00 +0200" value="12"/>
              <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="2023-04-22 07:00:10 +0200" value="64"/>
              <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="2023-04-22 07:00:05 +0200" value="62"/>
             </HealthData>
             """, .appleHealth),
            ("Id,Time,Value\n1503960366,4/22/2023 7:00:05 AM,62\n1503960366,4/22/2023 7:00:10 AM,64\n", .csv),
            ("Date/Time,Heart Rate [Min] (count/min),Heart Rate [Max] (count/min),Heart Rate [Avg] (count/min)\n"
             + "2023-04-22 07:00:05,60,63,62\n2023-04-22 07:00:10,63,65,64\n", .csv),
            ("time,bpm\n5,62\n10,64\n", .csv),
        ]
        for (text, format) in files {
            let c = try Self.parse(text)
            #expect(c.format == format, "\(text.prefix(30))")
            #expect(c.readings.map(\.timestamp) == [t1, t2], "\(text.prefix(30))")
            #expect(c.readings.map(\.hr) == [62, 64], "\(text.prefix(30))")
        }
        let apple = try Self.parse(files[2].0)
        #expect(apple.readings[0].deviceId == "Watch")
    }

    @Test func processingInstructionsWithoutDataDoNotCrashTheExportReader() throws {
        // libxml2 hands `<?name?>` over with a null data pointer, which Foundation's XMLParser reads as a C string.
        let export = """
            <?anti?>
            <HealthData locale="en_US"><?pi?>
             <Record type="HKQuantityTypeIdentifierHeartRate" startDate="2023-04-22 07:00:05 +0200" value="62"/><?x?>
            </HealthData>
            """
        let c = try Self.parse(export)
        #expect(c.format == .appleHealth && c.readings.map(\.hr) == [62])
        #expect(WearableFile.withDataInEveryProcessingInstruction(Array("<?a?><?b c?><??><?d?".utf8))
                == Array("<?a ?><?b c?><??><?d?".utf8))
        // The fuzzer's input (a damaged export with a NUL inside a closing tag): an error, not a crash.
        let fuzzed: [UInt8] = Array("<?anti?>\n<Hea,aDttha locale=\"en_US\">\n <Record type=\"HKQuantityTypeIdentifierHeartRate\" eu\"a=\"46.5\"/>\n</Heal\"".utf8)
            + [0, 0] + Array("(ta>\n".utf8)
        #expect(throws: InputFileError.self) { try WearableFile.parse(fuzzed, path: "night.hr", origin: Self.start) }
    }

    @Test func rrIntervalsAndTheirBeats() throws {
        let polar = try Self.parse("RR-interval [ms]\n1000\n800\n1200\n")
        #expect(polar.format == .polarRR && polar.readings.map(\.rrIntervals) == [[1000], [800], [1200]])
        #expect(polar.readings.last!.timestamp == Self.start.date.addingTimeInterval(3))
        let json = try Self.parse("{\"timestamp\": 10, \"rrIntervals\": [1000, 800]}\n")
        // A reading's beats are stamped back from its time: the last at it.
        let samples = WearMetrics.heartRateSamples(json.readings, start: Self.start.date)
        #expect(samples.map(\.time) == [AnalysisClock.samples(seconds: 9.2), AnalysisClock.samples(seconds: 10)])
        #expect(samples.map(\.rrMs) == [1000, 800])
        let session = WearMetrics.biosignalSamples(polar.readings)
        #expect(session.map(\.timestampMs) == [0, 800, 2000])
        // CRLF line ends (one Character in Swift, not "\n"), with a header and without.
        #expect(try Self.parse("RR-interval [ms]\r\n1000\r\n800\r\n1200\r\n").readings.map(\.rrIntervals) == [[1000], [800], [1200]])
        #expect(try Self.parse("1000\r\n800\r\n").readings.map(\.rrIntervals) == [[1000], [800]])
        // Metrics other than the heart's are skipped whatever their values.
        #expect(try Self.parse("{\"timestamp\": 5, \"metrics\": {\"hr\": 60, \"steps\": \"many\"}}\n").readings.count == 1)
        // A CSV header over rows of one field is a damaged CSV, not an RR list under a header.
        #expect(Self.error("time,bpm\n800\n900\n850\n").contains("night.hr:2:"), "\(Self.error("time,bpm\n800\n900\n850\n"))")
    }

    @Test func exportDates() {
        let paris = 7200
        #expect(WearableTime.date("2019-09-20 22:01:17 +0200", defaultOffsetSeconds: 0)
                == ISO8601Time("2019-09-20T20:01:17Z")!.date)
        #expect(WearableTime.date("04/22/23 07:00:05", defaultOffsetSeconds: paris) == ISO8601Time("2023-04-22T05:00:05Z")!.date)
        #expect(WearableTime.date("4/12/2016 12:21:00 AM", defaultOffsetSeconds: 0) == ISO8601Time("2016-04-12T00:21:00Z")!.date)
        #expect(WearableTime.date("4/12/2016 1:21 PM", defaultOffsetSeconds: 0) == ISO8601Time("2016-04-12T13:21:00Z")!.date)
        for bad in ["2019-02-30 10:00:00", "13/01/2020 10:00:00", "2019-09-20", "4/12/2016 13:21 PM", "now", "12:00:00 x"] {
            #expect(WearableTime.date(bad, defaultOffsetSeconds: 0) == nil, "\(bad)")
        }
    }

    @Test func badRowsAreOneLineErrorsNamingFileAndLine() {
        let cases: [(String, String)] = [
            ("{\"timestamp\": 0, \"metrics\": {\"hr\": 60}}\n{\"timestamp\": 1, \"metrics\": {\"hr\": 400}}\n", "night.hr:2:"),
            ("{\"timestamp\": 0, \"metrics\": {\"hr\": 60}}\nnot json\n", "night.hr:2:"),
            ("{\"timestamp\": \"yesterday\", \"metrics\": {\"hr\": 60}}\n", "night.hr:1:"),
            ("{\"timestamp\": 1e9, \"metrics\": {\"hr\": 60}}\n{\"timestamp\": 1e300, \"metrics\": {\"hr\": 60}}\n", "night.hr:2:"),
            ("{\"timestamp\": 5, \"metrics\": {\"hr\": 60}}\n{\"timestamp\": 1, \"metrics\": {\"hr\": 60}}\n", "night.hr:"),
            ("[{\"dateTime\": \"04/22/23 07:00:05\", \"value\": {\"bpm\": 62}}, {\"dateTime\": \"soon\", \"value\": {\"bpm\": 1}}]",
             "night.hr: item 2"),
            ("<HealthData><Record type=\"HKQuantityTypeIdentifierHeartRate\" startDate=\"2023-04-22 07:00:05 +0200\" value=\"x\"/></HealthData>",
             "night.hr:1:"),
            ("<HealthData><Record", "night.hr:"),
            // Cut after a whole record: Foundation's parser calls that a success; the root never closed.
            ("<HealthData>\n<Record type=\"HKQuantityTypeIdentifierHeartRate\" startDate=\"2023-04-22 07:00:05 +0200\" value=\"62\"/>\n",
             "night.hr:"),
            // A name that is not UTF-8 (Foundation's XML parser would trap on it): refused, with its line.
            ("<?xml version=\"1.0\"?>\n<HealthData>\n<Record sourceNa\u{00D1}e=\"x\"/></HealthData>", "night.hr:3:"),
            ("RR\n1000\n900\n5000\n", "night.hr:4:"),
            ("Time,Value\n4/22/2023 7:00:05 AM,62\n4/22/2023 7:00:10 AM,abc\n", "night.hr:3:"),
            ("Id,Value\n1,62\n", "night.hr:1:"),
            ("", "night.hr:"),
            // Values of the wrong JSON type: a bad row, not a reading skipped or a boolean read as 1.
            ("{\"timestamp\": 5, \"metrics\": {\"hr\": \"60\"}}\n", "night.hr:1: metrics.hr '60' is not a number"),
            ("{\"timestamp\": 5, \"metrics\": {\"hr\": true}}\n", "night.hr:1: metrics.hr 'true' is not a number"),
            ("{\"timestamp\": 5, \"metrics\": \"x\"}\n", "night.hr:1: \"metrics\" must be an object"),
            ("{\"timestamp\": 5, \"rrIntervals\": \"950\"}\n", "night.hr:1: \"rrIntervals\" must be an array"),
            ("{\"timestamp\": 5, \"rrIntervals\": [\"a\"]}\n", "night.hr:1: RR interval 'a' is not a number"),
            ("{\"timestamp\": true, \"metrics\": {\"hr\": 60}}\n", "night.hr:1: \"timestamp\" must be"),
            // Seconds from the start, then a date: two clocks in one file.
            ("time,bpm\n0,60\n2026-01-01T23:00:00Z,61\n", "night.hr:3: time '2026-01-01T23:00:00Z' is a date, but"),
        ]
        for (text, prefix) in cases {
            let message = Self.error(text)
            #expect(message.hasPrefix(prefix), "\(message)")
            #expect(!message.contains("\n"), "\(message)")
        }
    }
}
