import SleepCycleBus
import SleepStatistics
import Testing

/// The statistics clinicians and apps report (TIB, SPT, WASO, REM latency, stage percentages) on hand-made
/// hypnograms, against YASA's `sleep_statistics` definitions (Vallat & Walker 2021; docs/0012-reports.md) worked
/// out by hand, and the snore score's definition.
@Suite struct ClinicalStatisticsTests {
    static let epoch = NightStatisticsTests.epoch
    static func seconds(_ t: SampleTime?) -> Double? { t.map(AnalysisClock.seconds) }

    /// YASA's docstring example, `[0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 2, 3, 3, 4, 4, 4, 4, 0, 0]` at 1/30 Hz (N1 and
    /// N2 are light, N3 deep): TIB 10 min, SPT 8 min, WASO 0, TST 8 min, %N1+%N2 43.75, %N3 31.25, %REM 25;
    /// YASA's Lat_REM is 7 min from the start of the record, so 6 min from sleep onset (1 min).
    @Test func yasasExample() {
        let st = NightStatistics(hypnogram: NightStatisticsTests.hypnogram("WWLLLLLLDDDLDDRRRRWW"))
        #expect(Self.seconds(st.timeInBed) == 600)
        #expect(Self.seconds(st.sleepPeriodTime) == 480)
        #expect(Self.seconds(st.wakeAfterSleepOnset) == 0)
        #expect(Self.seconds(st.totalSleepDuration) == 480)
        #expect(Self.seconds(st.remLatency) == 360)
        #expect(Self.seconds(st.sleepOnsetLatency) == 60)
        #expect(st.sleepStagePercentages[.light] == 43.75)
        #expect(st.sleepStagePercentages[.deep] == 31.25)
        #expect(st.sleepStagePercentages[.rem] == 25)
        #expect(st.sleepEfficiency == 0.8)          // YASA ≥ 0.6: SE = TST / TIB
        #expect(st.sleepStagePercentages[.awake] == nil)
    }

    /// Wake inside the sleep period: W W L W W L R W D W. Onset at epoch 2, last sleep epoch 8: SPT 7 epochs, WASO
    /// the 3 awake epochs inside it, TST 4 epochs = SPT − WASO, REM 4 epochs after onset.
    @Test func wakeAfterSleepOnset() {
        let st = NightStatistics(hypnogram: NightStatisticsTests.hypnogram("WWLWWLRWDW"))
        #expect(st.sleepPeriodTime == 7 * Self.epoch)
        #expect(st.wakeAfterSleepOnset == 3 * Self.epoch)
        #expect(st.totalSleepDuration == st.sleepPeriodTime - st.wakeAfterSleepOnset)
        #expect(st.remLatency == 4 * Self.epoch)
        #expect(st.numberOfAwakenings == 2)
        #expect(st.sleepStagePercentages[.light] == 50)
        #expect(st.sleepStagePercentages[.deep] == 25)
        #expect(st.sleepStagePercentages[.rem] == 25)
        #expect(st.timeInBed == 10 * Self.epoch)
    }

    /// Without REM, `remLatency` is nil; the percentages still sum to 100.
    @Test func noREM() {
        let st = NightStatistics(hypnogram: NightStatisticsTests.hypnogram("WLLDDLW"))
        #expect(st.remLatency == nil)
        #expect(st.sleepStagePercentages.values.reduce(0, +) == 100)
        #expect(st.sleepStagePercentages[.rem] == 0)
    }

    /// REM as the first sleep: latency 0.
    @Test func remAtOnset() {
        let st = NightStatistics(hypnogram: NightStatisticsTests.hypnogram("WWRRLL"))
        #expect(st.remLatency == 0)
    }

    /// No sleep: everything 0, REM latency nil, no percentages.
    @Test func noSleep() {
        let st = NightStatistics(hypnogram: NightStatisticsTests.hypnogram("WWWW"))
        #expect(st.sleepPeriodTime == 0 && st.wakeAfterSleepOnset == 0 && st.remLatency == nil)
        #expect(st.sleepStagePercentages.isEmpty)
    }

