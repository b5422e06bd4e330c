import Foundation
import SleepCycle
import SleepCycleFormats

/// A one-line progress bar on standard error, redrawn at most every 0.1 s (only when enabled: stderr is a
/// terminal and neither --no-progress nor --quiet was given). The line never exceeds the terminal's width, so it
/// never wraps: `night.flac [#####-----] 52 %  3 h 10 min  2400× real time  8 s left`, parts dropped from the right
/// as the terminal narrows.
final class ProgressBar: @unchecked Sendable {
    let enabled: Bool
    private let label: String
    private var lastDraw = ContinuousClock.now
    private let began = ContinuousClock.now
    private var drawn = false

    init(enabled: Bool, label: String) {
        self.enabled = enabled
        let bytes = PathEncoding.bytes(label)
        let base = bytes.split(separator: UInt8(ascii: "/")).last.map { PathEncoding.string(fromBytes: $0) } ?? label
        self.label = MessageText.field(base, limit: 40)
    }

    /// `done` / `total` analysis samples (total nil when unknown).
    func update(done: Int64, total: Int64?) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard drawn == false || now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = now
        draw(done: done, total: total, elapsed: now - began)
    }

    func finish() { clear() }

    func clear() {
        guard enabled, drawn else { return }
        StandardError.writeRaw("\r\u{1B}[2K")
        drawn = false
    }

    /// The terminal's width in columns (80 when unknown).
    static func columns() -> Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }

    private func draw(done: Int64, total: Int64?, elapsed: Duration) {
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        guard let text = Self.line(label: label, done: done, total: total, wallSeconds: wall, columns: Self.columns())
        else { return }
        StandardError.writeRaw("\r\u{1B}[2K" + text)
        drawn = true
    }

    /// The bar's text for a terminal of `columns` columns: at most `columns − 1` characters (the last column would
    /// wrap on some terminals), nil when even the label does not fit.
    static func line(label: String, done: Int64, total: Int64?, wallSeconds wall: Double, columns: Int) -> String? {
        let width = columns - 1
        guard width >= 8 else { return nil }
        let audioSeconds = Double(done) / 16_000
        let speed = wall > 0.2 ? audioSeconds / wall : nil
        var parts: [String] = []
        var fraction: Double?
        if let total, total > 0 { fraction = min(1, max(0, Double(done) / Double(total))) }
        if let fraction { parts.append(String(format: "%3d %%", Int(fraction * 100))) }
        parts.append(duration(audioSeconds))
        if let speed { parts.append(speed >= 10 ? "\(Int(speed))× real time" : String(format: "%.1f× real time", speed)) }
        if fraction != nil, let speed, speed > 0, let total {
            parts.append(duration(Double(max(0, total - done)) / 16_000 / speed) + " left")
        }
        // Label, then a bar that takes what the parts leave, then as many parts as fit.
        var line = label
        var tail = ""
        for part in parts where line.count + tail.count + 2 + part.count <= width { tail += "  " + part }
        let room = width - line.count - tail.count - 3
        if let fraction, room >= 10 {
            let barWidth = min(30, room)
            let filled = Int(fraction * Double(barWidth))
            line += " [" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
        }
        return String((line + tail).prefix(width))
    }

    /// `45 s`, `12 min`, `3 h 10 min`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600) h \(s % 3600 / 60) min" : s >= 60 ? "\(s / 60) min" : "\(s) s"
    }
}
