import Foundation
import SleepCycleBus
import SmartAlarm
import Testing

@Suite struct SmartAlarmTests {
    static func s(_ seconds: Double) -> SampleTime { AnalysisClock.samples(seconds: seconds) }
    static let epoch = s(30)
    // Alarm at 2 h, window 30 min → window starts at 1 h 30 min (epoch 180).
    static let spec = AlarmSpec(alarmTime: s(7200), window: s(1800))

    /// Feeds a hypnogram (one letter per epoch: W L D R) and movement starts; returns the alarms published.
    static func run(_ hypnogram: String, movements: [Double] = [], endSeconds: Double? = nil) -> [AlarmFired] {
        var alarm = SmartAlarm(spec: spec)
        var fired: [AlarmFired] = []
        var moves = movements.sorted()
        for (i, c) in hypnogram.enumerated() {
            let start = SampleTime(i) * epoch, end = start + epoch
            while let m = moves.first, s(m) < end {
                let e = SoundEvent(id: Int(m), type: .movement, start: s(m), end: s(m + 2), probability: 1)
                for out in alarm.handle(.eventStarted(e)) { if case .alarm(let a) = out { fired.append(a) } }
                moves.removeFirst()
            }
            let stage: SleepStage = ["W": .awake, "L": .light, "D": .deep, "R": .rem][c]!
            for out in alarm.handle(.sleepStage(StageEpoch(start: start, end: end, stage: stage))) {
                if case .alarm(let a) = out { fired.append(a) }
            }
        }
        let end = endSeconds.map(s) ?? SampleTime(hypnogram.count) * epoch
        for out in alarm.handle(.sessionEnding(at: end)) { if case .alarm(let a) = out { fired.append(a) } }
        return fired
    }

    @Test func firesAtSustainedLightSleepInWindow() {
        // Deep until epoch 190, then light: the second light epoch (191) ends at 192 × 30 s.
        let h = String(repeating: "D", count: 190) + String(repeating: "L", count: 60)
        let fired = Self.run(h)
        #expect(fired.count == 1)
        #expect(fired[0].rule == "lightSleep" && fired[0].time == 192 * Self.epoch)
    }

    @Test func lightSleepBeforeWindowFiresAtFirstEpochInWindow() {
        let h = String(repeating: "L", count: 250)
        let fired = Self.run(h)
        #expect(fired.map(\.rule) == ["lightSleep"])
        #expect(fired[0].time == 180 * Self.epoch)
    }

    @Test func singleLightEpochIsNotEnough() {
        // D…D L D…D : a single light epoch in the window, no movement → deadline at the alarm time.
        let h = String(repeating: "D", count: 200) + "L" + String(repeating: "D", count: 60)
        let fired = Self.run(h)
        #expect(fired.count == 1)
        #expect(fired[0].rule == "deadline" && fired[0].time == Self.spec.alarmTime)
    }

    @Test func movementBurstInWindow() {
        let h = String(repeating: "R", count: 260)
        // A lone movement at 6000 s (in window) does not fire; a second within 60 s does, at its start.
        #expect(Self.run(h, movements: [5000, 5030, 6000, 6100, 6130]).map(\.rule) == ["movement"])
        let fired = Self.run(h, movements: [5000, 5030, 6000, 6100, 6130])
        #expect(fired[0].time == Self.s(6130))
    }

    @Test func sessionEndingBeforeAlarmNeverFires() {
        #expect(Self.run(String(repeating: "D", count: 100)).isEmpty)
    }

    @Test func sessionEndingAfterAlarmFiresDeadline() {
        let fired = Self.run(String(repeating: "D", count: 100), endSeconds: 9000)
        #expect(fired.count == 1 && fired[0].rule == "deadline" && fired[0].time == Self.s(7200))
    }
}
