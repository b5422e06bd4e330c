/// The one reader of delimited text in sleepcycle (`--hr`, `--motion`, `stage --epochs`): RFC 4180 quoting, a
/// UTF-8 byte-order mark, LF / CRLF / CR line ends, and the separators people's exports use.
///
/// * The separator is found on the first record that is not blank or a comment: `;` if it holds one outside
///   quotes (spreadsheets in locales with a decimal comma), else `,`, else a tab, else runs of spaces (PhysioNet's
///   `time bpm` text files).
/// * Fields may be quoted (`"time"`, `"a ""quoted"" word"`, a separator or line break inside quotes); unquoted
///   fields are trimmed of surrounding spaces.
/// * Blank records and records whose first character is `#` are skipped.
/// * Numbers (`number(_:)`) take a decimal point, or a decimal comma when the separator is not a comma.
///
/// Records keep the line they start on, for messages.
public struct CSVTable: Sendable {
    public enum Separator: String, Sendable { case comma = ",", semicolon = ";", tab = "\t", spaces = " " }

    public struct Record: Sendable, Hashable {
        /// 1-based line on which the record starts.
        public var line: Int
        public var fields: [String]
    }

    public var separator: Separator
    public var records: [Record]

    /// Reads and parses `path` (`-`: standard input).
    public static func load(path: String) throws(InputFileError) -> CSVTable {
        try parse(InputFile.read(path), path: path)
    }

    /// Parses delimited text; `path` names it in errors.
    public static func parse(_ bytes: [UInt8], path: String) throws(InputFileError) -> CSVTable {
        var records: [Record] = []
        let separator = try scan(bytes, path: path) { record, _ in records.append(record) }
        return CSVTable(separator: separator, records: records)
    }

    /// Calls `body` with each record in turn without keeping them (a 50 Hz accelerometer night has millions);
    /// returns the separator found. Errors thrown by `body` are passed on.
    @discardableResult
    public static func scan(_ bytes: [UInt8], path: String,
                            _ body: (Record, Separator) throws(InputFileError) -> Void) throws(InputFileError) -> Separator {
        var parser = Parser(bytes: bytes, path: path)
        return try parser.run(body)
    }

    /// `field` as a finite number, or nil. A decimal comma is accepted unless commas separate fields.
    public func number(_ field: String) -> Double? { Self.number(field, separator: separator) }

    /// `field` as a finite number in text separated by `separator`.
    public static func number(_ field: String, separator: Separator) -> Double? {
        if let v = Double(field) { return v.isFinite ? v : nil }
        guard separator != .comma, field.utf8.filter({ $0 == UInt8(ascii: ",") }).count == 1,
              let v = Double(String(field.map { $0 == "," ? "." : $0 })) else { return nil }
        return v.isFinite ? v : nil
    }

    private struct Parser {
        let bytes: [UInt8]
        let path: String
        var i = 0
        var line = 1
        var separator: Separator?

        init(bytes: [UInt8], path: String) {
            self.bytes = bytes
            self.path = path
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        }

        mutating func run(_ body: (Record, Separator) throws(InputFileError) -> Void) throws(InputFileError) -> Separator {
            while i < bytes.count {
                let startLine = line
                if isCommentOrBlank() { skipLine(); continue }
                if separator == nil { separator = detectSeparator() }
                let sep = separator ?? .comma
                try body(Record(line: startLine, fields: try record(startLine: startLine)), sep)
            }
            return separator ?? .comma
        }

        /// True at a record that holds only spaces, or starts with `#` after spaces.
        func isCommentOrBlank() -> Bool {
            var k = i
            while k < bytes.count, bytes[k] == 0x20 || bytes[k] == 0x09 { k += 1 }
            return k == bytes.count || bytes[k] == UInt8(ascii: "#") || bytes[k] == 0x0A || bytes[k] == 0x0D
        }

        mutating func skipLine() {
            while i < bytes.count, bytes[i] != 0x0A, bytes[i] != 0x0D { i += 1 }
            consumeLineEnd()
        }

        mutating func consumeLineEnd() {
            guard i < bytes.count else { return }
            if bytes[i] == 0x0D, i + 1 < bytes.count, bytes[i + 1] == 0x0A { i += 1 }
            i += 1
            line += 1
        }

        /// The separator of the record starting at `i` (quotes skipped).
        func detectSeparator() -> Separator {
            var k = i, quoted = false
            var comma = false, tab = false
            while k < bytes.count {
                let b = bytes[k]
                if b == UInt8(ascii: "\"") { quoted.toggle() }
                else if !quoted {
                    if b == 0x0A || b == 0x0D { break }
                    if b == UInt8(ascii: ";") { return .semicolon }
                    if b == UInt8(ascii: ",") { comma = true }
                    if b == 0x09 { tab = true }
                }
                k += 1
            }
            return comma ? .comma : tab ? .tab : .spaces
        }

        mutating func record(startLine: Int) throws(InputFileError) -> [String] {
            let sep = separator ?? .comma
            var fields: [String] = []
            var field: [UInt8] = []
            var wasQuoted = false
            func isSeparator(_ b: UInt8) -> Bool {
                switch sep {
                case .comma: b == UInt8(ascii: ",")
                case .semicolon: b == UInt8(ascii: ";")
                case .tab: b == 0x09
                case .spaces: b == 0x20 || b == 0x09
                }
            }
            func finish() {
                var s = String(decoding: field, as: UTF8.self)
                if !wasQuoted { s = s.trimmingSpaces() }
                fields.append(s)
                field.removeAll(keepingCapacity: true)
                wasQuoted = false
            }
            if sep == .spaces { skipSpaces() }
            while i < bytes.count {
                let b = bytes[i]
                if b == 0x0A || b == 0x0D { break }
                if b == UInt8(ascii: "\""), field.allSatisfy({ $0 == 0x20 }) {
                    // A quoted field: up to the closing quote; "" is a quote; separators and line ends are text.
                    field.removeAll(keepingCapacity: true)
                    wasQuoted = true
                    i += 1
                    var closed = false
                    while i < bytes.count {
                        let q = bytes[i]
                        if q == UInt8(ascii: "\"") {
                            if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "\"") { field.append(q); i += 2; continue }
                            i += 1
                            closed = true
                            break
                        }
                        if q == 0x0A || (q == 0x0D && !(i + 1 < bytes.count && bytes[i + 1] == 0x0A)) { line += 1 }
                        field.append(q)
                        i += 1
                    }
                    guard closed else {
                        throw InputFileError(path: path, line: startLine, message: "a quoted field is not closed")
                    }
                    while i < bytes.count, bytes[i] == 0x20 { i += 1 }
                    continue
                }
                if isSeparator(b) {
                    finish()
                    i += 1
                    if sep == .spaces {
                        skipSpaces()
                        if i >= bytes.count || bytes[i] == 0x0A || bytes[i] == 0x0D { break }
                    }
                    continue
                }
                field.append(b)
                i += 1
            }
            finish()
            consumeLineEnd()
            return fields
        }

        mutating func skipSpaces() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 { i += 1 }
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
