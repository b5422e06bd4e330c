/// The ALSA calls that go through `ALSAPCM`'s choke point, named after the C function.
enum ALSACall: String, Sendable, CaseIterable {
    case open = "snd_pcm_open"
    case nonblock = "snd_pcm_nonblock"
    case hwParams = "snd_pcm_hw_params"
    case start = "snd_pcm_start"
    case wait = "snd_pcm_wait"
    case readi = "snd_pcm_readi"
}

/// Fault injection for tests: consulted by the choke point before every ALSA call. Returning a negative
/// errno makes the call behave as if ALSA had returned it (the real call is skipped); `nil` makes the real
/// call. Everything after the return code — retry, recovery, counting, gap reporting, reopen — is the
/// production path.
protocol ALSAFaultInjector: AnyObject, Sendable {
    func fault(for call: ALSACall) -> Int32?
}

/// Why an ALSA call failed, for the capture loop (which turns it into a gap, a reopen or an `AudioError`).
struct ALSAFailure: Error, Sendable {
    enum Kind: Sendable {
        /// The device is gone or unusable (-ENODEV, -EBADFD, -EIO, -ENXIO): reopen with back-off.
        case deviceLost
        /// Any other error: configuration, permissions, unsupported parameters.
        case failed
    }
    var kind: Kind
    var call: String
    /// Positive errno (0 when the failure is not an errno, e.g. an unsupported format).
    var errno: Int32
    /// One line: what was expected and what was found.
    var problem: String
}
