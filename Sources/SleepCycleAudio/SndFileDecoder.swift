// Decoding through libsndfile: every format except native FLAC and Ogg Vorbis.
import CSndFile
import SleepCycleDSP

/// `AudioDecoder` over libsndfile (`sf_readf_float`): WAV, AIFF, CAF, W64, RF64, Ogg Opus, … Reads interleaved
/// frames into one buffer and de-interleaves the analysed channels. libsndfile cannot resynchronise inside a damaged
/// stream, so a decode error ends the data (`stopError`, reported as truncation).
final class SndFileDecoder: AudioDecoder {
    private let file: SndFile
    private let interleaved: UnsafeMutablePointer<Float>
    private let capacity: Int
    private var done = false
    private(set) var stopError: AudioError?
    /// A WAV whose `data` size is "unknown" (0xFFFFFFFF, sox's 0x7FFFF000, ffmpeg's 0x7FFFFFFF) is read here to
    /// the end of the input, not by libsndfile, which would stop at 4 (or 2) GiB (`UnsizedWAVReader`).
    private var unsized: UnsizedWAVReader?
    private let input: InputFile

    /// - Parameter blockFrames: the caller's output block, which sizes its reads (`AudioFileSource.framesPerRead`).
    init(input: InputFile, blockFrames: Int) throws(AudioError) {
        self.input = input
        file = try SndFile(reading: input)
        let rate = min(max(file.sampleRate, 1), Resampler.supportedRates.upperBound)
        capacity = AudioFileSource.framesPerRead(blockFrames: blockFrames, rate: rate)
        let declaredBytes = input.isRegular ? nil : Self.declaredDataBytes(file)
        unsized = UnsizedWAVReader(input: input, format: file.info.format, channels: file.channels)
            ?? UnsizedWAVReader(stream: input, format: file.info.format, channels: file.channels,
                                declaredBytes: declaredBytes)
        frameCount = unsized.map(\.frameCount) ?? Self.declaredFrames(file, dataBytes: declaredBytes)
        interleaved = .allocate(capacity: capacity * max(1, file.channels))
    }

    deinit { interleaved.deallocate() }

    var sampleRate: Int { file.sampleRate }
    var channelCount: Int { file.channels }
    let frameCount: Int64?
    var formatDescription: String { file.formatDescription }
    var isOgg: Bool { file.isOgg }
    var integerBits: Int? { file.integerBits }
    func channelMap() -> [Int32]? { file.channelMap() }

    /// The frame count libsndfile reports, or nil when the length is unknown: SF_COUNT_MAX or a count no recording
    /// can have (2^48 frames and more: on a pipe libsndfile gives SF_COUNT_MAX divided by the frame's bytes for W64,
    /// NIST, IRCAM and others), and on a pipe a WAV `data` size (`dataBytes`) of 0x7FFF0000 bytes or more — the
    /// "length unknown" sentinels that writers which cannot seek back put there (0xFFFFFFFF, 0x7FFFFFFF,
    /// 0x7FFFF000), which libsndfile takes at face value.
    private static func declaredFrames(_ file: SndFile, dataBytes: Int64?) -> Int64? {
        if file.frames >= 1 << 48 { return nil }
        if let dataBytes, dataBytes >= 0x7FFF_0000 { return nil }
        return max(0, file.frames)
    }

    /// The `data` chunk size in libsndfile's log of the header, if it names one.
    private static func declaredDataBytes(_ file: SndFile) -> Int64? {
        for line in file.log().split(separator: "\n") where line.hasPrefix("data : ") {
            if let bytes = Int64(line.dropFirst(7).prefix { $0.isNumber }) { return bytes }
        }
        return nil
    }

    func declaredFramesBeyondData() -> Int64? {
        guard unsized == nil else { return nil }
        return AudioFileSource.declaredFramesBeyondFile(log: file.log(), channels: file.channels, frames: file.frames)
    }

    func read(channels: [Int], into output: [UnsafeMutablePointer<Float>], frames: Int) throws(AudioError) -> DecodeStep {
        guard !done else { return .end }
        var n: Int
        if unsized != nil {
            n = unsized!.read(input, into: interleaved, frames: min(frames, capacity))
        } else {
            do { n = try file.readFloat(into: interleaved, frames: min(frames, capacity)) } catch {
                // A decoder error (e.g. "flac decoder lost sync" at a cut-off end) ends the readable audio: what was
                // decoded before it is kept and the caller reports truncation.
                stopError = error
                done = true
                n = file.lastReadCount
            }
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
