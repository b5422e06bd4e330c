// The interface between AudioFileSource and the three decoders (libsndfile, libFLAC, libvorbisfile).

/// What one `AudioDecoder.read` call produced.
enum DecodeStep: Equatable {
    /// This many frames were written to the output buffers, directly after the previous audio or gap.
    case audio(Int)
    /// This many source frames are missing here (damaged data the decoder skipped); the next audio follows them.
    case gap(Int64)
    /// No more audio.
    case end
}

/// A decoder of one input stream into planar float frames at the stream's own rate.
///
/// Positions are implicit: audio and gaps follow one another from source frame 0, so a decoder that knows where
/// audio resumes after damage (a FLAC frame header's sample number, an Ogg page's granule position) reports the
/// frames in between as a `.gap`, and everything after keeps its true time.
protocol AudioDecoder: AnyObject {
    var sampleRate: Int { get }
    var channelCount: Int { get }
    /// Frames the stream declares (STREAMINFO total, the last Ogg granule position, the WAV data size), nil if
    /// unknown (a pipe, a FLAC without a total).
    var frameCount: Int64? { get }
    /// Container and encoding in libsndfile's words, e.g. "FLAC (Free Lossless Audio Codec), Signed 16 bit PCM".
    var formatDescription: String { get }
    /// True for an Ogg container (channel order follows the Vorbis I spec).
    var isOgg: Bool { get }
    /// Bits of the integer PCM decoded (samples are k / 2^(bits−1)); nil for float or lossy encodings.
    var integerBits: Int? { get }
    /// `SF_CHANNEL_MAP_*` per channel when the container stores a channel map.
    func channelMap() -> [Int32]?
    /// Frames a WAV/AIFF header declares beyond what the file holds (libsndfile clamps silently), else nil.
    func declaredFramesBeyondData() -> Int64?
    /// Decodes up to `frames` frames of the source channels `channels` into `output[k]` (channel `channels[k]`).
    /// Never returns `.audio(0)`. Throws only for errors that should stop the analysis whatever the policy;
    /// a decode failure that ends the readable data is returned as `.end` with `stopError` set.
    func read(channels: [Int], into output: [UnsafeMutablePointer<Float>], frames: Int) throws(AudioError) -> DecodeStep
    /// The decode error that ended the data early, if any (reported as truncation).
    var stopError: AudioError? { get }
    func close()
}

extension AudioDecoder {
    func channelMap() -> [Int32]? { nil }
    func declaredFramesBeyondData() -> Int64? { nil }
}
