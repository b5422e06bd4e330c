import Foundation

/// The gradient-boosted trees of one staging sub-model (Friedman 2001, "Greedy function approximation: a gradient
/// boosting machine", Ann. Statist. 29(5)), trained by scikit-learn's `HistGradientBoostingClassifier` in
/// `Benchmarks/Scripts/staging/train.py`. A class's score is its baseline plus the leaf each of its trees reaches
/// (`x[feature] ≤ threshold` goes left), summed in Double in file order — as `tree_scores` in staging_model.py,
/// and as scikit-learn sums them — so the script's posteriors are reproduced.
///
/// File format (per sub-model): `"baseline": [4 scores]` and `"trees": [{"class": c, "nodes": "…"}, …]`; a tree's
/// nodes in pre-order, a split written `x<feature><=<threshold>:<index of its right child>` (its left child is the
/// next node), a leaf written as its output. Numbers are Python `repr` doubles, which read back exactly. The same
/// text syntax as the event detector's trees (`EventDetection.TreeEnsemble`), but Double throughout and a plain
/// walk: staging classifies one epoch per 30 s, not thousands of segments.
struct StagingTrees: Sendable {
    /// A split (`right > 0`: `x[feature] ≤ value` goes to the next node, otherwise to node `right`) or a leaf
    /// (`right == 0`, `value` = output).
    struct Node: Sendable {
        var feature: Int
        var value: Double
        var right: Int
    }
    struct Tree: Sendable {
        var stage: Int
        var nodes: [Node]
    }
    let baseline: [Double]
    let trees: [Tree]

    /// Parses the trees; nil if a tree is malformed (a split whose children are not inside the tree after it, a
    /// feature index outside `featureCount`, a class outside `classCount`, a non-finite number).
    init?(baseline: [Double], trees: [(stage: Int, nodes: String)], featureCount: Int, classCount: Int) {
        guard baseline.count == classCount, baseline.allSatisfy(\.isFinite) else { return nil }
        var parsed: [Tree] = []
        for (stage, text) in trees {
            guard (0..<classCount).contains(stage) else { return nil }
            var nodes: [Node] = []
            for token in text.split(separator: " ") {
                if token.hasPrefix("x") {
                    guard let le = token.range(of: "<="), let colon = token.lastIndex(of: ":"),
                          colon > le.upperBound,
                          let f = Int(token[token.index(after: token.startIndex)..<le.lowerBound]), (0..<featureCount).contains(f),
                          let t = Double(token[le.upperBound..<colon]), t.isFinite,
                          let r = Int(token[token.index(after: colon)...]) else { return nil }
                    nodes.append(Node(feature: f, value: t, right: r))
                } else {
                    guard let v = Double(token), v.isFinite else { return nil }
                    nodes.append(Node(feature: 0, value: v, right: 0))
                }
            }
            guard !nodes.isEmpty else { return nil }
            for (i, n) in nodes.enumerated() where n.right != 0 {
                guard i + 1 < nodes.count, n.right > i + 1, n.right < nodes.count else { return nil }
            }
            parsed.append(Tree(stage: stage, nodes: nodes))
        }
        guard !parsed.isEmpty else { return nil }
        self.baseline = baseline
        self.trees = parsed
    }

    /// Each class's baseline plus the leaves its trees reach.
    func scores(_ x: [Double]) -> [Double] {
        var z = baseline
        for tree in trees {
            var at = 0
            while true {
                let node = tree.nodes[at]
                if node.right == 0 { z[tree.stage] += node.value; break }
                at = x[node.feature] <= node.value ? at + 1 : node.right
            }
        }
        return z
    }
}
