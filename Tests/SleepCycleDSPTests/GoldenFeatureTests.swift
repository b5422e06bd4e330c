import Foundation
import Testing
@testable import SleepCycleDSP

/// Compares `FeatureAnalyzer` with librosa 0.11 values in Fixtures/golden/features_16000_<frame>_<hop>.json
/// (regenerate: `python3 Fixtures/golden/generate.py`). Tolerances are documented in docs/0001-dsp-features.md.
@Suite("Golden features vs librosa")
struct GoldenFeatureTests {
    struct Golden {
        let frameLength: Int, hopLength: Int
        let signals: [String: [String: Any]]
    }

    static func load(_ name: String) throws -> Golden {
        let url = FixturePaths.golden.appendingPathComponent(name)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        return Golden(frameLength: json["frameLength"] as! Int, hopLength: json["hopLength"] as! Int,
                      signals: json["signals"] as! [String: [String: Any]])
    }

    /// Worst error of one feature over all frames of one signal.
    struct Report: CustomStringConvertible {
        var name: String
        var worstRelative: Double = 0, worstAbsolute: Double = 0, failures = 0, checked = 0
        var description: String {
            "\(name): \(failures)/\(checked) out of tolerance, worst rel \(worstRelative), worst abs \(worstAbsolute)"
        }
    }

    /// `|ours − ref| ≤ rel·|ref| + floor` for every value.
    static func compare(_ name: String, _ ours: [Double], _ ref: [Double], rel: Double, floor: Double) -> Report {
        var r = Report(name: name)
        #expect(ours.count == ref.count, "\(name): \(ours.count) values vs \(ref.count)")
        for (a, b) in zip(ours, ref) {
            let err = abs(a - b)
            r.checked += 1
            r.worstAbsolute = max(r.worstAbsolute, err)
            if abs(b) > floor { r.worstRelative = max(r.worstRelative, err / abs(b)) }
            if !(err <= rel * abs(b) + floor) { r.failures += 1 }
        }
        return r
    }

    static func column(_ block: FeatureBlock, _ c: Int) -> [Double] {
        (0..<block.count).map { Double(block[frame: $0, c]) }
    }

    static func run(_ file: String) throws {
        let golden = try load(file)
        for (name, entry) in golden.signals.sorted(by: { $0.key < $1.key }) {
            let samples = try readPCM16WAV(FixturePaths.golden.appendingPathComponent(entry["file"] as! String))[0]
            #expect(samples.count == entry["samples"] as! Int)
            let block = try FeatureAnalyzer.analyze(samples, frameLength: golden.frameLength,
                                                    hopLength: golden.hopLength)
            let frames = entry["frames"] as! Int
            #expect(block.count == frames, "\(name): frame count \(block.count), librosa \(frames)")
            guard block.count == frames else { continue }
            let scalar = { (key: String) in (entry[key] as! [NSNumber]).map(\.doubleValue) }
            let matrix = { (key: String) in (entry[key] as! [[NSNumber]]).map { $0.map(\.doubleValue) } }
            let binHz = 16000.0 / Double(golden.frameLength)
            var reports = [Report]()
            reports.append(compare("rms", column(block, FeatureLayout.rms), scalar("rms"), rel: 1e-4, floor: 1e-7))
            reports.append(compare("centroid", column(block, FeatureLayout.spectralCentroid),
                                   scalar("spectral_centroid"), rel: 1e-4, floor: 1e-3))
            reports.append(compare("bandwidth", column(block, FeatureLayout.spectralBandwidth),
                                   scalar("spectral_bandwidth"), rel: 1e-4, floor: 0.05))
            reports.append(compare("rolloff", column(block, FeatureLayout.spectralRolloff),
                                   scalar("spectral_rolloff"), rel: 0, floor: binHz + 1e-3))
            reports.append(compare("flatness", column(block, FeatureLayout.spectralFlatness),
                                   scalar("spectral_flatness"), rel: 1e-3, floor: 1e-6))
            reports.append(compare("flux", column(block, FeatureLayout.spectralFlux),
                                   scalar("spectral_flux"), rel: 1e-3, floor: 1e-4))
            reports.append(compare("zcr", column(block, FeatureLayout.zeroCrossingRate),
                                   scalar("zero_crossing_rate"), rel: 0, floor: 1e-6))
            // Matrices: floors scale with the frame's largest value (float FFT round-off sits ~1e-7 below it).
            let mel = matrix("mel"), mfcc = matrix("mfcc"), bands = matrix("band_energy")
            var melR = Report(name: "mel"), mfccR = Report(name: "mfcc"), bandR = Report(name: "band")
            var wideFrames = 0
            for f in 0..<frames {
                let ours = (0..<FeatureLayout.melCount).map { Double(block[frame: f, FeatureLayout.mel + $0]) }
                let peak = mel[f].max() ?? 0
                merge(&melR, compare("mel", ours, mel[f], rel: 1e-4, floor: max(1e-12, 1e-9 * peak)))
                let oursB = (0..<FeatureLayout.bandCount).map {
                    Double(block[frame: f, FeatureLayout.bandEnergy + $0])
                }
                let peakB = bands[f].max() ?? 0
                merge(&bandR, compare("band", oursB, bands[f], rel: 1e-4, floor: max(1e-12, 1e-9 * peakB)))
                let oursC = (0..<FeatureLayout.mfccCount).map { Double(block[frame: f, FeatureLayout.mfcc + $0]) }
                // Single-precision FFT round-off lies ~120 dB below a frame's peak: frames whose mel bands span
                // more than 100 dB (a pure chirp over a 16-bit floor) get 0.1 (numpy's own float32 rfft differs
                // from librosa's float64 by up to 0.033 there, FFTW_ESTIMATE's plan by 0.051); all others 1e-2.
                let lowest = max(mel[f].min() ?? 0, 1e-10)
                let wide = peak > 0 && peak / lowest > 1e10
                if wide { wideFrames += 1 }
                merge(&mfccR, compare("mfcc", oursC, mfcc[f], rel: 0, floor: wide ? 0.1 : 1e-2))
            }
            reports += [melR, bandR, mfccR]
            print("[golden \(golden.frameLength)/\(golden.hopLength) \(name)] \(wideFrames) frames span > 100 dB")
            for r in reports {
                print("[golden \(golden.frameLength)/\(golden.hopLength) \(name)] \(r)")
                #expect(r.failures == 0, "\(file) \(name): \(r)")
            }
            // Roll-off: a one-bin slip is allowed only at exact ties of the cumulative sum, so rarely.
            let exact = zip(column(block, FeatureLayout.spectralRolloff), scalar("spectral_rolloff"))
                .filter { abs($0 - $1) < 1e-3 }.count
            #expect(Double(exact) >= 0.95 * Double(frames), "\(name): roll-off exact in \(exact)/\(frames) frames")
        }
    }

    static func merge(_ into: inout Report, _ r: Report) {
        into.worstAbsolute = max(into.worstAbsolute, r.worstAbsolute)
        into.worstRelative = max(into.worstRelative, r.worstRelative)
        into.failures += r.failures; into.checked += r.checked
    }

    @Test func features_1024_512() throws { try Self.run("features_16000_1024_512.json") }
    @Test func features_512_256() throws { try Self.run("features_16000_512_256.json") }
}
