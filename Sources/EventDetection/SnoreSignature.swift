import Foundation

/// The 16-d snore signature: who is snoring, not how loud.
///
/// Definition (inputs computed by `SegmentFeatureExtractor` on the noise-subtracted mel spectrum of the snore):
/// mean cepstral shape c1…c12 (spectral envelope / timbre — the "mean mel-cepstral shape" used for speaker and
/// snorer identity, e.g. Reynolds 1995 for speakers, Sun et al. 2020 for snorers), spectral centroid (kHz),
/// spread (kHz), flatness and tilt (dB per mel band). Each of the 16 is z-scored with constants computed by
/// train.py over the training snores and committed in `event-model.json` (`signature.mean` / `signature.scale`),
/// then the vector is L2-normalised, so the dot product of two signatures is their cosine similarity and the
/// recording level plays no part. No pitch: f0 would need the raw audio (see docs, shortfalls).
public struct SnoreSignature: Sendable {
    public static let dimension = 16
    public let mean: [Float]
    public let scale: [Float]

    public init(mean: [Float], scale: [Float]) throws {
        guard mean.count == Self.dimension, scale.count == Self.dimension, scale.allSatisfy({ $0 > 0 }) else {
            throw DetectionError.modelInvalid(path: "signature", reason: "signature mean/scale need 16 entries, scale > 0")
        }
        self.mean = mean; self.scale = scale
    }

    /// The committed normalisation constants (the `signature` section of `event-model.json`), read once per process.
    public static func builtIn() throws -> SnoreSignature {
        let (file, path) = try SegmentModel.builtInFile.get()
        guard let sig = file.signature else {
            throw DetectionError.modelInvalid(path: path, reason: "no signature section")
        }
        return try SnoreSignature(mean: sig.mean, scale: sig.scale)
    }

    /// z-scores and L2-normalises raw signature inputs.
    public func normalise(_ raw: [Float]) -> [Float] {
        precondition(raw.count == Self.dimension)
        var z = (0..<Self.dimension).map { (raw[$0] - mean[$0]) / scale[$0] }
        let norm = z.reduce(0) { $0 + $1 * $1 }.squareRoot()
        if norm > 0 { z = z.map { $0 / norm } }
        return z
    }
}

/// Groups a night's snore signatures by snorer.
///
/// Agglomerative clustering with average linkage (UPGMA; Sokal & Michener 1958) on cosine distance
/// `1 − a·b` of the L2-normalised signatures; merging stops when the closest pair of clusters is farther apart
/// than `threshold`, so the number of clusters is automatic. Deterministic (ties broken by index). For more than
/// `maxDirect` signatures, a fixed pseudo-random subset is clustered and every other signature joins the cluster with
/// the nearest mean direction (bounded O(maxDirect³) time, O(maxDirect²) memory).
public enum SnorerClustering {
    /// Default stopping distance, measured by Benchmarks/Scripts/detection/evaluate_signatures.py.
    public static let defaultThreshold: Float = 0.9

    /// Cluster label per signature (0 = the cluster of the first signature, labels in order of first appearance).
    public static func cluster(signatures: [[Float]], threshold: Float = defaultThreshold, maxDirect: Int = 400) -> [Int] {
        let n = signatures.count
        guard n > 1 else { return [Int](repeating: 0, count: n) }
        // Subset: the first `maxDirect` indices in a fixed pseudo-random order (Knuth's multiplicative hash), so a
        // night whose snorers alternate regularly is still sampled evenly; all of them when n ≤ maxDirect.
        let direct: [Int] = n <= maxDirect ? Array(0..<n)
            : (0..<n).sorted { (UInt32(truncatingIfNeeded: $0) &* 2_654_435_761, $0) < (UInt32(truncatingIfNeeded: $1) &* 2_654_435_761, $1) }
                .prefix(maxDirect).sorted()
        let m = direct.count
        // Pairwise distances of the directly clustered subset.
        var dist = [Float](repeating: 0, count: m * m)
        for i in 0..<m {
            for j in (i + 1)..<max(i + 1, m) {
                let d = 1 - dot(signatures[direct[i]], signatures[direct[j]])
                dist[i * m + j] = d; dist[j * m + i] = d
            }
        }
        var members: [[Int]] = (0..<m).map { [$0] }
        var alive = [Bool](repeating: true, count: m)
        while true {
            var best = Float.infinity, bi = -1, bj = -1
            for i in 0..<m where alive[i] {
                for j in (i + 1)..<max(i + 1, m) where alive[j] && dist[i * m + j] < best {
                    best = dist[i * m + j]; bi = i; bj = j
                }
            }
            if bi < 0 || best > threshold { break }
            // Average linkage update (Lance–Williams): d(k, i∪j) = (|i| d(k,i) + |j| d(k,j)) / (|i| + |j|).
            let ni = Float(members[bi].count), nj = Float(members[bj].count)
            for k in 0..<m where alive[k] && k != bi && k != bj {
                let d = (ni * dist[k * m + bi] + nj * dist[k * m + bj]) / (ni + nj)
                dist[k * m + bi] = d; dist[bi * m + k] = d
            }
            members[bi] += members[bj]
            alive[bj] = false
        }
        // Cluster mean directions, then assign every signature to the nearest one.
        let clusters = (0..<m).filter { alive[$0] }
        let dim = signatures[0].count
        let centroids: [[Float]] = clusters.map { c in
            var s = [Float](repeating: 0, count: dim)
            for i in members[c] { for d in 0..<dim { s[d] += signatures[direct[i]][d] } }
            let norm = s.reduce(0) { $0 + $1 * $1 }.squareRoot()
            return norm > 0 ? s.map { $0 / norm } : s
        }
        var raw = [Int](repeating: 0, count: n)
        var directLabel = [Int: Int]()
        for (ci, c) in clusters.enumerated() { for i in members[c] { directLabel[direct[i]] = ci } }
        for i in 0..<n {
            if let l = directLabel[i] { raw[i] = l; continue }
            var bestC = 0, bestD = Float.infinity
            for (ci, c) in centroids.enumerated() {
                let d = 1 - dot(signatures[i], c)
                if d < bestD { bestD = d; bestC = ci }
            }
            raw[i] = bestC
        }
        // Relabel in order of first appearance.
        var map = [Int: Int]()
        return raw.map { l in
            if let v = map[l] { return v }
            let v = map.count; map[l] = v; return v
        }
    }

    static func dot(_ a: [Float], _ b: [Float]) -> Float {
        var s: Float = 0
        for i in 0..<min(a.count, b.count) { s += a[i] * b[i] }
        return s
    }
}
