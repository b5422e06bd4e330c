import Foundation
import SleepCycleBus
import SleepCycleDSP
import Testing

/// The one feeding order (`AnalysisFeeder`): side inputs before the block they precede, `.audio` before its
/// channels' `.features`, the last frames before a gap and at the end, repeats dropped, holes filled.
@Suite struct AnalysisFeederTests {
    /// A fake extractor: one "frame" per 100 samples, flushed at `finish`.
    final class Counter: StreamingFeatureExtractor {
        let channel: Int
        var pending = 0
        var next: Int64 = 0
        init(channel: Int) { self.channel = channel }
        func process(_ samples: UnsafeBufferPointer<Float>) -> FeatureBlock? {
            pending += samples.count
            let frames = pending / 100
            guard frames > 0 else { return nil }
            pending -= frames * 100
            defer { next += Int64(frames * 100) }
            return FeatureBlock(channel: channel, start: next, frameLength: 100, hopLength: 100, count: frames,
                                values: [Float](repeating: 0, count: frames * FeatureLayout.stride))
        }
        func finish() -> FeatureBlock? {
            guard pending > 0 else { return nil }
            defer { next += Int64(pending); pending = 0 }
            return FeatureBlock(channel: channel, start: next, frameLength: 100, hopLength: 100, count: 1,
                                values: [Float](repeating: 0, count: FeatureLayout.stride))
        }
        func reset(startSample: Int64) { pending = 0; next = startSample }
    }

    func describe(_ e: AnalysisEvent) -> String {
        switch e {
        case .audio(let b): "audio\(b.start)+\(b.frameCount)"
        case .features(let f): "f\(f.channel)@\(f.start)x\(f.count)"
        case .gap(let g): "gap\(g.start)+\(g.length)"
        case .heartRate(let h): "hr\(h.time)"
        case .sessionEnding(let t): "ending\(t)"
        case .sessionEnded(let t): "ended\(t)"
        default: "?"
        }
    }

    /// A resumed night whose new audio continues its journal without a hole: the features are on the audio's
    /// timeline, not counted from 0 (they were, and the detector then read no audio for its segments).
    @Test func featuresStartWhereAResumedTimelineStarts() {
        var log: [String] = []
        let feeder = AnalysisFeeder(extractors: [Counter(channel: 0)], start: 960_000) { log.append(self.describe($0)) }
        feeder.audio(AudioBlock(start: 960_000, channels: [[Float](repeating: 0, count: 250)]))
        #expect(log == ["audio960000+250", "f0@960000x2"])
        // With real framing too: the first frame is centred on the restart.
        var starts: [Int64] = []
        let analyzer = try! FeatureAnalyzer(frameLength: 1024, hopLength: 512)
        let real = AnalysisFeeder(extractors: [analyzer], start: 960_000) {
            if case .features(let f) = $0 { starts.append(f.start) }
        }
        real.audio(AudioBlock(start: 960_000, channels: [[Float](repeating: 0.1, count: 4096)]))
        #expect(starts.first == 960_000)
    }

    @Test func feedsInTheEnginesOrder() {
        var log: [String] = []
        let feeder = AnalysisFeeder(extractors: [Counter(channel: 0), Counter(channel: 1)]) { log.append(describe($0)) }
        feeder.add(sideInputs: [.heartRate(HeartRateSample(time: 250, bpm: 60)), .heartRate(HeartRateSample(time: 50, bpm: 60)),
                                .heartRate(HeartRateSample(time: 10_000, bpm: 60))])
        let a = [Float](repeating: 0, count: 150)
        feeder.audio(AudioBlock(start: 0, channels: [a, a]))
        feeder.audio(AudioBlock(start: 100, channels: [a, a]))       // repeats 100..<150: dropped
        feeder.audio(AudioBlock(start: 400, channels: [a, a]))       // a hole 250..<400: a gap first
        feeder.end()
        #expect(log == ["hr50", "audio0+150", "f0@0x1", "f1@0x1", "audio150+100", "f0@100x1", "f1@100x1",
                        "f0@200x1", "f1@200x1", "hr250", "gap250+150", "audio400+150", "f0@400x1", "f1@400x1",
                        "f0@500x1", "f1@500x1", "ending550", "ended550"])
        #expect(feeder.unpublishedSideInputs.count == 1)
        #expect(feeder.position == 550)
    }
}

/// `MotionSample.binned` and the count's coding (journals written before grouping have no count).
@Suite struct MotionSampleTests {
    @Test func readingsAreGroupedPerIntervalWithTheirMeanAndCount() {
        let readings = [MotionSample(time: -3, activity: 4), MotionSample(time: -1, activity: 2),   // (-10, 0)
                        MotionSample(time: 0, activity: 1), MotionSample(time: 0, activity: 3),    // on 0: alone
                        MotionSample(time: 1, activity: 1), MotionSample(time: 9, activity: 3),    // (0, 10)
                        MotionSample(time: 11, activity: 5, count: 3),                            // (10, 20)
                        MotionSample(time: 13, activity: 1), MotionSample(time: 12, activity: 3),
                        MotionSample(time: 2, activity: 6)]                      // back in (0, 10): a new group
        let g = MotionSample.binned(readings, every: 10)
        #expect(g.map(\.time) == [-3, 0, 0, 1, 11, 2])
        #expect(g.map(\.count) == [2, 1, 1, 2, 5, 1])
        #expect(g.map(\.activity) == [3, 1, 3, 2, 3.8, 6])   // (5·3 + 1 + 3) / 5: a grouped sample weighs its count
        #expect(MotionSample.binned([], every: 10).isEmpty)
    }

    @Test func theCountIsWrittenOnlyWhenItIsNotOneAndReadsAsOneWhenAbsent() throws {
        let one = String(decoding: try JSONEncoder().encode(MotionSample(time: 5, activity: 0.5)), as: UTF8.self)
        #expect(!one.contains("count"))
        let old = try JSONDecoder().decode(MotionSample.self, from: Data(#"{"time":5,"activity":0.5}"#.utf8))
        #expect(old.count == 1 && old.time == 5 && old.activity == 0.5)
        let many = try JSONDecoder().decode(MotionSample.self,
                                            from: JSONEncoder().encode(MotionSample(time: 7, activity: 2, count: 50)))
        #expect(many.count == 50 && many.time == 7 && many.activity == 2)
        #expect(MotionSample(time: 0, activity: 1, count: 0).count == 1)
    }
}
