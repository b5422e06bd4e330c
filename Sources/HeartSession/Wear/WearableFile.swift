import Foundation
import FoundationXML
import SleepCycleBus
import SleepCycleFormats

/// Every wearable file sleepcycle reads, told apart by its content and normalised to `WearMetrics`:
/// * JSON lines in the unified wearable schema: `{"timestamp", "deviceId", "source", "metrics": {"hr", "hrv_rmssd",
///   "hrv_sdnn", …}, "rrIntervals": [ms]}` (also a JSON array of such objects);
/// * Fitbit's JSON export (`heart_rate-YYYY-MM-DD.json`: `[{"dateTime": "04/22/23 07:00:05", "value": {"bpm": 62,
///   "confidence": 2}}]`);
/// * Apple Health's `export.xml` (`<Record type="HKQuantityTypeIdentifierHeartRate" startDate="2019-09-20 22:01:17
///   +0200" value="62"/>`; HRV SDNN records as `hrv_sdnn`);
/// * a plain RR list, one interval in ms per line after an optional header (Polar's RR export, Kubios text);
/// * CSV (`HeartRateFile`: `time` and `bpm`/`rr_ms`, or an export's column names).
///
/// Times relative to the recording (CSV seconds, an RR list's beats, a JSON `timestamp` in seconds under 10⁹ — larger
/// is Unix time) are placed from `origin`; dates without an
/// offset are read in `origin`'s offset. Readings outside the recording are kept: the caller reports them.
/// A bad row is a one-line error naming the file and the line.
public enum WearableFile {
    public struct Contents: Sendable {
        public var format: WearMetrics.Source
        /// In time order.
        public var readings: [WearMetrics]
    }

    /// Heart rates and RR intervals are accepted within these (outside: a bad row).
    static let bpmRange = 20.0...250.0
    static let rrRange = 200.0...3000.0

    public static func read(path: String, origin: ISO8601Time?) throws(InputFileError) -> Contents {
        try parse(InputFile.read(path), path: path, origin: origin)
    }

    public static func parse(_ bytes: [UInt8], path: String, origin: ISO8601Time?) throws(InputFileError) -> Contents {
        let start = origin ?? ISO8601Time(date: Date(timeIntervalSince1970: 0))
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        var contents: Contents
        switch first {
        case UInt8(ascii: "{"): contents = Contents(format: .jsonLines, readings: try jsonLines(bytes, path: path, start: start))
        case UInt8(ascii: "["): contents = try jsonArray(bytes, path: path, start: start)
        case UInt8(ascii: "<"): contents = Contents(format: .appleHealth, readings: try appleHealth(bytes, path: path, start: start))
        default:
            let text = String(decoding: bytes, as: UTF8.self)
            if let rr = try rrList(text, path: path) {
                var t = start.date
                contents = Contents(format: .polarRR, readings: rr.map { x in
                    t = t.addingTimeInterval(x / 1000)
                    return WearMetrics(timestamp: t, source: .polarRR, rrIntervals: [x])
                })
            } else {
                let samples = try HeartRateFile.parse(bytes, path: path, start: start)
                contents = Contents(format: .csv, readings: samples.map { s in
                    var m: [String: Double] = [:]
                    if let bpm = s.bpm { m["hr"] = bpm }
                    return WearMetrics(timestamp: start.date.addingTimeInterval(AnalysisClock.seconds(s.time)), source: .csv,
                                       metrics: m, rrIntervals: s.rrMs.map { [$0] } ?? [])
                })
            }
        }
        guard !contents.readings.isEmpty else { throw InputFileError(path: path, message: "no heart-rate readings") }
        return contents
    }

    // MARK: - JSON

    /// JSON lines of the wearable schema; lines without `hr` or RR intervals (steps, calories) are skipped.
    static func jsonLines(_ bytes: [UInt8], path: String, start: ISO8601Time) throws(InputFileError) -> [WearMetrics] {
        var out: [WearMetrics] = []
        var line = 1, from = 0
        for i in 0...bytes.count where i == bytes.count || bytes[i] == 0x0A {
            defer { line += 1; from = i + 1 }
            let slice = bytes[from..<i]
            guard slice.contains(where: { $0 > 0x20 }) else { continue }
            guard let object = (try? JSONSerialization.jsonObject(with: Data(slice))) as? [String: Any] else {
                throw InputFileError(path: path, line: line, message: "not a JSON object")
            }
            if let r = try schemaReading(object, path: path, line: line, start: start) { out.append(r) }
        }
        return try ordered(out, path: path)
    }

