import Foundation
import SleepCycleBus
import SleepCycleFormats

/// Reader of heart-rate CSV (`--hr FILE`, `hr-session FILE`): heart-rate samples from a wearable.
///
/// Delimited text read by `CSVTable` (quoted fields, `,` `;` tab or space separators, a BOM, CRLF; so PhysioNet
/// sleep-accel `*_heartrate.txt` files and spreadsheet exports load as they are). An optional header row names
/// the columns: a time column and at least one of `bpm`, `rr_ms`. Without a header the columns are `time,bpm`.
/// Exports name them otherwise and carry more columns: the names of Fitbit's and Apple Health's CSV exports
/// (`timestamp`, `Date/Time`, `startDate`, `Time`; `Value`, `heart_rate`, `Heart Rate (count/min)`,
/// `Heart Rate [Avg] (count/min)`, `beats per minute`; `RR-interval [ms]`, `rri`, `ibi_ms`, … — `aliases`) are taken,
/// and other columns are ignored. Time is seconds since the recording's first sample, an ISO 8601 time, or an
/// export's date (`WearableTime`); one without an offset is read in the recording's offset. Rows must be in
/// non-decreasing time; an empty `bpm`/`rr_ms` field (or `nan`) is absent. Samples outside the recording are not an
/// error: the pipeline uses the overlap and warns.
public enum HeartRateFile {
    public static func load(path: String, start: ISO8601Time? = nil) throws(InputFileError) -> [HeartRateSample] {
        try parse(InputFile.read(path), path: path, start: start)
    }

    /// The samples of delimited text (`path` names it in errors).
    public static func parse(_ bytes: [UInt8], path: String, start: ISO8601Time? = nil) throws(InputFileError)
        -> [HeartRateSample] {
        let table = try WearableTable(bytes, path: path, known: ["time", "bpm", "rr_ms"], defaultHeader: ["time", "bpm"],
                                      start: start, aliases: aliases)
        guard table.header.contains("bpm") || table.header.contains("rr_ms") else {
            throw InputFileError(path: path, line: table.headerLine, message: "the header needs a 'bpm' or 'rr_ms' column")
        }
        var samples: [HeartRateSample] = []
        samples.reserveCapacity(table.count)
        let bpmColumn = table.column("bpm"), rrColumn = table.column("rr_ms")
        for row in 0..<table.count {
            let bpm = bpmColumn.flatMap { table.value($0, row) }, rr = rrColumn.flatMap { table.value($0, row) }
            let line = table.line(row)
            if let bpm, !(20...250).contains(bpm) {
                throw InputFileError(path: path, line: line, message: "bpm \(bpm) outside 20–250")
            }
            if let rr, !(200...3000).contains(rr) {
                throw InputFileError(path: path, line: line, message: "rr_ms \(rr) outside 200–3000")
            }
            guard bpm != nil || rr != nil else {
                throw InputFileError(path: path, line: line, message: "neither bpm nor rr_ms given")
            }
            samples.append(HeartRateSample(time: table.times[row], bpm: bpm, rrMs: rr))
        }
        return samples
    }

    /// Column names of exports, lower-cased, and the column each is.
    static let aliases: [String: String] = {
        var a: [String: String] = [:]
        for n in ["timestamp", "datetime", "date/time", "date time", "date", "start", "startdate", "start date",
                  "start time", "time stamp", "creationdate"] { a[n] = "time" }
        for n in ["hr", "heart_rate", "heartrate", "heart rate", "value", "beats per minute", "heart_rate_bpm", "hr_bpm",
                  "heart rate (bpm)", "heart rate (count/min)", "heart rate [avg] (count/min)", "heart rate [avg]",
                  "avg heart rate (count/min)"] { a[n] = "bpm" }
        for n in ["rr", "rri", "rr_interval", "rr interval", "rr-interval [ms]", "rr interval (ms)", "rr (ms)", "ibi",
                  "ibi_ms", "ibi (ms)"] { a[n] = "rr_ms" }
        return a
    }()
}

/// Reader of `--motion FILE`: accelerometer activity from a wearable or phone.
///
/// Same layout rules as `HeartRateFile`. Columns: `time` and either `count` (activity counts, any units) or
/// `x,y,z` (acceleration in g; PhysioNet sleep-accel `*_acceleration.txt` is `time x y z` without header).
/// Without a header, 2 columns mean `time,count` and 4 mean `time,x,y,z`. From x,y,z the activity is the
/// Euclidean norm minus one, floored at 0 ("ENMO", van Hees et al. 2013, PLoS ONE 8(4) e61691).
public enum MotionFile {
    public static func load(path: String, start: ISO8601Time? = nil) throws(InputFileError) -> [MotionSample] {
        // The file's bytes go once the table is read, before the samples are made (a 50-Hz night is 44 MB of text).
        let table = try self.table(InputFile.read(path), path: path, start: start)
        return try samples(table, path: path)
    }

