import CALSA
import CALSAShim
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What one pass through the choke point produced.
enum ALSAOutcome: Equatable, Sendable {
    /// The call's non-negative return value (frames read, 1/0 for `snd_pcm_wait`, …).
    case value(Int)
    /// An overrun (-EPIPE) was recovered; about `lostFrames` frames at the device rate were lost.
    case overrun(lostFrames: Int64)
    /// A suspend (-ESTRPIPE) was resumed; about `lostFrames` frames were not captured meanwhile.
    case resumed(lostFrames: Int64)
}

/// An open ALSA capture PCM: interleaved S16_LE or FLOAT_LE frames, read with `snd_pcm_readi`.
///
/// Every ALSA call goes through `invoke(_:_:_:)`, the one choke point (after swift-nio's syscall wrapper):
/// it retries -EINTR, treats -EAGAIN as "nothing yet", recovers -EPIPE (overrun,
/// `snd_pcm_recover` then `snd_pcm_start`) and -ESTRPIPE (suspend, `snd_pcm_resume` or `snd_pcm_prepare`)
/// and reports them with an estimate of the frames lost, classifies -ENODEV/-EBADFD/-EIO/-ENXIO as a lost
/// device, and throws `ALSAFailure` for the rest. See the ALSA PCM API reference
/// (alsa-project.org/alsa-doc/alsa-lib/pcm.html, "Managing the stream state" and `snd_pcm_recover`).
/// Not thread-safe: owned by the capture thread (created on the caller's thread, then handed over).
final class ALSAPCM: @unchecked Sendable {
    enum SampleFormat: String, Sendable { case s16 = "S16_LE", float = "FLOAT_LE" }

    let device: String
    let channels: Int
    private(set) var sampleRate = 0
    private(set) var periodFrames = 0
    private(set) var bufferFrames = 0
    private(set) var format = SampleFormat.s16
    /// Monotonic time of the last read that returned audio (for loss estimates).
    private(set) var lastReadTime: Double

    private var pcm: OpaquePointer?
    private var localConfig: OpaquePointer?
    private let faults: (any ALSAFaultInjector)?
    private let clock: any LiveClock
    private let shouldStop: () -> Bool

    /// Opens `device` (from `configText` when given, else from the system configuration) for capture and
    /// negotiates interleaved access, S16_LE (else FLOAT_LE), `channels`, a rate near `sampleRate` and a
    /// period near `periodFrames` with a buffer of 8 periods.
    init(device: String, configText: String?, sampleRate requestedRate: Int, channels: Int,
         periodFrames requestedPeriod: Int,
         clock: any LiveClock, faults: (any ALSAFaultInjector)?, shouldStop: @escaping () -> Bool) throws {
        self.device = device
        self.channels = channels
        self.clock = clock
        self.faults = faults
        self.shouldStop = shouldStop
        lastReadTime = clock.now()
        sc_alsa_silence_errors()
        do {
            try open(configText: configText)
            try configure(rate: requestedRate, period: requestedPeriod)
            _ = try invoke(.start) { Int(snd_pcm_start(pcm)) }
        } catch {
            close()
            throw error
        }
        lastReadTime = clock.now()
    }

    deinit { close() }

    func close() {
        if let p = pcm { snd_pcm_close(p); pcm = nil }
        if let c = localConfig { snd_config_delete(c); localConfig = nil }
    }

    /// Waits up to `timeoutMs` for audio, then reads up to `frames` interleaved frames into `buffer`
    /// (2 or 4 bytes per sample depending on `format`). `.value(0)` means nothing arrived in time.
    func read(into buffer: UnsafeMutableRawPointer, frames: Int, timeoutMs: Int32 = 200) throws -> ALSAOutcome {
        let waited = try invoke(.wait) { Int(snd_pcm_wait(pcm, timeoutMs)) }
        guard case .value(let ready) = waited else { return waited }
        if ready == 0 { return .value(0) }
        let outcome = try invoke(.readi) { Int(snd_pcm_readi(pcm, buffer, snd_pcm_uframes_t(frames))) }
        if case .value(let n) = outcome, n > 0 { lastReadTime = clock.now() }
        return outcome
    }

    // MARK: - The choke point

    /// Runs one ALSA call (or the injected fault) and deals with its error code; see the type's comment.
    /// `function` names the C function in messages when it is more specific than `call` (a hw-params setter).
    func invoke(_ call: ALSACall, _ function: String? = nil, _ body: () -> Int) throws -> ALSAOutcome {
        while true {
            let rc = faults?.fault(for: call).map(Int.init) ?? body()
            if rc >= 0 { return .value(rc) }
            let err = Int32(-rc)
            switch err {
            case EINTR:
                if shouldStop() { return .value(0) }
                continue
            case EAGAIN:
                return .value(0)   // nothing ready (non-blocking moment): the caller waits again
            case EPIPE where pcm != nil:
                let lost = estimateOverrunLoss()
                try recover(call, err)
                lastReadTime = clock.now()   // the loss is accounted up to the restart
                return .overrun(lostFrames: lost)
            case ESTRPIPE where pcm != nil:
                try resumeAfterSuspend(call)
                let lost = framesSinceLastRead()
                lastReadTime = clock.now()
                return .resumed(lostFrames: lost)
            case ENODEV, EBADFD, EIO, ENXIO:
                throw failure(.deviceLost, function ?? call.rawValue, err, "device lost")
            default:
                throw failure(.failed, function ?? call.rawValue, err, "failed")
            }
        }
    }

