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

    @Test func parsesAlarmOptions() throws {
        let start = ISO8601DateFormatter().date(from: "2026-01-01T23:00:00Z")!
        let a = try AlarmSpec.parse(time: "06:45", window: nil, start: start)
        #expect(a.alarmTime == Self.s(7.75 * 3600) && a.window == Self.s(1800))
        #expect(try AlarmSpec.parse(time: "23:30", window: "1h30m", start: start).window == Self.s(5400))
        #expect(try AlarmSpec.parse(time: "23:30", window: "1h30m", start: start).alarmTime == Self.s(1800))
        #expect(try AlarmSpec.parse(time: "7:00", window: "45", start: start).window == Self.s(2700))
        #expect(try AlarmSpec.parse(time: "07:00", window: "90s", start: start).window == Self.s(90))
        #expect(try AlarmSpec.parse(time: "07:00", window: "20min", start: start).window == Self.s(1200))
        let paris = TimeZone(identifier: "Europe/Paris")!
        #expect(try AlarmSpec.parse(time: "07:00", window: nil, start: start, timeZone: paris).alarmTime == Self.s(7 * 3600))
    }

    @Test(arguments: ["7", "25:00", "07:60", "0745", "ab:cd", "07:5"])
    func rejectsBadTimes(_ text: String) {
        #expect(throws: AlarmSpec.ParseError.self) { try AlarmSpec.parse(time: text, window: nil, start: Date()) }
    }

    @Test(arguments: ["", "0m", "13h", "30x", "m30", "1h30", "-5m"])
    func rejectsBadWindows(_ text: String) {
        #expect(throws: AlarmSpec.ParseError.self) { try AlarmSpec.parse(time: "07:00", window: text, start: Date()) }
    }
}
