import Foundation
import Testing
@testable import EventDetection

@Suite struct ClassifierTests {
    @Test func builtInModelLoadsAndReproducesTheTrainingScript() throws {
        let model = try NeuralSegmentClassifier.builtIn()
        #expect(!ModelParityVectors.cases.isEmpty)
        for c in ModelParityVectors.cases {
            let p = model.classify(SegmentFeatures(values: c.features, durationSec: 1))
            #expect(abs(p.values.reduce(0, +) - 1) < 1e-9)
            for (a, b) in zip(p.values, c.probabilities) { #expect(abs(a - b) < 1e-7) }
        }
    }

    @Test func rejectsModelsThatDoNotFit() throws {
        #expect(throws: DetectionError.self) { try NeuralSegmentClassifier(json: Data("{}".utf8), path: "m.json") }
        let wrongFeatures = """
        {"format":"sleepcycle-event-model-1","classes":["none","snoring","talking","coughing","movement"],
         "features":["x"],"mean":[0],"scale":[1],"layers":[]}
        """
        do {
            _ = try NeuralSegmentClassifier(json: Data(wrongFeatures.utf8), path: "m.json")
            Issue.record("accepted a model with the wrong feature names")
        } catch let e as DetectionError {
            #expect(e.description.hasPrefix("m.json: "))
            #expect(!e.description.contains("\n"))
        }
        #expect(throws: DetectionError.self) {
            try NeuralSegmentClassifier(contentsOf: URL(fileURLWithPath: "/nonexistent/model.json"))
        }
    }

    @Test func logisticRegressionScoringMatchesTheFormula() throws {
        // One layer: p = softmax((W (x - mean)/scale + b) / T).
        let n = SegmentFeatures.count
        let names = SegmentFeatures.names.map { "\"\($0)\"" }.joined(separator: ",")
        var w = [[Double]](repeating: [Double](repeating: 0, count: n), count: 5)
        w[1][0] = 2; w[2][1] = -1
        let json = """
        {"format":"sleepcycle-event-model-1","classes":["none","snoring","talking","coughing","movement"],
         "features":[\(names)],"mean":\([Double](repeating: 1, count: n)),"scale":\([Double](repeating: 2, count: n)),
         "layers":[{"weights":\(w),"bias":[0,0,0,0,0.5]}],"temperature":2}
        """
        let m = try NeuralSegmentClassifier(json: Data(json.utf8))
        var x = [Float](repeating: 1, count: n); x[0] = 3; x[1] = 5
        let p = m.classify(SegmentFeatures(values: x, durationSec: 1)).values
        let z = [0.0, 2 * 1, -1 * 2, 0, 0.5].map { $0 / 2 }
        let e = z.map { exp($0) }
        let s = e.reduce(0, +)
        for i in 0..<5 { #expect(abs(p[i] - e[i] / s) < 1e-12) }
    }
}
