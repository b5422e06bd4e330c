// The client of scripts/check-client-package.sh: a package that depends on a tagged sleepcycle and analyses a
// short recording through the public API only. Everything the check exercises is in this one file.
import Foundation
import SleepCycle
import SleepCycleAudio

/// `seconds` of a 220 Hz tone swelling every 4 s over quiet noise.
func testRecording(rate: Int, seconds: Int) -> [Float] {
    var noise: UInt32 = 12345
    return (0..<(rate * seconds)).map { i in
        let t = Double(i) / Double(rate)
        noise = noise &* 1_664_525 &+ 1_013_904_223
        let breath = 0.6 + 0.4 * sin(2 * Double.pi * 0.25 * t)
        return Float(0.3 * breath * sin(2 * Double.pi * 220 * t) + 0.02 * (Double(noise >> 8) / Double(1 << 24) - 0.5))
    }
}

let rate = 16_000, seconds = 60
let path = FileManager.default.temporaryDirectory.appendingPathComponent("sleepcycle-client-\(getpid()).wav").path
defer { try? FileManager.default.removeItem(atPath: path) }

let writer = try AudioFileWriter(path: path, format: .wavPCM16, sampleRate: rate, channelCount: 1)
try writer.write(interleaved: testRecording(rate: rate, seconds: seconds))
writer.close()

let result = try FileAnalysis.analyze(path: path)
print("analysed \(result.source.durationSec) s: \(result.events.count) events, "
      + "\(result.breathingRates.count) breathing rates, JSON \(result.jsonString().utf8.count) bytes")
guard result.analysedSamples == Int64(rate * seconds), result.source.sampleRate == rate else {
    print("unexpected result: \(result.analysedSamples) samples at \(result.source.sampleRate) Hz")
    exit(1)
}
