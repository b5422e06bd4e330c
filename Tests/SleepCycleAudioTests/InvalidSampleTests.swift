// Non-finite and absurd float samples are replaced by silence at the source, counted and reported once, and the
// rest of the night is analysed as if they had never been there.
import Foundation
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

    @Test("Injected buffers: a NaN pushed by the host is replaced before resampling and counted")
    func injected() throws {
        let source = try InjectedAudioSource(sampleRate: 48_000, channels: 1)
        var x = (0..<48_000).map { Float(sin(Double($0) * 0.05)) * 0.3 }
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
