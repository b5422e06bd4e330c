import Foundation
import Testing
import SleepCycleBus
import SleepCycleDSP
@testable import EventDetection

@Suite struct EventDetectorTests {
    let bg = TestSignals.background(1e-4)
    var loud: [Float] { TestSignals.snorerShape(peaks: [5, 12], level: 1e-2) }

    /// Runs a detector over synthetic rows and returns the `.eventEnded` events.
    func run(_ rows: [[Float]], classifier: FixedClassifier, channels: Int = 1,
             configuration: DetectorConfiguration = .default) throws -> [AnalysisEvent] {
        var d = try EventDetector(configuration: configuration, classifier: classifier)
        var out: [AnalysisEvent] = []
        out += d.handle(.sessionStarted(SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                                                    sourceSampleRate: 16000, channelCount: channels)))
        for ch in 0..<channels {
            for b in TestSignals.blocks(rows, channel: ch) { out += d.handle(.features(b)) }
        }
        out += d.handle(.sessionEnding(at: SampleTime(rows.count * TestSignals.hop)))
        return out
    }

    func ended(_ events: [AnalysisEvent]) -> [SoundEvent] {
        events.compactMap { if case .eventEnded(let e) = $0 { e } else { nil } }
    }

    @Test func publishesStartedAndEndedPairsWithIncreasingIds() throws {
        let rows = TestSignals.frames(seconds: 30, background: bg, events: [(5, 5.6, loud), (15, 15.6, loud)])
        let all = try run(rows, classifier: .always(.talking, 0.9))
        // Each talking event is first announced as held (for a live night's journal), without an id.
        let held = all.compactMap { if case .eventHeld(let e) = $0 { e } else { nil } }
        #expect(held.count == 2 && held.allSatisfy { $0.id == -1 && $0.type == .talking })
        let out = all.filter { if case .eventHeld = $0 { false } else { true } }
        #expect(out.count == 4)
        guard case .eventStarted(let a) = out[0], case .eventEnded(let b) = out[1] else {
            Issue.record("expected a started/ended pair"); return
        }
        #expect(a.id == b.id && a.start == b.start && a.end == b.end)
        let events = ended(out)
        #expect(events.map(\.id) == [0, 1])
        #expect(events.allSatisfy { $0.type == .talking && $0.channel == nil && $0.source == .audio && $0.signature == nil })
        #expect(events.allSatisfy { abs($0.probability - 0.9) < 1e-9 })
    }

    @Test func mergesACoughBurstIntoOneEvent() throws {
        // Three coughs 0.6 s apart (gaps 0.35 s > bridge, < 1 s merge gap) → one coughing event.
        let rows = TestSignals.frames(seconds: 20, background: bg,
                                      events: [(5, 5.25, loud), (5.6, 5.85, loud), (6.2, 6.45, loud)])
        let events = ended(try run(rows, classifier: .always(.coughing, 0.8)))
        #expect(events.count == 1)
        #expect(abs(AnalysisClock.seconds(events[0].start) - 5) < 0.07)
        #expect(abs(AnalysisClock.seconds(events[0].end) - 6.45) < 0.07)
    }

    @Test func aWordStillOpenWhenTheMergeGapRunsOutJoinsTheUtterance() throws {
        // A short word, 0.6 s of quiet, then a 2.5-s word: the second segment closes ~2.8 s after the first ended,
        // long after the 1.5-s merge gap, but it was open within the gap, so the utterance is one event.
        let rows = TestSignals.frames(seconds: 30, background: bg, events: [(5, 5.5, loud), (6.1, 8.6, loud)])
        let events = ended(try run(rows, classifier: .always(.talking, 0.8)))
        #expect(events.count == 1)
        if let e = events.first {
            #expect(abs(AnalysisClock.seconds(e.start) - 5.0) < 0.07)
            #expect(abs(AnalysisClock.seconds(e.end) - 8.6) < 0.07)
        }
        // A second word that starts after the gap is its own event.
        let apart = TestSignals.frames(seconds: 30, background: bg, events: [(5, 5.5, loud), (7.5, 10, loud)])
        #expect(ended(try run(apart, classifier: .always(.talking, 0.8))).count == 2)
    }

    @Test func coughAndTalkingEventsNeedTheirOwnHigherProbability() throws {
        let rows = TestSignals.frames(seconds: 30, background: bg, events: [(5, 5.6, loud), (15, 15.6, loud)])
        // Default: coughs need 0.7 as finished events, talking 0.6, the others 0.5.
        #expect(ended(try run(rows, classifier: .always(.coughing, 0.65))).isEmpty)
        #expect(ended(try run(rows, classifier: .always(.coughing, 0.75))).count == 2)
        #expect(ended(try run(rows, classifier: .always(.talking, 0.55))).isEmpty)
        #expect(ended(try run(rows, classifier: .always(.talking, 0.65))).count == 2)
        #expect(ended(try run(rows, classifier: .always(.movement, 0.55))).count == 2)
        var config = DetectorConfiguration.default
        config.minEventProbability = [:]
        #expect(ended(try run(rows, classifier: .always(.coughing, 0.65), configuration: config)).count == 2)
        config.minEventProbability = [.talking: 1.5]
        #expect(throws: DetectionError.self) { try EventDetector(configuration: config, classifier: FixedClassifier.always(.talking, 0.9)) }
    }

    @Test func longEventsCanHaveTheirOwnThreshold() throws {
        // With cough events of 0.7 s or more passing from 0.5: at 0.6, a lone 0.4-s cough (a knock or a click is as
        // short) is not reported, while a burst of three coughs (one 1.45-s event) and one 0.9-s cough are.
        let rows = TestSignals.frames(seconds: 40, background: bg, events: [
            (5, 5.4, loud),
            (15, 15.25, loud), (15.6, 15.85, loud), (16.2, 16.45, loud),
            (25, 25.9, loud)])
        var config = DetectorConfiguration.default
        config.longEventSec = [.coughing: 0.7]
        config.minLongEventProbability = [.coughing: 0.5]
        let events = ended(try run(rows, classifier: .always(.coughing, 0.6), configuration: config))
        #expect(events.count == 2)
        #expect(events.map { AnalysisClock.seconds($0.start).rounded() } == [15, 25])
        #expect(config.eventThreshold(.coughing, durationSec: 0.7) == 0.5)
        #expect(config.eventThreshold(.coughing, durationSec: 0.69) == 0.7)
        #expect(config.eventThreshold(.talking, durationSec: 3) == 0.6)
        // Under 0.5 nothing is a cough event; by default (no rule) 0.7 applies to all.
        #expect(ended(try run(rows, classifier: .always(.coughing, 0.45), configuration: config)).isEmpty)
        #expect(ended(try run(rows, classifier: .always(.coughing, 0.6))).isEmpty)
        #expect(DetectorConfiguration.default.eventThreshold(.coughing, durationSec: 3) == 0.7)
        config.minLongEventProbability = [.coughing: -0.1]
        #expect(throws: DetectionError.self) { try config.validate() }
    }

    @Test func snoreBoutRule() throws {
        // A lone moderately confident snore is dropped; a bout of snores every 4 s is reported snore by snore.
        let lone = TestSignals.frames(seconds: 40, background: bg, events: [(10, 11, loud)])
        #expect(ended(try run(lone, classifier: .always(.snoring, 0.7))).isEmpty)
        #expect(ended(try run(lone, classifier: .always(.snoring, 0.95))).count == 1)
        var boutEvents: [(Double, Double, [Float])] = []
        for i in 0..<5 { boutEvents.append((Double(10 + 4 * i), Double(11 + 4 * i), loud)) }
        let bout = TestSignals.frames(seconds: 40, background: bg, events: boutEvents)
        let events = ended(try run(bout, classifier: FixedClassifier.always(EventType.snoring, 0.7)))
        #expect(events.count == 5)
        #expect(events.allSatisfy { $0.type == .snoring })
        // Every snore carries a 16-d, unit-length signature.
        for e in events {
            let sig = try #require(e.signature)
            #expect(sig.count == 16)
            #expect(abs(sig.reduce(0) { $0 + $1 * $1 } - 1) < 1e-4)
        }
    }

    @Test func classWeightsShiftTheDecisionNotTheModel() throws {
        // A bout of five snores the model gives 0.4 (the other four classes 0.15 each): under minProbability by
        // default, reported with snoring weighted ×2 (0.8 / 1.4 ≈ 0.571, the probability the events carry).
        var boutEvents: [(Double, Double, [Float])] = []
        for i in 0..<5 { boutEvents.append((Double(10 + 4 * i), Double(11 + 4 * i), loud)) }
        let bout = TestSignals.frames(seconds: 40, background: bg, events: boutEvents)
        #expect(ended(try run(bout, classifier: .always(.snoring, 0.4))).isEmpty)
        var config = DetectorConfiguration.default
        config.classWeights = [.snoring: 2]
        let events = ended(try run(bout, classifier: .always(.snoring, 0.4), configuration: config))
        #expect(events.count == 5 && events.allSatisfy { $0.type == .snoring })
        #expect(events.allSatisfy { abs($0.probability - 0.8 / 1.4) < 1e-9 })
        // Weighting another class leaves snoring's winner alone but lowers its probability (0.4 / 1.15 < 0.5).
        config.classWeights = [.talking: 2]
        #expect(ended(try run(bout, classifier: .always(.snoring, 0.4), configuration: config)).isEmpty)
        for bad in [0.0, -1, .infinity, .nan] {
            config.classWeights = [.snoring: bad]
            #expect(throws: DetectionError.self) { try config.validate() }
        }
    }

    @Test func weightedProbabilitiesSumToOne() {
        let p = ClassProbabilities(values: [0.5, 0.2, 0.1, 0.1, 0.1])
        #expect(p.weighted([:]) == p)
        let w = p.weighted([.snoring: 3, .movement: 0.5])
        #expect(abs(w.values.reduce(0, +) - 1) < 1e-12)
        #expect(abs(w[.snoring] - 0.6 / 1.35) < 1e-12 && abs(w.none - 0.5 / 1.35) < 1e-12)
        #expect(w.best.type == .snoring)
    }

    @Test func aLongSnoreCutIntoPiecesIsOneSnore() throws {
        // A 5-s snore is cut into 2-s pieces for the classifier, but reported as one snore, and its pieces do not
        // partner each other: alone at 0.7 it is dropped like any lone snore.
        let rows = TestSignals.frames(seconds: 40, background: bg, events: [(10, 15, loud)])
        let pieces = try TestSignals.segments(rows)
        #expect(pieces.count >= 3)
        let one = ended(try run(rows, classifier: .always(.snoring, 0.95)))
        #expect(one.count == 1)
        if let e = one.first {
            #expect(abs(AnalysisClock.seconds(e.start) - 10) < 0.1 && AnalysisClock.seconds(e.end) > 14.5)
            #expect(abs(e.probability - 0.95) < 1e-9 && e.signature?.count == 16)
        }
        #expect(ended(try run(rows, classifier: .always(.snoring, 0.7))).isEmpty)
        // In a bout, each long snore is one event.
        let bout = TestSignals.frames(seconds: 60, background: bg, events: [(10, 14.5, loud), (20, 24.5, loud), (30, 34.5, loud)])
        let snores = ended(try run(bout, classifier: .always(.snoring, 0.7)))
        #expect(snores.count == 3)
        #expect(snores.allSatisfy { AnalysisClock.seconds($0.end) - AnalysisClock.seconds($0.start) > 4 })
    }

    @Test func sustainedSpeechIsNotReportedAsTalking() throws {
        // 5 min of speech (3-s stretches, 2-s pauses: a programme) from 20 s, then utterances every 30 s.
        var parts: [(Double, Double, [Float])] = []
        for i in 0..<60 { parts.append((20 + 5 * Double(i), 23 + 5 * Double(i), loud)) }
        for i in 0..<5 { parts.append((400 + 30 * Double(i), 403 + 30 * Double(i), loud)) }
        let rows = TestSignals.frames(seconds: 560, background: bg, events: parts)
        let talk = ended(try run(rows, classifier: .always(.talking, 0.9))).map {
            (AnalysisClock.seconds($0.start), AnalysisClock.seconds($0.end))
        }
        // The programme's first and last stretches have speech on one side only and are kept; inside it nothing is.
        #expect(talk.contains { $0.0 < 25 } && talk.contains { $0.0 > 310 && $0.0 < 320 })
        #expect(!talk.contains { $0.0 > 110 && $0.1 < 230 })
        #expect(talk.filter { $0.0 < 330 }.count < 40)
        // Utterances 30 s apart are all reported.
        #expect(talk.filter { $0.0 > 390 }.count == 5)
        // Off: every stretch is an event.
        var config = DetectorConfiguration.default
        config.sustainedSpeechWindowSec = 0
        #expect(ended(try run(rows, classifier: .always(.talking, 0.9), configuration: config)).count == 65)
        // Other classes are never held or dropped.
        #expect(ended(try run(rows, classifier: .always(.movement, 0.9))).count == 65)
        config.sustainedSpeechShare = 0
        #expect(throws: DetectionError.self) { try EventDetector(configuration: config, classifier: FixedClassifier.always(.talking, 0.9)) }
    }

    @Test func aClockTickingAllNightIsNotReportedButACoughAmidItIs() throws {
        // A 0.2-s tick every 1.55 s for 3 min (not a whole number of frames, so its onsets drift across them; more
        // than the 1-s merge gap apart, so each tick is an event of its own), and one cough of another shape between
        // two ticks. Everything is "coughing" to the classifier.
        let tick = loud
        let cough = TestSignals.snorerShape(peaks: [20, 30, 36], level: 3e-2)
        var parts: [(Double, Double, [Float])] = []
        var t = 2.0
        while t < 178 { parts.append((t, t + 0.2, tick)); t += 1.55 }
        let coughAt = 2.0 + 56 * 1.55 + 0.7
        parts.append((coughAt, coughAt + 0.3, cough))
        let rows = TestSignals.frames(seconds: 180, background: bg, events: parts)
        var off = DetectorConfiguration.default
        off.machineEcho = 2
        let plain = ended(try run(rows, classifier: .always(.coughing, 0.9), configuration: off))
        #expect(plain.count > 100)
        #expect(plain.contains { AnalysisClock.seconds($0.start) < coughAt && AnalysisClock.seconds($0.end) > coughAt })
        let events = ended(try run(rows, classifier: .always(.coughing, 0.9)))
        // The clock's first ticks (no beat heard yet) and the cough are reported; nothing else.
        let late = events.filter { AnalysisClock.seconds($0.start) > 20 }
        #expect(late.count == 1)
        if let e = late.first { #expect(abs(AnalysisClock.seconds(e.start) - coughAt) < 0.1) }
        #expect(events.count <= 13)
    }

    @Test func dropsNoneAndLowProbabilitySegments() throws {
        let rows = TestSignals.frames(seconds: 20, background: bg, events: [(5, 5.6, loud)])
        #expect(ended(try run(rows, classifier: .always(nil, 0.9))).isEmpty)
        #expect(ended(try run(rows, classifier: .always(.talking, 0.45))).isEmpty)
    }

    @Test func stereoEventsCarryTheirChannel() throws {
        let rows = TestSignals.frames(seconds: 20, background: bg, events: [(5, 5.6, loud)])
        let events = ended(try run(rows, classifier: .always(.movement, 0.9), channels: 2))
        #expect(events.count == 2)
        #expect(Set(events.compactMap(\.channel)) == [.primary, .secondary])
    }

    @Test func aGapClosesTheOpenSegment() throws {
        var d = try EventDetector(classifier: FixedClassifier.always(.talking, 0.9))
        let rows = TestSignals.frames(seconds: 6, background: bg, events: [(5, 6, loud)])
        var out: [AnalysisEvent] = []
        for b in TestSignals.blocks(rows) { out += d.handle(.features(b)) }
        #expect(ended(out).isEmpty)
        out += d.handle(.gap(AudioGap(start: SampleTime(rows.count * 512), length: 16000, reason: .overrun)))
        #expect(ended(out).count == 1)
    }
}
