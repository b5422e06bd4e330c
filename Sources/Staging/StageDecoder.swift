import Foundation

/// HMM decoding of per-epoch stage posteriors.
///
/// `viterbi` is the whole-night most likely path (Viterbi 1967; Rabiner 1989 §III-B), as `viterbi` in
/// staging_model.py. `ForwardFilter` is the causal forward recursion (Rabiner 1989 §III-A, normalised): the
/// stage probability given the epochs so far, used for the online per-epoch decision.
enum StageDecoder {
    /// `emissionLogs`: each epoch's `emissionLog` of its posterior, epoch after epoch (count × the number of stages).
    static func viterbi(_ m: StagingModel.SubModel, emissionLogs e: [Double]) -> [Int] {
        let k = m.initial.count, n = e.count / k
        guard n > 0 else { return [] }
        precondition(k <= Int(UInt8.max) && e.count == n * k, "viterbi: evidence of a whole number of epochs")
        let logA = m.transition.map { $0.map { Foundation.log($0) } }
        var delta = (0..<k).map { Foundation.log(m.initial[$0]) + e[$0] }
        // The best predecessor of each stage at each epoch, one byte each: a million epochs take 4 MB.
        var back = [UInt8](repeating: 0, count: n * k)
        var next = [Double](repeating: 0, count: k)
        for t in 1..<n {
            for j in 0..<k {
                var best = 0, bestValue = delta[0] + logA[0][j]
                for i in 1..<k where delta[i] + logA[i][j] > bestValue { best = i; bestValue = delta[i] + logA[i][j] }
                back[t * k + j] = UInt8(best)
                next[j] = bestValue + e[t * k + j]
            }
            swap(&delta, &next)
        }
        var path = [Int](repeating: 0, count: n)
        path[n - 1] = argmax(delta)
        var t = n - 1
        while t > 0 { path[t - 1] = Int(back[t * k + path[t]]); t -= 1 }
        return path
    }

    static func argmax(_ v: [Double]) -> Int {
        var best = 0
        for i in 1..<v.count where v[i] > v[best] { best = i }
        return best
    }

    /// Causal forward filter with the same transition model and evidence as `viterbi`.
    struct ForwardFilter {
        private(set) var belief: [Double]? = nil

        /// Folds in one epoch's posterior and returns the filtered stage index.
        mutating func step(_ m: StagingModel.SubModel, posterior: [Double]) -> Int {
            let e = m.emissionLog(posterior)
            let k = e.count
            var predicted = m.initial
            if let b = belief {
                predicted = (0..<k).map { j in (0..<k).reduce(0) { $0 + b[$1] * m.transition[$1][j] } }
            }
            let maxE = e.max()!
            var next = (0..<k).map { predicted[$0] * Foundation.exp(e[$0] - maxE) }
            let total = next.reduce(0, +)
            next = next.map { $0 / total }
            belief = next
            return StageDecoder.argmax(next)
        }
    }
}