    /// A JSON array: Fitbit's heart-rate export, or objects of the wearable schema.
    static func jsonArray(_ bytes: [UInt8], path: String, start: ISO8601Time) throws(InputFileError) -> Contents {
        guard let array = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [Any] else {
            throw InputFileError(path: path, message: "not valid JSON")
        }
        var out: [WearMetrics] = []
        var format = WearMetrics.Source.jsonLines
        for (index, element) in array.enumerated() {
            guard let object = element as? [String: Any] else {
                throw InputFileError(path: path, message: "item \(index + 1) is not a JSON object")
            }
            func bad(_ why: String) -> InputFileError { InputFileError(path: path, message: "item \(index + 1): \(why)") }
            if let dateTime = object["dateTime"] as? String {
                format = .fitbit
                guard let date = WearableTime.date(dateTime, defaultOffsetSeconds: start.utcOffsetSeconds)
                        ?? ISO8601Time(dateTime, defaultOffsetSeconds: start.utcOffsetSeconds)?.date else {
                    throw bad("dateTime '\(MessageText.field(dateTime))' is not a date")
                }
                guard let bpm = ((object["value"] as? [String: Any])?["bpm"]).flatMap(jsonNumber) else {
                    throw bad("no value.bpm")
                }
                guard bpmRange.contains(bpm) else { throw bad("heart rate \(bpm) bpm is out of range (20–250)") }
                out.append(WearMetrics(timestamp: date, source: .fitbit, metrics: ["hr": bpm]))
            } else if let r = try schemaReading(object, path: path, line: nil, start: start, item: index + 1) {
                out.append(r)
            }
        }
        return Contents(format: format, readings: try ordered(out, path: path))
    }

    /// The metrics of the schema sleepcycle reads; the others are skipped whatever their values.
    static let heartMetricKeys: Set<String> = ["hr", "hrv_rmssd", "hrv_sdnn"]

    /// A JSON `true` or `false`: Foundation hands booleans over as NSNumbers of Objective-C type `c`, which no JSON
    /// number has.
    private static func jsonBool(_ value: Any) -> Bool? {
        guard let n = value as? NSNumber, String(cString: n.objCType) == "c" else { return nil }
        return n.boolValue
    }

    /// A JSON number's value; nil for anything else, `true` and `false` included.
    static func jsonNumber(_ value: Any) -> Double? {
        guard let n = value as? NSNumber, jsonBool(n) == nil else { return nil }
        return n.doubleValue
    }

    /// A JSON value as it was written, for messages (`true`, not Foundation's `1`).
    static func jsonText(_ value: Any) -> String {
        jsonBool(value).map { $0 ? "true" : "false" } ?? "\(value)"
    }

