import Foundation

/// Repository paths for the committed fixtures (Fixtures/staging, made by make_fixture.py).
enum StagingFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static func path(_ name: String) -> String { root.appendingPathComponent("Fixtures/staging/\(name)").path }

}

/// Temporary input files of one test, in a folder removed with them when the value goes away (a suite holds one
/// per test: Swift Testing makes a suite instance per test).
final class TemporaryFiles {
    let url: URL
    private var count = 0
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("staging-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    /// Writes `text` to a new file and returns its path.
    func write(_ text: String, name: String = "input.csv") throws -> String {
        count += 1
        let file = url.appendingPathComponent("\(count)-\(name)")
        try Data(text.utf8).write(to: file)
        return file.path
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}
