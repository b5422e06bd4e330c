import SleepCycleBus
import SleepStatistics
import Testing

@Suite struct NightStatisticsTests {
    static let epoch = AnalysisClock.samples(seconds: 30)

    /// Hypnogram from a string: W awake, L light, D deep, R rem; one 30-s epoch per letter.
    static func hypnogram(_ s: String) -> [StageEpoch] {
        s.enumerated().map { i, c in
            let stage: SleepStage = ["W": .awake, "L": .light, "D": .deep, "R": .rem][c]!
            return StageEpoch(start: SampleTime(i) * epoch, end: SampleTime(i + 1) * epoch, stage: stage)
        }
    }

    @Test func typicalNight() {
        // WWW LLDD W LL WW RRL WWWWW (20 epochs = 600 s)
        let st = NightStatistics(hypnogram: Self.hypnogram("WWWLLDDWLLWWRRLWWWWW"))
        #expect(st.sleepOnsetLatency == 3 * Self.epoch)
        #expect(st.totalSleepDuration == 9 * Self.epoch)           // LLDD + LL + RRL
        #expect(st.finalWakeTime == 15 * Self.epoch)
        #expect(st.wakeAfterSleepOnset == 3 * Self.epoch)
        #expect(st.numberOfAwakenings == 2)
        #expect(st.sleepEfficiency == 0.45)
        #expect(st.sleepStageDurations[.awake] == 11 * Self.epoch)
        #expect(st.sleepStageDurations[.light] == 5 * Self.epoch)
        #expect(st.sleepStageDurations[.deep] == 2 * Self.epoch)
        #expect(st.sleepStageDurations[.rem] == 2 * Self.epoch)
        #expect(st.timeInBed == 20 * Self.epoch)
    }

    @Test func neverAsleep() {
        let st = NightStatistics(hypnogram: Self.hypnogram("WWWWWW"))
        #expect(st.finalWakeTime == nil)
        #expect(st.totalSleepDuration == 0 && st.sleepOnsetLatency == 0 && st.sleepEfficiency == 0)
        #expect(st.numberOfAwakenings == 0 && st.wakeAfterSleepOnset == 0)
        #expect(st.sleepStageDurations[.awake] == 6 * Self.epoch)
    }

    @Test func emptyHypnogram() {
        let st = NightStatistics(hypnogram: [])
        #expect(st.finalWakeTime == nil && st.timeInBed == 0 && st.sleepEfficiency == 0)
    }

    @Test func asleepToTheEnd() {
        let st = NightStatistics(hypnogram: Self.hypnogram("LLLL"))
        #expect(st.finalWakeTime == 4 * Self.epoch)
        #expect(st.sleepOnsetLatency == 0)
        #expect(st.sleepEfficiency == 1)
        #expect(st.numberOfAwakenings == 0)
    }

    @Test func oneEpochAwakeningsAndTheMinimumRun() {
        // L W L WW L W L : runs of 1, 2 and 1 epoch inside the sleep period.
        let h = Self.hypnogram("LWLWWLWL")
        #expect(NightStatistics(hypnogram: h).numberOfAwakenings == 3)
        var p = NightStatistics.Parameters()
        p.minimumAwakening = 2 * Self.epoch
        let st = NightStatistics(hypnogram: h, parameters: p)
        #expect(st.numberOfAwakenings == 1)
        #expect(st.wakeAfterSleepOnset == 4 * Self.epoch)   // WASO counts every awake epoch
    }

    @Test func explicitTimeInBed() {
        // Bed from 60 s before the first epoch; hypnogram "WLLW".
        let st = NightStatistics(hypnogram: Self.hypnogram("WLLW"), bedStart: -2 * Self.epoch)
        #expect(st.sleepOnsetLatency == 3 * Self.epoch)
        #expect(st.sleepEfficiency == 2.0 / 6.0)
    }

    @Test func snoreTimeAndSessions() {
        let s = { (a: Double, b: Double) in
            NightStatistics.Interval(start: AnalysisClock.samples(seconds: a), end: AnalysisClock.samples(seconds: b))
        }
        // Overlapping 10–20 and 15–25; gap of 40 s to 65–70 (merged, ≤ 60 s); gap of 130 s to 200–210.
        let st = NightStatistics(hypnogram: Self.hypnogram("LLLLLLLL"),
                                 snoring: [s(200, 210), s(10, 20), s(15, 25), s(65, 70)])
        #expect(st.snoreTime == AnalysisClock.samples(seconds: 15 + 5 + 10))
        #expect(st.snoreSessions == [s(10, 70), s(200, 210)])
    }

    @Test func fromSoundEvents() {
        let e = [SoundEvent(id: 1, type: .snoring, start: 0, end: 16_000, probability: 1),
                 SoundEvent(id: 2, type: .talking, start: 0, end: 32_000, probability: 1)]
        #expect(NightStatistics(hypnogram: Self.hypnogram("L"), events: e).snoreTime == 16_000)
    }
}
