import Foundation
import Testing

/// Runs the built `sleepcycle stage` binary (found by walking up from the test bundle to the products dir).
@Suite final class StageCommandTests {
    /// This test's files (removed after it).
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("stage-cli") }

    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func run(_ arguments: [String]) throws -> BuiltBinary.Run {
        try BuiltBinary.run(arguments)
    }

    static func fixture(_ name: String) -> String { repo.appendingPathComponent("Fixtures/staging/\(name)").path }

    static func expectedStages(_ set: String) throws -> [String] {
        try String(contentsOfFile: fixture("synthetic_\(set)_expected.csv"), encoding: .utf8)
            .split(separator: "\n").dropFirst().map { String($0.split(separator: ",")[1]) }
    }

    @Test func jsonByDefault() throws {
        let r = try Self.run(["stage", "--epochs", Self.fixture("synthetic_full.csv")])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let epochs = object["epochs"] as! [[String: Any]]
        #expect(epochs.count == 960)
        #expect(epochs.map { $0["stage"] as! String } == (try Self.expectedStages("full")))
        #expect(epochs[1]["time_hours"] as! Double == 0.008333)
        #expect(Set(object.keys) == ["epochs"])
    }

    @Test func csvFormat() throws {
        let r = try Self.run(["stage", "--epochs", Self.fixture("synthetic_nohr.csv"), "--format", "csv"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.first == "time_hours,stage")
        #expect(lines.count == 961)
        #expect(lines.dropFirst().map { String($0.split(separator: ",")[1]) } == (try Self.expectedStages("nohr")))
        #expect(lines[1] == "0.0,\(try Self.expectedStages("nohr")[0])")
    }

    @Test func badCSVIsOneLineNamingFileAndLine() throws {
        let dir = temp.url
        let path = dir.appendingPathComponent("bad.csv").path
        try Data("time_hours,count,cosine\n0,1,-0.25\n0.0083,x,-0.26\n".utf8).write(to: URL(fileURLWithPath: path))
        let r = try Self.run(["stage", "--epochs", path])
        #expect(r.status != 0)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(r.stderr.contains("\(path):3:"))
    }

    @Test func missingFileAndMissingTime() throws {
        let r = try Self.run(["stage", "--epochs", "/nonexistent/epochs.csv"])
        #expect(r.status != 0 && r.stderr.contains("/nonexistent/epochs.csv"))
        let dir = temp.url
        let path = dir.appendingPathComponent("notime.csv").path
        try Data("count,hr\n1,0.5\n".utf8).write(to: URL(fileURLWithPath: path))
        let t = try Self.run(["stage", "--epochs", path])
        #expect(t.status != 0 && t.stderr.contains("\(path):1: the time_hours column is required"))
    }

    @Test func rejectsUnknownFormat() throws {
        let r = try Self.run(["stage", "--epochs", Self.fixture("synthetic_full.csv"), "--format", "xml"])
        #expect(r.status != 0)
    }
}
