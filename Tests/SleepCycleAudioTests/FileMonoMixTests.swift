// PCM16 WAVs at 44.1 and 48 kHz, mono and stereo, decoded, resampled and mixed to mono against the ideal 16 kHz
// signal: the path that Benchmarks' `formats-check` compares with SoX on the development data's real recordings.
import Foundation
import Testing
import SleepCycleAudio

@Suite("AudioFileSource: PCM16 at 44.1 / 48 kHz, resampled and mixed to mono")
struct FileMonoMixTests {
    /// Tones per channel (Hz, amplitude), all inside the 7.2 kHz pass band; the channels differ in content and level.
    static let tones: [[(Double, Double)]] = [
        [(220, 0.3), (1_234.5, 0.2), (5_100, 0.1)],
        [(440, 0.25), (3_000.7, 0.15), (6_800, 0.05)],
    ]

    static func channel(_ c: Int, rate: Int, count: Int) -> [Float] {
        (0..<count).map { i in
            let t = Double(i) / Double(rate)
            return Float(tones[c].reduce(0.0) { $0 + $1.1 * sin(2 * Double.pi * $1.0 * t) })
        }
    }

    @Test("Length, rate, channels and waveform agree with the ideal 16 kHz mix (SNR ≥ 80 dB)",
          arguments: [(44_100, 1), (44_100, 2), (48_000, 1), (48_000, 2)])
    func matchesIdealMix(rate: Int, channelCount: Int) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let n = rate / 2 + 13
        let path = try FileFixture.writeFile(dir.path("mix.wav"), .wavPCM16, rate: rate,
                                             channels: (0..<channelCount).map { Self.channel($0, rate: rate, count: n) })
        let source = try AudioFileSource(path: path)
        #expect(source.format.sampleRate == rate && source.format.channelCount == channelCount)
        let (channels, _, contiguous) = try FileFixture.readAll(source)
        let mono = ChannelRule.downmixToMono(channels)
        let expectedCount = Int((Double(n) * 16_000 / Double(rate)).rounded())
        #expect(contiguous && mono.count == expectedCount, "\(mono.count) samples, expected \(expectedCount)")

        let ideal = ChannelRule.downmixToMono((0..<channelCount).map { Self.channel($0, rate: 16_000, count: mono.count) })
        // Away from the ends, where the resampler pads with silence.
        var signal = 0.0, error = 0.0
        for i in 400..<(mono.count - 400) {
            signal += Double(ideal[i]) * Double(ideal[i])
            error += Double(mono[i] - ideal[i]) * Double(mono[i] - ideal[i])
        }
        let snr = 10 * log10(signal / max(error, 1e-30))
        #expect(snr >= 80, "\(rate) Hz, \(channelCount) channel(s): SNR \(snr) dB against the ideal mix")
    }
}
