import Foundation
import SleepCycleBus
import Testing
@testable import Staging

@Suite struct StagingModelTests {
    /// The Swift port reproduces the training script's whole-night predictions exactly
    /// (Fixtures/staging/*_expected.csv, written by Benchmarks/Scripts/staging/make_fixture.py).
    @Test(arguments: ["full", "hr", "nohr"])
    func reproducesScriptPredictions(set: String) throws {
        let table = try EpochsCSV.load(path: StagingFixtures.path("synthetic_\(set).csv"))
        let expectedText = try String(contentsOfFile: StagingFixtures.path("synthetic_\(set)_expected.csv"), encoding: .utf8)
        let expected = expectedText.split(separator: "\n").dropFirst().map { String($0.split(separator: ",")[1]) }
        let stages = try StagingModel.bundled().stages(for: table).map(\.rawValue)
        #expect(stages.count == 960)
        #expect(stages == expected)
        #expect(Set(stages).count >= 3)
    }

    @Test func picksLargestAvailableInputSet() throws {
        let model = try StagingModel.bundled()
        #expect(Set(model.subModel(for: Set(StagingInput.allCases))!.inputs) == Set(StagingInput.allCases))
        #expect(Set(model.subModel(for: [.timeHours, .count, .cosine, .hr])!.inputs) == [.timeHours, .count, .cosine, .hr])
        #expect(Set(model.subModel(for: [.timeHours, .count, .cosine])!.inputs) == [.timeHours, .count, .cosine])
        #expect(model.subModel(for: [.count, .hr]) == nil)
    }

    @Test func missingTimeIsAnError() throws {
        let table = EpochTable(columns: [.count: [1, 2, 3]])
        #expect(throws: StagingError.self) { try StagingModel.bundled().stages(for: table) }
    }

    @Test func activeNightStartIsAwakeAndQuietMiddleIsAsleep() throws {
        // 6 h: heavy activity for the first 30 min, then quiet.
        let n = 720
        let hours = (0..<n).map { Double($0) / 120 }
        let count = (0..<n).map { $0 < 60 ? 150.0 : 2.0 }
        let table = EpochTable(columns: [.timeHours: hours, .count: count,
                                         .cosine: hours.map { WalchProxies.cosine(hoursSinceStart: $0) }])
        let stages = try StagingModel.bundled().stages(for: table)
        #expect(stages[10] == .awake)
        #expect(stages[200...600].filter { $0 == .awake }.count < 40)
    }

    @Test func zscoreAndWindowsMatchDefinitions() {
        #expect(EpochDesign.zscore([1, 2, 3]) == [-1.224744871391589, 0, 1.224744871391589])
        #expect(EpochDesign.zscore([5, 5]) == [0, 0])
        let table = EpochTable(columns: [.hr: [0, 0, 3, 0, 0]])
        let f: [FeatureDescriptor] = [.init(kind: .zmean, input: .hr, window: 3),
                                      .init(kind: .zpast, input: .hr, window: 2),
                                      .init(kind: .zfuture, input: .hr, window: 2)]
        let rows = EpochDesign.rows(table, features: f, available: 5, rows: 0..<5)
        // z = [-0.5, -0.5, 2, -0.5, -0.5]
        #expect(abs(rows[2][0] - 1.0 / 3) < 1e-12)
        #expect(abs(rows[0][1] - -0.5) < 1e-12)          // clamped to epoch 0
        #expect(abs(rows[1][2] - 0.75) < 1e-12)          // (2 − 0.5) / 2
    }
}
