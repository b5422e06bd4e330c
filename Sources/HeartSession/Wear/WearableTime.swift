import Foundation

/// The dates of wearable exports that are not ISO 8601 (which `ISO8601Time` reads):
/// * Apple Health `export.xml` and its CSV exports: `2019-09-20 22:01:17 +0200` (or without the offset);
/// * Fitbit's JSON export: `04/22/23 07:00:05` (month/day/two-digit year);
/// * Fitbit CSV (Fitabase): `4/12/2016 7:21:00 AM`, with or without seconds, 12- or 24-hour.
/// A date without an offset is read at `defaultOffsetSeconds` (the recording's).
public enum WearableTime {
    public static func date(_ text: String, defaultOffsetSeconds: Int) -> Date? {
        var fields = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard fields.count >= 2 else { return nil }
        var offset = defaultOffsetSeconds
        if let last = fields.last, last.count == 5, let sign = last.first, sign == "+" || sign == "-",
           let hhmm = Int(last.dropFirst()), last.dropFirst().allSatisfy(\.isNumber) {
            offset = (sign == "-" ? -1 : 1) * ((hhmm / 100) * 3600 + (hhmm % 100) * 60)
            fields.removeLast()
        }
        var pm: Bool?
        if let last = fields.last?.uppercased(), last == "AM" || last == "PM" {
            pm = last == "PM"
            fields.removeLast()
        }
        guard fields.count == 2 else { return nil }
        var year: Int, month: Int, day: Int
        if fields[0].contains("-") {
            let d = fields[0].split(separator: "-").compactMap { Int($0) }
            guard d.count == 3, fields[0].split(separator: "-").count == 3 else { return nil }
            (year, month, day) = (d[0], d[1], d[2])
        } else if fields[0].contains("/") {
            let d = fields[0].split(separator: "/").compactMap { Int($0) }
            guard d.count == 3, fields[0].split(separator: "/").count == 3 else { return nil }
            (month, day, year) = (d[0], d[1], d[2])
            if year < 100 { year += 2000 }
        } else {
            return nil
        }
        let t = fields[1].split(separator: ":")
        guard (2...3).contains(t.count), let h = Int(t[0]), let m = Int(t[1]) else { return nil }
        let seconds = t.count == 3 ? Double(t[2]) : 0
        guard let seconds, seconds >= 0, seconds < 61 else { return nil }
        var hour = h
        if let pm {
            guard (1...12).contains(h) else { return nil }
            hour = h % 12 + (pm ? 12 : 0)
        }
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(m),
              (1900...9999).contains(year) else { return nil }
        var c = DateComponents()
        c.year = year; c.month = month; c.day = day; c.hour = hour; c.minute = m; c.second = 0
        var calendar = Calendar(identifier: .gregorian)
        guard let zone = TimeZone(secondsFromGMT: offset) else { return nil }
        calendar.timeZone = zone
        guard let date = calendar.date(from: c), calendar.component(.day, from: date) == day else { return nil }
        return date.addingTimeInterval(seconds)
    }
}
