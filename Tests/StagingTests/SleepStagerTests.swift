import Foundation
import SleepCycleBus
import Testing
@testable import Staging

@Suite struct SleepStagerTests {
    static let sr = SampleTime(AnalysisClock.sampleRate)
    static func s(_ seconds: Double) -> SampleTime { AnalysisClock.samples(seconds: seconds) }

    /// Drives a stager through `hours` of stream time in empty audio blocks every 10 s (time only, as a journal's
    /// replay gives it; a gap would be unusable time),
    /// with the given events published at their start and end.
    static func run(hours: Double, events: [SoundEvent], extra: [AnalysisEvent] = [],
                    stager: SleepStager? = nil) throws -> (SleepStager, [StageEpoch]) {
        var stager = try stager ?? SleepStager()
        let info = SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                               sourceSampleRate: 16_000, channelCount: 1)
        var published: [StageEpoch] = []
        func feed(_ e: AnalysisEvent) {
            for out in stager.handle(e) { if case .sleepStage(let epoch) = out { published.append(epoch) } }
        }
        feed(.sessionStarted(info))
        for e in extra { feed(e) }
        let end = s(hours * 3600)
        var t: SampleTime = 0
        var pending = events.sorted { $0.start < $1.start }
        var ending: [SoundEvent] = []
        while t < end {
            let next = min(t + s(10), end)
            while let e = pending.first, e.start < next { feed(.eventStarted(e)); ending.append(e); pending.removeFirst() }
            for e in ending where e.end <= next { feed(.eventEnded(e)) }
            ending.removeAll { $0.end <= next }
            feed(.audio(AudioBlock(start: next, channels: [])))
            t = next
        }
        feed(.sessionEnding(at: end + s(12)))
        return (stager, published)
    }

    /// A gap is unusable audio from its start: its epochs are not scored. On a resume the gap between the journal's
    /// end and the new audio comes with no health report (the health monitor starts afresh after it), and three
    /// hours without audio were scored as sleep. A health report of the same hole overlapping the gap counts once:
    /// a 10-s hole leaves its epoch scored.
    @Test(arguments: [3.0 * 3600, 10])
    func epochsOfAGapAreNotScored(seconds: Double) throws {
        let gap = AudioGap(start: Self.s(605), length: Self.s(seconds), reason: .missingInput)
        var stager = try SleepStager()
        _ = stager.handle(.sessionStarted(SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                                                      sourceSampleRate: 16_000, channelCount: 1)))
        for t in stride(from: 5.0, through: 605, by: 10) { _ = stager.handle(.audio(AudioBlock(start: Self.s(t), channels: []))) }
        _ = stager.handle(.gap(gap))
        if seconds < 60 {
            _ = stager.handle(.healthChanged(AudioHealthChange(time: gap.start, status: .missingInput)))
            _ = stager.handle(.healthChanged(AudioHealthChange(time: gap.start + gap.length, status: .healthy)))
        }
        let end = gap.start + gap.length + Self.s(595)
        var t = gap.start + gap.length
        while t < end {
            t += Self.s(10)
            _ = stager.handle(.audio(AudioBlock(start: t, channels: [])))
        }
        _ = stager.handle(.sessionEnding(at: end))
        let inGap = stager.finalEpochs.filter { $0.start >= gap.start && $0.end <= gap.start + gap.length }
        #expect(inGap.isEmpty, "\(inGap.count) epochs of the gap scored")
        #expect(stager.finalEpochs.count == (seconds < 60 ? 41 : 40), "\(stager.finalEpochs.count) epochs")
    }

    @Test func publishesOneStagePerEpochInOrder() throws {
        let (stager, published) = try Self.run(hours: 1, events: [])
        // 3600 s + 12 s: 120 full epochs and a 12-s partial one.
        #expect(published.count == 121)
        #expect(published.map(\.start) == (0..<121).map { SampleTime($0) * Self.s(30) })
        #expect(published.last!.end == Self.s(3612))
        #expect(stager.finalEpochs.count == 121)
        #expect(stager.finalEpochs.map(\.start) == published.map(\.start))
        #expect(stager.state == .finished)
        let intervals = stager.finalIntervals
        #expect(intervals.first!.start == 0 && intervals.last!.end == Self.s(3612))
        #expect(zip(intervals, intervals.dropFirst()).allSatisfy { $0.end == $1.start && $0.stage != $1.stage })
    }

    @Test func movementAtStartIsAwakeQuietLaterIsSleep() throws {
        // 25 min of frequent movement and talking, then 3.5 h of silence.
        var events: [SoundEvent] = []
        for k in 0..<150 {
            let start = Double(k) * 10
            events.append(SoundEvent(id: k, type: k % 3 == 0 ? .talking : .movement,
                                     start: Self.s(start), end: Self.s(start + 6), probability: 0.9))
        }
        let (stager, published) = try Self.run(hours: 4, events: events)
        #expect(stager.epochInputs[5].activitySeconds == 18)
        #expect(stager.finalEpochs[10].stage == .awake)
        #expect(published[10].stage == .awake)
        let middle = stager.finalEpochs[200..<400]
        #expect(middle.filter { $0.stage == .awake }.count < 20)
        #expect(Set(stager.finalEpochs.map(\.stage)).count >= 2)
    }

    @Test func snoringRulesOutAwake() throws {
        var config = SleepStager.Configuration()
        config.snoreSleepSeconds = 10
        // Constant activity makes the model see nothing distinctive; snoring during epoch 30 forces not-awake.
        var events = (0..<240).map { k in
            SoundEvent(id: k, type: .movement, start: Self.s(Double(k) * 30), end: Self.s(Double(k) * 30 + 20), probability: 1)
        }
        events.append(SoundEvent(id: 999, type: .snoring, start: Self.s(900), end: Self.s(925), probability: 1))
        let (stager, _) = try Self.run(hours: 2, events: events, stager: SleepStager(model: .bundled(), configuration: config))
        #expect(stager.epochInputs[30].snoreSeconds == 25)
        #expect(stager.finalEpochs[30].stage != .awake)
    }

    @Test func heartFramesSwitchToHRSubModel() throws {
        // The heart session's frames (one per epoch, its interval's mean heart rate); raw readings are not read.
        let frames = (0..<240).map { (k: Int) -> AnalysisEvent in
            let epoch = Double(k) * 30
            let bpm: Double = 60 + 5 * sin(Double(k) / 50)
            let frame = HeartFrame(start: Self.s(max(0, epoch - 270)), end: Self.s(epoch + 30), intervalStart: Self.s(epoch),
                                   intervalHrMeanBpm: bpm, metrics: HeartMetrics(sampleCount: 30))
            return .heartFrame(frame)
        }
        let raw = (0..<720).map { AnalysisEvent.heartRate(HeartRateSample(time: Self.s(Double($0) * 10), bpm: 200)) }
        let (stager, _) = try Self.run(hours: 2, events: [], extra: frames + raw)
        #expect(stager.epochInputs[0].heartRate == 60)
        #expect(abs(stager.epochInputs[7].heartRate! - (60 + 5 * sin(7.0 / 50))) < 1e-9)
        #expect(stager.table(epochs: 10).inputs.contains(.hr))
    }

    @Test func motionSamplesReplaceAudioActivity() throws {
        // Accelerometer: strong activity for the first 20 min, then still; no audio events at all.
        let motion = (0..<1440).map { k in
            AnalysisEvent.motion(MotionSample(time: Self.s(Double(k) * 5), activity: k < 240 ? 50 : 0))
        }
        let (stager, _) = try Self.run(hours: 2, events: [], extra: motion)
        #expect(stager.epochInputs[3].motion == 50 && stager.epochInputs[100].motion == 0)
        #expect(stager.finalEpochs[5].stage == .awake)
        #expect(stager.finalEpochs[150].stage != .awake)
    }

    /// A file's readings grouped per second (`MotionSample.binned`, what `analyze --motion` publishes) give every
    /// epoch the mean of its readings, as the readings one by one do, with 1/50 of the bus events.
    @Test func groupedMotionReadingsGiveEachEpochTheMeanOfItsReadings() throws {
        // 50 Hz for 12 min with every 31st reading missing, so the seconds do not all hold 50; activity varies.
        var readings: [MotionSample] = []
        for k in 0..<(50 * 720) where k % 31 != 5 {
            let activity = Double((k * 7919) % 1000) / 100
            readings.append(MotionSample(time: Self.s(Double(k) / 50), activity: activity))
        }
        let grouped = MotionSample.binned(readings, every: AnalysisClock.samples(seconds: 1))
        #expect(grouped.count <= 2 * 720 && grouped.reduce(0) { $0 + $1.count } == readings.count)
        let extraOne: [AnalysisEvent] = readings.map { AnalysisEvent.motion($0) }
        let extraGrouped: [AnalysisEvent] = grouped.map { AnalysisEvent.motion($0) }
        let (one, _) = try Self.run(hours: 0.2, events: [], extra: extraOne)
        let (many, _) = try Self.run(hours: 0.2, events: [], extra: extraGrouped)
        #expect(one.epochInputs.count >= 24 && many.epochInputs.count == one.epochInputs.count)
        for k in 0..<24 {
            let a = try #require(one.epochInputs[k].motion)
            let b = try #require(many.epochInputs[k].motion)
            #expect(abs(a - b) < 1e-12 * max(1, a), "epoch \(k): \(a) one by one, \(b) grouped")
        }
        let stagesOne: [SleepStage] = one.finalEpochs.map { $0.stage }
        let stagesGrouped: [SleepStage] = many.finalEpochs.map { $0.stage }
        #expect(stagesOne == stagesGrouped)
    }

    @Test func walchProxies() {
        let smoothed = WalchProxies.smoothedCount([0, 0, 0, 90, 0, 0, 0])
        #expect(smoothed[3] > smoothed[2] && smoothed[2] > smoothed[1] && smoothed[1] > smoothed[0])
        #expect(abs(WalchProxies.cosine(hoursSinceStart: 0) - -0.25881904510252074) < 1e-12)
        #expect(WalchProxies.heartRateFeature([nil, nil]) == nil)
        var bpm: [Double?] = []
        for k in 0..<200 {
            let value: Double = 60 + 8 * sin(Double(k) / 6)
            bpm.append(k % 7 == 0 ? nil : value)
        }
        let f = WalchProxies.heartRateFeature(bpm)!
        #expect(f.count == 200 && f.allSatisfy { $0.isFinite && $0 >= 0 })
    }
}
