import Foundation

/// An instant written in ISO 8601 / RFC 3339 extended format, with the UTC offset it was written in: the one
/// date-time type of sleepcycle (`--start`, wearable CSV times, the JSON's timestamps, the text summary's clock
/// times).
///
/// Parsing accepts `YYYY-MM-DDTHH:MM[:SS[.fraction]]` (a space may replace `T`) followed by `Z`, `±HH:MM`,
/// `±HHMM` or `±HH`; offsets are limited to ±18:00 (the range of real and historical zone offsets, as in
/// java.time's `ZoneOffset`). A text without an offset is accepted only when the caller supplies a default offset
/// (e.g. a wearable export's local times, read in the recording's offset). Formatting and parsing use no locale,
/// calendar or time-zone database, so output is deterministic. Civil-date arithmetic after H. Hinnant,
/// "chrono-Compatible Low-Level Date Algorithms" (`days_from_civil` / `civil_from_days`).
public struct ISO8601Time: Sendable, Hashable, CustomStringConvertible {
    public var date: Date
    /// Offset of the written clock time from UTC, seconds east of Greenwich (`+01:00` → 3600).
    public var utcOffsetSeconds: Int

    /// Largest accepted offset magnitude (18 h).
    public static let maxOffsetSeconds = 18 * 3600

