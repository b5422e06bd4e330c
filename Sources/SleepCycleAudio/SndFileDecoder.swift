// Decoding through libsndfile: every format except native FLAC and Ogg Vorbis.
import CSndFile

/// `AudioDecoder` over libsndfile (`sf_readf_float`): WAV, AIFF, CAF, W64, RF64, Ogg Opus, … Reads interleaved
/// frames into one buffer and de-interleaves the analysed channels. libsndfile cannot resynchronise inside a damaged
/// stream, so a decode error ends the data (`stopError`, reported as truncation).
final class SndFileDecoder: AudioDecoder {
    private let file: SndFile
    private let interleaved: UnsafeMutablePointer<Float>
    private let capacity: Int
    private var done = false
    private(set) var stopError: AudioError?

    /// - Parameter framesPerRead: largest `read` the caller makes (sizes the interleaved buffer).
    init(input: InputFile, framesPerRead: Int) throws(AudioError) {
        file = try SndFile(reading: input)
        capacity = max(1, framesPerRead)
        interleaved = .allocate(capacity: capacity * max(1, file.channels))
    }

    deinit { interleaved.deallocate() }

    var sampleRate: Int { file.sampleRate }
    var channelCount: Int { file.channels }
    /// libsndfile reports SF_COUNT_MAX frames for a stream of unknown length (a pipe).
    var frameCount: Int64? { file.frames == Int64.max ? nil : max(0, file.frames) }
    var formatDescription: String { file.formatDescription }
    var isOgg: Bool { file.isOgg }
    func channelMap() -> [Int32]? { file.channelMap() }

    func declaredFramesBeyondData() -> Int64? {
        AudioFileSource.declaredFramesBeyondFile(log: file.log(), channels: file.channels, frames: file.frames)
    }

    func read(channels: [Int], into output: [UnsafeMutablePointer<Float>], frames: Int) throws(AudioError) -> DecodeStep {
        guard !done else { return .end }
        var n: Int
        do { n = try file.readFloat(into: interleaved, frames: min(frames, capacity)) } catch {
            // A decoder error (e.g. "flac decoder lost sync" at a cut-off end) ends the readable audio: what was
            // decoded before it is kept and the caller reports truncation.
            stopError = error
            done = true
            n = file.lastReadCount
        }
        guard n > 0 else { done = true; return .end }
        let stride = file.channels
        for (k, source) in channels.enumerated() {
            let dst = output[k]
            var src = interleaved + source
            for i in 0..<n { dst[i] = src.pointee; src += stride }
        }
        return .audio(n)
    }

    func close() { file.close() }
}
