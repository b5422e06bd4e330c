import Foundation
import SleepCycleBus

/// The context stage: re-classifies each segment from its own class probabilities and those of its neighbours.
///
/// The segment classifier sees one segment at a time, so the quiet first word of an utterance, one cough of a burst
/// that sounds like a grunt, or a snore that shares its segment with a breath are judged alone. Sounds at night come
/// in runs (words of an utterance, coughs of a burst, snores at the breathing period), and their neighbours say
/// which run a segment belongs to. The stage is a second, small tree ensemble over 30 numbers per segment
/// (`featureNames`), computed from the segment classifier's probabilities of the segments around it (stacking,
/// Wolpert 1992): the segment's own 5 probabilities and log duration; for the segments before it that end within
/// `window` seconds of its start, and for those after it that start within `window` of its end, the
/// duration-weighted mean probabilities, the gap to the nearest one (capped at `longWindow`) and their count; over
/// every other segment within `longWindow` seconds, the duration-weighted mean probabilities, the largest
/// probability of each event class and their count.
///
/// It is trained by `Benchmarks/Scripts/detection/train.py` on out-of-fold segment probabilities (the stage learns
/// how the segment classifier errs on data it did not see), so it belongs to the segment model it was trained
/// with: the model file's `"context"` section (`"features"`, `"window"`, `"longWindow"`, `"baseline"`, `"trees"`,
/// `"temperature"`, trees as in `TreeEnsembleClassifier`). A segment is decided once every segment that starts
/// within `longWindow` after its end has closed, so events are reported about `longWindow` seconds later.
public struct SegmentContextModel: Sendable {
    public static let featureNames: [String] = {
        let cls = ClassProbabilities.classes
        return cls.map { "p_\($0)" } + ["log_duration"]
            + cls.map { "before_p_\($0)" } + ["before_gap_s", "before_count"]
            + cls.map { "after_p_\($0)" } + ["after_gap_s", "after_count"]
            + cls.map { "around_p_\($0)" } + cls.dropFirst().map { "around_max_\($0)" } + ["around_count"]
    }()
    public static var featureCount: Int { featureNames.count }

    /// Neighbour window before and after the segment (seconds).
    public let window: Double
    /// Wider window of the `around_*` features, and the cap of the gaps (seconds).
    public let longWindow: Double
    let ensemble: TreeEnsemble

    init(section s: ModelFile.Context, path: String) throws {
        func bad(_ why: String) -> DetectionError { .modelInvalid(path: path, reason: "context: " + why) }
        guard s.features == Self.featureNames else {
            throw bad("feature names differ from this build's (re-train the model)")
        }
        guard s.window > 0, s.longWindow >= s.window, s.longWindow <= 60 else {
            throw bad("need 0 < window ≤ longWindow ≤ 60 s")
        }
        window = s.window; longWindow = s.longWindow
        ensemble = try TreeEnsemble(baseline: s.baseline, trees: s.trees, temperature: s.temperature,
                                    featureCount: Self.featureCount, classCount: ClassProbabilities.classes.count,
                                    path: path, stage: "context: ")
    }

    /// The committed model's context stage (nil if the committed file has none).
    public static func builtIn() throws -> SegmentContextModel? { try builtInContext.get() }
    static let builtInContext: Result<SegmentContextModel?, any Error> = Result {
        let (file, path) = try SegmentModel.builtInFile.get()
        return try file.context.map { try SegmentContextModel(section: $0, path: path) }
    }

    /// One segment as the context stage sees it: its times (seconds) and the segment classifier's probabilities.
    public struct Neighbour: Sendable {
        public var start: Double, end: Double
        public var probabilities: ClassProbabilities
        public init(start: Double, end: Double, probabilities: ClassProbabilities) {
            self.start = start; self.end = end; self.probabilities = probabilities
        }
    }

