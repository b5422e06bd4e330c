import Foundation
import SleepCycle

/// A one-line progress bar on standard error, redrawn at most every 0.1 s (only when enabled: stderr is a
/// terminal and --no-progress was not given).
final class ProgressBar: @unchecked Sendable {
    let enabled: Bool
    private let label: String
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(enabled: Bool, label: String) {
        self.enabled = enabled
        self.label = (label as NSString).lastPathComponent
    }

    /// `done` / `total` analysis samples (total nil when unknown).
    func update(done: Int64, total: Int64?) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        draw(done: done, total: total)
    }

    func finish() {
        guard enabled, drawn else { return }
        clear()
    }

    func clear() {
        guard enabled, drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
        drawn = false
    }

    private func draw(done: Int64, total: Int64?) {
        let seconds = Double(done) / 16_000
        var line = "\r\u{1B}[2K\(label) "
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            let width = 30
            let filled = Int(fraction * Double(width))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            line += String(format: "%3d %%", Int(fraction * 100))
        }
        line += String(format: "  %.0f min analysed", seconds / 60)
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }
}
