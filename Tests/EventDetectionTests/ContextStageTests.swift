import Foundation
import Testing
import SleepCycleBus
@testable import EventDetection

@Suite struct ContextStageTests {
    @Test func builtInContextStageReproducesTheTrainingScript() throws {
        let model = try #require(try SegmentContextModel.builtIn())
        #expect(!ModelParityVectors.contextCases.isEmpty)
        for c in ModelParityVectors.contextCases {
            let p = c.features.withUnsafeBufferPointer { model.ensemble.probabilities($0) }
            for (a, b) in zip(p.values, c.probabilities) { #expect(abs(a - b) < 1e-7) }
        }
    }

    @Test func contextFeaturesMatchTheTrainingScript() throws {
        let model = try #require(try SegmentContextModel.builtIn())
        let run = ModelParityVectors.contextRun.map {
            SegmentContextModel.Neighbour(start: $0.start, end: $0.end, probabilities: ClassProbabilities(values: $0.probabilities))
        }
        for (i, c) in ModelParityVectors.contextRun.enumerated() {
            let f = model.features(of: i, in: run)
            #expect(f.count == SegmentContextModel.featureCount)
            for (a, b) in zip(f, c.features) { #expect(abs(a - b) <= 1e-6 * max(1, abs(b)), "segment \(i)") }
        }
    }

    /// A hand-made context stage: talking when the segment itself is talking, or when the segments around it
    /// (duration-weighted, within the long window) are mostly talking; otherwise all classes tie (none wins).
    static func talkingContext(longWindow: Double = 10) throws -> SegmentContextModel {
        let names = SegmentContextModel.featureNames
        let own = names.firstIndex(of: "p_talking")!, around = names.firstIndex(of: "around_p_talking")!
        let file = ModelFile.Context(features: names, window: 3, longWindow: longWindow, baseline: [0, 0, 0, 0, 0],
                                     trees: [.init(class: 2, nodes: "x\(own)<=0.5:4 x\(around)<=0.5:3 0 6 6")],
                                     temperature: 1)
        return try SegmentContextModel(section: file, path: "context.json")
    }

    /// Talking 0.9 for segments longer than half a second, none 0.9 for shorter ones.
    let byLength = FixedClassifier { f in
        f.durationSec > 0.5 ? FixedClassifier.always(.talking, 0.9).classify(f) : FixedClassifier.always(nil, 0.9).classify(f)
    }

    func run(_ rows: [[Float]], context: SegmentContextModel?, classifier: FixedClassifier? = nil,
             configuration: DetectorConfiguration = .default) throws -> (events: [SoundEvent], publishedAt: [Double]) {
        var d = try EventDetector(configuration: configuration, classifier: classifier ?? byLength, context: context)
        var events: [SoundEvent] = [], at: [Double] = []
        func take(_ out: [AnalysisEvent], _ t: Double) {
            for e in out { if case .eventEnded(let s) = e { events.append(s); at.append(t) } }
        }
        take(d.handle(.sessionStarted(SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                                                  sourceSampleRate: 16000, channelCount: 1))), 0)
        for b in TestSignals.blocks(rows) {
            take(d.handle(.features(b)), AnalysisClock.seconds(b.start + SampleTime(b.count * b.hopLength)))
        }
        take(d.handle(.sessionEnding(at: SampleTime(rows.count * TestSignals.hop))), .infinity)
        return (events, at)
    }

    @Test func aShortWordBetweenTwoWordsJoinsTheUtterance() throws {
        let bg = TestSignals.background(1e-4)
        let loud = TestSignals.snorerShape(peaks: [5, 12], level: 1e-2)
        let rows = TestSignals.frames(seconds: 130, background: bg,
                                      events: [(5, 5.8, loud), (6.6, 6.9, loud), (7.8, 8.6, loud)])
        // The segment classifier alone calls the short middle word none: two talking events 2 s apart.
        let alone = try run(rows, context: nil).events
        #expect(alone.count == 2)
        // With the context stage it is talking (its neighbours are), and the utterance is one event...
        var noGate = DetectorConfiguration.default
        noGate.sustainedSpeechWindowSec = 0
        let (events, publishedAt) = try run(rows, context: try Self.talkingContext(), configuration: noGate)
        #expect(events.count == 1)
        if let e = events.first {
            #expect(e.type == .talking)
            #expect(abs(AnalysisClock.seconds(e.start) - 5) < 0.07 && abs(AnalysisClock.seconds(e.end) - 8.6) < 0.07)
            // ...published once the long window after its last segment has passed (no later neighbour can appear)...
            #expect(publishedAt[0] >= 8.6 + 10 && publishedAt[0] < 8.6 + 10 + 3)
        }
        // ...and, with the sustained-speech rule (the default), once its 90-s window after the event has passed too.
        let gated = try run(rows, context: try Self.talkingContext())
        #expect(gated.events.map(\.start) == events.map(\.start) && gated.events.map(\.end) == events.map(\.end))
        if let at = gated.publishedAt.first { #expect(at >= 8.6 + 90 && at < 8.6 + 90 + 13) }
    }

    @Test func aClocksFirstTicksEchoTheTicksAfterThem() throws {
        // Eight 0.29-s ticks 1.536 s (48 frames) apart, then quiet; and later a burst of three identical words 0.9 s
        // apart. Everything is talking to the classifier. Decided by the context stage (10 s after each segment), a
        // tick is compared with the three beat periods after it as well as before: the first three ticks, which have
        // no past to echo, are dropped too. The burst has two copies at most on either side of any of its words.
        let bg = TestSignals.background(1e-4)
        let loud = TestSignals.snorerShape(peaks: [5, 12], level: 1e-2)
        var parts: [(Double, Double, [Float])] = []
        for i in 0..<8 {
            let t = 5 + 1.536 * Double(i)
            parts.append((t, t + 0.288, loud))
        }
        parts += [(40, 40.3, loud), (40.9, 41.2, loud), (41.8, 42.1, loud)]
        let rows = TestSignals.frames(seconds: 60, background: bg, events: parts)
        var configuration = DetectorConfiguration.default
        configuration.sustainedSpeechWindowSec = 0
        configuration.mergeGapSec[.talking] = 0.5
        configuration.machineEchoAfter = false
        let always = FixedClassifier.always(.talking, 0.9)
        let before = try run(rows, context: try Self.talkingContext(), classifier: always, configuration: configuration).events
        #expect(before.filter { AnalysisClock.seconds($0.start) < 30 }.count >= 3)
        configuration.machineEchoAfter = true
        let events = try run(rows, context: try Self.talkingContext(), classifier: always, configuration: configuration).events
        #expect(events.filter { AnalysisClock.seconds($0.start) < 30 }.isEmpty)
        #expect(events.count == 3)
        #expect(events.allSatisfy { AnalysisClock.seconds($0.start) > 39.9 })
    }

    @Test func theEndOfTheStreamDecidesEverythingWaiting() throws {
        let bg = TestSignals.background(1e-4)
        let loud = TestSignals.snorerShape(peaks: [5, 12], level: 1e-2)
        // The last word ends 2 s before the stream does: well inside the long window.
        let rows = TestSignals.frames(seconds: 12, background: bg, events: [(5, 5.8, loud), (9, 10, loud)])
        let (events, publishedAt) = try run(rows, context: try Self.talkingContext())
        #expect(events.count == 2)
        #expect(publishedAt.allSatisfy { $0 == .infinity })
    }

    @Test func theQueueKeepsOnlySegmentsThatCanStillBeNeighbours() throws {
        let model = try Self.talkingContext(longWindow: 5)
        var queue = ContextQueue()
        var decided: [SampleTime] = []
        var largest = 0
        for i in 0..<2000 {
            let start = SampleTime(i) * 16000 + 4000   // a 0.5-s segment every second for 2000 s
            let segment = CandidateSegment(channel: 0, start: start, end: start + 8000,
                                           features: SegmentFeatures(values: [Float](repeating: 0, count: SegmentFeatures.count),
                                                                     durationSec: 0.5),
                                           rawSignature: [])
            queue.append(segment, probabilities: FixedClassifier.always(.talking, 0.9).classify(segment.features))
            queue.decide(model: model, now: start + 8000) { s, _ in decided.append(s.start) }
            largest = max(largest, queue.segments.count)
        }
        queue.decide(model: model, now: nil) { s, _ in decided.append(s.start) }
        // Every segment decided exactly once, in order; never more than the ±5-s neighbourhood held (≈ 11 segments).
        #expect(decided == (0..<2000).map { SampleTime($0) * 16000 + 4000 })
        #expect(largest <= 13)
        #expect(queue.segments.isEmpty)
    }

    @Test func rejectsAContextSectionThatDoesNotFit() throws {
        let bad = ModelFile.Context(features: ["x"], window: 3, longWindow: 10, baseline: [0, 0, 0, 0, 0],
                                    trees: [.init(class: 0, nodes: "0")], temperature: 1)
        #expect(throws: DetectionError.self) { try SegmentContextModel(section: bad, path: "m.json") }
        var outOfRange = bad
        outOfRange.features = SegmentContextModel.featureNames
        outOfRange.trees = [.init(class: 1, nodes: "x30<=0.5:2 0 1")]   // feature 30 of 0…29
        #expect(throws: DetectionError.self) { try SegmentContextModel(section: outOfRange, path: "m.json") }
        outOfRange.trees = [.init(class: 1, nodes: "x29<=0.5:2 0 1")]
        #expect(throws: Never.self) { try SegmentContextModel(section: outOfRange, path: "m.json") }
        outOfRange.longWindow = 1
        #expect(throws: DetectionError.self) { try SegmentContextModel(section: outOfRange, path: "m.json") }
    }
}
