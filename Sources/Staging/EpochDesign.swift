/// Feature construction for the staging model: per-night z-scoring and temporal context.
///
/// Mirrors `design_matrix` in Benchmarks/Scripts/staging/staging_model.py operation for operation, so that the
/// Swift predictions equal the training script's. Context windows are clamped to the epochs available
/// (edge replication), which also makes the same code usable online: computed over the epochs seen so far, the
/// last row only uses the past.
public struct FeatureDescriptor: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// The input value itself.
        case raw
        /// The input value squared.
        case square
        /// Centred mean of the z-scored signal over `window` epochs (odd).
        case zmean
        /// Centred population standard deviation of the z-scored signal over `window` epochs (odd).
        case zstd
        /// Mean of the z-scored signal over the `window` epochs before this one.
        case zpast
        /// Mean of the z-scored signal over the `window` epochs after this one.
        case zfuture
        /// Centred maximum of the z-scored signal over `window` epochs (odd).
        case zmax
        /// Centred minimum of the z-scored signal over `window` epochs (odd).
        case zmin
        /// The z-scored value minus the centred median over `window` epochs (odd).
        case zdmed
        /// Mean of the `window` epochs after minus mean of the `window` epochs before (a local slope).
        case zslope
        /// Centred mean over `window` epochs (odd) of the within-night percentile rank of the (transformed) input.
        case rank
    }
    public var kind: Kind
    public var input: StagingInput
    public var window: Int

    /// Whether `window` suits the kind: odd and positive for centred windows, positive for one-sided ones.
    var hasValidWindow: Bool {
        switch kind {
        case .raw, .square: return true
        case .zmean, .zstd, .zmax, .zmin, .zdmed, .rank: return window > 0 && window % 2 == 1
        case .zpast, .zfuture, .zslope: return window > 0
        }
    }
}

enum EpochDesign {
    /// `count` → `log1p(max(count, 0))` (activity counts are heavy-tailed); other inputs unchanged.
    static func transformed(_ input: StagingInput, _ values: ArraySlice<Double>) -> [Double] {
        input == .count ? values.map { Foundation.log1p(Swift.max($0, 0)) } : Array(values)
    }

