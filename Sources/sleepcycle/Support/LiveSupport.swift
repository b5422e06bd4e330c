import Dispatch
import Foundation
import SleepCycle
import SleepCycleFormats

/// The first reason to stop a live night: SIGINT / SIGTERM, `--duration`, the end of the input.
final class StopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var requested: String?
    private var waiter: CheckedContinuation<String, Never>?
    private var sources: [DispatchSourceSignal] = []

    /// Turns SIGINT, SIGTERM and SIGHUP into a stop request (the night is then stored and printed, not lost).
    func watchSignals() {
        for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")] {
            // SIGHUP (the terminal or the ssh session closed) stops the night as SIGTERM does: by default it killed
            // the recorder like `kill -9`, leaving the night interrupted. Under `nohup` it stays ignored.
            let previous = signal(number, SIG_IGN)
            if number == SIGHUP, Self.address(previous) == Self.address(SIG_IGN) { continue }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.request(name) }
            source.resume()
            sources.append(source)
        }
    }

    private static func address(_ handler: __sighandler_t?) -> Int { handler.map { unsafeBitCast($0, to: Int.self) } ?? 0 }

    /// The reason a stop was requested, if one was.
    var reason: String? {
        lock.lock(); defer { lock.unlock() }
        return requested
    }

    func request(_ why: String) {
        lock.lock()
        guard requested == nil else { lock.unlock(); return }
        requested = why
        let w = waiter
        waiter = nil
        lock.unlock()
        w?.resume(returning: why)
    }

    func wait() async -> String {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let requested { lock.unlock(); continuation.resume(returning: requested); return }
            waiter = continuation
            lock.unlock()
        }
    }
}

/// `--alarm-command`: run once, through `/bin/sh -c`, when the smart alarm fires.
enum AlarmCommand {
    static func run(_ command: String, ringing: AlarmRinging) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["SLEEPCYCLE_ALARM_RULE"] = ringing.rule
        environment["SLEEPCYCLE_ALARM_TIME"] = ISO8601Time.utcString(from: ringing.time)
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        // Its output goes to standard error: standard output is the night's result (JSON, CSV) and may be a file.
        process.standardOutput = FileHandle.standardError
        // A command that fails (not found: 127) is a silent alarm: say so.
        process.terminationHandler = { p in
            guard p.terminationReason != .exit || p.terminationStatus != 0 else { return }
            let how = p.terminationReason == .exit ? "exited with status \(p.terminationStatus)"
                : "was killed by signal \(p.terminationStatus)"
            Diagnostics.log.warning("alarm (\(ringing.rule)): the alarm command \(how)")
        }
        do {
            try process.run()
            Diagnostics.log.info("alarm (\(ringing.rule)) at \(ISO8601Time.utcString(from: ringing.time)): ran the alarm command (pid \(process.processIdentifier))")
        } catch {
            Diagnostics.log.warning("alarm (\(ringing.rule)): the alarm command could not be started (\(error))")
        }
    }
}

/// The live one-line status on a terminal: elapsed time, input level, audio health, the last event, the current
/// stage and any store problem, fitted to the terminal's width and redrawn once a second.
final class LiveStatus: @unchecked Sendable {
    let enabled: Bool
    let listener = LevelListener()
    private let lock = NSLock()
    private var health = "starting"
    private var stage = "–"
    private var storeProblem: String?
    private let began = ContinuousClock.now
    private var drawn = false

    init(enabled: Bool) { self.enabled = enabled }

    /// Follows the engine's streams and redraws every second; returns the tasks (cancel them at the end).
    func watch(engine: SleepAnalysisEngine, offsetSeconds: Int) -> [Task<Void, Never>] {
        guard enabled else { return [] }
        listener.offsetSeconds = offsetSeconds
        let healthStream = engine.audioHealthStream, stageStream = engine.sleepStageStream
        return [
            Task { for await h in healthStream { self.set { $0.health = h.status.rawValue } } },
            Task { for await s in stageStream { self.set { $0.stage = s.stage.rawValue } } },
            Task {
                while !Task.isCancelled {
                    let problem = await engine.storeProblem
                    self.set { $0.storeProblem = problem }
                    self.draw()
                    try? await Task.sleep(for: .seconds(1))
                }
            },
        ]
    }

    private func set(_ change: (LiveStatus) -> Void) { lock.lock(); change(self); lock.unlock() }

    func finish() {
        guard enabled, drawn else { return }
        StandardError.writeRaw("\r\u{1B}[2K")
    }

    private func draw() {
        lock.lock()
        let elapsed = Int((ContinuousClock.now - began).components.seconds)
        var parts = [String(format: "%d:%02d:%02d", elapsed / 3600, elapsed / 60 % 60, elapsed % 60),
                     listener.levelText, health, "stage \(stage)"]
        if let last = listener.lastEvent { parts.append(last) }
        if let storeProblem { parts.insert("STORE: \(storeProblem)", at: 1) }
        lock.unlock()
        let width = ProgressBar.columns() - 1
        var line = "recording"
        for part in parts where line.count + 3 + part.count <= width { line += " · " + part }
        StandardError.writeRaw("\r\u{1B}[2K" + String(line.prefix(max(0, width))))
        drawn = true
    }
}

/// Receives each second of analysed audio (the engine's listener batches): its level and the events.
final class LevelListener: AudioEventListener, @unchecked Sendable {
    private let lock = NSLock()
    private var rms: Float = 0
    private var last: (type: EventType, time: Date)?
    var offsetSeconds = 0

    func onAudioAnalysisBatchCompleted(sessionId: UUID, audioSamples: [Float], audioSampleRate: Int,
                                       audioStartTime: Date, audioEndTime: Date, eventsStarted: [SleepEvent],
                                       eventsEnded: [SleepEvent], rms: Float) {
        lock.lock()
        self.rms = rms
        if let e = eventsEnded.last { last = (e.type, e.start) }
        lock.unlock()
    }

    var levelText: String {
        lock.lock(); defer { lock.unlock() }
        return rms > 0 ? String(format: "%.0f dBFS", 20 * log10(Double(rms))) : "silent"
    }

    var lastEvent: String? {
        lock.lock(); defer { lock.unlock() }
        guard let last else { return nil }
        return "last \(last.type.rawValue) \(ISO8601Time.LocalParts(date: last.time, utcOffsetSeconds: offsetSeconds).clock())"
    }
}