    /// The samples of delimited text (`path` names it in errors).
    public static func parse(_ bytes: [UInt8], path: String, start: ISO8601Time? = nil) throws(InputFileError)
        -> [MotionSample] {
        try samples(table(bytes, path: path, start: start), path: path)
    }

    private static func table(_ bytes: [UInt8], path: String, start: ISO8601Time?) throws(InputFileError) -> WearableTable {
        try WearableTable(bytes, path: path, known: ["time", "count", "x", "y", "z"], defaultHeader: nil, start: start)
    }

    private static func samples(_ table: WearableTable, path: String) throws(InputFileError) -> [MotionSample] {
        let h = Set(table.header)
        let useCount = h.contains("count")
        guard useCount || h.isSuperset(of: ["x", "y", "z"]) else {
            throw InputFileError(path: path, line: table.headerLine, message: "expected columns time,count or time,x,y,z")
        }
        var samples: [MotionSample] = []
        samples.reserveCapacity(table.count)
        if useCount, let count = table.column("count") {
            for row in 0..<table.count {
                guard let c = table.value(count, row) else {
                    throw InputFileError(path: path, line: table.line(row), message: "missing count")
                }
                samples.append(MotionSample(time: table.times[row], activity: max(c, 0)))
            }
            return samples
        }
        guard let cx = table.column("x"), let cy = table.column("y"), let cz = table.column("z") else { return [] }
        for row in 0..<table.count {
            guard let x = table.value(cx, row), let y = table.value(cy, row), let z = table.value(cz, row) else {
                throw InputFileError(path: path, line: table.line(row), message: "missing x, y or z")
            }
            let norm = (x * x + y * y + z * z).squareRoot()
            guard norm.isFinite else {
                throw InputFileError(path: path, line: table.line(row), message: "acceleration too large to be in g")
            }
            samples.append(MotionSample(time: table.times[row], activity: max(norm - 1, 0)))
        }
        return samples
    }
}

/// The rows of a wearable file as columns (a night of 50 Hz accelerometer rows is millions of them: no per-row
/// dictionary or string array is kept), with the checks both readers share.
struct WearableTable {
    var header: [String]
    /// Line of the header row (1 when there is none: the columns were inferred from the first row).
    var headerLine = 1
    var times: [SampleTime] = []
    /// One array per column after `time`, in header order; NaN = an empty field or `nan` (fields are otherwise
    /// finite, so NaN is free to mark absence, at half the memory of an optional).
    var values: [[Double]] = []
    /// The value in column `column` of `row`, nil when absent.
    func value(_ column: Int, _ row: Int) -> Double? { let v = values[column][row]; return v.isNaN ? nil : v }
    /// The first row's line; `lineDelta[row]` is each row's distance from it (rows may skip comment lines).
    private var firstLine = 0
    private var lineDelta: [UInt32] = []

    var count: Int { times.count }
    func line(_ row: Int) -> Int { firstLine + Int(lineDelta[row]) }
    /// Index into `values` of a column.
    func column(_ name: String) -> Int? { header.firstIndex(of: name).flatMap { $0 > 0 ? $0 - 1 : nil } }

    /// The column of the time (any position in a header row; the first without one).
    private var timeColumn = 0
    /// Per field of a row: its index into `values`, or nil for the time and ignored columns.
    private var slot: [Int?] = []

    /// - Parameter aliases: other names of known columns (lower-cased); with aliases, unknown columns are ignored
    ///   instead of refused (an export's extra columns).
    init(_ bytes: [UInt8], path: String, known: Set<String>, defaultHeader: [String]?,
         start: ISO8601Time?, aliases: [String: String]? = nil) throws(InputFileError) {
        header = []
        var lastTime = SampleTime.min
        /// Whether the rows' times are seconds (true) or dates (false), from the first row on.
        var timesAreSeconds: Bool?
        var decided = false
        var table = self
        // Room for every line up front: a night of 50-Hz rows grown by doubling held up to twice its columns.
        let lines = bytes.reduce(into: 1) { n, b in if b == 0x0A { n += 1 } }
        table.times.reserveCapacity(lines)
        table.lineDelta.reserveCapacity(lines)
        try CSVTable.scan(bytes, path: path) { (record, separator) throws(InputFileError) in
            let fields = record.fields
            if !decided {
                decided = true
                if try table.readHeader(record, separator: separator, path: path, known: known,
                                        defaultHeader: defaultHeader, aliases: aliases) { return }
            }
            guard fields.count == table.slot.count else {
                throw InputFileError(path: path, line: record.line,
                                     message: "expected \(table.slot.count) fields, found \(fields.count)")
            }
            let (time, isSeconds) = try Self.time(fields[table.timeColumn], separator: separator, start: start,
                                                  path: path, line: record.line)
            // Seconds from the start and dates do not mix: a date after seconds (or the reverse) is on another clock.
            if let previous = timesAreSeconds, previous != isSeconds {
                throw InputFileError(path: path, line: record.line, message: "time '\(MessageText.field(fields[table.timeColumn]))' "
                    + (isSeconds ? "is seconds, but the rows before it are dates" : "is a date, but the rows before it are seconds"))
            }
            timesAreSeconds = isSeconds
            guard time >= lastTime else {
                throw InputFileError(path: path, line: record.line, message: "time goes backwards")
            }
            lastTime = time
            if table.times.isEmpty { table.firstLine = record.line }
            table.times.append(time)
            table.lineDelta.append(UInt32(clamping: record.line - table.firstLine))
            for (i, f) in fields.enumerated() {
                guard let k = table.slot[i] else { continue }
                if f.isEmpty || f.lowercased() == "nan" { table.values[k].append(.nan); continue }
                guard let v = CSVTable.number(f, separator: separator) else {
                    throw InputFileError(path: path, line: record.line,
                                         message: "\(table.header[k + 1]) '\(MessageText.field(f))' is not a finite number")
                }
                table.values[k].append(v)
            }
        }
        guard decided else { throw InputFileError(path: path, message: "no samples (the file is empty)") }
        guard !table.times.isEmpty else { throw InputFileError(path: path, message: "no samples after the header") }
        self = table
    }

