import Foundation
import SleepCycleBus
import SleepCycleFormats

/// Reader of `--hr FILE`: heart-rate samples from a wearable.
///
/// Delimited text read by `CSVTable` (quoted fields, `,` `;` tab or space separators, a BOM, CRLF; so PhysioNet
/// sleep-accel `*_heartrate.txt` files and spreadsheet exports load as they are). An optional header row names
/// the columns: `time` and at least one of `bpm`, `rr_ms`. Without a header the columns are `time,bpm`. `time` is
/// seconds since the recording's first sample, or an ISO 8601 time (one without an offset is read in the
/// recording's offset). Rows must be in non-decreasing time; an empty `bpm`/`rr_ms` field (or `nan`) is absent.
/// Samples outside the recording are not an error: the pipeline uses the overlap and warns.
public enum HeartRateFile {
    public static func load(path: String, start: ISO8601Time? = nil) throws(InputFileError) -> [HeartRateSample] {
        try parse(CSVTable.load(path: path), path: path, start: start)
    }

    /// The samples of delimited text already read (`path` names it in errors).
    public static func parse(_ csv: CSVTable, path: String, start: ISO8601Time? = nil) throws(InputFileError)
        -> [HeartRateSample] {
        let table = try WearableTable(csv, path: path, known: ["time", "bpm", "rr_ms"], defaultHeader: ["time", "bpm"],
                                      start: start)
        guard table.header.contains("bpm") || table.header.contains("rr_ms") else {
            throw InputFileError(path: path, line: table.headerLine, message: "the header needs a 'bpm' or 'rr_ms' column")
        }
        var samples: [HeartRateSample] = []
        samples.reserveCapacity(table.rows.count)
        for row in table.rows {
            let bpm = row.values["bpm"] ?? nil, rr = row.values["rr_ms"] ?? nil
            if let bpm, !(20...250).contains(bpm) {
                throw InputFileError(path: path, line: row.line, message: "bpm \(bpm) outside 20–250")
            }
            if let rr, !(200...3000).contains(rr) {
                throw InputFileError(path: path, line: row.line, message: "rr_ms \(rr) outside 200–3000")
            }
            guard bpm != nil || rr != nil else {
                throw InputFileError(path: path, line: row.line, message: "neither bpm nor rr_ms given")
            }
            samples.append(HeartRateSample(time: row.time, bpm: bpm, rrMs: rr))
        }
        return samples
    }
}

/// Reader of `--motion FILE`: accelerometer activity from a wearable or phone.
///
/// Same layout rules as `HeartRateFile`. Columns: `time` and either `count` (activity counts, any units) or
/// `x,y,z` (acceleration in g; PhysioNet sleep-accel `*_acceleration.txt` is `time x y z` without header).
/// Without a header, 2 columns mean `time,count` and 4 mean `time,x,y,z`. From x,y,z the activity is the
/// Euclidean norm minus one, floored at 0 ("ENMO", van Hees et al. 2013, PLoS ONE 8(4) e61691).
public enum MotionFile {
    public static func load(path: String, start: ISO8601Time? = nil) throws(InputFileError) -> [MotionSample] {
        try parse(CSVTable.load(path: path), path: path, start: start)
    }

    /// The samples of delimited text already read (`path` names it in errors).
    public static func parse(_ csv: CSVTable, path: String, start: ISO8601Time? = nil) throws(InputFileError)
        -> [MotionSample] {
        let table = try WearableTable(csv, path: path, known: ["time", "count", "x", "y", "z"], defaultHeader: nil,
                                      start: start)
        let h = Set(table.header)
        let useCount = h.contains("count")
        guard useCount || h.isSuperset(of: ["x", "y", "z"]) else {
            throw InputFileError(path: path, line: table.headerLine, message: "expected columns time,count or time,x,y,z")
        }
        var samples: [MotionSample] = []
        samples.reserveCapacity(table.rows.count)
        for row in table.rows {
            if useCount {
                guard let c = row.values["count"] ?? nil else {
                    throw InputFileError(path: path, line: row.line, message: "missing count")
                }
                samples.append(MotionSample(time: row.time, activity: max(c, 0)))
                continue
            }
            guard let x = row.values["x"] ?? nil, let y = row.values["y"] ?? nil, let z = row.values["z"] ?? nil else {
                throw InputFileError(path: path, line: row.line, message: "missing x, y or z")
            }
            let norm = (x * x + y * y + z * z).squareRoot()
            guard norm.isFinite else {
                throw InputFileError(path: path, line: row.line, message: "acceleration too large to be in g")
            }
            samples.append(MotionSample(time: row.time, activity: max(norm - 1, 0)))
        }
        return samples
    }
}

