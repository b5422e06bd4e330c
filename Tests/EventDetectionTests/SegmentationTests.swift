import Testing
import SleepCycleBus
@testable import EventDetection

@Suite struct SegmentationTests {
    let bg = TestSignals.background(1e-4)
    var loud: [Float] { TestSignals.snorerShape(peaks: [5, 12], level: 1e-2) }

    @Test func findsOneBurstWithFrameAccurateBounds() throws {
        let rows = TestSignals.frames(seconds: 12, background: bg, events: [(6.0, 6.8, loud)])
        let segs = try TestSignals.segments(rows)
        #expect(segs.count == 1)
        let s = try #require(segs.first)
        #expect(abs(AnalysisClock.seconds(s.start) - 6.0) < 0.07)
        #expect(abs(AnalysisClock.seconds(s.end) - 6.8) < 0.07)
        #expect(abs(s.features.durationSec - 0.8) < 0.07)
    }

    @Test func backgroundAloneAndTooShortBurstsGiveNothing() throws {
        #expect(try TestSignals.segments(TestSignals.frames(seconds: 20, background: bg, events: [])).isEmpty)
        let blip = TestSignals.frames(seconds: 12, background: bg, events: [(6.0, 6.07, loud)])
        #expect(try TestSignals.segments(blip).isEmpty)   // 2 frames < minSegmentSec 0.15 s
    }

    @Test func bridgesShortGapsButSplitsLongOnes() throws {
        let bridged = TestSignals.frames(seconds: 12, background: bg, events: [(6.0, 6.5, loud), (6.7, 7.2, loud)])
        #expect(try TestSignals.segments(bridged).count == 1)
        let split = TestSignals.frames(seconds: 12, background: bg, events: [(6.0, 6.5, loud), (7.3, 7.8, loud)])
        #expect(try TestSignals.segments(split).count == 2)
    }

    @Test func splitsALoudSoundFromTheQuieterSoundAfterIt() throws {
        // A loud burst, then 1.5 s of a sound ~6 dB over the floor (above the off threshold, under the on
        // threshold and far below the burst's peak): the burst is its own segment and the tail opens none.
        let veryLoud = TestSignals.snorerShape(peaks: [5, 12], level: 0.1)
        let tail = bg.map { $0 * 8 }
        let rows = TestSignals.frames(seconds: 14, background: bg, events: [(6.0, 6.5, veryLoud), (6.5, 8.0, tail)])
        var unsplit = DetectorConfiguration.default
        unsplit.splitDropDb = 100
        let whole = try TestSignals.segments(rows, configuration: unsplit)
        #expect(whole.count == 1)
        #expect(abs(AnalysisClock.seconds(try #require(whole.first).end) - 8.0) < 0.1)
        let split = try TestSignals.segments(rows)
        #expect(split.count == 1)
        let s = try #require(split.first)
        #expect(abs(AnalysisClock.seconds(s.start) - 6.0) < 0.07)
        #expect(abs(AnalysisClock.seconds(s.end) - 6.5) < 0.07)
    }

    @Test func aSoundAboveTheOnThresholdAfterASplitStartsTheNextSegment() throws {
        // A very loud burst, then 1.5 s of a sound ~11 dB over the floor (above the on threshold but more than
        // splitDropDb under the burst): the burst closes after the bridge gap and the sound after it is a
        // segment of its own, starting where it starts.
        let veryLoud = TestSignals.snorerShape(peaks: [5, 12], level: 0.1)
        let tail = bg.map { $0 * 30 }
        let rows = TestSignals.frames(seconds: 14, background: bg, events: [(6.0, 6.5, veryLoud), (6.5, 8.0, tail)])
        let segs = try TestSignals.segments(rows)
        #expect(segs.count == 2)
        if segs.count == 2 {
            #expect(abs(AnalysisClock.seconds(segs[0].end) - 6.5) < 0.07)
            #expect(abs(AnalysisClock.seconds(segs[1].start) - 6.5) < 0.07)
            #expect(abs(AnalysisClock.seconds(segs[1].end) - 8.0) < 0.1)
        }
    }

