import Foundation
import SleepCycleBus

/// Class probabilities of one segment: `none` (background, or any sound that is none of the four) plus the four
/// event types. They sum to 1.
public struct ClassProbabilities: Sendable, Hashable {
    public static let classes = ["none", "snoring", "talking", "coughing", "movement"]
    /// In `classes` order.
    public var values: [Double]

    public init(values: [Double]) {
        precondition(values.count == Self.classes.count)
        self.values = values
    }

    public var none: Double { values[0] }
    public subscript(type: EventType) -> Double { values[Self.index(of: type)] }

    /// The most probable class (nil = none) and its probability.
    public var best: (type: EventType?, probability: Double) {
        var bi = 0
        for i in 1..<values.count where values[i] > values[bi] { bi = i }
        return (bi == 0 ? nil : Self.type(at: bi), values[bi])
    }

    /// Each class's probability times its weight (classes not listed: 1), renormalised to sum 1.
    public func weighted(_ weights: [EventType: Double]) -> ClassProbabilities {
        guard !weights.isEmpty else { return self }
        var v = values
        for (type, w) in weights { v[Self.index(of: type)] *= w }
        let sum = v.reduce(0, +)
        guard sum > 0 else { return self }
        return ClassProbabilities(values: v.map { $0 / sum })
    }

    static func index(of type: EventType) -> Int {
        switch type { case .snoring: 1; case .talking: 2; case .coughing: 3; case .movement: 4 }
    }
    static func type(at index: Int) -> EventType? {
        switch index { case 1: .snoring; case 2: .talking; case 3: .coughing; case 4: .movement; default: nil }
    }
}

/// Replaceable segment classifier: features of a candidate segment in, class probabilities out.
///
/// The built-in one is `SegmentModel.builtIn()` (gradient-boosted trees, `TreeEnsembleClassifier`); plug in your own by passing it to
/// `EventDetector(configuration:classifier:)`. Probabilities should be calibrated (a class reported at 0.8
/// should be right about 80 % of the time): the detector reports them as event probabilities.
public protocol SegmentClassifier: Sendable {
    func classify(_ features: SegmentFeatures) -> ClassProbabilities
}

/// A feed-forward classifier read from JSON: standardisation, dense layers (ReLU between, none after the last),
/// softmax with a temperature. With one layer it is multinomial logistic regression.
///
/// File format (written by Benchmarks/Scripts/detection/train.py):
/// the common header (`SegmentModel`, `"kind": "mlp"` or `"logistic"`) plus `"mean": [...], "scale": [...],
/// "layers": [{"weights": [[in] per output], "bias": [out]}]`.
/// Scoring: `x' = (x − mean) / scale`, `h = relu(W₁x' + b₁)`, …, `z = W_L h + b_L`, `p = softmax(z / T)` —
/// the same arithmetic as scikit-learn's `LogisticRegression.predict_proba` / `MLPClassifier.predict_proba`
/// (in Double), so the script's probabilities are reproduced (tested).
public struct NeuralSegmentClassifier: SegmentClassifier {
    struct Layer: Sendable { var weights: [Double]; var bias: [Double]; var inputs: Int; var outputs: Int }
    let mean: [Double]
    let scale: [Double]
    let layers: [Layer]
    let temperature: Double

    /// Loads a model file (or its JSON); throws `DetectionError` naming the file and the problem.
    public init(contentsOf url: URL) throws { try self.init(file: .decode(contentsOf: url), path: url.path) }
    public init(json data: Data, path: String = "<model>") throws { try self.init(file: .decode(data, path: path), path: path) }

    init(file: ModelFile, path: String) throws {
        func bad(_ why: String) -> DetectionError { .modelInvalid(path: path, reason: why) }
        guard file.kind == nil || file.kind == "mlp" || file.kind == "logistic" else {
            throw bad("kind \(file.kind!) is not a neural model (load it with SegmentModel.load)")
        }
        guard let mean = file.mean, let scale = file.scale, let layerFiles = file.layers else {
            throw bad("a neural model needs mean, scale and layers")
        }
        let n = SegmentFeatures.count
        guard mean.count == n, scale.count == n, scale.allSatisfy({ $0 > 0 }) else {
            throw bad("mean/scale must have \(n) entries, scale > 0")
        }
        var inputs = n
        var layers: [Layer] = []
        for (i, l) in layerFiles.enumerated() {
            guard !l.weights.isEmpty, l.weights.count == l.bias.count, l.weights.allSatisfy({ $0.count == inputs }) else {
                throw bad("layer \(i) must be \(inputs) inputs wide with one bias per output")
            }
            layers.append(Layer(weights: l.weights.flatMap { $0 }, bias: l.bias, inputs: inputs, outputs: l.bias.count))
            inputs = l.bias.count
        }
        guard !layers.isEmpty, inputs == ClassProbabilities.classes.count else { throw bad("last layer must have 5 outputs") }
        self.mean = mean; self.scale = scale; self.layers = layers; temperature = file.temperature ?? 1
    }

    public func classify(_ features: SegmentFeatures) -> ClassProbabilities {
        var x = (0..<mean.count).map { (Double(features.values[$0]) - mean[$0]) / scale[$0] }
        for (li, layer) in layers.enumerated() {
            var y = layer.bias
            for o in 0..<layer.outputs {
                var acc = 0.0
                let row = o * layer.inputs
                for i in 0..<layer.inputs { acc += layer.weights[row + i] * x[i] }
                y[o] += acc
            }
            if li < layers.count - 1 { for o in y.indices { y[o] = max(0, y[o]) } }
            x = y
        }
        return softmax(x, temperature: temperature)
    }
}
