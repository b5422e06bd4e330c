import Foundation
import SleepCycleBus

/// Reader of `--hr FILE`: heart-rate samples from a wearable.
///
/// Text, one sample per line, fields separated by commas or whitespace (so PhysioNet sleep-accel
/// `*_heartrate.txt` files, `time,bpm`, load as they are). An optional header row names the columns: `time`
/// and at least one of `bpm`, `rr_ms`. Without a header the columns are `time,bpm`. `time` is seconds since the
/// start of the recording (the audio's first sample), or an ISO 8601 timestamp when `start` is given. Rows must
/// be in non-decreasing time; blank lines and `#` comments are skipped; an empty `bpm`/`rr_ms` field is absent.
public enum HeartRateFile {
    public static func load(path: String, start: Date? = nil) throws -> [HeartRateSample] {
        let table = try SampleTable.read(path: path, known: ["time", "bpm", "rr_ms"], defaultHeader: ["time", "bpm"],
                                         start: start)
        guard table.header.contains("bpm") || table.header.contains("rr_ms") else {
            throw StagingError(path: path, line: 1, message: "header needs a 'bpm' or 'rr_ms' column")
        }
        return try table.rows.map { row in
            let bpm = row.values["bpm"] ?? nil, rr = row.values["rr_ms"] ?? nil
            if let bpm, !(20...250).contains(bpm) {
                throw StagingError(path: path, line: row.line, message: "bpm \(bpm) outside 20–250")
            }
            if let rr, !(200...3000).contains(rr) {
                throw StagingError(path: path, line: row.line, message: "rr_ms \(rr) outside 200–3000")
            }
            guard bpm != nil || rr != nil else {
                throw StagingError(path: path, line: row.line, message: "neither bpm nor rr_ms given")
            }
            return HeartRateSample(time: row.time, bpm: bpm, rrMs: rr)
        }
    }
}

/// Reader of `--motion FILE`: accelerometer activity from a wearable or phone.
///
/// Same layout rules as `HeartRateFile`. Columns: `time` and either `count` (activity counts, any units) or
/// `x,y,z` (acceleration in g; PhysioNet sleep-accel `*_acceleration.txt` is `time x y z` without header).
/// Without a header, 2 columns mean `time,count` and 4 mean `time,x,y,z`. From x,y,z the activity is the
/// Euclidean norm minus one, floored at 0 ("ENMO", van Hees et al. 2013, PLoS ONE 8(4) e61691).
public enum MotionFile {
    public static func load(path: String, start: Date? = nil) throws -> [MotionSample] {
        let table = try SampleTable.read(path: path, known: ["time", "count", "x", "y", "z"], defaultHeader: nil,
                                         start: start)
        let h = Set(table.header)
        let useCount = h.contains("count")
        guard useCount || h.isSuperset(of: ["x", "y", "z"]) else {
            throw StagingError(path: path, line: 1, message: "expected columns time,count or time,x,y,z")
        }
        return try table.rows.map { row in
            if useCount {
                guard let c = row.values["count"] ?? nil else {
                    throw StagingError(path: path, line: row.line, message: "missing count")
                }
                return MotionSample(time: row.time, activity: max(c, 0))
            }
            guard let x = row.values["x"] ?? nil, let y = row.values["y"] ?? nil, let z = row.values["z"] ?? nil else {
                throw StagingError(path: path, line: row.line, message: "missing x, y or z")
            }
            return MotionSample(time: row.time, activity: max((x * x + y * y + z * z).squareRoot() - 1, 0))
        }
    }
}

/// Shared line reader for the wearable files.
struct SampleTable {
    struct Row { var line: Int; var time: SampleTime; var values: [String: Double?] }
    var header: [String]
    var rows: [Row]

    static func read(path: String, known: Set<String>, defaultHeader: [String]?, start: Date?) throws -> SampleTable {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw StagingError(path: path, line: nil, message: "cannot read file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw StagingError(path: path, line: nil, message: "not UTF-8 text")
        }
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let isoPlain = ISO8601DateFormatter()
        var header: [String]? = nil
        var rows: [Row] = []
        var lastTime = SampleTime.min
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = index + 1
            let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.contains(",")
                ? trimmed.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                : trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if header == nil {
                if Double(fields[0]) == nil && !fields[0].contains("T") {
                    let names = fields.map { $0.lowercased() }
                    for n in names where !known.contains(n) {
                        throw StagingError(path: path, line: line, message: "unknown column '\(n)' (expected "
                            + known.sorted().joined(separator: ", ") + ")")
                    }
                    guard names.first == "time" else {
                        throw StagingError(path: path, line: line, message: "first column must be 'time'")
                    }
                    header = names
                    continue
                }
                if let d = defaultHeader { header = d }
                else if fields.count == 2 { header = ["time", "count"] }
                else if fields.count == 4 { header = ["time", "x", "y", "z"] }
                else {
                    throw StagingError(path: path, line: line, message: "cannot tell the columns of \(fields.count) "
                        + "fields without a header row")
                }
            }
            let names = header!
            guard fields.count == names.count else {
                throw StagingError(path: path, line: line, message: "expected \(names.count) fields, found \(fields.count)")
            }
            let time: SampleTime
            if let s = Double(fields[0]), s.isFinite {
                time = AnalysisClock.samples(seconds: s)
            } else if let date = iso.date(from: fields[0]) ?? isoPlain.date(from: fields[0]) {
                guard let start else {
                    throw StagingError(path: path, line: line, message: "ISO 8601 time '\(fields[0])' needs --start")
                }
                time = AnalysisClock.samples(seconds: date.timeIntervalSince(start))
            } else {
                throw StagingError(path: path, line: line, message: "time '\(fields[0])' is neither seconds nor ISO 8601")
            }
            guard time >= lastTime else {
                throw StagingError(path: path, line: line, message: "time goes backwards")
            }
            lastTime = time
            var values: [String: Double?] = [:]
            for (name, f) in zip(names, fields).dropFirst() {
                if f.isEmpty || f.lowercased() == "nan" { values[name] = .some(nil); continue }
                guard let v = Double(f), v.isFinite else {
                    throw StagingError(path: path, line: line, message: "\(name) '\(f)' is not a number")
                }
                values[name] = v
            }
            rows.append(Row(line: line, time: time, values: values))
        }
        guard let header else { throw StagingError(path: path, line: nil, message: "no samples") }
        return SampleTable(header: header, rows: rows)
    }
}
