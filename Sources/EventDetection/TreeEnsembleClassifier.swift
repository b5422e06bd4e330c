import Foundation
import SleepCycleFormats

/// Gradient-boosted decision trees for the five classes (the built-in model).
///
/// Multi-class gradient boosting with the log loss (Friedman 2001, "Greedy function approximation: a gradient
/// boosting machine", Ann. Statist. 29(5)): each boosting round adds one regression tree per class; a class's
/// score is its baseline plus the leaf values its trees reach, and `p = softmax(z / T)`. Trained by
/// scikit-learn's `HistGradientBoostingClassifier` (`Benchmarks/Scripts/detection/train.py`), whose trees this walks
/// node by node with the same rule (`x ≤ threshold` goes left) and sums the leaves in Double in the same order,
/// so the script's probabilities are reproduced (tested). A reader can open the file and follow any tree. The
/// built-in model is a per-class blend of three such models (`blend.py`): each class's trees from the models that
/// score it, leaves scaled by the model's share / T, so a class's score is the weighted mean of theirs; to this
/// walker it is one larger ensemble.
///
/// File format: the common header (`SegmentModel`, `"kind": "gbt"`) plus `"baseline": [5 scores]` and
/// `"trees": [{"class": c, "nodes": "x3<=0.25:4 x7<=-1.5:3 0.1 -0.2 0.3"}, …]`: each tree's nodes in pre-order,
/// a split written `x<feature><=<threshold>:<index of its right child>` (its left child is the next node; the
/// threshold is a float32, like the features, so the comparison is exact), a leaf written as its float32 output. Compact
/// text keeps the file readable and quick to load (a JSON number per node field took ~0.1 s to parse).
/// Features are finite by construction; a NaN would fail `x ≤ threshold` and go right (as in the script).
/// Cost: one root-to-leaf walk per tree (rounds × 5 classes, ≤ 15 leaves each), a chain of dependent loads per
/// tree: ~40 µs per unscreened segment for the built-in blend's 3 000 trees on the 6-h evaluation night.
public struct TreeEnsembleClassifier: SegmentClassifier {
    let ensemble: TreeEnsemble

    /// Loads a model file (or its JSON); throws `DetectionError` naming the file and the problem.
    public init(contentsOf url: URL) throws { try self.init(file: .decode(contentsOf: url), path: url.path) }
    public init(json data: Data, path: String = "<model>") throws { try self.init(file: .decode(data, path: path), path: path) }

    init(file: ModelFile, path: String) throws {
        guard file.kind == "gbt" else {
            throw DetectionError.modelInvalid(path: path, reason: "kind \(file.kind ?? "(none)") is not gbt")
        }
        ensemble = try TreeEnsemble(baseline: file.baseline, trees: file.trees, temperature: file.temperature ?? 1,
                                    featureCount: SegmentFeatures.count, classCount: ClassProbabilities.classes.count,
                                    path: path)
    }

    /// Number of trees (rounds × classes).
    public var treeCount: Int { ensemble.roots.count }

    public func classify(_ features: SegmentFeatures) -> ClassProbabilities {
        features.values.withUnsafeBufferPointer { ensemble.probabilities($0) }
    }
}

