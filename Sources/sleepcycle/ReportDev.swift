import ArgumentParser
import Foundation
import SleepCycle
import SleepCycleFormats

/// Hidden developer command: the HTML or CSV report of a result JSON file (`analyze --format json`), without
/// analysing audio. Used by Benchmarks/Scripts/bench_report.sh to measure the report of a generated 8-hour night.
struct ReportDev: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report-dev",
        abstract: "The HTML or CSV report of a result JSON file (developer tool).",
        shouldDisplay: false)

    enum Format: String, ExpressibleByArgument, CaseIterable { case html, csv }

    @Argument(help: "A result as analyze --format json writes it (one session).") var file: String
    @Option(help: "html (default) or csv.") var format: Format = .html
    @Option(help: ArgumentHelp("Write the output to this file ('-': standard output).", valueName: "path"))
    var output: String?

    func run() throws {
        let destination = try OutputTarget.resolve(output, inputs: [file])
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
            throw CLIError(.noInput, "\(MessageText.path(file)): cannot read the file")
        }
        let result: AnalysisResult
        do { result = try JSONDecoder().decode(AnalysisResult.self, from: data) } catch {
            throw CLIError(.badInput, "\(MessageText.path(file)): not a sleepcycle result JSON (analyze --format json)")
        }
        try destination.write(format == .html ? result.htmlReport() : result.epochCSV())
    }
}
