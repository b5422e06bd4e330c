import Foundation
import Testing
import SleepCycleBus
import SleepCycleDSP
import AudioHealth

/// The level meter: one reading per second of the timeline, the mean of its frames' RMS², in dBFS.
@Suite struct LevelMeterTests {
    /// A block of `count` frames (hop 512 at 16 kHz) whose RMS is `rms(i)`.
    static func block(start: Int64, count: Int, channel: Int = 0, rms: (Int) -> Float) -> FeatureBlock {
        var values = [Float](repeating: 0, count: count * FeatureLayout.stride)
        for i in 0..<count { values[i * FeatureLayout.stride + FeatureLayout.rms] = rms(i) }
        return FeatureBlock(channel: channel, start: start, frameLength: 1024, hopLength: 512, count: count, values: values)
    }

    static func readings(_ events: [AnalysisEvent]) -> [LevelReading] {
        events.compactMap { if case .level(let l) = $0 { l } else { nil } }
    }

    @Test func oneReadingPerSecondOfFrames() {
        var meter = LevelMeter()
        // 100 frames from sample 512: centres 512 … 51200 (3.2 s); RMS 0.1 in the first second, 0.01 after.
        var out = Self.readings(meter.handle(.features(Self.block(start: 512, count: 100) { i in
            512 + i * 512 < 16_000 ? 0.1 : 0.01
        })))
        out += Self.readings(meter.handle(.sessionEnding(at: 52_000)))
        #expect(out.map(\.start) == [0, 16_000, 32_000, 48_000])
        #expect(abs(out[0].levelDb - -20) < 1e-6)
        #expect(abs(out[1].levelDb - -40) < 1e-6)
        #expect(out.allSatisfy { $0.end == $0.start + 16_000 && $0.channel == nil })
    }

    /// The mean is of power, not of dB: frames at RMS 1 and 0 average to −3 dBFS.
    @Test func averagesPower() {
        var meter = LevelMeter()
        var out = Self.readings(meter.handle(.features(Self.block(start: 0, count: 30) { $0 % 2 == 0 ? 1 : 0 })))
        out += Self.readings(meter.handle(.sessionEnding(at: 16_000)))
        #expect(out.count == 1)
        #expect(abs(out[0].levelDb - 10 * log10(0.5)) < 1e-6)
    }

    /// Only its own channel; digital silence is the floor, not −∞.
    @Test func ownChannelAndSilenceFloor() {
        var meter = LevelMeter(channelIndex: 1, channelTag: .secondary)
        #expect(meter.handle(.features(Self.block(start: 0, count: 10, channel: 0) { _ in 0.5 })).isEmpty)
        _ = meter.handle(.features(Self.block(start: 0, count: 10, channel: 1) { _ in 0 }))
        let out = Self.readings(meter.handle(.sessionEnding(at: 16_000)))
        #expect(out.count == 1 && out[0].channel == .secondary && out[0].levelDb == LevelReading.floorDb)
    }
}