/// The trees of one ensemble, packed for the walk: the segment classifier's (`TreeEnsembleClassifier`, 106 segment
/// features), the context stage's (`SegmentContextModel`, 30 context features) and the screen's (`SegmentScreen`,
/// one score from the 61 spectral summaries). One baseline score per class; each tree adds to its class's score.
///
/// The walk is branch-free and interleaved: trees are taken `lanes` at a time and stepped together for as many
/// steps as the deepest of them needs; a leaf steps onto itself. A root-to-leaf walk is a chain of dependent loads
/// with a data-dependent branch at every level, so walking one tree after the other left the CPU waiting on
/// mispredicted branches and cache misses; eight independent chains overlap. The eight positions are plain
/// locals, which stay in general registers (kept in a `SIMD8`, every step moved each lane between vector and
/// general registers: 1.3 % more of a 6-h `analyze`; twelve chains spill). The trees are grouped by depth
/// (stably; their nodes stored in that order), so a shallow tree does not wait on a deep one beside it: on the
/// built-in model a fifth fewer steps than in file order, and ~12 % less time in the walk (perf samples on a 6-h
/// night). Each tree's leaf is set aside and the leaves are summed in file order (in Double), with the plain walk's
/// comparisons (`x ≤ threshold` goes left), so the probabilities are bit for bit those of the plain walk (tested
/// against the script's).
struct TreeEnsemble: Sendable {
    /// A split (`rightOffset > 0`: `x[feature] ≤ number` goes to the next node, otherwise `rightOffset` nodes
    /// further on) or a leaf (`rightOffset == 0`, `number` = output, `feature` = 0 so a step onto itself reads a
    /// valid feature).
    struct PackedNode: Sendable {
        var number: Float
        var feature: UInt16
        var rightOffset: UInt16
        var isLeaf: Bool { rightOffset == 0 }
    }
    /// Trees stepped together (the walk in `scores` names eight positions).
    static let lanes = 8
    /// Every tree's nodes for the walk, 8 bytes each (a third less memory than 32-bit fields: fewer nodes for other
    /// work to evict from the caches between two segments).
    let nodes: [PackedNode]
    /// In walk order (trees grouped by depth): each tree's root in `nodes` and its index in the file.
    let roots: [Int32]
    let fileIndex: [Int32]
    /// In file order: each tree's class.
    let treeClass: [Int32]
    /// Per group of `lanes` trees in walk order (the last may be shorter), the steps its deepest tree needs to reach
    /// a leaf.
    let groupSteps: [Int32]
    let baseline: [Double]
    let temperature: Double
    let featureCount: Int

    /// `classCount` baseline scores and trees of classes below it; `stage` prefixes error messages (e.g. "screen: ").
    init(baseline: [Double]?, trees: [ModelFile.Tree]?, temperature: Double, featureCount: Int, classCount classes: Int,
         path: String, stage: String = "") throws {
        func bad(_ why: String) -> DetectionError { .modelInvalid(path: path, reason: stage + why) }
        guard let baseline, let trees, baseline.count == classes, baseline.allSatisfy(\.isFinite), !trees.isEmpty else {
            throw bad("a tree model needs \(classes) finite baseline scores and trees")
        }
        guard temperature > 0, temperature.isFinite else { throw bad("temperature must be > 0") }
        var parsed: [[PackedNode]] = []
        var treeClass: [Int32] = []
        for (t, tree) in trees.enumerated() {
            guard (0..<classes).contains(tree.class) else { throw bad("tree \(t): class \(tree.class) out of range") }
            guard let local = Self.parse(tree.nodes, featureCount: featureCount) else {
                throw bad("tree \(t): malformed nodes (or a right child more than \(UInt16.max) nodes after its split)")
            }
            parsed.append(local)
            treeClass.append(Int32(tree.class))
        }
        let depths = parsed.map { Self.depth($0, root: 0) }
        // Stable: trees of equal depth keep their file order.
        let order = parsed.indices.sorted { (depths[$0], $0) < (depths[$1], $1) }
        var nodes: [PackedNode] = []
        nodes.reserveCapacity(parsed.reduce(0) { $0 + $1.count })
        var roots: [Int32] = []
        for t in order {
            roots.append(Int32(nodes.count))
            nodes += parsed[t]
        }
        self.nodes = nodes; self.roots = roots; self.treeClass = treeClass
        fileIndex = order.map { Int32($0) }
        groupSteps = stride(from: 0, to: order.count, by: Self.lanes).map { g in
            order[g..<min(g + Self.lanes, order.count)].map { depths[$0] }.max() ?? 0
        }
        self.baseline = baseline; self.temperature = temperature; self.featureCount = featureCount
    }