    /// The 30 context features of `segments[index]` (`segments` sorted by start; it must hold every segment that
    /// can be a neighbour: all that end after `start − longWindow` and start before `end + longWindow`).
    public func features(of index: Int, in segments: [Neighbour]) -> [Float] {
        let s = segments[index]
        let n = ClassProbabilities.classes.count
        var f: [Double] = s.probabilities.values
        f.append(Foundation.log(s.end - s.start))
        func meanOf(_ js: [Int]) -> [Double] {
            var m = [Double](repeating: 0, count: n)
            var total = 0.0
            for j in js {
                let d = segments[j].end - segments[j].start
                for c in 0..<n { m[c] += segments[j].probabilities.values[c] * d }
                total += d
            }
            return js.isEmpty ? m : m.map { $0 / total }
        }
        let before = (0..<index).filter { segments[$0].end > s.start - window }
        let beforeGap = index > 0 ? s.start - segments[index - 1].end : longWindow
        f += meanOf(before) + [min(beforeGap, longWindow), Double(before.count)]
        let after = (index + 1..<segments.count).filter { segments[$0].start < s.end + window }
        let afterGap = index + 1 < segments.count ? segments[index + 1].start - s.end : longWindow
        f += meanOf(after) + [min(afterGap, longWindow), Double(after.count)]
        let around = segments.indices.filter {
            $0 != index && segments[$0].end > s.start - longWindow && segments[$0].start < s.end + longWindow
        }
        var maxima = [Double](repeating: 0, count: n - 1)
        for j in around { for c in 1..<n { maxima[c - 1] = max(maxima[c - 1], segments[j].probabilities.values[c]) } }
        f += meanOf(around) + maxima + [Double(around.count)]
        return f.map { Float($0) }
    }

    /// The re-classified probabilities of `segments[index]`.
    public func classify(_ index: Int, in segments: [Neighbour]) -> ClassProbabilities {
        features(of: index, in: segments).withUnsafeBufferPointer { ensemble.probabilities($0) }
    }
}

/// One channel's segments waiting for their context: classified by the segment classifier, decided by the context
/// stage once no later neighbour can appear. Bounded: it keeps only segments that can still be a neighbour.
struct ContextQueue: Sendable {
    struct Waiting: Sendable { var segment: CandidateSegment; var decided: Bool }
    private(set) var segments: [SegmentContextModel.Neighbour] = []
    private var waiting: [Waiting] = []

    /// Start of the earliest segment not yet decided.
    var firstUndecidedStart: SampleTime? { waiting.first { !$0.decided }?.segment.start }

    mutating func append(_ segment: CandidateSegment, probabilities: ClassProbabilities) {
        segments.append(.init(start: AnalysisClock.seconds(segment.start), end: AnalysisClock.seconds(segment.end),
                              probabilities: probabilities))
        waiting.append(Waiting(segment: segment, decided: false))
    }

    /// Decides, in order, every segment whose later neighbours are all known by `now` (every segment starting
    /// before its end + `longWindow` has closed; `now` = nil: the stream ended), then drops segments no undecided or
    /// future segment can reach.
    mutating func decide(model: SegmentContextModel, now: SampleTime?,
                         _ body: (CandidateSegment, ClassProbabilities) -> Void) {
        let horizon = AnalysisClock.samples(seconds: model.longWindow)
        for i in waiting.indices where !waiting[i].decided {
            if let now, waiting[i].segment.end + horizon > now { break }
            // A screened segment stays none (its neighbours still see it); the stage decides the rest.
            body(waiting[i].segment, waiting[i].segment.screened ? .screenedNone : model.classify(i, in: segments))
            waiting[i].decided = true
        }
        // Future segments start at or after `now`, undecided ones at or after the first undecided start.
        guard let bound = firstUndecidedStart ?? now else { segments.removeAll(); waiting.removeAll(); return }
        let drop = segments.prefix { $0.end <= AnalysisClock.seconds(bound) - model.longWindow }.count
        if drop > 0 { segments.removeFirst(drop); waiting.removeFirst(drop) }
    }
}