/// The rows of a wearable file: timed numeric columns, with the checks both readers share.
struct WearableTable {
    struct Row { var line: Int; var time: SampleTime; var values: [String: Double?] }
    var header: [String]
    /// Line of the header row (1 when there is none: the columns were inferred from the first row).
    var headerLine: Int
    var rows: [Row] = []

    init(_ table: CSVTable, path: String, known: Set<String>, defaultHeader: [String]?,
         start: ISO8601Time?) throws(InputFileError) {
        guard let first = table.records.first else {
            throw InputFileError(path: path, message: "no samples (the file is empty)")
        }
        var records = table.records[...]
        let looksLikeHeader = table.number(first.fields[0]) == nil && ISO8601Time(first.fields[0], defaultOffsetSeconds: 0) == nil
        if looksLikeHeader {
            let names = first.fields.map { $0.lowercased() }
            for n in names where !known.contains(n) {
                throw InputFileError(path: path, line: first.line, message: "unknown column '\(MessageText.field(n))' "
                    + "(expected " + known.sorted().joined(separator: ", ") + ")")
            }
            guard names.first == "time" else {
                throw InputFileError(path: path, line: first.line, message: "the first column must be 'time'")
            }
            guard Set(names).count == names.count else {
                throw InputFileError(path: path, line: first.line, message: "a column appears twice")
            }
            header = names
            headerLine = first.line
            records = records.dropFirst()
        } else if let d = defaultHeader {
            header = d; headerLine = 1
        } else if first.fields.count == 2 {
            header = ["time", "count"]; headerLine = 1
        } else if first.fields.count == 4 {
            header = ["time", "x", "y", "z"]; headerLine = 1
        } else {
            throw InputFileError(path: path, line: first.line,
                                 message: "cannot tell the columns of \(first.fields.count) fields without a header row")
        }
        guard !records.isEmpty else { throw InputFileError(path: path, message: "no samples after the header") }
        var lastTime = SampleTime.min
        rows.reserveCapacity(records.count)
        for record in records {
            let fields = record.fields
            guard fields.count == header.count else {
                throw InputFileError(path: path, line: record.line,
                                     message: "expected \(header.count) fields, found \(fields.count)")
            }
            let time = try Self.time(fields[0], table: table, start: start, path: path, line: record.line)
            guard time >= lastTime else {
                throw InputFileError(path: path, line: record.line, message: "time goes backwards")
            }
            lastTime = time
            var values: [String: Double?] = [:]
            for (name, f) in zip(header, fields).dropFirst() {
                if f.isEmpty || f.lowercased() == "nan" { values[name] = .some(nil); continue }
                guard let v = table.number(f) else {
                    throw InputFileError(path: path, line: record.line,
                                         message: "\(name) '\(MessageText.field(f))' is not a finite number")
                }
                values[name] = v
            }
            rows.append(Row(line: record.line, time: time, values: values))
        }
    }

    /// A row's time on the recording's timeline: seconds since its first sample, or an ISO 8601 time.
    static func time(_ field: String, table: CSVTable, start: ISO8601Time?, path: String,
                     line: Int) throws(InputFileError) -> SampleTime {
        if let s = table.number(field) {
            guard let t = AnalysisClock.checkedSamples(seconds: s) else {
                throw InputFileError(path: path, line: line, message: "time \(MessageText.field(field)) s is out of range "
                    + "(expected seconds from the start of the recording)")
            }
            return t
        }
        do {
            let date = try ISO8601Time.parse(field, defaultOffsetSeconds: start?.utcOffsetSeconds ?? 0).date
            guard let start else {
                throw InputFileError(path: path, line: line, message: "ISO 8601 time '\(MessageText.field(field))' "
                    + "needs the recording's start time")
            }
            guard let t = AnalysisClock.checkedSamples(seconds: date.timeIntervalSince(start.date)) else {
                throw InputFileError(path: path, line: line, message: "time '\(MessageText.field(field))' is out of range")
            }
            return t
        } catch let e as InputFileError {
            throw e
        } catch {
            throw InputFileError(path: path, line: line,
                                 message: "time '\(MessageText.field(field))' is neither seconds nor ISO 8601 (\(error))")
        }
    }
}
