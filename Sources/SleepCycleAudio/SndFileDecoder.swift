// Decoding through libsndfile: every format except native FLAC and Ogg Vorbis.
import CSndFile
import Foundation
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
    /// the end of the input, not by libsndfile, which would stop at 4 (or 2) GiB (`UnsizedWAVReader`); so is an
    /// RF64 file on a pipe, whose first samples libsndfile's parser consumes.
    private var unsized: UnsizedWAVReader?
    private let input: InputFile

    /// - Parameter blockFrames: the caller's output block, which sizes its reads (`AudioFileSource.framesPerRead`).
    init(input: InputFile, blockFrames: Int) throws(AudioError) {
        self.input = input
        var declaredBytes: Int64?
        if let (header, reader) = try Self.rf64Stream(input) {
            (file, unsized) = (header, reader)
        } else {
            file = try SndFile(reading: input)
            declaredBytes = input.isRegular ? nil : Self.declaredDataBytes(file)
            unsized = UnsizedWAVReader(input: input, format: file.info.format, channels: file.channels)
                ?? UnsizedWAVReader(stream: input, format: file.info.format, channels: file.channels,
                                    declaredBytes: declaredBytes)
        }
        let rate = min(max(file.sampleRate, 1), Resampler.supportedRates.upperBound)
        capacity = AudioFileSource.framesPerRead(blockFrames: blockFrames, rate: rate)
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

    /// An RF64 file on a pipe: libsndfile 1.2's RF64 parser reads on past the `data` chunk's header there (its size
    /// says "see ds64"), takes the first sample bytes for further chunks — skipping as many bytes as they happen to
    /// declare — and cannot seek back, so it lost the first frames (or, by chance, far more) and reported a
    /// truncation. Here libsndfile parses only the header, copied from the unconsumed stream (`InputFile.peek`) into
    /// an unlinked temporary file; the stream's header bytes are then skipped and its samples read by
    /// `UnsizedWAVReader`, up to ds64's data size. Nil (libsndfile reads the stream) for anything else: another
    /// format, a header longer than the 16 KiB peeked (ds64, fmt and a broadcast WAV's bext and iXML fit), or an
    /// encoding the reader does not take.
    private static func rf64Stream(_ input: InputFile) throws(AudioError) -> (SndFile, UnsizedWAVReader)? {
        guard !input.isRegular, input.peek(4).elementsEqual("RF64".utf8) else { return nil }
        let head = input.peek(16_384)
        guard let (offset, dataBytes) = UnsizedWAVReader.rf64DataChunk(head), let copy = tmpfile() else { return nil }
        defer { fclose(copy) }
        let written = head.withUnsafeBytes { fwrite($0.baseAddress, 1, offset, copy) }
        guard written == offset, fflush(copy) == 0 else { return nil }
        rewind(copy)
        let header = try SndFile(reading: try InputFile(fileDescriptor: fileno(copy), name: input.name))
        guard let reader = UnsizedWAVReader(rf64Stream: input, format: header.info.format, channels: header.channels,
                                            dataBytes: dataBytes) else { return nil }
        // libsndfile has not read the stream: it can still take it over if the encoding is not the reader's.
        var skip = [UInt8](repeating: 0, count: offset), got = 0
        while got < offset {
            let n = skip.withUnsafeMutableBytes { input.read(into: $0.baseAddress! + got, count: offset - got) }
            guard n > 0 else {
                throw AudioError(.notAudio, path: input.name, message: "the RF64 header ends before its samples")
            }
            got += n
        }
        return (header, reader)
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