    private func failure(_ kind: ALSAFailure.Kind, _ function: String, _ err: Int32, _ what: String) -> ALSAFailure {
        let message = String(cString: snd_strerror(-err))
        return ALSAFailure(kind: kind, call: function, errno: err, problem: "\(function) \(what): \(message)")
    }

    private func recover(_ call: ALSACall, _ err: Int32) throws {
        var rc = snd_pcm_recover(pcm, -err, 1)
        if rc < 0 { rc = snd_pcm_prepare(pcm) }
        if rc < 0 { throw failure(.deviceLost, "snd_pcm_recover", -rc, "could not recover from overrun") }
        rc = snd_pcm_start(pcm)
        if rc < 0 && rc != -EBADFD {
            throw failure(.deviceLost, "snd_pcm_start", -rc, "could not restart after overrun")
        }
    }

    private func resumeAfterSuspend(_ call: ALSACall) throws {
        var rc = snd_pcm_resume(pcm)
        while rc == -EAGAIN && !shouldStop() {
            clock.sleep(seconds: 0.1, shouldStop: shouldStop)
            rc = snd_pcm_resume(pcm)
        }
        if rc < 0 { rc = snd_pcm_prepare(pcm) }
        if rc < 0 { throw failure(.deviceLost, "snd_pcm_resume", -rc, "could not resume after suspend") }
        _ = snd_pcm_start(pcm)
    }

    /// Frames lost in a capture overrun: the unread frames ALSA discards when re-preparing (`avail`) plus
    /// the time the stream stood still since the xrun (status trigger timestamp); when the status cannot
    /// say (no timestamps, not in XRUN), the time since the last successful read.
    private func estimateOverrunLoss() -> Int64 {
        var info = sc_alsa_xrun_info()
        if sc_alsa_xrun_info_get(pcm, &info) == 0, info.state == Int32(SND_PCM_STATE_XRUN.rawValue),
           info.secondsSinceTrigger >= 0 {
            return Int64(max(info.avail, 0)) + Int64((info.secondsSinceTrigger * Double(sampleRate)).rounded())
        }
        return framesSinceLastRead()
    }

    private func framesSinceLastRead() -> Int64 {
        Int64((max(0, clock.now() - lastReadTime) * Double(sampleRate)).rounded())
    }

    // MARK: - Opening

    private func open(configText: String?) throws {
        // Opened non-blocking so a busy device fails (-EBUSY) instead of blocking in open; reads then block
        // (bounded by snd_pcm_wait's timeout).
        var handle: OpaquePointer?
        if let text = configText {
            var config: OpaquePointer?
            _ = try invoke(.open) {
                Int(sc_alsa_open_lconf_text(&handle, &config, device, text, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK))
            }
            localConfig = config
        } else {
            _ = try invoke(.open) { Int(snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)) }
        }
        guard let handle else {
            throw ALSAFailure(kind: .failed, call: ALSACall.open.rawValue, errno: 0,
                              problem: "snd_pcm_open returned no PCM")
        }
        pcm = handle
        _ = try invoke(.nonblock) { Int(snd_pcm_nonblock(handle, 0)) }
    }

    private func configure(rate requestedRate: Int, period requestedPeriod: Int) throws {
        var hw: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hw) >= 0, let hw else {
            throw ALSAFailure(kind: .failed, call: "snd_pcm_hw_params_malloc", errno: ENOMEM, problem: "out of memory")
        }
        defer { snd_pcm_hw_params_free(hw) }
        _ = try invoke(.hwParams, "snd_pcm_hw_params_any") { Int(snd_pcm_hw_params_any(pcm, hw)) }
        _ = try invoke(.hwParams, "snd_pcm_hw_params_set_access") {
            Int(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED))
        }
        if snd_pcm_hw_params_test_format(pcm, hw, SND_PCM_FORMAT_S16_LE) == 0 {
            format = .s16
        } else if snd_pcm_hw_params_test_format(pcm, hw, SND_PCM_FORMAT_FLOAT_LE) == 0 {
            format = .float
        } else {
            throw ALSAFailure(kind: .failed, call: "snd_pcm_hw_params_set_format", errno: EINVAL,
                              problem: "captures neither S16_LE nor FLOAT_LE")
        }
        let alsaFormat = format == .s16 ? SND_PCM_FORMAT_S16_LE : SND_PCM_FORMAT_FLOAT_LE
        _ = try invoke(.hwParams, "snd_pcm_hw_params_set_format") {
            Int(snd_pcm_hw_params_set_format(pcm, hw, alsaFormat))
        }
        if snd_pcm_hw_params_set_channels(pcm, hw, UInt32(channels)) < 0 {
            throw ALSAFailure(kind: .failed, call: "snd_pcm_hw_params_set_channels", errno: EINVAL,
                              problem: "cannot capture \(channels) channel(s)")
        }
        _ = snd_pcm_hw_params_set_rate_resample(pcm, hw, 1)
        var rate = UInt32(requestedRate)
        var dir: Int32 = 0
        _ = try invoke(.hwParams, "snd_pcm_hw_params_set_rate_near") {
            Int(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir))
        }
        var period = snd_pcm_uframes_t(requestedPeriod)
        _ = try invoke(.hwParams, "snd_pcm_hw_params_set_period_size_near") {
            Int(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir))
        }
        var buffer = period * 8
        _ = try invoke(.hwParams, "snd_pcm_hw_params_set_buffer_size_near") {
            Int(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer))
        }
        _ = try invoke(.hwParams) { Int(snd_pcm_hw_params(pcm, hw)) }
        sampleRate = Int(rate)
        periodFrames = Int(period)
        bufferFrames = Int(buffer)
    }
}
