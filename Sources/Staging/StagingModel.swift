import Foundation
import SleepCycleBus

/// The staging model: one multinomial logistic regression per input set over per-night z-scored, context-smoothed
/// Walch et al. 2019 features, followed by an HMM over the four stages whose transition matrix was counted on
/// the training nights (Rabiner 1989, "A tutorial on hidden Markov models", Proc. IEEE 77(2)).
///
/// Weights come from `Resources/staging_model.json`, written by `Benchmarks/Scripts/staging/train.py`
/// (see docs/0007-staging-statistics-alarm.md). Inference mirrors `staging_model.py` exactly.
public struct StagingModel: Sendable {
    /// One sub-model, trained for one set of available inputs.
    public struct SubModel: Sendable, Codable {
        public var inputs: [StagingInput]
        public var features: [FeatureDescriptor]
        var mean: [Double]
        var scale: [Double]
        /// 4 × features, rows in `SleepStage` model order (awake, light, deep, rem).
        var coef: [[Double]]
        var intercept: [Double]
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
            case inputs, features, mean, scale, coef, intercept, prior, transition, initial
            case priorExponent = "prior_exponent", emissionExponent = "emission_exponent"
        }
    }

    public var subModels: [SubModel]

    struct File: Codable { var format: Int; var stages: [String]; var models: [SubModel] }

    /// Decodes a model file written by train.py.
    public init(jsonData: Data) throws {
        let file = try JSONDecoder().decode(File.self, from: jsonData)
        guard file.format == 1, file.stages == SleepStage.modelOrder.map(\.rawValue) else {
            throw StagingError(path: nil, line: nil, message: "unsupported staging model format \(file.format)")
        }
        for sub in file.models where !sub.features.allSatisfy({ sub.inputs.contains($0.input) }) {
            throw StagingError(path: nil, line: nil, message: "staging model: a feature reads an input its sub-model "
                + "does not list (inputs " + sub.inputs.map(\.rawValue).joined(separator: ",") + ")")
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
        let rows = EpochDesign.rows(table, features: sub.features, available: table.count, rows: 0..<table.count)
        let posteriors = rows.map { sub.posterior($0) }
        return StageDecoder.viterbi(sub, posteriors: posteriors).map { SleepStage.modelOrder[$0] }
    }
}

extension StagingModel.SubModel {
    /// softmax(((x − mean) / scale) · coefᵀ + intercept).
    func posterior(_ x: [Double]) -> [Double] {
        var logits = intercept
        for k in 0..<logits.count {
            var s = 0.0
            for j in 0..<x.count { s += (x[j] - mean[j]) / scale[j] * coef[k][j] }
            logits[k] += s
        }
        let m = logits.max()!
        let e = logits.map { Foundation.exp($0 - m) }
        let total = e.reduce(0, +)
        return e.map { $0 / total }
    }

    /// b · (log P − g · log prior).
    func emissionLog(_ p: [Double]) -> [Double] {
        (0..<p.count).map { emissionExponent * (Foundation.log(Swift.max(p[$0], 1e-300)) - priorExponent * Foundation.log(prior[$0])) }
    }
}
