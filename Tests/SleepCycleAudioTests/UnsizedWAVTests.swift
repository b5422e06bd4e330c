// A WAV whose data size says "unknown" (0xFFFFFFFF) is read to the end of the file, as the same file with its size
// filled in is read by libsndfile.
import Foundation
import Testing
@testable import SleepCycleAudio

@Suite("WAV with an unknown data size")
struct UnsizedWAVTests {
    /// Every encoding the reader takes, stereo at 44.1 kHz with an extra chunk before the data: the samples, the
    /// length and the warnings equal those of the same file with its sizes written. (Past 4 GiB, where libsndfile
    /// stopped, the reader goes on the same way: its length is the file's, not the header's.)
    @Test(arguments: [AudioFileFormat.wavPCMU8, .wavPCM16, .wavPCM24, .wavPCM32, .wavFloat])
    func readsToTheEndOfTheFile(format: AudioFileFormat) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let rate = 44_100
        let left = FileFixture.burstSignal(rate: rate, seconds: 2)
        let right = (0..<left.count).map { Float(sin(Double($0) * 0.37)) * 0.3 }
        let sized = try FileFixture.writeFile(dir.path("sized.wav"), format, rate: rate, channels: [left, right])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: sized)))
        let data = try #require(FileFixture.chunkOffset(bytes, "data"))
        // A chunk the reader must step over (odd size, so padded) between the format and the data.
        let junk: [UInt8] = Array("junk".utf8) + [3, 0, 0, 0, 1, 2, 3, 0]
        bytes.insert(contentsOf: junk, at: data)
        for i in 4..<8 { bytes[i] = 0xFF }                           // RIFF size: unknown too
        for i in (data + junk.count + 4)..<(data + junk.count + 8) { bytes[i] = 0xFF }
        let unsized = dir.path("unsized.wav")
        try Data(bytes).write(to: URL(fileURLWithPath: unsized))

        let a = try AudioFileSource(path: sized), b = try AudioFileSource(path: unsized)
        #expect(b.format.frameCount == a.format.frameCount && a.format.frameCount == Int64(left.count))
        let (ta, tb) = (try FileFixture.readTimeline(a), try FileFixture.readTimeline(b))
        #expect(tb.tiles && tb.gaps.isEmpty && tb.samples.count == ta.samples.count)
        #expect(tb.samples == ta.samples, "\(format)")
        #expect(a.warnings.isEmpty && b.warnings.isEmpty, "\(b.warnings)")
        // The sized file is libsndfile's to read; the unsized one is the reader's.
        let format32 = try SndFile(reading: InputFile(path: unsized)).info.format
        #expect(UnsizedWAVReader(input: try InputFile(path: unsized), format: format32, channels: 2) != nil)
        #expect(UnsizedWAVReader(input: try InputFile(path: sized), format: format32, channels: 2) == nil)
    }

    /// Past 4 GiB (a 2-hour 8-channel 48-kHz night is 5.5 GB): the length is the file's. libsndfile's, from the
    /// header, ends at 4 GiB. The file is grown sparsely, so the test writes a few kilobytes, not gigabytes.
    @Test func pastFourGiBTheLengthIsTheFiles() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let channels = Array(repeating: [Float](repeating: 0.1, count: 480), count: 8)
        let path = try FileFixture.writeFile(dir.path("long.wav"), .wavPCM16, rate: 48_000, channels: channels)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let data = try #require(FileFixture.chunkOffset(bytes, "data"))
        for i in Array(4..<8) + Array((data + 4)..<(data + 8)) { bytes[i] = 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let length: Int64 = (4 << 30) + (64 << 20) + 5          // 4 GiB + 64 MiB and a partial frame
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0 && ftruncate(fd, off_t(length)) == 0)
        close(fd)
        let frames = (length - Int64(data + 8)) / 16
        let libsndfile = try SndFile(reading: InputFile(path: path))
        #expect(libsndfile.frames < frames)
        let reader = try #require(UnsizedWAVReader(input: try InputFile(path: path), format: libsndfile.info.format,
                                                   channels: 8))
        #expect(reader.frameCount == frames && reader.dataOffset == Int64(data + 8))
        #expect(try AudioFileSource(path: path).format.frameCount == frames)
    }
}

