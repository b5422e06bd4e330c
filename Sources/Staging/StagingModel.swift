import Foundation
import SleepCycleBus

/// The staging model: one classifier per input set over per-night z-scored, context-smoothed Walch et al. 2019
/// features — gradient-boosted trees with heart-rate context (local extremes, rolling-median deviation, slope,
/// within-night rank) for the sets with `hr`, a multinomial logistic regression for those without — followed by
/// an HMM over the four stages whose transition matrix was counted on the training nights (Rabiner 1989, "A tutorial on hidden Markov models", Proc. IEEE 77(2)).
///
/// Weights come from `Resources/staging_model.json`, written by `Benchmarks/Scripts/staging/train.py`
/// (see docs/0007-staging-statistics-alarm.md). Inference mirrors `staging_model.py` exactly.
public struct StagingModel: Sendable {
    /// One sub-model, trained for one set of available inputs.
    public struct SubModel: Sendable, Decodable {
        public var inputs: [StagingInput]
        public var features: [FeatureDescriptor]
        /// How a design row becomes stage scores; the stage posterior is their softmax.
        var classifier: Classifier
        enum Classifier: Sendable {
            /// Gradient-boosted trees (`"classifier": "gbt"`, the sub-models with `hr`).
            case trees(StagingTrees)
            /// Multinomial logistic regression on standardised features (`"classifier": "lr"`): scores
            /// ((x − mean) / scale) · coefᵀ + intercept, coef 4 × features in model stage order.
            case logistic(mean: [Double], scale: [Double], coef: [[Double]], intercept: [Double])
        }
        /// Training-set stage frequencies.
        var prior: [Double]
        /// transition[i][j] = P(stage j at t+1 | stage i at t).
        var transition: [[Double]]
        var initial: [Double]
        /// g: decisions use posterior / prior^g (g > 0 favours rarer stages).
        var priorExponent: Double
        /// b: weight of one epoch's evidence against the transition model.
        var emissionExponent: Double

