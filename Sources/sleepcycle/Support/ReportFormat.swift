import Foundation
import SleepCycle

/// The result of `analyze`, `record` and `sessions show|export` in the format asked for (`--format`), with the
/// HTML report's clips linked from where the report is written.
enum ReportFormat {
    static func render(_ result: AnalysisResult, format: Analyze.Format, clipURL: @escaping @Sendable (EventClip) -> String?) -> String {
        switch format {
        case .text: result.textSummary()
        case .json: result.jsonString()
        case .csv: result.epochCSV()
        case .html: result.htmlReport(options: HTMLReportOptions(clipURL: clipURL))
        }
    }

    static func render(_ two: SeparatedAnalysisResult, format: Analyze.Format,
                       clipURL: @escaping @Sendable (EventClip) -> String?) -> String {
        switch format {
        case .text: two.textSummary()
        case .json: two.jsonString()
        case .csv: two.epochCSV()
        case .html: two.htmlReport(options: HTMLReportOptions(clipURL: clipURL))
        }
    }

    /// Where the report plays an event's clip from: the clip's file (found under `clipsDirectory`, or among
    /// `clipFiles`, the absolute paths the store indexed), relative to the report's folder when the report is
    /// written to a file, else as an absolute `file:` URL. Encrypted clips (`.flac.enc`) get no player.
    ///
    /// A report written through a symbolic link is opened by either name, and a browser resolves relative links
    /// from the name it opened: its links are absolute (relative to the link's target, they failed from the link).
    static func clipLinks(clipsDirectory: String?, clipFiles: [String] = [], output: OutputTarget)
        -> @Sendable (EventClip) -> String? {
        let base: URL? = {
            guard case .regularFile(let path, _) = output.destination else { return nil }
            let file = URL(fileURLWithPath: path).standardizedFileURL
            guard file == URL(fileURLWithPath: output.name).standardizedFileURL else { return nil }
            return file.deletingLastPathComponent()
        }()
        let directory = clipsDirectory.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL }
        return { clip in
            guard !clip.path.hasSuffix(".enc") else { return nil }
            let file: URL
            if let directory {
                file = directory.appendingPathComponent(clip.path).standardizedFileURL
            } else if let found = clipFiles.first(where: { $0.hasSuffix("/" + clip.path) }) {
                file = URL(fileURLWithPath: found).standardizedFileURL
            } else {
                return nil
            }
            guard let base else { return file.absoluteString }
            return relativePath(from: base, to: file)
        }
    }

    /// `file` as a URL path relative to the folder `base` (both absolute), percent-encoded.
    static func relativePath(from base: URL, to file: URL) -> String {
        let from = base.pathComponents, to = file.pathComponents
        var common = 0
        while common < from.count, common < to.count - 1, from[common] == to[common] { common += 1 }
        let parts = Array(repeating: "..", count: from.count - common) + to[common...]
        return parts.map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/", ";", "?"])) ?? $0 }
            .joined(separator: "/")
    }
}
