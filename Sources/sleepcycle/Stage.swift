import ArgumentParser
import Foundation
import SleepCycleFormats
import Staging

/// `sleepcycle stage --epochs FILE.csv [--format json|csv]`: the staging model on per-epoch features.
struct Stage: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sleep stages from per-epoch features (Walch 2019: time_hours,count,hr,cosine,circadian).",
        discussion: """
            FILE.csv has a header row naming any of time_hours, count, hr, cosine, circadian, then one row per \
            30-s epoch (',' ';' or tab separated, quoted fields allowed). Missing columns mean that input is \
            absent; time_hours and cosine are required. Stages come from the whole-night model (gradient-boosted \
            trees with heart rate, logistic regression without; then Viterbi); see docs/0007-staging-statistics-alarm.md.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case json, csv }

    @Option(name: .long, help: "Per-epoch features CSV ('-': standard input).", completion: .file())
    var epochs: String

    @Option(name: .long, help: "Output format: json or csv.")
    var format: Format = .json

    @Option(help: ArgumentHelp("Write the output to this file ('-': standard output, the default).", valueName: "path"),
            completion: .file())
    var output: String?

    @OptionGroup var diagnostics: DiagnosticOptions

    func run() throws {
        diagnostics.bootstrap()
        let destination = try OutputTarget.resolve(output, inputs: [epochs])
        let table = try EpochsCSV.load(path: epochs)
        guard let hours = table[.timeHours] else {
            throw InputFileError(path: epochs, line: 1, message: "the time_hours column is required")
        }
        guard table[.cosine] != nil else {
            throw InputFileError(path: epochs, line: 1, message: "the cosine column is required")
        }
        let stages = try StagingModel.bundled().stages(for: table).map(\.rawValue)
        // Built in one string, row after row (no array of row strings beside it).
        var out = ""
        out.reserveCapacity(stages.count * 48 + 32)
        switch format {
        case .csv:
            out += "time_hours,stage\n"
            for (h, s) in zip(hours, stages) { out += "\(h),\(s)\n" }
        case .json:
            out += "{\"epochs\": ["
            for (i, (h, s)) in zip(hours, stages).enumerated() {
                out += (i == 0 ? "" : ", ") + "{\"time_hours\": \(h), \"stage\": \"\(s)\"}"
            }
            out += "]}\n"
        }
        try destination.write(out)
    }
}
