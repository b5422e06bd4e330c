import Foundation
import Testing
import SleepCycleBus
import SleepCycleDSP
@testable import EventDetection

@Suite struct ScreenTests {
    /// A model file (a fixed-answer tree model) with a hand-written screen: one tree on the first feature,
    /// `x0 <= 0 → -3, else +3`, baseline 0.5.
    static func modelWithScreen(threshold: Double, features: Int = SegmentFeatureExtractor.spectralCount,
                                baseline: String = "[0.5]") -> String {
        let names = SegmentFeatures.names.prefix(features).map { "\"\($0)\"" }.joined(separator: ",")
        let model = ClassifierTests.treeModel(trees: #"{"class":1,"nodes":"x0<=2:2 1.0 -1.0"}"#)
        let end = model.lastIndex(of: "}")!
        return model[..<end] + """
        ,"screen":{"features":[\(names)],"baseline":\(baseline),"trees":[{"class":0,"nodes":"x0<=0:2 -3 3"}],
        "threshold":\(threshold)}}
        """
    }

    func load(_ json: String, path: String = "screen.json") throws -> SegmentScreen? {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("sleepcycle-screen-\(UUID()).json")
        try Data(json.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try SegmentModel.loadStages(contentsOf: url).screen
    }

    @Test func builtInScreenReproducesTheTrainingScript() throws {
        let screen = try #require(try SegmentScreen.builtIn())
        #expect(screen.featureCount == SegmentFeatureExtractor.spectralCount)
        #expect(screen.threshold == ModelParityVectors.screenThreshold)
        #expect(ModelParityVectors.screenScores.count == ModelParityVectors.cases.count)
        for (c, want) in zip(ModelParityVectors.cases, ModelParityVectors.screenScores) {
            // The same walk and the same sums in Double as the script: equal, not merely close.
            #expect(c.features.withUnsafeBufferPointer { screen.score($0) } == want)
        }
    }

    @Test func scoresIsBaselinePlusLeafAndComparesWithTheThreshold() throws {
        let screen = try #require(try load(Self.modelWithScreen(threshold: 1)))
        var x = [Float](repeating: 0, count: SegmentFeatures.count)
        #expect(x.withUnsafeBufferPointer { screen.score($0) } == -2.5)
        #expect(x.withUnsafeBufferPointer { screen.isPlainlyNone($0) })
        x[0] = 1
        #expect(x.withUnsafeBufferPointer { screen.score($0) } == 3.5)
        #expect(!x.withUnsafeBufferPointer { screen.isPlainlyNone($0) })
    }

    @Test func screensThatDoNotFitThisBuildAreRejected() throws {
        // Not the leading feature names, more than one score, a threshold that is not a number.
        let shifted = Self.modelWithScreen(threshold: 0).replacingOccurrences(of: "\"features\":[\"mfcc1_mean\",",
                                                                               with: "\"features\":[")
        for json in [shifted, Self.modelWithScreen(threshold: 0, baseline: "[0, 1]"),
                     Self.modelWithScreen(threshold: 0, features: 0)] {
            do {
                _ = try load(json)
                Issue.record("accepted a screen that does not fit")
            } catch let e as DetectionError {
                #expect(e.description.contains("screen"))
                #expect(!e.description.contains("\n"))
            }
        }
    }

    /// Segments of a synthetic night through a detector with a counting classifier.
    func classifiedSegments(screen: SegmentScreen?) throws -> (asked: Int, events: Int) {
        let counter = Counter()
        let classifier = FixedClassifier { _ in
            counter.add()
            return ClassProbabilities(values: [0.05, 0.05, 0.85, 0.025, 0.025])
        }
        var d = try EventDetector(classifier: classifier, screen: screen)
        let loud = TestSignals.snorerShape(peaks: [5, 12], level: 1e-2)
        let rows = TestSignals.frames(seconds: 40, background: TestSignals.background(1e-4),
                                      events: [(5, 5.6, loud), (15, 15.6, loud), (25, 25.6, loud)])
        var events = 0
        func count(_ out: [AnalysisEvent]) { events += out.filter { if case .eventEnded = $0 { true } else { false } }.count }
        for b in TestSignals.blocks(rows) { count(d.handle(.features(b))) }
        count(d.handle(.sessionEnding(at: SampleTime(rows.count * TestSignals.hop))))
        return (counter.value, events)
    }

    @Test func aScreenedSegmentIsNoneWithoutAskingTheClassifier() throws {
        let all = try #require(try load(Self.modelWithScreen(threshold: 100)))     // every segment is plainly none
        let none = try #require(try load(Self.modelWithScreen(threshold: -100)))   // no segment is
        let without = try classifiedSegments(screen: nil)
        #expect(without.asked >= 3 && without.events == 3)
        #expect(try classifiedSegments(screen: none) == without)
        #expect(try classifiedSegments(screen: all) == (0, 0))
    }

    @Test func theContextStageDoesNotReDecideAScreenedSegment() throws {
        // A context stage that calls every segment talking (baseline 5 for talking, one empty tree).
        let section = ModelFile.Context(features: SegmentContextModel.featureNames, window: 3, longWindow: 10,
                                        baseline: [0, 0, 5, 0, 0], trees: [.init(class: 0, nodes: "0")], temperature: 1)
        let context = try SegmentContextModel(section: section, path: "context")
        let loud = TestSignals.snorerShape(peaks: [5, 12], level: 1e-2)
        let rows = TestSignals.frames(seconds: 40, background: TestSignals.background(1e-4),
                                      events: [(5, 5.6, loud), (15, 15.6, loud), (25, 25.6, loud)])
        func talking(screen: SegmentScreen?) throws -> Int {
            var d = try EventDetector(classifier: FixedClassifier.always(nil, 0.9), context: context, screen: screen)
            var out: [AnalysisEvent] = []
            for b in TestSignals.blocks(rows) { out += d.handle(.features(b)) }
            out += d.handle(.sessionEnding(at: SampleTime(rows.count * TestSignals.hop)))
            return out.filter { if case .eventEnded(let e) = $0 { e.type == .talking } else { false } }.count
        }
        #expect(try talking(screen: nil) == 3)
        #expect(try talking(screen: try #require(try load(Self.modelWithScreen(threshold: 100)))) == 0)
    }

    @Test func aScreenedSegmentCarriesItsSpectralSummariesOnly() throws {
        var x = try SegmentExtractor()
        x.screen = try #require(try load(Self.modelWithScreen(threshold: 100)))
        let loud = TestSignals.snorerShape(peaks: [5, 12], level: 1e-2)
        let rows = TestSignals.frames(seconds: 12, background: TestSignals.background(1e-4), events: [(5, 5.6, loud)])
        var segments: [CandidateSegment] = []
        for b in TestSignals.blocks(rows) { segments += x.process(b) }
        segments += x.flush()
        let unscreened = try TestSignals.segments(rows)
        #expect(segments.count == unscreened.count && !segments.isEmpty)
        let k = SegmentFeatureExtractor.spectralCount
        for (s, u) in zip(segments, unscreened) {
            #expect(s.screened && !u.screened)
            #expect(Array(s.features.values.prefix(k)) == Array(u.features.values.prefix(k)))
            #expect(s.features.values.dropFirst(k).allSatisfy { $0 == 0 })
            #expect(s.rawSignature == u.rawSignature && s.start == u.start && s.end == u.end)
        }
    }
}

/// Counts classifier calls across the `@Sendable` closure.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}