    /// One object of the wearable schema, or nil when it carries no heart data.
    static func schemaReading(_ object: [String: Any], path: String, line: Int?, start: ISO8601Time,
                              item: Int? = nil) throws(InputFileError) -> WearMetrics? {
        func bad(_ why: String) -> InputFileError {
            InputFileError(path: path, line: line, message: item.map { "item \($0): " + why } ?? why)
        }
        let date: Date
        if let t = object["timestamp"] as? String {
            guard let time = ISO8601Time(t, defaultOffsetSeconds: start.utcOffsetSeconds) else {
                throw bad("\"timestamp\" '\(MessageText.field(t))' is not an ISO 8601 time")
            }
            date = time.date
        } else if let t = object["timestamp"].flatMap(jsonNumber), t.isFinite, abs(t) < 1e10 {
            // Unix time (seconds since 1970: any time after 2001), else seconds from the recording's start.
            date = t > 1e9 ? Date(timeIntervalSince1970: t) : start.date.addingTimeInterval(t)
        } else {
            throw bad("\"timestamp\" must be an ISO 8601 time or seconds (Unix time, or from the recording's start)")
        }
        var metrics: [String: Double] = [:]
        if let value = object["metrics"], !(value is NSNull) {
            guard let fields = value as? [String: Any] else { throw bad("\"metrics\" must be an object of numbers") }
            for (key, value) in fields {
                if let x = jsonNumber(value), x.isFinite {
                    metrics[key] = x
                } else if heartMetricKeys.contains(key), !(value is NSNull) {
                    // Other metrics (steps, calories) are not read; a heart metric that is not a number is a bad row.
                    throw bad("metrics.\(key) '\(MessageText.field(jsonText(value)))' is not a number")
                }
            }
        }
        if let hr = metrics["hr"], !bpmRange.contains(hr) { throw bad("heart rate \(hr) bpm is out of range (20–250)") }
        var rr: [Double] = []
        if let value = object["rrIntervals"], !(value is NSNull) {
            guard let intervals = value as? [Any] else { throw bad("\"rrIntervals\" must be an array of milliseconds") }
            for value in intervals {
                guard let x = jsonNumber(value) else {
                    throw bad("RR interval '\(MessageText.field(jsonText(value)))' is not a number of milliseconds")
                }
                guard rrRange.contains(x) else { throw bad("RR interval \(x) ms is out of range (200–3000 ms)") }
                rr.append(x)
            }
        }
        guard metrics["hr"] != nil || !rr.isEmpty || metrics["hrv_rmssd"] != nil || metrics["hrv_sdnn"] != nil else {
            return nil
        }
        return WearMetrics(timestamp: date, deviceId: object["deviceId"] as? String, source: .jsonLines, metrics: metrics,
                           rrIntervals: rr)
    }

    // MARK: - Apple Health

