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
