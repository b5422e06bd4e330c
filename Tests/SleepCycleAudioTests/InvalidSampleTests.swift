// Non-finite and absurd float samples are replaced by silence at the source, counted and reported once, and the
// rest of the night is analysed as if they had never been there.
import Foundation
import SleepCycleDSP
import Testing
@testable import SleepCycleAudio

@Suite("Invalid samples (NaN, ±Inf, beyond ±16)")
struct InvalidSampleTests {
    @Test("SampleSanitizer replaces exactly the non-finite and out-of-range samples, at any buffer length")
    func sanitizerUnit() {
        let specials: [Float] = [.nan, .infinity, -.infinity, 1e30, -17, 16.5, .signalingNaN]
        for length in [1, 7, 8, 9, 31, 64, 100] {
            for position in Set([0, length / 2, length - 1]) {
                for bad in specials {
                    var x = (0..<length).map { Float($0 % 5) * 0.7 - 1.4 }   // valid values, incl. exactly ±1.4
                    x[position] = bad
                    if length > 3 { x[(position + 1) % length] = 16; x[(position + 2) % length] = -16 }  // bounds kept
                    let expected = x.enumerated().map { $0.offset == position ? 0 : $0.element }
                    let result = x.withUnsafeMutableBufferPointer { SampleSanitizer.sanitize($0) }
                    #expect(result == SampleSanitizer.Result(replaced: 1, firstIndex: position), "\(length) \(bad)")
                    #expect(x == expected, "\(length) \(position) \(bad)")
                }
            }
        }
        var clean: [Float] = [0.5, -1, 16, -16, 2, 0, 0, 0, 0, 1]
        #expect(clean.withUnsafeMutableBufferPointer { SampleSanitizer.sanitize($0) } == .init())
        #expect(clean.withUnsafeBufferPointer { SampleSanitizer.firstInvalid(in: $0) } == nil)
        var many: [Float] = Array(repeating: .nan, count: 20)
        #expect(many.withUnsafeBufferPointer { SampleSanitizer.firstInvalid(in: $0) } == 0)
        #expect(many.withUnsafeMutableBufferPointer { SampleSanitizer.sanitize($0) } == .init(replaced: 20, firstIndex: 0))
        #expect(many.allSatisfy { $0 == 0 })
    }

    /// A night-like test signal: quiet noise with a 0.3-s 700 Hz "snore" every 1.5 s.
    static func nightLike(rate: Int, seconds: Double) -> [Float] {
        var seed: UInt32 = 2_463_534_242
        return (0..<Int(Double(rate) * seconds)).map { i in
            seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5
            let t = Double(i) / Double(rate)
            let noise = Float(Double(seed) / Double(UInt32.max) - 0.5) * 0.01
            let burst = t.truncatingRemainder(dividingBy: 1.5) < 0.3 ? Float(0.4 * sin(2 * .pi * 700 * t)) : 0
            return noise + burst
        }
    }

    @Test("One NaN / Inf / 1e30 in a float WAV: replaced, one warning, and every later frame's features unchanged",
          arguments: [Float.nan, .infinity, -.infinity, 1e30])
    func floatWAVWithOneBadSample(bad: Float) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let rate = 44_100
        let clean = Self.nightLike(rate: rate, seconds: 4)
        var dirty = clean
        let badIndex = Int(2.25 * Double(rate))   // 0:00:02.2
        dirty[badIndex] = bad
        let cleanPath = try FileFixture.writeFile(dir.path("clean.wav"), .wavFloat, rate: rate, channels: [clean])
        let dirtyPath = try FileFixture.writeFile(dir.path("dirty.wav"), .wavFloat, rate: rate, channels: [dirty])

        let reference = try FileFixture.readAll(AudioFileSource(path: cleanPath)).channels[0]
        let source = try AudioFileSource(path: dirtyPath)
        let (channels, _, contiguous) = try FileFixture.readAll(source)
        let y = channels[0]
        #expect(contiguous && y.count == reference.count)
        #expect(y.allSatisfy { $0.isFinite })
        #expect(source.invalidSampleCount == 1)
        #expect(abs((source.firstInvalidSampleTime ?? 0) - Double(badIndex) / Double(rate)) < 1e-9)
        #expect(source.warnings.count == 1)
        let warning = try #require(source.warnings.first)
        #expect(warning.code == .invalidSamples)
        #expect(warning.description == "\(dirtyPath): 1 non-finite or out-of-range sample (NaN, ±Inf or beyond ±16) "
            + "replaced by silence, at 0:00:02.2")

        // Features: every frame not touching the replaced sample (±1 frame plus the resampler's reach) is as in the
        // clean file; nothing is NaN anywhere.
        let a = try FeatureAnalyzer.analyze(y), b = try FeatureAnalyzer.analyze(reference)
        #expect(a.count == b.count)
        #expect(a.values.allSatisfy { $0.isFinite })
        let badAt16k = Int(Double(badIndex) * 16_000 / Double(rate))
        let stride = FeatureLayout.stride
        var compared = 0
        for frame in 0..<a.count where abs(frame * 512 - badAt16k) > 1024 + 512 {
            for f in 0..<stride {
                let u = a.values[frame * stride + f], v = b.values[frame * stride + f]
                #expect(abs(u - v) <= 1e-3 * max(1, abs(v)), "frame \(frame) feature \(f): \(u) vs \(v)")
            }
            compared += 1
        }
        #expect(compared >= a.count - 7)
    }

    @Test("Several bad samples: the count and the first one's time")
    func severalBadSamples() throws {
        let dir = try FileFixture.TemporaryDirectory()
        var x = [Float](repeating: 0.1, count: 16_000 * 3)
        for i in [20_000, 20_001, 30_000, 47_999] { x[i] = .nan }
        x[25_000] = -40
        let path = try FileFixture.writeFile(dir.path("x.wav"), .wavFloat, rate: 16_000, channels: [x, x])
        let source = try AudioFileSource(path: path, blockFrames: 1_000)
        let (channels, _, _) = try FileFixture.readAll(source)
        #expect(channels.allSatisfy { $0.allSatisfy { $0.isFinite } && $0.count == 48_000 })
        #expect(source.invalidSampleCount == 10)   // five per channel
        #expect(source.firstInvalidSampleTime == 1.25)
        #expect(source.warnings.map(\.code) == [.invalidSamples])
        #expect(source.warnings.first?.message.hasPrefix("10 non-finite or out-of-range samples") == true)
        #expect(source.warnings.first?.message.hasSuffix("the first at 0:00:01.2") == true)
        #expect(AudioFileSource.clockTime(4_354.56) == "1:12:34.5")
    }

    @Test("Injected buffers: a NaN pushed by the host is replaced before resampling and counted")
    func injected() throws {
        let source = try InjectedAudioSource(sampleRate: 48_000, channels: 1)
        var x = Self.nightLike(rate: 48_000, seconds: 1)
        x[24_000] = .nan
        x[30_000] = .infinity
        try source.push([x], at: 0)
        source.finish()
        var samples: [Float] = []
        while case .audio(_, let c) = try source.read() { samples += c[0] }
        #expect(samples.count == 16_000)
        #expect(samples.allSatisfy { $0.isFinite })
        #expect(source.statistics.invalidSamples == 2)
        #expect(source.statistics.firstInvalidSampleTime == 24_000)
    }
}
