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

    static func index(of type: EventType) -> Int {
        switch type { case .snoring: 1; case .talking: 2; case .coughing: 3; case .movement: 4 }
    }
    static func type(at index: Int) -> EventType? {
        switch index { case 1: .snoring; case 2: .talking; case 3: .coughing; case 4: .movement; default: nil }
    }
}

/// Replaceable segment classifier: features of a candidate segment in, class probabilities out.
///
/// The built-in one is `NeuralSegmentClassifier.builtIn()`; plug in your own by passing it to
/// `EventDetector(configuration:classifier:)`. Probabilities should be calibrated (a class reported at 0.8
/// should be right about 80 % of the time): the detector reports them as event probabilities.
public protocol SegmentClassifier: Sendable {
    func classify(_ features: SegmentFeatures) -> ClassProbabilities
}

/// A feed-forward classifier read from JSON: standardisation, dense layers (ReLU between, none after the last),
/// softmax with a temperature. With one layer it is multinomial logistic regression.
///
/// File format (written by Benchmarks/Scripts/detection/train.py):
/// `{"format": "sleepcycle-event-model-1", "classes": [...], "features": [names], "mean": [...], "scale": [...],
///   "layers": [{"weights": [[in] per output], "bias": [out]}], "temperature": T, ...}`.
/// Scoring: `x' = (x − mean) / scale`, `h = relu(W₁x' + b₁)`, …, `z = W_L h + b_L`, `p = softmax(z / T)` —
/// the same arithmetic as scikit-learn's `LogisticRegression.predict_proba` / `MLPClassifier.predict_proba`
/// (in Double), so the script's probabilities are reproduced (tested).
public struct NeuralSegmentClassifier: SegmentClassifier {
    struct Layer: Sendable { var weights: [Double]; var bias: [Double]; var inputs: Int; var outputs: Int }
    let mean: [Double]
    let scale: [Double]
    let layers: [Layer]
    let temperature: Double

    struct File: Decodable {
        var format: String
        var classes: [String]
        var features: [String]
        var mean: [Double]
        var scale: [Double]
        var layers: [LayerFile]
        var temperature: Double?
    }
    struct LayerFile: Decodable { var weights: [[Double]]; var bias: [Double] }

    /// Loads a model file; throws `DetectionError` naming the file and the problem.
    public init(contentsOf url: URL) throws {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw DetectionError.modelUnreadable(path: url.path, reason: error.localizedDescription)
        }
        try self.init(json: data, path: url.path)
    }

    public init(json data: Data, path: String = "<model>") throws {
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            throw DetectionError.modelInvalid(path: path, reason: "not a model JSON: \(error)")
        }
        func bad(_ why: String) -> DetectionError { .modelInvalid(path: path, reason: why) }
        guard file.format == "sleepcycle-event-model-1" else { throw bad("format \(file.format) is not sleepcycle-event-model-1") }
        guard file.classes == ClassProbabilities.classes else {
            throw bad("classes \(file.classes) differ from \(ClassProbabilities.classes)")
        }
        guard file.features == SegmentFeatures.names else {
            throw bad("feature names differ from this build's SegmentFeatures.names (re-train the model)")
        }
        let n = SegmentFeatures.count
        guard file.mean.count == n, file.scale.count == n, file.scale.allSatisfy({ $0 > 0 }) else {
            throw bad("mean/scale must have \(n) entries, scale > 0")
        }
        var inputs = n
        var layers: [Layer] = []
        for (i, l) in file.layers.enumerated() {
            guard !l.weights.isEmpty, l.weights.count == l.bias.count, l.weights.allSatisfy({ $0.count == inputs }) else {
                throw bad("layer \(i) must be \(inputs) inputs wide with one bias per output")
            }
            layers.append(Layer(weights: l.weights.flatMap { $0 }, bias: l.bias, inputs: inputs, outputs: l.bias.count))
            inputs = l.bias.count
        }
        guard inputs == ClassProbabilities.classes.count else { throw bad("last layer must have 5 outputs") }
        let t = file.temperature ?? 1
        guard t > 0 else { throw bad("temperature must be > 0") }
        mean = file.mean; scale = file.scale; self.layers = layers; temperature = t
    }

    /// The committed model (`Sources/EventDetection/Resources/event-model.json`).
    public static func builtIn() throws -> NeuralSegmentClassifier {
        guard let url = Bundle.module.url(forResource: "event-model", withExtension: "json", subdirectory: "Resources") else {
            throw DetectionError.modelUnreadable(path: "EventDetection/Resources/event-model.json", reason: "missing from the bundle")
        }
        return try NeuralSegmentClassifier(contentsOf: url)
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
        let z = x.map { $0 / temperature }
        let m = z.max() ?? 0
        let e = z.map { exp($0 - m) }
        let s = e.reduce(0, +)
        return ClassProbabilities(values: e.map { $0 / s })
    }
}