    /// A gap in the hypnogram (unscored time, e.g. missing audio) inside the sleep period is neither sleep nor
    /// wake, as YASA leaves unscored epochs out of both TST and WASO.
    @Test func unscoredTimeIsNeitherSleepNorWake() {
        var epochs = NightStatisticsTests.hypnogram("LLWLL")
        epochs.remove(at: 3)   // epoch 3 unscored
        let st = NightStatistics(hypnogram: epochs, bedEnd: 5 * Self.epoch)
        #expect(st.sleepPeriodTime == 5 * Self.epoch)
        #expect(st.wakeAfterSleepOnset == 1 * Self.epoch)
        #expect(st.totalSleepDuration == 3 * Self.epoch)
    }

    // MARK: - Snore score

    static let hour = AnalysisClock.samples(seconds: 3600)

    static func snores(minutes: Int, levelDb: Double?, from start: SampleTime = 0) -> [NightStatistics.Interval] {
        // Two-second snores every 4 s for `minutes` of snoring time.
        (0..<(minutes * 30)).map { i in
            let s = start + SampleTime(i) * AnalysisClock.samples(seconds: 4)
            return NightStatistics.Interval(start: s, end: s + AnalysisClock.samples(seconds: 2), levelDb: levelDb)
        }
    }

    @Test func snoreScoreWeighsTimeByLoudness() {
        let bed = 8 * Self.hour
        // An hour of quiet snoring in 8 h: 60 min × 1 / 8 h.
        #expect(SnoreScore.score(snores: Self.snores(minutes: 60, levelDb: -40), backgroundLevelDb: -45, timeInBed: bed) == 7.5)
        // Loud (≥ 10 dB above the background) weighs 2, epic (≥ 20 dB) 3.
        #expect(SnoreScore.score(snores: Self.snores(minutes: 60, levelDb: -35), backgroundLevelDb: -45, timeInBed: bed) == 15)
        #expect(SnoreScore.score(snores: Self.snores(minutes: 60, levelDb: -25), backgroundLevelDb: -45, timeInBed: bed) == 22.5)
        // Unknown levels or background weigh 1.
        #expect(SnoreScore.score(snores: Self.snores(minutes: 60, levelDb: nil), backgroundLevelDb: -45, timeInBed: bed) == 7.5)
        #expect(SnoreScore.score(snores: Self.snores(minutes: 60, levelDb: -10), backgroundLevelDb: nil, timeInBed: bed) == 7.5)
        #expect(SnoreScore.score(snores: [], backgroundLevelDb: -45, timeInBed: bed) == 0)
        #expect(SnoreScore.score(snores: Self.snores(minutes: 1, levelDb: nil), backgroundLevelDb: nil, timeInBed: 0) == 0)
    }

    /// The same sound on two microphones counts once, at the louder weight.
    @Test func overlappingSnoresCountOnceAtTheLouderWeight() {
        let bed = Self.hour
        let quiet = Self.snores(minutes: 6, levelDb: -40)
        let loud = Self.snores(minutes: 6, levelDb: -30)
        #expect(SnoreScore.score(snores: quiet + loud, backgroundLevelDb: -45, timeInBed: bed) == 12)   // 6 min × 2 / 1 h
        #expect(SnoreScore.score(snores: quiet + quiet, backgroundLevelDb: -45, timeInBed: bed) == 6)
    }

    /// The score is the statistic NightStatistics reports.
    @Test func nightStatisticsCarryTheScore() {
        let st = NightStatistics(hypnogram: NightStatisticsTests.hypnogram(String(repeating: "L", count: 120)),
                                 snoring: Self.snores(minutes: 6, levelDb: -20), backgroundLevelDb: -45)
        #expect(st.snoreScore == 18)   // 6 min × 3 / 1 h
    }
}
