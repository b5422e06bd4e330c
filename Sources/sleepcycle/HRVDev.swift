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

    @Flag(help: "Correct missed, extra and ectopic beats first (ArtefactCorrection) and print what was corrected.")
    var correct = false

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
            var counts: ArtefactCounts?
            if correct { (nn, counts) = { let r = ArtefactCorrection.correct(nn); return (r.nn, r.counts) }() }
            guard let h = HRV.timeDomain(nn) else {
                throw CLIError(.badInput, "\(file): \(nn.count) intervals, fewer than the \(HRV.minimumIntervals) HRV needs")
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            var object = try JSONSerialization.jsonObject(with: encoder.encode(h)) as? [String: Any] ?? [:]
            object["file"] = file
            if let f = HRV.frequencyDomain(nn) {
                object["frequency"] = ["vlf": f.vlf, "lf": f.lf, "hf": f.hf, "lfHfRatio": f.lfHfRatio, "lfnu": f.lfnu,
                                       "hfnu": f.hfnu, "totalPower": f.totalPower]
            }
            if let counts {
                object["corrected"] = ["missed": counts.missed, "extra": counts.extra, "ectopic": counts.ectopic,
                                       "outliers": counts.outliers]
            }
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
    }
}
