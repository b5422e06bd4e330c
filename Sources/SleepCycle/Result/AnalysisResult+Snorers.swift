import EventDetection
import Foundation
import SleepCycleBus

/// One snorer found by clustering a night's snore signatures.
public struct SnorerSummary: Sendable, Hashable {
    public var snorer: Int
    public var snoreCount: Int
    /// Seconds of snoring attributed to this snorer.
    public var snoreTime: Double
}

extension AnalysisResult {
    /// The result with every snoring event labelled by snorer (`SleepEvent.snorer`), by clustering the 16-d
    /// signatures with `SnorerClustering` (average-linkage agglomerative clustering on cosine distance, automatic
    /// number of clusters; docs/0005). Stereo channels are clustered together: the same person may reach both
    /// microphones. Deterministic.
    public func labellingSnorers(threshold: Float = SnorerClustering.defaultThreshold) -> AnalysisResult {
        var copy = self
        let indices = events.indices.filter { events[$0].type == .snoring && events[$0].signature != nil }
        let labels = SnorerClustering.cluster(signatures: indices.map { events[$0].signature! }, threshold: threshold)
        for (i, label) in zip(indices, labels) { copy.events[i].snorer = label }
        return copy
    }

    /// Per-snorer counts and time, when snorers have been labelled; sorted by snorer.
    public var snorers: [SnorerSummary] {
        var byLabel: [Int: SnorerSummary] = [:]
        for e in events where e.type == .snoring {
            guard let label = e.snorer else { continue }
            var s = byLabel[label] ?? SnorerSummary(snorer: label, snoreCount: 0, snoreTime: 0)
            s.snoreCount += 1
            s.snoreTime += e.end.timeIntervalSince(e.start)
            byLabel[label] = s
        }
        return byLabel.keys.sorted().map { byLabel[$0]! }
    }
}
