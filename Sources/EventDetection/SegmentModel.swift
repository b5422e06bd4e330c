import Foundation

/// Event-model files of every kind: the fields every kind shares, and loading by `kind`.
///
/// A model file (written by `Benchmarks/Scripts/detection/train.py`) is JSON with a common header
/// `{"format": "sleepcycle-event-model-1", "kind": "gbt" | "mlp" | "logistic", "classes": [...],
///   "features": [names], "temperature": T, "signature": {...}, "training": {...}}` and the kind's own fields
/// (`TreeEnsembleClassifier`, `NeuralSegmentClassifier`). The file is parsed once (`ModelFile`) and the header is
/// checked in one place, so a stale or foreign file fails with one line naming the file and the problem.
public enum SegmentModel {
    /// Loads any kind of model file.
    public static func load(contentsOf url: URL) throws -> any SegmentClassifier {
        try classifier(of: try ModelFile.decode(contentsOf: url), path: url.path)
    }

    public static func load(json data: Data, path: String = "<model>") throws -> any SegmentClassifier {
        try classifier(of: try ModelFile.decode(data, path: path), path: path)
    }

    /// Loads a model file and its context stage (nil when the file has none), parsing the file once.
    public static func loadWithContext(contentsOf url: URL) throws
        -> (classifier: any SegmentClassifier, context: SegmentContextModel?) {
        let stages = try loadStages(contentsOf: url)
        return (stages.classifier, stages.context)
    }

    /// Loads a model file with every stage it has: the classifier, its context stage and its screen (nil when the
    /// file has none), parsing the file once. Pass all three to `EventDetector`.
    public static func loadStages(contentsOf url: URL) throws
        -> (classifier: any SegmentClassifier, context: SegmentContextModel?, screen: SegmentScreen?) {
        let file = try ModelFile.decode(contentsOf: url)
        return (try classifier(of: file, path: url.path),
                try file.context.map { try SegmentContextModel(section: $0, path: url.path) },
                try file.screen.map { try SegmentScreen(section: $0, path: url.path) })
    }

    static func classifier(of file: ModelFile, path: String) throws -> any SegmentClassifier {
        switch file.kind {
        case "gbt": return try TreeEnsembleClassifier(file: file, path: path)
        case nil, "mlp", "logistic": return try NeuralSegmentClassifier(file: file, path: path)
        case let other?: throw DetectionError.modelInvalid(path: path, reason: "unknown model kind \(other)")
        }
    }

    /// The committed model (`Sources/EventDetection/Resources/event-model.json`), read once per process.
    public static func builtIn() throws -> any SegmentClassifier { try builtInModel.get() }

    /// The committed file, parsed once per process (the classifier and `SnoreSignature.builtIn()` share it).
    static let builtInFile: Result<(file: ModelFile, path: String), any Error> = Result {
        let url = try builtInURL()
        return (try ModelFile.decode(contentsOf: url), url.path)
    }
    static let builtInModel: Result<any SegmentClassifier, any Error> = Result {
        let (file, path) = try builtInFile.get()
        return try classifier(of: file, path: path)
    }

    static func builtInURL() throws -> URL {
        guard let url = Bundle.module.url(forResource: "event-model", withExtension: "json", subdirectory: "Resources") else {
            throw DetectionError.modelUnreadable(path: "EventDetection/Resources/event-model.json", reason: "missing from the bundle")
        }
        return url
    }
}

/// A decoded model file: the shared header (checked against this build by `decode`) and every kind's optional
/// fields; the classifier of the file's `kind` checks its own.
struct ModelFile: Decodable, Sendable {
    var format: String
    var kind: String?
    var classes: [String]
    var features: [String]
    var temperature: Double?
    // Neural (`mlp`, `logistic`).
    var mean: [Double]?
    var scale: [Double]?
    var layers: [Layer]?
    // Gradient-boosted trees (`gbt`).
    var baseline: [Double]?
    var trees: [Tree]?
    // Snore-signature normalisation.
    var signature: Signature?
    // The context stage (`SegmentContextModel`), optional.
    var context: Context?
    // The screen (`SegmentScreen`), optional.
    var screen: Screen?

    struct Layer: Decodable, Sendable { var weights: [[Double]]; var bias: [Double] }
    struct Tree: Decodable, Sendable { var `class`: Int; var nodes: String }
    struct Signature: Decodable, Sendable { var mean: [Float]; var scale: [Float] }
    struct Context: Decodable, Sendable {
        var features: [String]; var window: Double; var longWindow: Double
        var baseline: [Double]?; var trees: [Tree]?; var temperature: Double
    }
    struct Screen: Decodable, Sendable {
        var features: [String]; var baseline: [Double]?; var trees: [Tree]?; var threshold: Double
    }

    /// Reads and decodes a model file (`decode`), errors naming the file.
    static func decode(contentsOf url: URL) throws -> ModelFile { try decode(try read(url), path: url.path) }

    static func read(_ url: URL) throws -> Data {
        do { return try Data(contentsOf: url) } catch {
            throw DetectionError.modelUnreadable(path: url.path, reason: error.localizedDescription)
        }
    }

    /// Decodes and validates the header; `temperature` is > 0 afterwards (1 when absent).
    static func decode(_ data: Data, path: String) throws -> ModelFile {
        var file: ModelFile
        do { file = try JSONDecoder().decode(ModelFile.self, from: data) } catch {
            throw DetectionError.modelInvalid(path: path, reason: "not a model JSON: \(error)")
        }
        func bad(_ why: String) -> DetectionError { .modelInvalid(path: path, reason: why) }
        guard file.format == "sleepcycle-event-model-1" else {
            throw bad("format \(file.format) is not sleepcycle-event-model-1")
        }
        guard file.classes == ClassProbabilities.classes else {
            throw bad("classes \(file.classes) differ from \(ClassProbabilities.classes)")
        }
        guard file.features == SegmentFeatures.names else {
            throw bad("feature names differ from this build's SegmentFeatures.names (re-train the model)")
        }
        let t = file.temperature ?? 1
        guard t > 0, t.isFinite else { throw bad("temperature must be > 0") }
        file.temperature = t
        return file
    }
}

/// Softmax of `z / temperature` (shifted by the maximum; the sum is 1).
func softmax(_ z: [Double], temperature: Double) -> ClassProbabilities {
    let m = z.max() ?? 0
    let e = z.map { exp(($0 - m) / temperature) }
    let s = e.reduce(0, +)
    return ClassProbabilities(values: e.map { $0 / s })
}