    /// Parses one tree's pre-order text (`PreorderTreeText`) into packed nodes; nil if it is malformed or a right
    /// child lies more than `UInt16.max` nodes after its split.
    static func parse(_ text: String, featureCount: Int) -> [PackedNode]? {
        guard let parsed = PreorderTreeText.parse(text, featureCount: featureCount, as: Float.self) else { return nil }
        var nodes: [PackedNode] = []
        nodes.reserveCapacity(parsed.count)
        for (i, node) in parsed.enumerated() {
            guard let feature = UInt16(exactly: node.feature), let offset = UInt16(exactly: node.right == 0 ? 0 : node.right - i)
            else { return nil }
            nodes.append(PackedNode(number: node.number, feature: feature, rightOffset: offset))
        }
        return nodes
    }

    /// Steps from `root` to the deepest leaf (pre-order: the left child is the next node).
    static func depth(_ nodes: [PackedNode], root: Int) -> Int32 {
        var deepest: Int32 = 0
        var stack: [(index: Int, depth: Int32)] = [(root, 0)]
        while let (i, d) = stack.popLast() {
            let node = nodes[i]
            if node.isLeaf { deepest = max(deepest, d); continue }
            stack.append((i + 1, d + 1))
            stack.append((i + Int(node.rightOffset), d + 1))
        }
        return deepest
    }

    /// `softmax(z / T)` of the summed leaves; `x` holds `featureCount` values.
    func probabilities(_ x: UnsafeBufferPointer<Float>) -> ClassProbabilities {
        softmax(scores(x), temperature: temperature)
    }

    /// Each class's baseline plus the leaves its trees reach; `x` holds at least `featureCount` values.
    func scores(_ x: UnsafeBufferPointer<Float>) -> [Double] {
        var z = baseline
        let lanes = Self.lanes
        withUnsafeTemporaryAllocation(of: Float.self, capacity: roots.count) { leaves in
            nodes.withUnsafeBufferPointer { nodes in
                roots.withUnsafeBufferPointer { roots in
                    fileIndex.withUnsafeBufferPointer { fileIndex in
                        assert(lanes == 8, "the walk names eight positions")
                        // A split goes to the next node or `rightOffset` on; a leaf (offset 0) stays.
                        @inline(__always) func next(_ at: Int) -> Int {
                            let node = nodes[at]
                            let right = Int(node.rightOffset)
                            return at &+ (x[Int(node.feature)] <= node.number ? min(right, 1) : right)
                        }
                        for (g, steps) in groupSteps.enumerated() {
                            let first = g * lanes, count = min(lanes, roots.count - first)
                            func root(_ k: Int) -> Int { Int(roots[first + min(k, count - 1)]) }
                            var a0 = root(0), a1 = root(1), a2 = root(2), a3 = root(3)
                            var a4 = root(4), a5 = root(5), a6 = root(6), a7 = root(7)
                            for _ in 0..<steps {
                                a0 = next(a0); a1 = next(a1); a2 = next(a2); a3 = next(a3)
                                a4 = next(a4); a5 = next(a5); a6 = next(a6); a7 = next(a7)
                            }
                            func leaf(_ k: Int, _ at: Int) { if k < count { leaves[Int(fileIndex[first + k])] = nodes[at].number } }
                            leaf(0, a0); leaf(1, a1); leaf(2, a2); leaf(3, a3); leaf(4, a4); leaf(5, a5); leaf(6, a6); leaf(7, a7)
                        }
                    }
                }
            }
            treeClass.withUnsafeBufferPointer { treeClass in
                z.withUnsafeMutableBufferPointer { z in
                    for t in 0..<treeClass.count { z[Int(treeClass[t])] += Double(leaves[t]) }
                }
            }
        }
        return z
    }
}
