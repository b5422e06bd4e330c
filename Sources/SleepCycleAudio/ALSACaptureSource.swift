import Foundation

/// Counters of everything live capture lost or retried. Frames are at the device rate
/// (`ALSACaptureSource.format.sampleRate`, normally 16 kHz).
public struct ALSACaptureStatistics: Sendable, Equatable {
    /// Audio frames read from ALSA.
    public var framesCaptured: Int64 = 0
    /// ALSA overruns (xruns, -EPIPE) recovered.
    public var overruns = 0
    /// Estimated frames lost in those overruns.
    public var overrunFramesLost: Int64 = 0
    /// Times the ring buffer was full (analysis too slow) and unread audio was dropped.
    public var ringOverflows = 0
    /// Frames of unread audio dropped from the ring buffer.
    public var ringFramesDropped: Int64 = 0
    /// Suspends (-ESTRPIPE) resumed, and the frames not captured meanwhile.
    public var suspends = 0
    public var suspendedFramesLost: Int64 = 0
    /// Times the device vanished (-ENODEV, -EBADFD, -EIO, -ENXIO, or no audio for `stallSeconds`).
    public var deviceLosses = 0
    /// Reopen attempts made after device losses (successful or not).
    public var reopenAttempts = 0
    /// Frames of `.missingInput` gap reported while the device was gone.
    public var missingInputFrames: Int64 = 0
    /// FLOAT_LE samples replaced by silence because they were NaN, ±Inf or beyond ±16 (`SampleSanitizer`).
    public var invalidSamples: Int64 = 0
    /// CPU time (user + system) the capture thread has used, refreshed every 16 periods and at its exit.
    public var captureThreadCPUSeconds = 0.0

    /// Every frame of the timeline that carries no audio.
    public var samplesLost: Int64 { overrunFramesLost + ringFramesDropped + suspendedFramesLost + missingInputFrames }
    public init() {}
}

/// Live capture from an ALSA PCM device.
///
/// A capture thread reads interleaved S16_LE/FLOAT_LE periods with `snd_pcm_readi` (through `ALSAPCM`'s
/// choke point) into a `TimelineBuffer` of `ringSeconds`; `read()` on the analysis thread blocks until a
/// block, a gap or the end is there. The capture thread never waits on analysis: a full ring drops its
/// oldest audio as an `.overrun` gap. ALSA overruns become `.overrun` gaps of the estimated frames lost;
/// a vanished device becomes `.missingInput` gaps measured on `clock` while the source reopens it with
/// exponential back-off (0.5 s doubling to 8 s). The source asks ALSA for 16 kHz (the `plug` layer of the
/// default device converts); a device that grants another rate is resampled to 16 kHz on the reading side
/// (`TimelineResampler`). `read()` positions are 16 kHz samples since the first captured frame.
/// Design and tests: docs/0003-live-capture-and-injected-sources.md.
public final class ALSACaptureSource: AudioSource, @unchecked Sendable {
    public let format: SourceFormat
    public let name: String

    /// Back-off before reopen attempt k (k = 0, 1, …): min(initial · 2^k, maximum) seconds.
    public static let reopenBackoffInitialSec = 0.5
    public static let reopenBackoffMaximumSec = 8.0

    private let timeline: TimelineBuffer
    private let reader: AnalysisRateReader
    private let worker: ALSACaptureWorker

    /// Opens `device` and starts capturing at once.
    ///
    /// - Parameters:
    ///   - device: ALSA PCM name ("default", "hw:1,0", "plughw:1", or a PCM defined in `configText`).
    ///   - sampleRate: requested capture rate (Hz); ALSA may grant a nearby one (`format.sampleRate`).
    ///     Analysis always receives 16 kHz.
    ///   - channels: 1 or 2.
    ///   - periodFrames: frames per `snd_pcm_readi` (the ALSA buffer is 8 periods).
    ///   - ringSeconds: audio held for a slow analysis thread before the oldest is dropped.
    ///   - configText: an ALSA configuration (e.g. a `type file` test PCM) to open `device` from, instead of
    ///     the system configuration.
    ///   - maxFrames: stop after capturing this many frames (the `file` plugin replays stale data past the end
    ///     of its `infile`, so tests read exactly the file's length).
    ///   - clock: monotonic time for missing-input gaps, overrun estimates and back-off.
    /// - Throws: `AudioError` `.invalidParameter`, `.device` (cannot open or configure) or `.unsupportedRate`
    ///   (the device grants a rate outside 8–192 kHz).
    public convenience init(device: String = "default", sampleRate: Int = 16000, channels: Int = 1,
                            periodFrames: Int = 1024, ringSeconds: Double = 30, configText: String? = nil,
                            maxFrames: Int64? = nil, clock: any LiveClock = SystemLiveClock()) throws {
        try self.init(device: device, sampleRate: sampleRate, channels: channels, periodFrames: periodFrames,
                      ringSeconds: ringSeconds, configText: configText, maxFrames: maxFrames, clock: clock,
                      stallSeconds: 2, faults: nil)
    }