@Suite("WAV with an unknown data size through a pipe")
struct UnsizedWAVStreamTests {
    /// sox writes 0x7FFFF000 and ffmpeg 0x7FFFFFFF as the `data` size when they write to a pipe; libsndfile stopped
    /// there, 2 GiB in (a 48-kHz stereo night after 3.1 hours), without a warning. Every sample is read, from the
    /// first on (libsndfile has only parsed the header, an extra chunk before the data included), and they equal
    /// the sized file's.
    @Test(arguments: [(AudioFileFormat.wavPCM16, Int64(0x7FFF_F000)), (.wavPCM24, 0x7FFF_FFFF), (.wavFloat, 0xFFFF_FFFF),
                      (.wavPCMU8, 0x7FFF_F000)])
    func everySampleIsRead(format: AudioFileFormat, declared: Int64) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let rate = 48_000
        let left = FileFixture.burstSignal(rate: rate, seconds: 1)
        let right = (0..<left.count).map { Float(sin(Double($0) * 0.21)) * 0.4 }
        let sized = try FileFixture.writeFile(dir.path("sized.wav"), format, rate: rate, channels: [left, right])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: sized)))
        let data = try #require(FileFixture.chunkOffset(bytes, "data"))
        bytes.insert(contentsOf: Array("LIST".utf8) + [4, 0, 0, 0, 9, 8, 7, 6], at: data)
        for i in 4..<8 { bytes[i] = 0xFF }
        for (k, i) in ((data + 16)..<(data + 20)).enumerated() { bytes[i] = UInt8(truncatingIfNeeded: declared >> (8 * k)) }
        let fd = StreamInputTests.pipe(feeding: bytes)
        defer { close(fd) }
        let streamed = try AudioFileSource(fileDescriptor: fd, name: "-")
        #expect(streamed.format.frameCount == nil)
        let (a, b) = (try FileFixture.readAll(AudioFileSource(path: sized)), try FileFixture.readAll(streamed))
        #expect(b.contiguous && b.channels == a.channels && a.channels[0].count >= 15_000, "\(format)")
        #expect(streamed.warnings.isEmpty, "\(streamed.warnings)")
        let sndfile = try SndFile(reading: InputFile(path: sized))
        #expect(UnsizedWAVReader(stream: try InputFile(fileDescriptor: fd, name: "-"), format: sndfile.info.format,
                                 channels: 2, declaredBytes: declared) != nil)
        #expect(UnsizedWAVReader(stream: try InputFile(fileDescriptor: fd, name: "-"), format: sndfile.info.format,
                                 channels: 2, declaredBytes: 0x7FFF_F002) == nil, "a size, not a sentinel")
    }

    /// A sox recording that was interrupted keeps 0x7FFFF000 in a regular file's header too: past 2 GiB the length
    /// is the file's (sparse file, as above).
    @Test func anInterruptedSoxRecordingIsReadPastTwoGiB() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let path = try FileFixture.writeFile(dir.path("sox.wav"), .wavPCM16, rate: 48_000,
                                             channels: [[Float](repeating: 0.1, count: 480), [Float](repeating: 0.2, count: 480)])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let data = try #require(FileFixture.chunkOffset(bytes, "data"))
        for (k, i) in ((data + 4)..<(data + 8)).enumerated() { bytes[i] = UInt8(truncatingIfNeeded: 0x7FFF_F000 >> (8 * k)) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let length: Int64 = (2 << 30) + (64 << 20)
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0 && ftruncate(fd, off_t(length)) == 0)
        close(fd)
        #expect(try AudioFileSource(path: path).format.frameCount == (length - Int64(data + 8)) / 4)
    }
}
