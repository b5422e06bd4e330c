// AudioFileSource: decoding of every supported container/encoding, rates, durations and block bounds.
import Foundation
import Testing
@testable import SleepCycleAudio

@Suite("AudioFileSource decoding")
struct FileSourceTests {
    @Test("16 kHz mono WAV PCM16 decodes exactly to the quantised values, in bounded blocks")
    func wav16Exact() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(440, rate: 16_000, count: 40_000, amplitude: 0.6)
        let path = try FileFixture.writeFile(dir.path("a.wav"), .wavPCM16, rate: 16_000, channels: [x])
        let source = try AudioFileSource(path: path, blockFrames: 4096)
        #expect(source.format == SourceFormat(sampleRate: 16_000, channelCount: 1, analysisChannelCount: 1,
                                              frameCount: 40_000))
        let (channels, blocks, contiguous) = try FileFixture.readAll(source)
        #expect(contiguous)
        #expect(blocks.dropLast().allSatisfy { $0 == 4096 })
        #expect(blocks.last == 40_000 % 4096)
        #expect(channels[0].count == 40_000)
        // Pass-through at 16 kHz: exactly the quantised values (no filtering), on the 16-bit grid.
        #expect(FileFixture.maxQuantisationError(channels[0], x, bits: 16) < 0.01)
        #expect(channels[0].allSatisfy { ($0 * 32768).rounded() == $0 * 32768 })
        #expect(try source.read().isFileEnd)
    }
}

extension SourceRead {
    var isFileEnd: Bool { if case .end = self { return true } else { return false } }
}
