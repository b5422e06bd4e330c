import Foundation
import SleepCycleFormats

/// The gradient-boosted trees of one staging sub-model (Friedman 2001, "Greedy function approximation: a gradient
/// boosting machine", Ann. Statist. 29(5)), trained by scikit-learn's `HistGradientBoostingClassifier` in
/// `Benchmarks/Scripts/staging/train.py`. A class's score is its baseline plus the leaf each of its trees reaches
/// (`x[feature] ≤ threshold` goes left), summed in Double in file order — as `tree_scores` in staging_model.py,
/// and as scikit-learn sums them — so the script's posteriors are reproduced.
///
/// File format (per sub-model): `"baseline": [4 scores]` and `"trees": [{"class": c, "nodes": "…"}, …]`; a tree's
/// nodes in pre-order, a split written `x<feature><=<threshold>:<index of its right child>` (its left child is the
/// next node), a leaf written as its output (`PreorderTreeText`, shared with the event detector's trees). Numbers are
/// Python `repr` doubles, which read back exactly. Double throughout: staging classifies one epoch
/// per 30 s, not thousands of segments per second.
struct StagingTrees: Sendable {
    /// A split (`right > 0`: `x[feature] ≤ number` goes to the next node, otherwise to node `right`) or a leaf
    /// (`right == 0`, `number` = output).
    typealias Node = PreorderTreeText.Node<Double>
    let baseline: [Double]
    /// Every tree's nodes, one after another, each split's `right` made an index into this array: one buffer walked
    /// without a per-tree array to retain (a whole-night design of a million epochs walks it a million times).
    private let nodes: [Node]
    /// Each tree's first node in `nodes` and its class, in file order.
    private let roots: [(start: Int, stage: Int)]

    /// Parses the trees; nil if a tree is malformed (a split whose children are not inside the tree after it, a
    /// feature index outside `featureCount`, a class outside `classCount`, a non-finite number).
    init?(baseline: [Double], trees: [(stage: Int, nodes: String)], featureCount: Int, classCount: Int) {
        guard baseline.count == classCount, baseline.allSatisfy(\.isFinite) else { return nil }
        var nodes: [Node] = [], roots: [(start: Int, stage: Int)] = []
        for (stage, text) in trees {
            guard (0..<classCount).contains(stage),
                  let tree = PreorderTreeText.parse(text, featureCount: featureCount, as: Double.self) else { return nil }
            let start = nodes.count
            roots.append((start, stage))
            nodes += tree.map { $0.isLeaf ? $0 : Node(feature: $0.feature, number: $0.number, right: start + $0.right) }
        }
        guard !roots.isEmpty else { return nil }
        self.baseline = baseline
        self.nodes = nodes
        self.roots = roots
    }

    /// Each class's baseline plus the leaves its trees reach.
    func scores(_ x: [Double]) -> [Double] {
        var z = baseline
        nodes.withUnsafeBufferPointer { nodes in
            x.withUnsafeBufferPointer { x in
                for (start, stage) in roots {
                    var at = start
                    while true {
                        let node = nodes[at]
                        if node.isLeaf { z[stage] += node.number; break }
                        at = x[node.feature] <= node.number ? at + 1 : node.right
                    }
                }
            }
        }
        return z
    }
}
