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
    public init(sampleRate: Int, channelCount: Int, analysisChannelCount: Int, frameCount: Int64?) {
        self.sampleRate = sampleRate; self.channelCount = channelCount
        self.analysisChannelCount = analysisChannelCount; self.frameCount = frameCount
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
}

extension AudioSource {
    public var warnings: [AudioError] { [] }
}
