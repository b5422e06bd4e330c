import ArgumentParser
import Foundation
import HeartSession

/// Hidden developer command: the time-domain HRV of NN-interval files (ms, one value per line, `#` comments and
/// blank lines skipped), one JSON object per file. Used by Benchmarks/Scripts/hrv/compare.py to compare with the
/// reference libraries.
struct HRVDev: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrv-dev",
        abstract: "Time-domain HRV of NN-interval files in ms, one per line (developer tool).",
        shouldDisplay: false)

    @Argument(help: "NN-interval files (ms, one value per line).")
    var files: [String]

    func run() throws {
        for file in files {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw CLIError(.noInput, "\(file): cannot read the file")
            }
            var nn: [Double] = []
            for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = raw.trimmingCharacters(in: .whitespaces)
                if line.isEmpty || line.hasPrefix("#") { continue }
                guard let value = Double(line), value.isFinite, value > 0 else {
                    throw CLIError(.badInput, "\(file):\(index + 1): '\(line.prefix(40))' is not an interval in ms")
                }
                nn.append(value)
            }
            guard let h = HRV.timeDomain(nn) else {
                throw CLIError(.badInput, "\(file): \(nn.count) intervals, fewer than the \(HRV.minimumIntervals) HRV needs")
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            var object = try JSONSerialization.jsonObject(with: encoder.encode(h)) as? [String: Any] ?? [:]
            object["file"] = file
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}