    /// Takes the columns from the first record; true when it is a header row (not a sample). `header` is the time
    /// and then the kept columns, under their known names; `slot` says where each field of a row goes.
    private mutating func readHeader(_ first: CSVTable.Record, separator: CSVTable.Separator, path: String,
                                     known: Set<String>, defaultHeader: [String]?,
                                     aliases: [String: String]?) throws(InputFileError) -> Bool {
        let isHeader = CSVTable.number(first.fields[0], separator: separator) == nil
            && ISO8601Time(first.fields[0], defaultOffsetSeconds: 0) == nil
            && WearableTime.date(first.fields[0], defaultOffsetSeconds: 0) == nil
        var names: [String]
        if isHeader {
            names = first.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            if let aliases {
                // Known names first, then aliases; a column named twice keeps its first.
                names = names.map { known.contains($0) ? $0 : aliases[$0] ?? "" }
                var seen: Set<String> = []
                names = names.map { seen.insert($0).inserted ? $0 : "" }
                guard let t = names.firstIndex(of: "time") else {
                    throw InputFileError(path: path, line: first.line, message: "no time column "
                        + "(expected 'time', 'timestamp', 'Date/Time', 'startDate', …)")
                }
                timeColumn = t
            } else {
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
            }
            headerLine = first.line
        } else if let d = defaultHeader {
            names = d
        } else if first.fields.count == 2 {
            names = ["time", "count"]
        } else if first.fields.count == 4 {
            names = ["time", "x", "y", "z"]
        } else {
            throw InputFileError(path: path, line: first.line,
                                 message: "cannot tell the columns of \(first.fields.count) fields without a header row")
        }
        header = ["time"]
        slot = names.indices.map { i in
            guard i != timeColumn, !names[i].isEmpty else { return nil }
            header.append(names[i])
            return header.count - 2
        }
        values = Array(repeating: [], count: header.count - 1)
        for k in values.indices { values[k].reserveCapacity(times.capacity) }
        return isHeader
    }

    /// A row's time on the recording's timeline, and whether the field was seconds since its first sample (else an
    /// ISO 8601 time or an export's date).
    static func time(_ field: String, separator: CSVTable.Separator, start: ISO8601Time?, path: String,
                     line: Int) throws(InputFileError) -> (SampleTime, isSeconds: Bool) {
        if let s = CSVTable.number(field, separator: separator) {
            guard let t = AnalysisClock.checkedSamples(seconds: s) else {
                throw InputFileError(path: path, line: line, message: "time \(MessageText.field(field)) s is out of range "
                    + "(expected seconds from the start of the recording)")
            }
            return (t, true)
        }
        // An ISO 8601 time, else an export's date (`WearableTime`), placed on the recording's timeline.
        let date: Date
        do {
            date = try ISO8601Time.parse(field, defaultOffsetSeconds: start?.utcOffsetSeconds ?? 0).date
        } catch {
            guard let d = WearableTime.date(field, defaultOffsetSeconds: start?.utcOffsetSeconds ?? 0) else {
                throw InputFileError(path: path, line: line,
                                     message: "time '\(MessageText.field(field))' is neither seconds nor ISO 8601 (\(error))")
            }
            date = d
        }
        guard let start else {
            throw InputFileError(path: path, line: line, message: "time '\(MessageText.field(field))' "
                + "needs the recording's start time")
        }
        guard let t = AnalysisClock.checkedSamples(seconds: date.timeIntervalSince(start.date)) else {
            throw InputFileError(path: path, line: line, message: "time '\(MessageText.field(field))' is out of range")
        }
        return (t, false)
    }
}
