import ArgumentParser
import Foundation
import Staging

/// `sleepcycle stage --epochs FILE.csv [--format json|csv]`: the staging model on per-epoch features.
struct Stage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sleep stages from per-epoch features (Walch 2019: time_hours,count,hr,cosine,circadian).",
        discussion: """
            FILE.csv has a header row naming any of time_hours, count, hr, cosine, circadian, then one row per \
            30-s epoch. Missing columns mean that input is absent; time_hours and cosine are required. Stages \
            come from the whole-night model (logistic regression + Viterbi); see \
            docs/0007-staging-statistics-alarm.md.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, csv }

    @Option(name: .long, help: "Per-epoch features CSV.")
    var epochs: String

    @Option(name: .long, help: "Output format: json or csv.")
    var format: Format = .json

    func run() async throws {
        let stages: [String]
        let hours: [Double]
        do {
            let table = try EpochsCSV.load(path: epochs)
            guard let t = table[.timeHours] else {
                throw StagingError(path: epochs, line: 1, message: "the time_hours column is required")
            }
            hours = t
            stages = try StagingModel.bundled().stages(for: table).map(\.rawValue)
        } catch let error as StagingError {
            var e = error
            if e.path == nil { e.path = epochs }
            FileHandle.standardError.write(Data("sleepcycle stage: \(e)\n".utf8))
            throw ExitCode(2)
        }
        var out = ""
        switch format {
        case .csv:
            out = "time_hours,stage\n"
            for (h, s) in zip(hours, stages) { out += "\(h),\(s)\n" }
        case .json:
            out = "{\"epochs\": ["
            out += zip(hours, stages).map { "{\"time_hours\": \($0), \"stage\": \"\($1)\"}" }.joined(separator: ", ")
            out += "]}\n"
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}
