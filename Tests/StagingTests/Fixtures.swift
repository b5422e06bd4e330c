import Foundation

/// Repository paths for the committed fixtures (Fixtures/staging, made by make_fixture.py).
enum StagingFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static func path(_ name: String) -> String { root.appendingPathComponent("Fixtures/staging/\(name)").path }

    /// Writes `text` to a fresh temporary file and returns its path.
    static func temporary(_ text: String, name: String = "input.csv") throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("staging-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }
}
