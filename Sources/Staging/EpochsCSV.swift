import Foundation

/// Reader of the `sleepcycle stage --epochs FILE.csv` input.
///
/// Format: a header row naming any of `time_hours,count,hr,cosine,circadian` (Walch et al. 2019 feature
/// definitions, see `StagingInput`), in any order, each at most once; then one row per 30-s epoch with a finite
/// decimal number in every column. Blank lines and lines starting with `#` are skipped; a trailing `\r` is
/// ignored. Columns that are absent mean that input is absent.
public enum EpochsCSV {
    public static func load(path: String) throws -> EpochTable {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw StagingError(path: path, line: nil, message: "cannot read file (\(error.localizedDescription))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw StagingError(path: path, line: nil, message: "not UTF-8 text")
        }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws -> EpochTable {
        var header: [StagingInput]? = nil
        var values: [[Double]] = []
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let lineNumber = index + 1
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw[...]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard let columns = header else {
                var seen: [StagingInput] = []
                for f in fields {
                    guard let input = StagingInput(rawValue: f) else {
                        throw StagingError(path: path, line: lineNumber, message: "unknown column '\(f)' in header "
                            + "(expected any of time_hours,count,hr,cosine,circadian)")
                    }
                    guard !seen.contains(input) else {
                        throw StagingError(path: path, line: lineNumber, message: "column '\(f)' appears twice")
                    }
                    seen.append(input)
                }
                header = seen
                values = Array(repeating: [], count: seen.count)
                continue
            }
            guard fields.count == columns.count else {
                throw StagingError(path: path, line: lineNumber,
                                   message: "expected \(columns.count) fields, found \(fields.count)")
            }
            for (c, f) in fields.enumerated() {
                guard let v = Double(f), v.isFinite else {
                    throw StagingError(path: path, line: lineNumber,
                                       message: "'\(f)' in column \(columns[c].rawValue) is not a finite number")
                }
                values[c].append(v)
            }
        }
        guard let columns = header else {
            throw StagingError(path: path, line: nil, message: "empty file: expected a header row")
        }
        guard !values.first!.isEmpty || columns.isEmpty else {
            throw StagingError(path: path, line: nil, message: "no epoch rows after the header")
        }
        return EpochTable(columns: Dictionary(uniqueKeysWithValues: zip(columns, values)))
    }
}