    /// Heart-rate and HRV (SDNN) records of Apple Health's `export.xml`, read by Foundation's streaming XML parser.
    static func appleHealth(_ bytes: [UInt8], path: String, start: ISO8601Time) throws(InputFileError) -> [WearMetrics] {
        // Foundation's parser traps on a name that is not UTF-8 (libxml2 hands it through): the export is UTF-8, so
        // anything else is refused first.
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw InputFileError(path: path, line: Self.firstInvalidUTF8Line(bytes), message: "not UTF-8 text (an Apple Health export is UTF-8 XML)")
        }
        let reader = AppleHealthReader(offset: start.utcOffsetSeconds)
        let parser = XMLParser(data: Data(Self.withDataInEveryProcessingInstruction(bytes)))
        parser.delegate = reader
        parser.shouldResolveExternalEntities = false
        if !parser.parse() {
            let why = reader.problem ?? "not well-formed XML"
                + (parser.parserError.map { " (\(MessageText.field("\($0)")))" } ?? "")
            throw InputFileError(path: path, line: parser.lineNumber > 0 ? parser.lineNumber : nil, message: why)
        }
        if let problem = reader.problem { throw InputFileError(path: path, line: reader.problemLine, message: problem) }
        // Foundation's parser on Linux succeeds on a document cut short: the root must have closed.
        guard reader.depth == 0 else {
            throw InputFileError(path: path, line: parser.lineNumber > 0 ? parser.lineNumber : nil,
                                 message: "the XML ends before its root element closes (a truncated export)")
        }
        // Records of several devices interleave in an export: sorted by time (stable).
        return reader.readings.enumerated().sorted { ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset) }
            .map(\.element)
    }

    /// `bytes` with a space before the `?>` of every processing instruction that has a target and no data
    /// (`<?name?>` becomes `<?name ?>`). libxml2 reports such an instruction with a null data pointer, which
    /// Foundation's parser reads as a C string: a crash on any file that holds one (found by the fuzzer). With
    /// the space the data is empty; the instructions themselves are ignored, and no line moves.
    static func withDataInEveryProcessingInstruction(_ bytes: [UInt8]) -> [UInt8] {
        let open = UInt8(ascii: "<"), question = UInt8(ascii: "?"), close = UInt8(ascii: ">")
        let nameEnds: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A, question, close, open]
        var out: [UInt8] = []
        var copied = 0, i = 0
        while i + 1 < bytes.count {
            guard bytes[i] == open, bytes[i + 1] == question else { i += 1; continue }
            var j = i + 2
            while j < bytes.count, !nameEnds.contains(bytes[j]) { j += 1 }
            if j > i + 2, j + 1 < bytes.count, bytes[j] == question, bytes[j + 1] == close {
                if out.isEmpty { out.reserveCapacity(bytes.count + 16) }
                out += bytes[copied..<j]
                out.append(0x20)
                copied = j
            }
            i = j
        }
        if copied == 0 { return bytes }
        out += bytes[copied...]
        return out
    }

    /// The line of the first byte sequence that is not UTF-8.
    static func firstInvalidUTF8Line(_ bytes: [UInt8]) -> Int? {
        var line = 1, from = 0
        for i in 0...bytes.count where i == bytes.count || bytes[i] == 0x0A {
            if String(validating: bytes[from..<i], as: UTF8.self) == nil { return line }
            line += 1
            from = i + 1
        }
        return nil
    }

    private final class AppleHealthReader: NSObject, XMLParserDelegate {
        let offset: Int
        var readings: [WearMetrics] = []
        var problem: String?
        var problemLine: Int?
        /// Elements open at this point of the document (0 once the root has closed).
        var depth = 0
        init(offset: Int) { self.offset = offset }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            depth += 1
            guard name == "Record", let type = attributes["type"] else { return }
            let key: String
            switch type {
            case "HKQuantityTypeIdentifierHeartRate": key = "hr"
            case "HKQuantityTypeIdentifierHeartRateVariabilitySDNN": key = "hrv_sdnn"
            default: return
            }
            func fail(_ why: String) { problem = why; problemLine = parser.lineNumber; parser.abortParsing() }
            guard let text = attributes["startDate"],
                  let date = WearableTime.date(text, defaultOffsetSeconds: offset)
                    ?? ISO8601Time(text, defaultOffsetSeconds: offset)?.date else {
                return fail("a \(MessageText.field(type)) record has no readable startDate")
            }
            guard let value = attributes["value"].flatMap(Double.init), value.isFinite else {
                return fail("a \(MessageText.field(type)) record's value is not a number")
            }
            if key == "hr" && !bpmRange.contains(value) { return fail("heart rate \(value) bpm is out of range (20–250)") }
            readings.append(WearMetrics(timestamp: date, deviceId: attributes["sourceName"], source: .appleHealth,
                                        metrics: [key: value]))
        }
    }

    // MARK: - RR list

    /// The RR intervals of a plain list — one interval in ms per line, after an optional header line without digits
    /// (Polar's RR export: "RR-interval [ms]"; Kubios' text) — or nil when the text is not such a list.
    static func rrList(_ text: String, path: String) throws(InputFileError) -> [Double]? {
        var values: [Double] = []
        // CRLF is one Character in Swift ("\r\n" != "\n"): lines end at either.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\u{FEFF}")))
            if line.isEmpty { continue }
            if values.isEmpty && index == 0 && !line.contains(where: \.isNumber) {
                // A header of several fields (`time,bpm`) is a CSV's, whose rows the CSV reader checks.
                if line.contains(where: { ",;\t".contains($0) }) { return nil }
                continue
            }
            guard let x = Double(line) else {
                // A line with more than one field: not an RR list (a CSV), unless it already was one.
                if values.isEmpty { return nil }
                throw InputFileError(path: path, line: index + 1, message: "'\(MessageText.field(line))' is not an RR interval in ms")
            }
            guard x.isFinite, rrRange.contains(x) else {
                throw InputFileError(path: path, line: index + 1, message: "RR interval \(MessageText.field(line)) ms is out of range (200–3000)")
            }
            values.append(x)
        }
        return values.isEmpty ? nil : values
    }

    /// The readings, refused when they go back in time (a file out of order is a wrong file, not a noisy one).
    private static func ordered(_ readings: [WearMetrics], path: String) throws(InputFileError) -> [WearMetrics] {
        for i in readings.indices.dropFirst() where readings[i].timestamp < readings[i - 1].timestamp {
            throw InputFileError(path: path, message: "readings go back in time at reading \(i + 1)")
        }
        return readings
    }
}
