import Foundation
import Testing

/// The examples in README.md, docs/cli.md and docs/json.md are the real output of the built binary: each block
/// that follows a line `<!-- output of: sleepcycle ARGS -->` is what `sleepcycle ARGS` prints when run from the
/// repository's root. A stale block is rewritten in place and the test fails, so the change shows up in
/// `git diff` to be committed.
@Suite struct DocumentationExamplesTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let marker = "<!-- output of: sleepcycle "

    @Test(arguments: ["README.md", "docs/cli.md", "docs/json.md"])
    func examplesAreTheBinarysOutput(_ file: String) throws {
        let url = Self.repo.appendingPathComponent(file)
        let text = try String(contentsOf: url, encoding: .utf8)
        var lines = text.components(separatedBy: "\n")
        var examples = 0
        var stale: [String] = []
        var i = 0
        while i < lines.count {
            defer { i += 1 }
            guard lines[i].hasPrefix(Self.marker), let close = lines[i].range(of: " -->") else { continue }
            let command = String(lines[i][lines[i].index(lines[i].startIndex, offsetBy: Self.marker.count)..<close.lowerBound])
            let arguments = command.split(separator: " ").map(String.init)
            // The fenced block right after the marker.
            guard i + 1 < lines.count, lines[i + 1].hasPrefix("```"),
                  let end = lines[(i + 2)...].firstIndex(where: { $0 == "```" }) else {
                Issue.record("\(file): no fenced block after '\(lines[i])'")
                continue
            }
            let run = try BuiltBinary.run(arguments, directory: Self.repo)
            #expect(run.status == 0, "\(file): sleepcycle \(command) failed: \(run.stderr)")
            var output = run.stdout
            if output.hasSuffix("\n") { output.removeLast() }
            let expected = output.components(separatedBy: "\n")
            if Array(lines[(i + 2)..<end]) != expected {
                stale.append(command)
                lines.replaceSubrange((i + 2)..<end, with: expected)
            }
            examples += 1
        }
        #expect(examples > 0, "\(file) has no generated examples")
        if !stale.isEmpty {
            try lines.joined(separator: "\n").write(to: url, atomically: true, encoding: .utf8)
            Issue.record("\(file): examples regenerated for \(stale.map { "'sleepcycle \($0)'" }.joined(separator: ", ")); review and commit the change")
        }
    }
}
