import CALSAShim
import Foundation

/// The capture thread of `ALSACaptureSource`: reads periods from the PCM, converts them to Float, appends
/// them (or gaps) to the timeline, and reopens a lost device with back-off. It never waits on analysis.
final class ALSACaptureWorker: @unchecked Sendable {
    struct Settings: Sendable {
        var device: String
        var configText: String?
        var sampleRate: Int
        var channels: Int
        var periodFrames: Int
        var maxFrames: Int64?
        var stallSeconds: Double
    }

    let settings: Settings
    /// The granted device rate (timeline frames per second).
    let rate: Int
    let stop: StopFlag
    private let timeline: TimelineBuffer
    private let clock: any LiveClock
    private let faults: (any ALSAFaultInjector)?

    private let lock = NSCondition()
    private var stats = ALSACaptureStatistics()
    private var error: AudioError?
    private var running = false

    init(settings: Settings, rate: Int, timeline: TimelineBuffer, clock: any LiveClock,
         faults: (any ALSAFaultInjector)?, stop: StopFlag) {
        self.settings = settings; self.rate = rate; self.timeline = timeline
        self.clock = clock; self.faults = faults; self.stop = stop
    }

    var statistics: ALSACaptureStatistics { lock.withLock { stats } }

    /// The error that ended capture, once.
    func takeError() -> AudioError? {
        lock.withLock { defer { error = nil }; return error }
    }

    func start(with pcm: ALSAPCM) {
        lock.withLock { running = true }
        let thread = Thread { [self] in run(first: pcm) }
        thread.name = "sleepcycle.alsa-capture"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    func waitUntilExited(timeoutSec: Double) {
        let deadline = Date().addingTimeInterval(timeoutSec)
        lock.lock()
        while running && lock.wait(until: deadline) {}
        lock.unlock()
    }

    private func update(_ body: (inout ALSACaptureStatistics) -> Void) { lock.withLock { body(&stats) } }

    private func run(first: ALSAPCM) {
        var current: ALSAPCM? = first
        let channels = settings.channels
        let period = first.periodFrames
        let raw = UnsafeMutableRawPointer.allocate(byteCount: period * channels * 4, alignment: 16)
        let floats = UnsafeMutableBufferPointer<Float>.allocate(capacity: period * channels)
        var periodsRead = 0
        defer {
            let cpu = sc_alsa_thread_cpu_seconds()
            update { $0.captureThreadCPUSeconds = cpu }
            raw.deallocate(); floats.deallocate()
            current?.close()
            timeline.finish()
            lock.withLock { running = false }
            lock.broadcast()
        }
        var captured: Int64 = 0
        while !stop.isSet() {
            guard let pcm = current else { return }
            var want = period
            if let maxFrames = settings.maxFrames {
                if captured >= maxFrames { return }
                want = Int(min(Int64(period), maxFrames - captured))
            }
            do {
                switch try pcm.read(into: raw, frames: want) {
                case .value(let n) where n > 0:
                    let samples = n * channels
                    if pcm.format == .s16 {
                        let src = raw.assumingMemoryBound(to: Int16.self)
                        for i in 0..<samples { floats[i] = Float(src[i]) * (1 / 32768) }
                    } else {
                        floats.baseAddress!.update(from: raw.assumingMemoryBound(to: Float.self), count: samples)
                        // Float capture can deliver NaN/Inf/garbage (a broken driver or plugin): silence it first.
                        let result = SampleSanitizer.sanitize(UnsafeMutableBufferPointer(rebasing: floats[0..<samples]))
                        if result.replaced > 0 { update { $0.invalidSamples += Int64(result.replaced) } }
                    }
                    timeline.appendAudio(UnsafeBufferPointer(floats), frames: n)
                    captured += Int64(n)
                    periodsRead += 1
                    let cpu = periodsRead % 16 == 0 ? sc_alsa_thread_cpu_seconds() : nil
                    update {
                        $0.framesCaptured += Int64(n)
                        if let cpu { $0.captureThreadCPUSeconds = cpu }
                    }
                case .value:
                    if clock.now() - pcm.lastReadTime > settings.stallSeconds {
                        throw ALSAFailure(kind: .deviceLost, call: ALSACall.wait.rawValue, errno: 0,
                                          problem: "no audio for \(settings.stallSeconds) s")
                    }
                case .overrun(let lost):
                    timeline.appendGap(length: lost, reason: .overrun)
                    update { $0.overruns += 1; $0.overrunFramesLost += lost }
                case .resumed(let lost):
                    timeline.appendGap(length: lost, reason: .missingInput)
                    update { $0.suspends += 1; $0.suspendedFramesLost += lost }
                }
            } catch let failure as ALSAFailure where failure.kind == .deviceLost {
                let lostAt = pcm.lastReadTime
                pcm.close()
                current = nil
                update { $0.deviceLosses += 1 }
                current = reopen(lostAt: lostAt)
            } catch {
                let problem = (error as? ALSAFailure)?.problem ?? "\(error)"
                lock.withLock {
                    self.error = AudioError(.device, path: settings.device, message: "capture failed: \(problem)")
                }
                return
            }
        }
    }

    /// Reopens the device with exponential back-off, reporting the time without audio as `.missingInput`
    /// gaps as it passes (so analysis sees the loss while it lasts). Returns nil only when stopping.
    private func reopen(lostAt: Double) -> ALSAPCM? {
        var reported: Int64 = 0
        func reportMissing() {
            let total = Int64((max(0, clock.now() - lostAt) * Double(rate)).rounded())
            guard total > reported else { return }
            let length = total - reported
            timeline.appendGap(length: length, reason: .missingInput)
            update { $0.missingInputFrames += length }
            reported = total
        }
        var delay = ALSACaptureSource.reopenBackoffInitialSec
        while !stop.isSet() {
            clock.sleep(seconds: delay, shouldStop: stop.isSet)
            if stop.isSet() { return nil }
            update { $0.reopenAttempts += 1 }
            let pcm = try? ALSAPCM(device: settings.device, configText: settings.configText,
                                   sampleRate: settings.sampleRate, channels: settings.channels,
                                   periodFrames: settings.periodFrames, clock: clock, faults: faults,
                                   shouldStop: stop.isSet)
            reportMissing()
            if let pcm, pcm.sampleRate == rate { return pcm }
            delay = min(delay * 2, ALSACaptureSource.reopenBackoffMaximumSec)
        }
        return nil
    }
}
