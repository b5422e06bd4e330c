import SleepCycleDSP

/// What a source knows about its audio before any is read.
public struct SourceFormat: Sendable, Hashable {
    /// Sample rate of the original audio (Hz).
    public var sampleRate: Int
    /// Channels of the original audio.
    public var channelCount: Int
    /// Channels delivered to analysis (1 or 2; see docs for the rule beyond two).
    public var analysisChannelCount: Int
    /// Frames of original audio if known (files), nil for live / injected sources.
    public var frameCount: Int64?
    /// Bits of the integer PCM the source's samples were decoded from (16 for a 16-bit WAV or FLAC, `s16le` input or
    /// S16 capture; 24 for 24-bit), so that sample · 2^(bits−1) is exactly the stored integer; nil for float and
    /// lossy sources (Ogg Vorbis, MP3, float WAV, host-pushed floats). Audio clips use it to store the source's
    /// samples unchanged.
    public var integerBits: Int?
    public init(sampleRate: Int, channelCount: Int, analysisChannelCount: Int, frameCount: Int64?,
                integerBits: Int? = nil) {
        self.sampleRate = sampleRate; self.channelCount = channelCount
        self.analysisChannelCount = analysisChannelCount; self.frameCount = frameCount
        self.integerBits = integerBits
    }
}

/// One read from a source, on the 16 kHz analysis timeline (sample indices since the source started).
public enum SourceRead: Sendable {
    /// `channels[c]` holds analysis-rate samples of channel `c`, the first at sample `start`.
    case audio(start: Int64, channels: [[Float]])
    /// No audio for `length` samples from `start` (overrun, missing input, late buffer).
    case gap(start: Int64, length: Int64, reason: SourceGapReason)
    /// The source has ended; nothing more will be read.
    case end
}

public enum SourceGapReason: String, Sendable { case overrun, missingInput, late }

/// Audio at the source's own rate, before resampling: what audio clips are cut from (`setSourceRateTap`).
public struct SourceRateAudio: Sendable {
    /// Analysis-timeline position (16 kHz samples) of the source's frame 0: 0, or where a resumed night's new audio
    /// begins. Source frame f lies at analysis sample `origin` + f · 16000 / rate.
    public var origin: Int64
    /// The first frame, counted at the source rate from the source's start (gaps included).
    public var start: Int64
    /// The analysed channels (`format.analysisChannelCount`), sanitised, as the resampler received them: the 16-bit
    /// values themselves for a source of ≤ 16-bit integers (`format.integerBits`), else floats.
    public var samples: PlanarSamples
    public var frameCount: Int { samples.frameCount }
    public init(origin: Int64 = 0, start: Int64, samples: PlanarSamples) {
        self.origin = origin; self.start = start; self.samples = samples
    }
}

/// Receives a source's audio at its own rate (`AudioSource.setSourceRateTap`).
public typealias SourceRateTap = (SourceRateAudio) -> Void

/// A source of analysis-rate audio: a file, live ALSA capture, or buffers injected by the host program.
///
/// `read()` returns the next block (blocking for live sources until audio, a gap or the end is known).
/// Blocks are bounded in size; consecutive `.audio` and `.gap` reads tile the timeline with no overlap.
public protocol AudioSource: AnyObject {
    var format: SourceFormat { get }
    /// A human-readable name (file path or device) for messages.
    var name: String { get }
    func read() throws -> SourceRead
    /// Stops the source; a blocked `read()` returns `.end`. Idempotent.
    func close()
    /// Problems that did not stop the source (a truncated or damaged file, replaced samples), one line each;
    /// complete once `read()` has returned `.end`.
    var warnings: [AudioError] { get }
    /// Installs `tap` (nil removes it): every stretch of source-rate audio is handed to it on the thread that calls
    /// `read()`, before the `read()` that returns its first analysis-rate samples, in timeline order. Stretches
    /// missing from the source (a gap) are simply not handed over. Returns false when the source cannot provide its
    /// source-rate audio. Set it before the first `read()`.
    @discardableResult
    func setSourceRateTap(_ tap: SourceRateTap?) -> Bool
}

extension AudioSource {
    public var warnings: [AudioError] { [] }
    @discardableResult
    public func setSourceRateTap(_ tap: SourceRateTap?) -> Bool { false }
}

/// Copies `frames` frames of planar channels for a `SourceRateTap`.
func sourceRateSamples(_ planar: [UnsafeMutablePointer<Float>], frames: Int, integerBits: Int?) -> PlanarSamples {
    PlanarSamples.copying(planar.map { UnsafePointer($0) }, frames: frames, integerBits: integerBits)
}