    @Test func aSoundEightDecibelsOverTheFloorOpensASegment() throws {
        // 1 s of a sound about 8 dB over the floor in every band group (a snore or a cough 5 dB over the bed):
        // a segment at the 7-dB on threshold, none at the 9 dB it used to be.
        let quiet = bg.map { $0 * 14 }
        let rows = TestSignals.frames(seconds: 12, background: bg, events: [(6.0, 7.0, quiet)])
        let segs = try TestSignals.segments(rows)
        #expect(segs.count == 1)
        let s = try #require(segs.first)
        #expect(abs(AnalysisClock.seconds(s.start) - 6.0) < 0.1)
        #expect(abs(AnalysisClock.seconds(s.end) - 7.0) < 0.1)
        var old = DetectorConfiguration.default
        old.onThresholdDb = 9
        #expect(try TestSignals.segments(rows, configuration: old).isEmpty)
    }

    @Test func cutsLongSoundsAtTheMaximumLength() throws {
        // Loud sound with quiet dips every 0.9 s so the floor cannot absorb it; cut into pieces of at most 2 s
        // (a quiet snore inside as loud a stretch of breathing gets a piece of its own), each classified alone.
        let rows = TestSignals.frames(seconds: 30, background: bg, events: [(8.0, 20.0, loud)])
        let segs = try TestSignals.segments(rows)
        // (Pieces are whole frames: 63 of 32 ms, 2.016 s.)
        #expect(segs.count >= 4)
        #expect(segs.allSatisfy { $0.features.durationSec <= 2.02 })
        #expect(segs.filter { $0.features.durationSec > 1.9 }.count >= 3)
        // Longer pieces when asked for.
        var long = DetectorConfiguration.default
        long.maxSegmentSec = 5
        let fewer = try TestSignals.segments(rows, configuration: long)
        #expect(fewer.count >= 2 && fewer.count < segs.count)
        #expect(fewer.allSatisfy { $0.features.durationSec <= 5.01 } && fewer.contains { $0.features.durationSec > 4.9 })
    }

    @Test func noiseFloorAbsorbsAStationaryNoiseStep() throws {
        // A fan switches on at 10 s (+20 dB, broadband) and stays on: after the minimum-statistics window the
        // floor has risen and nothing more is detected; a snore 15 s later still stands out.
        let fan = bg.map { $0 * 100 }
        var rows = TestSignals.frames(seconds: 10, background: bg, events: [])
        rows += TestSignals.frames(seconds: 40, background: fan, events: [(30.0, 30.8, loud.map { $0 * 100 })], seed: 2)
        let segs = try TestSignals.segments(rows)
        let late = segs.filter { AnalysisClock.seconds($0.start) > 20 }
        #expect(late.count == 1)
        #expect(abs(AnalysisClock.seconds(late[0].start) - 40.0) < 0.1)
        #expect(segs.allSatisfy { AnalysisClock.seconds($0.end) < 20 || AnalysisClock.seconds($0.start) > 39 })
    }

    @Test func featuresAreLevelInvariant() throws {
        let quiet = try TestSignals.segments(TestSignals.frames(seconds: 12, background: bg, events: [(6.0, 6.8, loud)]))
        let loudRows = TestSignals.frames(seconds: 12, background: bg.map { $0 * 1000 },
                                          events: [(6.0, 6.8, loud.map { $0 * 1000 })])
        let loudSegs = try TestSignals.segments(loudRows)
        #expect(quiet.count == 1 && loudSegs.count == 1)
        for (a, b) in zip(quiet[0].features.values, loudSegs[0].features.values) {
            #expect(abs(a - b) <= 1e-3 * max(1, abs(a)))
        }
    }

    @Test func rejectsInconsistentConfiguration() {
        var c = DetectorConfiguration()
        c.offThresholdDb = 10
        #expect(throws: DetectionError.self) { try SegmentExtractor(configuration: c) }
    }
}
