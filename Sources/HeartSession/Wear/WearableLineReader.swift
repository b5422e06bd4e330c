import Foundation
import SleepCycleBus
import SleepCycleFormats

/// A wearable's readings arriving a line at a time (a Bluetooth bridge appending to a file or writing to a FIFO while
/// `record` runs): JSON lines of the wearable schema, or CSV with a header row (`time` and `bpm` / `rr_ms`, or an
/// export's names) or without one (`time,bpm`). Times are ISO 8601, Unix seconds (over 10⁹), or seconds from the
/// recording's start (`origin`). A value type fed lines in order; a bad line is an error for that line only.
public struct WearableLineReader: Sendable {
    public let origin: ISO8601Time
    /// The CSV header row, once seen (nil before the first line, or for JSON lines).
    private var header: String?
    private var isJSON: Bool?
    /// Lines read so far (the number of the last one).
    public private(set) var lineNumber = 0

    public init(origin: ISO8601Time) { self.origin = origin }

    /// The readings of the next line (none for a blank line or the header); `path` names the input in errors.
    public mutating func read(line raw: String, path: String) throws(InputFileError) -> [WearMetrics] {
        lineNumber += 1
        let line = raw.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\u{FEFF}")))
        guard !line.isEmpty, !line.hasPrefix("#") else { return [] }
        if isJSON == nil { isJSON = line.hasPrefix("{") }
        if isJSON == true {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                throw InputFileError(path: path, line: lineNumber, message: "not a JSON object")
            }
            return try WearableFile.schemaReading(object, path: path, line: lineNumber, start: origin).map { [$0] } ?? []
        }
        if header == nil {
            let first = line.split(separator: ",", maxSplits: 1).first.map(String.init) ?? line
            if Double(first) == nil && ISO8601Time(first) == nil && WearableTime.date(first, defaultOffsetSeconds: 0) == nil {
                header = line
                return []
            }
            header = "time,bpm"
        }
        // Unix times are made relative to the recording, which the CSV reader takes as seconds.
        var row = line
        if let comma = line.firstIndex(of: ","), let t = Double(line[..<comma]), t > 1e9 {
            row = String(format: "%.3f", t - origin.date.timeIntervalSince1970) + line[comma...]
        }
        do {
            let samples = try HeartRateFile.parse(Array((header! + "\n" + row).utf8), path: path, start: origin)
            return samples.map { s in
                WearMetrics(timestamp: origin.date.addingTimeInterval(AnalysisClock.seconds(s.time)), source: .live,
                            metrics: s.bpm.map { ["hr": $0] } ?? [:], rrIntervals: s.rrMs.map { [$0] } ?? [])
            }
        } catch {
            throw InputFileError(path: path, line: lineNumber, message: error.message)
        }
    }
}
