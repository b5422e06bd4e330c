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

    @Test func heartRateContextFeaturesMatchDefinitions() {
        let table = EpochTable(columns: [.hr: [0, 0, 3, 0, 0]])
        let f: [FeatureDescriptor] = [.init(kind: .zmax, input: .hr, window: 3),
                                      .init(kind: .zmin, input: .hr, window: 3),
                                      .init(kind: .zdmed, input: .hr, window: 3),
                                      .init(kind: .zslope, input: .hr, window: 1),
                                      .init(kind: .rank, input: .hr, window: 1),
                                      .init(kind: .rank, input: .hr, window: 3)]
        let rows = EpochDesign.rows(table, features: f, available: 5, rows: 0..<5)
        // z = [-0.5, -0.5, 2, -0.5, -0.5]; ranks = [0.4, 0.4, 0.9, 0.4, 0.4]
        #expect(rows[1][0] == 2)
        #expect(rows[2][1] == -0.5)
        #expect(rows[2][2] == 2.5)                        // 2 − median(−0.5, 2, −0.5)
        #expect(rows[1][3] == 2.5)                        // z[2] − z[0]
        #expect(rows[0][3] == 0)                          // clamped: z[1] − z[0]
        #expect(rows[2][4] == 0.9 && rows[0][4] == 0.4)   // (4 + 1/2) / 5, (0 + 4/2) / 5
        #expect(abs(rows[1][5] - 1.7 / 3) < 1e-12)
        // Online count prior: 2 extra zeros, never above a value.
        #expect(EpochDesign.percentileRank([0, 2], quietPrior: 2) == [0.375, 0.875])
    }

    /// A one-tree model file: loads, walks `x ≤ threshold` to the left; malformed trees and windows are rejected.
    @Test func treeModelFileLoadsAndRejectsMalformedOnes() throws {
        func file(nodes: String = "x0<=1.5:2 0.25 -0.25", window: Int = 0, kind: String = "raw") -> Data {
            Data("""
            {"format": 2, "stages": ["awake", "light", "deep", "rem"], "models": [{
              "inputs": ["time_hours", "cosine"],
              "features": [{"kind": "\(kind)", "input": "time_hours", "window": \(window)}],
              "classifier": "gbt", "baseline": [0, 0, 0, 0], "trees": [{"class": 1, "nodes": "\(nodes)"}],
              "prior": [0.25, 0.25, 0.25, 0.25], "initial": [0.25, 0.25, 0.25, 0.25],
              "transition": [[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]],
              "prior_exponent": 0.5, "emission_exponent": 0.5}]}
            """.utf8)
        }
        let sub = try #require(StagingModel(jsonData: file()).subModels.first)
        let e = Foundation.exp(0.25)
        #expect(abs(sub.posterior([1.5])[1] - e / (e + 3)) < 1e-15)        // 1.5 ≤ 1.5: left leaf
        #expect(abs(sub.posterior([2.0])[1] - 1 / e / (1 / e + 3)) < 1e-15)
        #expect(throws: (any Error).self) { try StagingModel(jsonData: file(nodes: "x1<=1.5:2 0.25 -0.25")) }
        #expect(throws: (any Error).self) { try StagingModel(jsonData: file(nodes: "x0<=1.5:3 0.25 -0.25")) }
        #expect(throws: (any Error).self) { try StagingModel(jsonData: file(nodes: "x0<=1.5:2 0.25")) }
        #expect(throws: StagingError.self) { try StagingModel(jsonData: file(window: 4, kind: "zmax")) }
    }
}
