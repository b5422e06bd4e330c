import Foundation
import SleepCycle
import SleepCycleFormats

/// The result of `analyze`, `record` and `sessions show|export` in the format asked for (`--format`), with the
/// HTML report's clips linked from where the report is written.
enum ReportFormat {
    static func render(_ result: AnalysisResult, format: Analyze.Format, clips: HTMLReportOptions) -> String {
        switch format {
        case .text: result.textSummary()
        case .json: result.jsonString()
        case .csv: result.epochCSV()
        case .html: result.htmlReport(options: clips)
        }
    }

    static func render(_ two: SeparatedAnalysisResult, format: Analyze.Format, clips: HTMLReportOptions) -> String {
        switch format {
        case .text: two.textSummary()
        case .json: two.jsonString()
        case .csv: two.epochCSV()
        case .html: two.htmlReport(options: clips)
        }
    }

    /// Where the report plays an event's clip from: the clip's file (found under `clipsDirectory`, or among
    /// `clipFiles`, the absolute paths the store indexed), relative to the report's folder when the report is
    /// written to a file, else as an absolute `file:` URL. Encrypted clips (`.flac.enc`) get no player, nor do
    /// files that are not there (a stored night's clip removed since), which the report says.
    ///
    /// A report written through a symbolic link is opened by either name, and a browser resolves relative links
    /// from the name it opened: its links are absolute (relative to the link's target, they failed from the link).
    static func clipLinks(clipsDirectory: String?, clipFiles: [String] = [], output: OutputTarget) -> HTMLReportOptions {
        let base: URL? = {
            guard case .regularFile(let path, _) = output.destination else { return nil }
            let file = URL(fileURLWithPath: path).standardizedFileURL
            guard file == URL(fileURLWithPath: output.name).standardizedFileURL else { return nil }
            return file.deletingLastPathComponent()
        }()
        let directory = clipsDirectory.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL }
        @Sendable func file(_ clip: EventClip) -> URL? {
            if let directory { return directory.appendingPathComponent(clip.path).standardizedFileURL }
            return clipFiles.first(where: { $0.hasSuffix("/" + clip.path) }).map { URL(fileURLWithPath: $0).standardizedFileURL }
        }
        @Sendable func missing(_ clip: EventClip) -> Bool {
            file(clip).map { !PathEncoding.exists($0.path) } ?? false
        }
        return HTMLReportOptions(clipURL: { clip in
            guard !clip.path.hasSuffix(".enc"), !missing(clip), let file = file(clip) else { return nil }
            guard let base else { return "file://" + PathEncoding.urlEncoded(file.path, keepingSlashes: true) }
            return relativePath(from: base, to: file)
        }, clipMissing: missing)
    }

    /// `file` as a URL path relative to the folder `base` (both absolute), percent-encoded.
    static func relativePath(from base: URL, to file: URL) -> String {
        let from = base.pathComponents, to = file.pathComponents
        var common = 0
        while common < from.count, common < to.count - 1, from[common] == to[common] { common += 1 }
        let parts = Array(repeating: "..", count: from.count - common) + to[common...]
        return parts.map { PathEncoding.urlEncoded($0) }.joined(separator: "/")
    }
}