    /// Z-score with the population standard deviation; a constant signal maps to zeros. `quietPrior` extra
    /// zeros join the mean and deviation (not the output): the online prior that most of a night is still.
    static func zscore(_ x: [Double], quietPrior: Int = 0) -> [Double] {
        guard !x.isEmpty else { return [] }
        let n = Double(x.count + quietPrior)
        let mean = x.reduce(0, +) / n
        let variance = (x.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } + Double(quietPrior) * mean * mean) / n
        let sd = variance.squareRoot()
        return sd > 1e-12 ? x.map { ($0 - mean) / sd } : [Double](repeating: 0, count: x.count)
    }

    /// Within-night percentile rank of each value: (#smaller + #equal / 2) / n, as `percentile_rank` in
    /// staging_model.py. `quietPrior` extra zeros join the reference values (the transformed count is ≥ 0).
    static func percentileRank(_ v: [Double], quietPrior: Int = 0) -> [Double] {
        let sorted = v.sorted()
        func lowerBound(_ x: Double) -> Int {
            var lo = 0, hi = sorted.count
            while lo < hi { let mid = (lo + hi) / 2; if sorted[mid] < x { lo = mid + 1 } else { hi = mid } }
            return lo
        }
        func upperBound(_ x: Double) -> Int {
            var lo = 0, hi = sorted.count
            while lo < hi { let mid = (lo + hi) / 2; if sorted[mid] <= x { lo = mid + 1 } else { hi = mid } }
            return lo
        }
        let total = Double(v.count + quietPrior)
        return v.map { x in
            var below = Double(lowerBound(x))
            var equal = Double(upperBound(x)) - below
            if quietPrior > 0 { if x > 0 { below += Double(quietPrior) } else if x == 0 { equal += Double(quietPrior) } }
            return (below + 0.5 * equal) / total
        }
    }

    /// Design rows for epochs `rows` of a night of which only the first `available` epochs are used.
    /// Whole-night use: `available == table.count`. Online use: `available` = epochs seen so far, and
    /// `quietCountPrior` pseudo-epochs of zero activity in the `count` z-score and rank (see SleepStager).
    ///
    /// - Precondition: `table` has a column for every feature's input (`StagingModel.subModel(for: table.inputs)`
    ///   guarantees it: a sub-model's features only read its own inputs, checked when the model is loaded).
    static func rows(_ table: EpochTable, features: [FeatureDescriptor], available n: Int,
                     rows: Range<Int>, quietCountPrior: Int = 0) -> [[Double]] {
        let design = Night(table, features: features, available: n, quietCountPrior: quietCountPrior)
        return rows.map { design.row($0) }
    }

    /// One night's signals prepared for its design rows: the z-scores and ranks over the first `available` epochs,
    /// computed once however many rows are then asked for.
    struct Night {
        let table: EpochTable
        let features: [FeatureDescriptor]
        let n: Int
        private var z: [StagingInput: [Double]] = [:], ranks: [StagingInput: [Double]] = [:]

        init(_ table: EpochTable, features: [FeatureDescriptor], available n: Int, quietCountPrior: Int = 0) {
            precondition(features.allSatisfy { table[$0.input] != nil }, "staging design: a feature's input is missing")
            self.table = table
            self.features = features
            self.n = n
            for f in features where f.kind != .raw && f.kind != .square {
                let prior = f.input == .count ? quietCountPrior : 0
                if f.kind == .rank {
                    if ranks[f.input] == nil {
                        ranks[f.input] = percentileRank(transformed(f.input, table[f.input]![0..<n]), quietPrior: prior)
                    }
                } else if z[f.input] == nil {
                    z[f.input] = zscore(transformed(f.input, table[f.input]![0..<n]), quietPrior: prior)
                }
            }
        }

        /// The design row of epoch `i` (< `n`): one value per feature.
        func row(_ i: Int) -> [Double] {
            func clamp(_ i: Int) -> Int { Swift.min(Swift.max(i, 0), n - 1) }
            return features.map { f -> Double in
                let h = f.window / 2
                switch f.kind {
                case .raw: return table[f.input]![i]
                case .square: let v = table[f.input]![i]; return v * v
                case .zmean, .zstd, .rank:
                    let x = f.kind == .rank ? ranks[f.input]! : z[f.input]!
                    var sum = 0.0
                    for j in (i - h)...(i + h) { sum += x[clamp(j)] }
                    let mean = sum / Double(f.window)
                    if f.kind != .zstd { return mean }
                    var ss = 0.0
                    for j in (i - h)...(i + h) { let d = x[clamp(j)] - mean; ss += d * d }
                    return (ss / Double(f.window)).squareRoot()
                case .zpast, .zfuture:
                    let x = z[f.input]!, sign = f.kind == .zpast ? -1 : 1
                    var sum = 0.0
                    for k in 1...f.window { sum += x[clamp(i + sign * k)] }
                    return sum / Double(f.window)
                case .zslope:
                    let x = z[f.input]!
                    var after = 0.0, before = 0.0
                    for k in 1...f.window { after += x[clamp(i + k)]; before += x[clamp(i - k)] }
                    return after / Double(f.window) - before / Double(f.window)
                case .zmax, .zmin:
                    let x = z[f.input]!
                    var m = x[clamp(i - h)]
                    for j in (i - h)...(i + h) { m = f.kind == .zmax ? Swift.max(m, x[clamp(j)]) : Swift.min(m, x[clamp(j)]) }
                    return m
                case .zdmed:
                    let x = z[f.input]!
                    let window = ((i - h)...(i + h)).map { x[clamp($0)] }.sorted()
                    return x[i] - window[h]
                }
            }
        }
    }
}

import Foundation