        enum CodingKeys: String, CodingKey {
            case inputs, features, classifier, baseline, trees, mean, scale, coef, intercept, prior, transition, initial
            case priorExponent = "prior_exponent", emissionExponent = "emission_exponent"
        }
        struct TreeText: Decodable { var `class`: Int; var nodes: String }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            inputs = try c.decode([StagingInput].self, forKey: .inputs)
            features = try c.decode([FeatureDescriptor].self, forKey: .features)
            prior = try c.decode([Double].self, forKey: .prior)
            transition = try c.decode([[Double]].self, forKey: .transition)
            initial = try c.decode([Double].self, forKey: .initial)
            priorExponent = try c.decode(Double.self, forKey: .priorExponent)
            emissionExponent = try c.decode(Double.self, forKey: .emissionExponent)
            let k = SleepStage.modelOrder.count, m = features.count
            let kind = try c.decode(String.self, forKey: .classifier)
            switch kind {
            case "gbt":
                let text = try c.decode([TreeText].self, forKey: .trees)
                guard let trees = StagingTrees(baseline: try c.decode([Double].self, forKey: .baseline),
                                               trees: text.map { ($0.class, $0.nodes) }, featureCount: m, classCount: k)
                else { throw DecodingError.dataCorruptedError(forKey: .trees, in: c, debugDescription: "malformed trees") }
                classifier = .trees(trees)
            case "lr":
                let mean = try c.decode([Double].self, forKey: .mean), scale = try c.decode([Double].self, forKey: .scale)
                let coef = try c.decode([[Double]].self, forKey: .coef), intercept = try c.decode([Double].self, forKey: .intercept)
                guard mean.count == m, scale.count == m, coef.count == k, coef.allSatisfy({ $0.count == m }), intercept.count == k
                else { throw DecodingError.dataCorruptedError(forKey: .coef, in: c, debugDescription: "malformed weights") }
                classifier = .logistic(mean: mean, scale: scale, coef: coef, intercept: intercept)
            default:
                throw DecodingError.dataCorruptedError(forKey: .classifier, in: c, debugDescription: "unknown classifier \(kind)")
            }
            guard prior.count == k, initial.count == k, transition.count == k, transition.allSatisfy({ $0.count == k }) else {
                throw DecodingError.dataCorruptedError(forKey: .transition, in: c, debugDescription: "malformed HMM")
            }
        }
    }

    public var subModels: [SubModel]

    struct File: Decodable { var format: Int; var stages: [String]; var models: [SubModel] }

    /// Decodes a model file written by train.py.
    public init(jsonData: Data) throws {
        let file = try JSONDecoder().decode(File.self, from: jsonData)
        guard file.format == 2, file.stages == SleepStage.modelOrder.map(\.rawValue) else {
            throw StagingError(path: nil, line: nil, message: "unsupported staging model format \(file.format)")
        }
        for sub in file.models where !sub.features.allSatisfy({ sub.inputs.contains($0.input) }) {
            throw StagingError(path: nil, line: nil, message: "staging model: a feature reads an input its sub-model "
                + "does not list (inputs " + sub.inputs.map(\.rawValue).joined(separator: ",") + ")")
        }
        for sub in file.models {
            if let bad = sub.features.first(where: { !$0.hasValidWindow }) {
                throw StagingError(path: nil, line: nil, message: "staging model: feature \(bad.kind.rawValue) of "
                    + "\(bad.input.rawValue) has an invalid window \(bad.window)")
            }
        }
        subModels = file.models
    }

    /// The committed model (`Bundle.module`).
    public static func bundled() throws -> StagingModel {
        let url = Bundle.module.url(forResource: "staging_model", withExtension: "json", subdirectory: "Resources")
            ?? Bundle.module.url(forResource: "staging_model", withExtension: "json")
        guard let url else {
            throw StagingError(path: "staging_model.json", line: nil, message: "staging model resource is missing")
        }
        return try StagingModel(jsonData: Data(contentsOf: url))
    }

    /// The sub-model with the most inputs among those whose inputs are all available; nil if none fits.
    public func subModel(for available: Set<StagingInput>) -> SubModel? {
        subModels.filter { Set($0.inputs).isSubset(of: available) }.max { $0.inputs.count < $1.inputs.count }
    }

    /// Whole-night staging: posteriors from the whole-night design, then the Viterbi path.
    public func stages(for table: EpochTable) throws -> [SleepStage] {
        guard table.count > 0 else { return [] }
        guard let sub = subModel(for: table.inputs) else {
            throw StagingError(path: nil, line: nil, message: "no staging model for inputs "
                + table.inputs.map(\.rawValue).sorted().joined(separator: ",") + " (time_hours and cosine are required)")
        }
        // Row by row into the decoder's evidence: only one design row at a time is held, so memory grows with the
        // epochs by the evidence's few numbers each, not by a row of every feature.
        let night = EpochDesign.Night(table, features: sub.features, available: table.count)
        var emissions: [Double] = []
        emissions.reserveCapacity(table.count * sub.initial.count)
        for i in 0..<table.count { emissions += sub.emissionLog(sub.posterior(night.row(i))) }
        return StageDecoder.viterbi(sub, emissionLogs: emissions).map { SleepStage.modelOrder[$0] }
    }
}

extension StagingModel.SubModel {
    /// softmax of the class scores (trees, or the logistic regression's logits).
    func posterior(_ x: [Double]) -> [Double] {
        var z: [Double]
        switch classifier {
        case .trees(let trees): z = trees.scores(x)
        case .logistic(let mean, let scale, let coef, let intercept):
            z = intercept
            for k in 0..<z.count {
                var s = 0.0
                for j in 0..<x.count { s += (x[j] - mean[j]) / scale[j] * coef[k][j] }
                z[k] += s
            }
        }
        let m = z.max()!
        let e = z.map { Foundation.exp($0 - m) }
        let total = e.reduce(0, +)
        return e.map { $0 / total }
    }

    /// b · (log P − g · log prior).
    func emissionLog(_ p: [Double]) -> [Double] {
        (0..<p.count).map { emissionExponent * (Foundation.log(Swift.max(p[$0], 1e-300)) - priorExponent * Foundation.log(prior[$0])) }
    }
}
