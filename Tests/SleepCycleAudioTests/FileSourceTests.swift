// AudioFileSource: decoding of every supported container/encoding, rates, durations, block bounds and channels.
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
                                              frameCount: 40_000, integerBits: 16))
        #expect(source.formatDescription.contains("WAV") && source.formatDescription.contains("16 bit"))
        let (channels, blocks, contiguous) = try FileFixture.readAll(source)
        #expect(contiguous)
        #expect(blocks.dropLast().allSatisfy { $0 == 4096 })
        #expect(blocks.last == 40_000 % 4096)
        #expect(channels[0].count == 40_000)
        // Pass-through at 16 kHz: exactly the quantised values (no filtering), on the 16-bit grid.
        #expect(FileFixture.maxQuantisationError(channels[0], x, bits: 16) < 0.01)
        #expect(channels[0].allSatisfy { ($0 * 32768).rounded() == $0 * 32768 })
        #expect(try source.read().isFileEnd)
        #expect(source.warnings.isEmpty)
    }

    /// Lossless encodings and the bit depth of their quantisation grid (nil: float, exact).
    static let losslessFormats: [(AudioFileFormat, Int?)] = [
        (.wavPCMU8, 8), (.wavPCM16, 16), (.wavPCM24, 24), (.wavPCM32, nil), (.wavFloat, nil),
        (.flac16, 16), (.flac24, 24), (.aiff16, 16), (.aiff24, 24),
    ]

    @Test("Lossless formats decode exactly to their quantisation (16 kHz, stereo)",
          arguments: FileSourceTests.losslessFormats.indices)
    func losslessExact(index: Int) throws {
        let (format, bits) = Self.losslessFormats[index]
        let dir = try FileFixture.TemporaryDirectory()
        let left = FileFixture.sine(300, rate: 16_000, count: 8_000, amplitude: 0.7)
        let right = FileFixture.sine(1_700, rate: 16_000, count: 8_000, amplitude: 0.3)
        let path = try FileFixture.writeFile(dir.path("x.\(format)".replacingOccurrences(of: " ", with: "_")), format,
                                             rate: 16_000, channels: [left, right])
        let source = try AudioFileSource(path: path)
        let (channels, _, contiguous) = try FileFixture.readAll(source)
        #expect(contiguous && channels.count == 2 && channels[0].count == 8_000, "\(format)")
        for (decoded, original) in zip(channels, [left, right]) {
            if let bits {
                // libsndfile scales to 24 bits in single precision (24-bit mantissa), so its rounding may land one
                // step off the exact grid point; 8/16-bit land exactly.
                let tolerance = bits > 16 ? 1.001 : 0.01
                #expect(FileFixture.maxQuantisationError(decoded, original, bits: bits) < tolerance, "\(format)")
            } else {
                // Float is exact; 32-bit PCM is exact to float precision.
                let worst = zip(decoded, original).map { abs($0 - $1) }.max() ?? 1
                #expect(worst <= 2e-7, "\(format): \(worst)")
            }
        }
    }

    @Test("Any rate 8–192 kHz: duration preserved (round(n·16000/rate) samples) and a 1 kHz tone keeps its level",
          arguments: [8_000, 11_025, 16_000, 22_050, 32_000, 44_100, 48_000, 88_200, 96_000, 176_400, 192_000])
    func rates(rate: Int) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let n = rate * 3 / 10 + 7
        let path = try FileFixture.writeFile(dir.path("r\(rate).wav"), .wavFloat, rate: rate,
                                             channels: [FileFixture.sine(1_000, rate: rate, count: n, amplitude: 0.5)])
        let source = try AudioFileSource(path: path, blockFrames: 1_000)
        #expect(source.format.sampleRate == rate && source.format.frameCount == Int64(n))
        let (channels, blocks, contiguous) = try FileFixture.readAll(source)
        let expected = Int((Double(n) * 16_000 / Double(rate)).rounded())
        #expect(contiguous && channels[0].count == expected, "rate \(rate): \(channels[0].count) vs \(expected)")
        #expect(blocks.dropLast().allSatisfy { $0 == 1_000 } && (blocks.last ?? 0) <= 1_000)
        let middle = channels[0][800..<(channels[0].count - 800)]
        let gainDB = 20 * log10(FileFixture.toneAmplitude(middle, frequency: 1_000, rate: 16_000) / 0.5)
        #expect(abs(gainDB) < 0.1, "rate \(rate): \(gainDB) dB")
        #expect(source.framesDecoded == Int64(n))
    }

    @Test("Ogg Vorbis decodes (lossy): level within 0.5 dB and waveform correlation > 0.99 with the original")
    func vorbis() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let rate = 44_100
        let x = FileFixture.sine(700, rate: rate, count: rate / 2, amplitude: 0.5)
        let path = try FileFixture.writeFile(dir.path("v.ogg"), .oggVorbis, rate: rate, channels: [x, x],
                                             vorbisQuality: 0.6)
        let source = try AudioFileSource(path: path)
        #expect(source.formatDescription.lowercased().contains("vorbis"))
        let (channels, _, contiguous) = try FileFixture.readAll(source)
        #expect(contiguous && channels.count == 2 && channels[0].count == 8_000)
        let reference = FileFixture.sine(700, rate: 16_000, count: 8_000, amplitude: 0.5)
        let range = 800..<7_200
        let y = channels[0][range], r = reference[range]
        let dotProduct = zip(y, r).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
        let correlation = dotProduct / (FileFixture.rms(y) * FileFixture.rms(r) * Double(range.count))
        #expect(correlation > 0.99, "correlation \(correlation)")
        #expect(abs(20 * log10(FileFixture.rms(y) / FileFixture.rms(r))) < 0.5)
    }

    @Test("Stereo stays two channels: a tone in each channel stays in its channel (≥ 80 dB separation)")
    func stereoSeparation() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let rate = 48_000
        let left = FileFixture.sine(440, rate: rate, count: rate / 2, amplitude: 0.5)
        let right = FileFixture.sine(2_500, rate: rate, count: rate / 2, amplitude: 0.5)
        let path = try FileFixture.writeFile(dir.path("s.flac"), .flac24, rate: rate, channels: [left, right])
        let source = try AudioFileSource(path: path)
        #expect(source.format.channelCount == 2 && source.format.analysisChannelCount == 2)
        let (channels, _, _) = try FileFixture.readAll(source)
        let l = channels[0][800..<7_200], r = channels[1][800..<7_200]
        #expect(abs(FileFixture.toneAmplitude(l, frequency: 440, rate: 16_000) - 0.5) < 0.005)
        #expect(abs(FileFixture.toneAmplitude(r, frequency: 2_500, rate: 16_000) - 0.5) < 0.005)
        #expect(FileFixture.toneAmplitude(l, frequency: 2_500, rate: 16_000) < 0.5e-4)
        #expect(FileFixture.toneAmplitude(r, frequency: 440, rate: 16_000) < 0.5e-4)
    }

    @Test("More than two channels: the first two (front left/right) are analysed, the rest ignored")
    func multichannel() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let tones = [300.0, 900.0, 2_000.0, 3_100.0]
        let planar = tones.map { FileFixture.sine($0, rate: 16_000, count: 4_000, amplitude: 0.4) }
        let path = try FileFixture.writeFile(dir.path("quad.wav"), .wavPCM16, rate: 16_000, channels: planar)
        let source = try AudioFileSource(path: path)
        #expect(source.format.channelCount == 4 && source.format.analysisChannelCount == 2)
        #expect(source.sourceChannels == [0, 1])
        let (channels, _, _) = try FileFixture.readAll(source)
        #expect(channels.count == 2)
        #expect(FileFixture.maxQuantisationError(channels[0], planar[0], bits: 16) < 0.01)
        #expect(FileFixture.maxQuantisationError(channels[1], planar[1], bits: 16) < 0.01)
    }

    @Test("More than two channels with a channel map (CAF layout MPEG 3.0 B: C, L, R): the mapped L/R are analysed")
    func channelMapFrontPair() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let tones = [300.0, 900.0, 2_000.0]
        let planar = tones.map { FileFixture.sine($0, rate: 16_000, count: 4_000, amplitude: 0.4) }
        let path = dir.path("surround.caf")
        let writer = try AudioFileWriter(path: path, format: .caf16, sampleRate: 16_000, channelCount: 3)
        try writer.setChannelMap([.center, .left, .right])
        try writer.write(channels: planar)
        writer.close()
        let source = try AudioFileSource(path: path)
        #expect(source.sourceChannels == [1, 2])
        let (channels, _, _) = try FileFixture.readAll(source)
        #expect(FileFixture.maxQuantisationError(channels[0], planar[1], bits: 16) < 0.01)
        #expect(FileFixture.maxQuantisationError(channels[1], planar[2], bits: 16) < 0.01)
    }

    @Test("Three-channel Ogg Vorbis follows the Vorbis order L, C, R: channels 0 and 2 are analysed")
    func vorbisThreeChannels() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let tones = [500.0, 1_500.0, 3_000.0]
        let planar = tones.map { FileFixture.sine($0, rate: 16_000, count: 8_000, amplitude: 0.4) }
        let path = try FileFixture.writeFile(dir.path("lcr.ogg"), .oggVorbis, rate: 16_000, channels: planar)
        let source = try AudioFileSource(path: path)
        #expect(source.sourceChannels == [0, 2])
        let (channels, _, _) = try FileFixture.readAll(source)
        let l = channels[0][1_000..<7_000], r = channels[1][1_000..<7_000]
        #expect(FileFixture.toneAmplitude(l, frequency: 500, rate: 16_000) > 0.35)
        #expect(FileFixture.toneAmplitude(r, frequency: 3_000, rate: 16_000) > 0.35)
        #expect(FileFixture.toneAmplitude(r, frequency: 1_500, rate: 16_000) < 0.01)
    }

    @Test("ChannelRule: mono, stereo, channel-map front pair, fallback to the first two")
    func channelRule() {
        #expect(ChannelRule.analysisChannels(channelCount: 1) == [0])
        #expect(ChannelRule.analysisChannels(channelCount: 2) == [0, 1])
        #expect(ChannelRule.analysisChannels(channelCount: 6) == [0, 1])
        #expect(ChannelRule.analysisChannels(channelCount: 3, frontLeft: 0, frontRight: 2) == [0, 2])
        #expect(ChannelRule.analysisChannels(channelCount: 3, frontLeft: 1, frontRight: 1) == [0, 1])
        #expect(ChannelRule.analysisChannels(channelCount: 3, frontLeft: 0, frontRight: 7) == [0, 1])
        #expect(ChannelRule.vorbisFrontPair(channelCount: 3)! == (0, 2))
        #expect(ChannelRule.vorbisFrontPair(channelCount: 4)! == (0, 1))
        #expect(ChannelRule.vorbisFrontPair(channelCount: 6)! == (0, 2))
        #expect(ChannelRule.vorbisFrontPair(channelCount: 2) == nil)
    }

    @Test("Mono down-mix is the per-sample mean of the channels")
    func downmix() {
        #expect(ChannelRule.downmixToMono([[1, 2, 3], [3, 2, 1]]) == [2, 2, 2])
        #expect(ChannelRule.downmixToMono([[0.5, -0.5]]) == [0.5, -0.5])
        #expect(ChannelRule.downmixToMono([[1, 1, 1], [0, 0]]) == [0.5, 0.5])
        #expect(ChannelRule.downmixToMono([]) == [])
    }

    @Test("A long file streams in bounded blocks; memory does not grow with its length")
    func boundedBlocks() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let rate = 44_100
        let x = FileFixture.sine(100, rate: rate, count: rate * 3, amplitude: 0.2)
        let path = try FileFixture.writeFile(dir.path("long.wav"), .wavPCM16, rate: rate, channels: [x, x])
        let source = try AudioFileSource(path: path, blockFrames: 2_048)
        var count = 0, reads = 0
        while case .audio(let start, let channels) = try source.read() {
            #expect(start == Int64(count))
            #expect(channels.allSatisfy { $0.count <= 2_048 })
            count += channels[0].count; reads += 1
        }
        #expect(count == 48_000 && reads == 24)
        source.close()
        #expect(try source.read().isFileEnd)
    }
}

extension SourceRead {
    var isFileEnd: Bool { if case .end = self { return true } else { return false } }
}
