import Foundation
import Testing
@testable import EventDetection

@Suite struct ClassifierTests {
    @Test func builtInModelLoadsAndReproducesTheTrainingScript() throws {
        let model = try SegmentModel.builtIn()
        // The segment stage is blend.py's: 300 rounds of snoring's trees from the partner mix, of none's from all
        // three mixes, and of talking's, coughing's and movement's from the plain and the night-mic mixes each.
        #expect((model as? TreeEnsembleClassifier)?.treeCount == 3_000)
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

    /// A two-round, five-class tree model written by hand: the scorer must follow the documented rule.
    static func treeModel(trees: String, temperature: Double = 1) -> String {
        let names = SegmentFeatures.names.map { "\"\($0)\"" }.joined(separator: ",")
        return """
        {"format":"sleepcycle-event-model-1","kind":"gbt","classes":["none","snoring","talking","coughing","movement"],
         "features":[\(names)],"baseline":[0.5,0,0,0,-1],"trees":[\(trees)],"temperature":\(temperature)}
        """
    }

    @Test func treeScoringFollowsThresholdsLeavesAndMissingValues() throws {
        // Tree 1 (class 1): x0 <= 2 → leaf 1.0, else (x1 <= -1 → -2, else 3). Tree 2 (class 2): x0 <= 0 → 4, else 0.5.
        // A NaN feature fails every comparison and goes right.
        let trees = """
        {"class":1,"nodes":"x0<=2:2 1.0 x1<=-1:4 -2 3"}, {"class":2,"nodes":"x0<=0:2 4 0.5"}
        """
        let m = try SegmentModel.load(json: Data(Self.treeModel(trees: trees, temperature: 2).utf8))
        #expect(m is TreeEnsembleClassifier)
        func expected(_ z: [Double]) -> [Double] {
            let e = z.map { exp($0 / 2) }
            let s = e.reduce(0, +)
            return e.map { $0 / s }
        }
        let n = SegmentFeatures.count
        func p(_ x0: Float, _ x1: Float) -> [Double] {
            var x = [Float](repeating: 0, count: n); x[0] = x0; x[1] = x1
            return m.classify(SegmentFeatures(values: x, durationSec: 1)).values
        }
        let cases: [((Float, Float), [Double])] = [
            ((2, 0), [0.5, 1, 0.5, 0, -1]),          // x0 == threshold goes left
            ((-1, 0), [0.5, 1, 4, 0, -1]),
            ((3, -1), [0.5, -2, 0.5, 0, -1]),
            ((3, 5), [0.5, 3, 0.5, 0, -1]),
            ((.nan, 5), [0.5, 3, 0.5, 0, -1]),       // NaN goes right
            ((2.0000002, -1.5), [0.5, -2, 0.5, 0, -1]),  // just above a threshold goes right
        ]
        for ((a, b), z) in cases {
            for (got, want) in zip(p(a, b), expected(z)) { #expect(abs(got - want) < 1e-12) }
        }
    }

    @Test func treeModelsThatCouldLoopOrOverrunAreRejected() throws {
        let cycle = #"{"class":1,"nodes":"x0<=1:0 1 2"}"#               // right child before its parent
        let outOfRange = #"{"class":1,"nodes":"x0<=1:7 1 2"}"#         // right child past the end
        let noLeft = #"{"class":1,"nodes":"1 x0<=1:2"}"#               // a split as the last node
        let badFeature = #"{"class":1,"nodes":"x99999<=1:2 1 2"}"#
        let badNumber = #"{"class":1,"nodes":"x0<=abc:2 1 2"}"#
        let badClass = #"{"class":5,"nodes":"1"}"#
        for t in [cycle, outOfRange, noLeft, badFeature, badNumber, badClass] {
            do {
                _ = try SegmentModel.load(json: Data(Self.treeModel(trees: t).utf8), path: "trees.json")
                Issue.record("accepted \(t)")
            } catch let e as DetectionError {
                #expect(e.description.hasPrefix("trees.json: invalid event model"))
                #expect(!e.description.contains("\n"))
            }
        }
        let unknownKind = Self.treeModel(trees: badClass).replacingOccurrences(of: #""kind":"gbt""#, with: #""kind":"forest""#)
        #expect(throws: DetectionError.self) { try SegmentModel.load(json: Data(unknownKind.utf8), path: "k.json") }
    }
}

@Suite struct TreeWalkTests {
    /// A random tree in the file's pre-order text, and its plain recursive evaluation.
    struct RandomTree {
        var text = ""
        var tokens: [String] = []
        init(depth: Int, features: Int, rng: inout SplitMix) {
            func grow(_ d: Int) {
                let i = tokens.count
                tokens.append("")
                if d == 0 || rng.next() % 4 == 0 {
                    // Leaves from 1e-3 to 1e12 in size: summed in Double, their order changes the last bits.
                    tokens[i] = "\(Float(Int(rng.next() % 2001) - 1000) / 1000 * Float([1, 1e6, 1e12][Int(rng.next() % 3)]))"
                    return
                }
                let f = Int(rng.next() % UInt64(features))
                let t = Float(Int(rng.next() % 201) - 100) / 100
                grow(d - 1)
                let right = tokens.count
                grow(d - 1)
                tokens[i] = "x\(f)<=\(t):\(right)"
            }
            grow(depth)
            text = tokens.joined(separator: " ")
        }
        func leaf(_ x: [Float], at i: Int = 0) -> Float {
            let tok = tokens[i]
            guard tok.hasPrefix("x") else { return Float(tok)! }
            let f = Int(tok.dropFirst().prefix { $0 != "<" })!
            let t = Float(tok.split(separator: "=")[1].split(separator: ":")[0])!
            let right = Int(tok.split(separator: ":")[1])!
            return x[f] <= t ? leaf(x, at: i + 1) : leaf(x, at: right)
        }
    }
    struct SplitMix { var s: UInt64; mutating func next() -> UInt64 {
        s &+= 0x9E3779B97F4A7C15; var z = s
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) &* 0x94D049BB133111EB; return z ^ (z >> 31)
    } }

    @Test func theInterleavedWalkSumsTheSameLeavesInTheSameOrderAsAPlainWalk() throws {
        // 43 trees of uneven depth (several groups of eight, the last one short), three classes.
        var rng = SplitMix(s: 7)
        let trees = (0..<43).map { RandomTree(depth: 1 + $0 % 9, features: 5, rng: &rng) }
        let files = trees.enumerated().map { ModelFile.Tree(class: $0.offset % 3, nodes: $0.element.text) }
        let baseline = [0.25, -0.5, 1.0]
        let ensemble = try TreeEnsemble(baseline: baseline, trees: files, temperature: 1, featureCount: 5, classCount: 3,
                                        path: "t")
        // Walked grouped by depth (shallow groups first), summed in file order.
        #expect(ensemble.groupSteps == ensemble.groupSteps.sorted())
        let depths = files.map { TreeEnsemble.depth(TreeEnsemble.parse($0.nodes, featureCount: 5)!, root: 0) }
        let fileOrderSteps = stride(from: 0, to: 43, by: 8).map { depths[$0..<min($0 + 8, 43)].max()! }
        #expect(ensemble.groupSteps.reduce(0, +) < fileOrderSteps.reduce(0, +))
        #expect(Set(ensemble.fileIndex) == Set(0..<43))
        for i in 0..<200 {
            // Values on and between the thresholds (hundredths, like them), past both ends, −0 and NaN (which
            // fails every `x ≤ t`: it goes right).
            var x = (0..<5).map { _ in Float(Int(rng.next() % 241) - 120) / 100 }
            if i % 10 == 0 { x[i / 10 % 5] = .nan }
            if i % 10 == 5 { x[i / 10 % 5] = -0.0 }
            var want = baseline
            for (t, tree) in trees.enumerated() { want[t % 3] += Double(tree.leaf(x)) }
            #expect(x.withUnsafeBufferPointer { ensemble.scores($0) } == want)
        }
    }
}
