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
