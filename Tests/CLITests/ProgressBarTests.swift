import Testing
@testable import sleepcycle

/// The progress bar never wraps (it flooded narrow terminals), and shows speed and time left when it can.
@Suite struct ProgressBarTests {
    @Test func fitsEveryWidthAndShowsSpeedAndTimeLeft() throws {
        for columns in 1...220 {
            for (done, total) in [(Int64(0), Int64?(480_000_000)), (240_000_000, 480_000_000), (480_000_000, 480_000_000),
                                  (1_000_000, nil)] {
                let label = String(repeating: "n", count: 40)
                guard let line = ProgressBar.line(label: label, done: done, total: total, wallSeconds: 12, columns: columns)
                else { #expect(columns < 9); continue }
                #expect(line.count <= columns - 1, "\(columns): \(line)")
                #expect(!line.contains("\n") && !line.contains("\r"))
            }
        }
        let wide = try #require(ProgressBar.line(label: "night.flac", done: 240_000_000, total: 480_000_000,
                                                 wallSeconds: 10, columns: 120))
        #expect(wide.contains("50 %") && wide.contains("1500× real time") && wide.contains("10 s left") && wide.contains("["),
                "\(wide)")
        let narrow = try #require(ProgressBar.line(label: "night.flac", done: 240_000_000, total: 480_000_000,
                                                   wallSeconds: 10, columns: 30))
        #expect(narrow.hasPrefix("night.flac") && narrow.count <= 29, "\(narrow)")
    }
}
