import Foundation

/// UTC timestamps exactly `YYYY-MM-DDTHH:MM:SS.sssZ` (the JSON contract), formatted and parsed without locale,
/// calendar or time-zone state, so output is deterministic. Civil-date arithmetic after H. Hinnant,
/// "chrono-Compatible Low-Level Date Algorithms" (days_from_civil / civil_from_days).
public enum ISO8601Milliseconds {
    /// Rounds to the nearest millisecond.
    public static func string(from date: Date) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var days = ms / 86_400_000
        var rem = ms % 86_400_000
        if rem < 0 { rem += 86_400_000; days -= 1 }
        let (y, m, d) = civil(fromDays: days)
        let h = rem / 3_600_000, mi = (rem / 60_000) % 60, s = (rem / 1000) % 60, f = rem % 1000
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(h, 2) + ":" + pad(mi, 2) + ":" + pad(s, 2)
            + "." + pad(f, 3) + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS[.fff…]]` followed by `Z` or `±HH:MM` (or `±HHMM`). nil if malformed.
    public static func date(from text: String) -> Date? {
        let c = Array(text.utf8)
        var i = 0
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
        func expect(_ ch: Character) -> Bool {
            guard i < c.count, c[i] == ch.asciiValue! else { return false }
            i += 1; return true
        }
        guard let y = digits(4), expect("-"), let mo = digits(2), expect("-"), let d = digits(2),
              i < c.count, c[i] == UInt8(ascii: "T") || c[i] == UInt8(ascii: " ") else { return nil }
        i += 1
        guard let h = digits(2), expect(":"), let mi = digits(2) else { return nil }
        var s: Int64 = 0, frac = 0.0
        if expect(":") {
            guard let ss = digits(2) else { return nil }
            s = ss
            if expect(".") {
                var scale = 0.1, any = false
                while i < c.count, c[i] >= 48, c[i] <= 57 { frac += Double(c[i] - 48) * scale; scale /= 10; i += 1; any = true }
                guard any else { return nil }
            }
        }
        var offset: Int64 = 0
        if expect("Z") || expect("z") {
        } else if i < c.count, c[i] == UInt8(ascii: "+") || c[i] == UInt8(ascii: "-") {
            let sign: Int64 = c[i] == UInt8(ascii: "+") ? 1 : -1
            i += 1
            guard let oh = digits(2) else { return nil }
            _ = expect(":")
            guard let om = digits(2) else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard i == c.count, (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61,
              d <= daysIn(month: mo, year: y) else { return nil }
        let seconds = days(fromCivil: y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offset
        return Date(timeIntervalSince1970: Double(seconds) + frac)
    }

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

    private static func daysIn(month m: Int64, year y: Int64) -> Int64 {
        switch m {
        case 2: (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func pad(_ v: Int64, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