    public init(date: Date, utcOffsetSeconds: Int = 0) {
        self.date = date
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// Why a text is not an ISO 8601 time; `description` says what was expected.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// Parses `text`; nil if malformed (use `parse(_:defaultOffsetSeconds:)` for the reason).
    public init?(_ text: String, defaultOffsetSeconds: Int? = nil) {
        guard let t = try? Self.parse(text, defaultOffsetSeconds: defaultOffsetSeconds) else { return nil }
        self = t
    }

    /// Parses `text`, throwing a `ParseError` that says what is wrong. `defaultOffsetSeconds` is used when the
    /// text has no offset; without it an offset is required.
    public static func parse(_ text: String, defaultOffsetSeconds: Int? = nil) throws(ParseError) -> ISO8601Time {
        let c = Array(text.utf8)
        var i = 0
        let example = "an ISO 8601 time such as 2026-01-01T23:00:00+01:00"
        func fail(_ why: String) -> ParseError { ParseError(description: "\(why) (expected \(example))") }
        func digits(_ n: Int) -> Int64? {
            guard i + n <= c.count else { return nil }
            var v: Int64 = 0
            for k in i..<(i + n) {
                guard c[k] >= 48, c[k] <= 57 else { return nil }
                v = v * 10 + Int64(c[k] - 48)
            }
            i += n
            return v
        }
        func accept(_ ch: UInt8) -> Bool {
            guard i < c.count, c[i] == ch else { return false }
            i += 1
            return true
        }
        guard let y = digits(4), accept(UInt8(ascii: "-")), let mo = digits(2), accept(UInt8(ascii: "-")),
              let d = digits(2) else { throw fail("not a date YYYY-MM-DD") }
        guard accept(UInt8(ascii: "T")) || accept(UInt8(ascii: "t")) || accept(UInt8(ascii: " ")) else {
            throw fail("no time of day after the date")
        }
        guard let h = digits(2), accept(UInt8(ascii: ":")), let mi = digits(2) else {
            throw fail("not a time of day HH:MM")
        }
        var s: Int64 = 0
        var nanos: Int64 = 0
        if accept(UInt8(ascii: ":")) {
            guard let ss = digits(2) else { throw fail("seconds must be two digits") }
            s = ss
            if accept(UInt8(ascii: ".")) || accept(UInt8(ascii: ",")) {
                var count = 0
                while i < c.count, c[i] >= 48, c[i] <= 57 {
                    if count < 9 { nanos = nanos * 10 + Int64(c[i] - 48) }
                    count += 1
                    i += 1
                }
                guard count > 0 else { throw fail("no digits after the decimal point") }
                for _ in min(count, 9)..<9 { nanos *= 10 }
            }
        }
        var offset: Int64
        if accept(UInt8(ascii: "Z")) || accept(UInt8(ascii: "z")) {
            offset = 0
        } else if i < c.count, c[i] == UInt8(ascii: "+") || c[i] == UInt8(ascii: "-") {
            let sign: Int64 = c[i] == UInt8(ascii: "+") ? 1 : -1
            i += 1
            guard let oh = digits(2) else { throw fail("the UTC offset must be ±HH:MM, ±HHMM or ±HH") }
            var om: Int64 = 0
            if i < c.count {
                _ = accept(UInt8(ascii: ":"))
                guard let m = digits(2) else { throw fail("the UTC offset must be ±HH:MM, ±HHMM or ±HH") }
                om = m
            }
            guard om < 60, oh * 3600 + om * 60 <= Int64(maxOffsetSeconds) else {
                throw fail("UTC offset \(sign < 0 ? "-" : "+")\(pad(oh, 2)):\(pad(om, 2)) is out of range "
                    + "(−18:00 to +18:00)")
            }
            offset = sign * (oh * 3600 + om * 60)
        } else if i == c.count, let fallback = defaultOffsetSeconds {
            offset = Int64(fallback)
        } else if i == c.count {
            throw fail("no UTC offset: add Z or an offset such as +01:00")
        } else {
            throw fail("unexpected text after the time")
        }
        guard i == c.count else { throw fail("unexpected text after the time") }
        guard (1...12).contains(mo) else { throw fail("month \(mo) is out of range") }
        guard (1...daysIn(month: mo, year: y)).contains(d) else { throw fail("day \(d) is not in month \(mo)") }
        guard h < 24, mi < 60, s < 61 else { throw fail("time of day \(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)) is out of range") }
        let seconds = days(fromCivil: y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset
        return ISO8601Time(date: Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9),
                           utcOffsetSeconds: Int(offset))
    }

    /// `YYYY-MM-DDTHH:MM:SS.sss±HH:MM` in this time's own offset (`Z` for UTC).
    public var description: String { Self.string(from: date, utcOffsetSeconds: utcOffsetSeconds) }

    /// A fixed-offset time zone of this offset.
    public var timeZone: TimeZone { TimeZone(secondsFromGMT: utcOffsetSeconds) ?? TimeZone(identifier: "UTC")! }

    // MARK: - Formatting

    /// The JSON contract's timestamp: UTC, exactly `YYYY-MM-DDTHH:MM:SS.sssZ`, rounded to the millisecond.
    public static func utcString(from date: Date) -> String { string(from: date, utcOffsetSeconds: 0) }

    /// `YYYY-MM-DDTHH:MM:SS.sss` followed by `Z` (offset 0) or `±HH:MM`, the clock time in that offset.
    public static func string(from date: Date, utcOffsetSeconds offset: Int) -> String {
        let p = LocalParts(date: date, utcOffsetSeconds: offset)
        return pad(p.year, 4) + "-" + pad(p.month, 2) + "-" + pad(p.day, 2) + "T" + p.clock(milliseconds: true)
            + offsetString(offset)
    }

    /// `Z` for 0, else `±HH:MM`.
    public static func offsetString(_ seconds: Int) -> String {
        guard seconds != 0 else { return "Z" }
        let a = abs(seconds)
        return (seconds < 0 ? "-" : "+") + pad(Int64(a / 3600), 2) + ":" + pad(Int64(a % 3600 / 60), 2)
    }

    /// The civil date and clock time of an instant in a fixed offset, rounded to the millisecond.
    public struct LocalParts: Sendable, Hashable {
        public var year: Int64, month: Int64, day: Int64
        public var hour: Int64, minute: Int64, second: Int64, millisecond: Int64

        public init(date: Date, utcOffsetSeconds: Int) {
            let total = date.timeIntervalSince1970 * 1000 + Double(utcOffsetSeconds) * 1000
            // Beyond ±2^53 ms (±285,000 years) a Double no longer holds whole milliseconds; clamp instead of trapping.
            let ms = total.isFinite ? Int64(max(-9e15, min(9e15, total.rounded()))) : 0
            var days = ms / 86_400_000
            var rem = ms % 86_400_000
            if rem < 0 { rem += 86_400_000; days -= 1 }
            (year, month, day) = ISO8601Time.civil(fromDays: days)
            hour = rem / 3_600_000
            minute = rem / 60_000 % 60
            second = rem / 1000 % 60
            millisecond = rem % 1000
        }

        /// `YYYY-MM-DD`.
        public var dateString: String { pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) }

        /// `HH:MM:SS` or `HH:MM:SS.sss`.
        public func clock(milliseconds: Bool = false) -> String {
            pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2) + (milliseconds ? "." + pad(millisecond, 3) : "")
        }
    }

    // MARK: - Civil calendar

    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func daysIn(month m: Int64, year y: Int64) -> Int64 {
        switch m {
        case 2: (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// `v` in decimal, left-padded with zeros to `width` digits (a sign, if any, comes first).
@inline(__always)
func pad(_ v: Int64, _ width: Int) -> String {
    let s = String(v.magnitude)
    let digits = s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    return v < 0 ? "-" + digits : digits
}