    init(device: String, sampleRate: Int, channels: Int, periodFrames: Int, ringSeconds: Double,
         configText: String?, maxFrames: Int64?, clock: any LiveClock, stallSeconds: Double,
         faults: (any ALSAFaultInjector)?) throws {
        func invalid(_ message: String) -> AudioError { AudioError(.invalidParameter, path: device, message: message) }
        guard (1...2).contains(channels) else {
            throw invalid("channels \(channels) is not supported (expected 1 or 2)")
        }
        guard (8000...192_000).contains(sampleRate) else {
            throw invalid("sample rate \(sampleRate) Hz is not supported (expected 8000–192000 Hz)")
        }
        guard (16...65536).contains(periodFrames) else {
            throw invalid("period of \(periodFrames) frames is out of range (expected 16–65536)")
        }
        guard ringSeconds.isFinite, ringSeconds > 0 else { throw invalid("ring of \(ringSeconds) s must be positive") }
        if let maxFrames, maxFrames <= 0 { throw invalid("maxFrames \(maxFrames) must be positive") }

        let settings = ALSACaptureWorker.Settings(device: device, configText: configText, sampleRate: sampleRate,
                                                  channels: channels, periodFrames: periodFrames,
                                                  maxFrames: maxFrames, stallSeconds: stallSeconds)
        let stop = StopFlag()
        let pcm: ALSAPCM
        do {
            pcm = try ALSAPCM(device: device, configText: configText, sampleRate: sampleRate, channels: channels,
                              periodFrames: periodFrames, clock: clock, faults: faults, shouldStop: stop.isSet)
        } catch let failure as ALSAFailure {
            throw AudioError(.device, path: device, message: "cannot open for capture: \(failure.problem)")
        }
        name = device
        format = SourceFormat(sampleRate: pcm.sampleRate, channelCount: channels, analysisChannelCount: channels,
                              frameCount: nil, integerBits: pcm.format == .s16 ? 16 : nil)
        let capacity = max(Int((ringSeconds * Double(pcm.sampleRate)).rounded()), pcm.periodFrames)
        timeline = TimelineBuffer(capacityFrames: capacity, channels: channels)
        do {
            reader = try AnalysisRateReader(timeline: timeline, inputRate: pcm.sampleRate, channels: channels)
        } catch {
            throw AudioError(.unsupportedRate, path: device, message: "captures at \(pcm.sampleRate) Hz: \(error)")
        }
        worker = ALSACaptureWorker(settings: settings, rate: pcm.sampleRate, timeline: timeline, clock: clock,
                                   faults: faults, stop: stop)
        worker.start(with: pcm)
    }

    deinit { close() }

    /// Counters so far (thread-safe snapshot).
    public var statistics: ALSACaptureStatistics {
        var s = worker.statistics
        let drops = timeline.dropCounters
        s.ringOverflows = drops.events
        s.ringFramesDropped = drops.frames
        return s
    }

    /// The next block, gap or `.end`; blocks until one is known. Throws the capture thread's `AudioError`
    /// (after everything captured before it was read) if capture failed for a reason other than device loss.
    public func read() throws -> SourceRead {
        let next = reader.next()
        if case .end = next, let error = worker.takeError() { throw error }
        return next
    }

    /// Stops the capture thread (within one 200 ms ALSA wait) and makes a blocked `read()` return `.end`.
    /// Taps the captured audio at the device's rate, on the thread that calls `read()`.
    @discardableResult
    public func setSourceRateTap(_ tap: SourceRateTap?) -> Bool {
        reader.integerBits = format.integerBits
        reader.tap = tap
        return true
    }

    public func close() {
        worker.stop.set()
        timeline.close()
        worker.waitUntilExited(timeoutSec: 2)
    }
}

/// A stop request shared by the source, its worker and the PCM's retry loops.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    func isSet() -> Bool { lock.withLock { value } }
}
