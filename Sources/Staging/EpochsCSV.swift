import SleepCycleFormats

/// Reader of the `sleepcycle stage --epochs FILE.csv` input.
///
/// Format: a header row naming any of `time_hours,count,hr,cosine,circadian` (Walch et al. 2019 feature
/// definitions, see `StagingInput`), in any order, each at most once; then one row per 30-s epoch with a finite
/// decimal number in every column. The text is read by `CSVTable` (quoting, `,`/`;`/tab separators, BOM, CRLF,
/// blank lines and `#` comments skipped). Columns that are absent mean that input is absent.
public enum EpochsCSV {
    public static func load(path: String) throws(InputFileError) -> EpochTable {
        try parse(InputFile.read(path), path: path)
    }

    public static func parse(_ text: String, path: String) throws(InputFileError) -> EpochTable {
        try parse(Array(text.utf8), path: path)
    }

    /// Reads the records as `CSVTable.scan` meets them, straight into the columns (a file of a million epochs is
    /// not held as a million records of strings as well).
    static func parse(_ bytes: [UInt8], path: String) throws(InputFileError) -> EpochTable {
        var columns: [StagingInput]? = nil
        var values: [[Double]] = []
        try CSVTable.scan(bytes, path: path) { (record, separator) throws(InputFileError) in
            guard let columns else {
                let named = try header(record, path: path)
                columns = named
                values = [[Double]](repeating: [], count: named.count)
                return
            }
            guard record.fields.count == columns.count else {
                throw InputFileError(path: path, line: record.line,
                                     message: "expected \(columns.count) fields, found \(record.fields.count)")
            }
            for (c, f) in record.fields.enumerated() {
                guard let v = CSVTable.number(f, separator: separator) else {
                    throw InputFileError(path: path, line: record.line, message: "'\(MessageText.field(f))' in column "
                        + "\(columns[c].rawValue) is not a finite number")
                }
                if let problem = Self.problem(v, in: columns[c], after: values[c].last) {
                    throw InputFileError(path: path, line: record.line, message: "'\(MessageText.field(f))' in column "
                        + "\(columns[c].rawValue) \(problem)")
                }
                values[c].append(v)
            }
        }
        guard let columns else {
            throw InputFileError(path: path, message: "empty file: expected a header row")
        }
        guard values.first?.isEmpty == false else {
            throw InputFileError(path: path, message: "no epoch rows after the header")
        }
        return EpochTable(columns: Dictionary(uniqueKeysWithValues: zip(columns, values)))
    }

    /// The inputs the header row names, in its order.
    private static func header(_ head: CSVTable.Record, path: String) throws(InputFileError) -> [StagingInput] {
        var columns: [StagingInput] = []
        for f in head.fields {
            guard let input = StagingInput(rawValue: f.lowercased()) else {
                throw InputFileError(path: path, line: head.line, message: "unknown column '\(MessageText.field(f))' in "
                    + "header (expected any of time_hours,count,hr,cosine,circadian)")
            }
            guard !columns.contains(input) else {
                throw InputFileError(path: path, line: head.line, message: "column '\(f)' appears twice")
            }
            columns.append(input)
        }
        return columns
    }

    /// What is impossible about `v` in `column` (after the column's previous value), or nil. The features are
    /// z-scored or normalised (negative values are fine), but none reaches a million; the cosine lies in [−1, 1]
    /// and the epochs are in time order.
    static func problem(_ v: Double, in column: StagingInput, after previous: Double?) -> String? {
        if abs(v) >= 1e6 { return "is out of range (these features are normalised)" }
        if column == .cosine, abs(v) > 1 + 1e-6 { return "is out of range (a cosine lies in −1…1)" }
        if column == .timeHours, let previous, v < previous {
            return "goes back in time (the previous epoch is at \(previous) h; epochs are in time order)"
        }
        return nil
    }
}
