import Foundation

/// The screen: a small tree ensemble that recognises plainly-none segments (a breath, a rustle of the background)
/// from the 61 spectral summaries alone, before the segment's costlier features and the full classifier are
/// computed.
///
/// Most segments of a night are breaths and background (one every ~2 s on a night of audible breathing) and
/// nearly all are none with high confidence; computing their voicing (`SegmentVoicing`) and temporal shape
/// (`SegmentShape`) and walking the segment classifier's trees (1 500 then; 3 000 in the blends) for
/// each made detection cost about half as much again as the rest of `analyze`. The screen scores a segment from
/// the leading `featureCount` values of `SegmentFeatures` (the mel summaries: cepstrum, duration, SNR, spectral
/// shape, envelope; no voicing, no shape)
/// with binary gradient-boosted trees (none vs any event; logistic loss, so the score is a log-odds of "event"),
/// and a segment scoring below `threshold` is decided none (`ClassProbabilities.screenedNone`) without the rest.
///
/// Trained by `Benchmarks/Scripts/detection/train.py` with the classifier it belongs to (the model file's
/// `"screen"` section: `"features"` = the leading feature names it reads, `"baseline"` = [one score],
/// `"trees"` as in `TreeEnsembleClassifier` with class 0, `"threshold"`); the threshold is the out-of-fold score
/// under which 0.5 % of the training segments labelled as events fall. A screened segment stays none (the context
/// stage does not re-decide it) and its neighbours see it as `ClassProbabilities.screenedNone`; the context stage
/// is trained with the screen in place, so a model file's stages belong together. Docs: docs/0005, "The screen".
public struct SegmentScreen: Sendable {
    /// How many leading `SegmentFeatures` values it reads.
    public let featureCount: Int
    /// A segment whose score is below this is none.
    public let threshold: Double
    let ensemble: TreeEnsemble

    init(section s: ModelFile.Screen, path: String) throws {
        func bad(_ why: String) -> DetectionError { .modelInvalid(path: path, reason: "screen: " + why) }
        guard !s.features.isEmpty, s.features.count <= SegmentFeatures.count,
              s.features == Array(SegmentFeatures.names.prefix(s.features.count)) else {
            throw bad("its features must be leading names of this build's SegmentFeatures.names (re-train the model)")
        }
        guard s.threshold.isFinite else { throw bad("threshold must be finite") }
        featureCount = s.features.count
        threshold = s.threshold
        ensemble = try TreeEnsemble(baseline: s.baseline, trees: s.trees, temperature: 1, featureCount: featureCount,
                                    classCount: 1, path: path, stage: "screen: ")   // one score: none vs event
    }

    /// The committed model's screen (nil if the committed file has none).
    public static func builtIn() throws -> SegmentScreen? { try builtInScreen.get() }
    static let builtInScreen: Result<SegmentScreen?, any Error> = Result {
        let (file, path) = try SegmentModel.builtInFile.get()
        return try file.screen.map { try SegmentScreen(section: $0, path: path) }
    }

    /// The log-odds that a segment is an event, from (at least) its first `featureCount` feature values.
    public func score(_ leading: UnsafeBufferPointer<Float>) -> Double {
        precondition(leading.count >= featureCount, "the screen reads \(featureCount) features")
        return ensemble.scores(leading)[0]
    }

    /// Whether the segment is plainly none (its score is under `threshold`).
    public func isPlainlyNone(_ leading: UnsafeBufferPointer<Float>) -> Bool { score(leading) < threshold }
}

extension ClassProbabilities {
    /// What a screened segment is: none, with certainty (what the context stage sees of it).
    public static let screenedNone = ClassProbabilities(values: [1, 0, 0, 0, 0])
}
