import Foundation
import Testing
@testable import EventDetection

/// `SegmentShape`: the 39 features of how a segment's spectra change in time, on made-up spectrograms whose answer
/// is known.
@Suite struct SegmentShapeTests {
    static let hop = 512.0 / 16000
    static let bands = 40

    /// `frames × 40` powers from a per-frame level (dB) and a per-frame spectrum shape (power of band b).
    static func spectrogram(frames: Int, levelDb: (Int) -> Double, band: (Int, Int) -> Double) -> [Float] {
        var s = [Float](repeating: 0, count: frames * bands)
        for t in 0..<frames {
            for b in 0..<bands { s[t * bands + b] = Float(pow(10, levelDb(t) / 10) * band(t, b)) }
        }
        return s
    }

    static func value(_ v: [Float], _ name: String) -> Float { v[SegmentShape.names.firstIndex(of: name)!] }

    @Test func namesAndValuesAgreeAndFollowTheVoicingFeatures() {
        #expect(SegmentShape.names.count == 39)
        #expect(Set(SegmentShape.names).count == 39)
        #expect(Array(SegmentFeatures.names.suffix(39)) == SegmentShape.names)
        let s = Self.spectrogram(frames: 40, levelDb: { _ in 0 }, band: { _, b in 1 + Double(b % 3) })
        #expect(SegmentShape.features(spectra: s, frames: 40, bands: Self.bands, hopSec: Self.hop).count == 39)
    }

    /// The extractor hands the shape the levels the spectral summaries already took (no second logarithm); the values
    /// are exactly those computed from the spectra.
    @Test func precomputedLevelsGiveTheSameValues() {
        let s = Self.spectrogram(frames: 50, levelDb: { t in -30 + 20 * sin(Double(t) / 5) },
                                 band: { t, b in 1 + Double((b + t) % 7) })
        let levels = s.map { 10 * log10f($0) }
        let a = SegmentShape.features(spectra: s, frames: 50, bands: Self.bands, hopSec: Self.hop)
        let b = SegmentShape.features(spectra: s, frames: 50, bands: Self.bands, hopSec: Self.hop, levelsDb: levels)
        #expect(a == b)
        #expect(Self.value(a, "flux_rise_mean_db") > 0)
    }

    @Test func aSteadySoundHasTheSameImageInEveryThirdAndNoChange() {
        let s = Self.spectrogram(frames: 48, levelDb: { _ in -20 }, band: { _, b in exp(-Double(b) / 8) })
        let v = SegmentShape.features(spectra: s, frames: 48, bands: Self.bands, hopSec: Self.hop)
        for g in 0..<8 {
            let first = Self.value(v, "shape_t0_g\(g)_db")
            #expect(abs(Self.value(v, "shape_t1_g\(g)_db") - first) < 1e-4)
            #expect(abs(Self.value(v, "shape_t2_g\(g)_db") - first) < 1e-4)
            #expect(Self.value(v, "group\(g)_std_db") < 1e-3)
        }
        #expect(Self.value(v, "shape_t0_g0_db") > Self.value(v, "shape_t0_g7_db") + 15)   // falling: 19.4 dB apart
        #expect(Self.value(v, "flux_rise_mean_db") < 1e-4 && Self.value(v, "flux_fall_mean_db") < 1e-4)
        #expect(abs(Self.value(v, "centroid_band_slope_per_s")) < 1e-3)
    }

    @Test func theFeaturesDoNotDependOnTheLevel() {
        let shape: (Int, Int) -> Double = { t, b in 1 + 0.5 * sin(Double(t * b) / 7) }
        let quiet = Self.spectrogram(frames: 70, levelDb: { Double($0 % 9) }, band: shape)
        let loud = Self.spectrogram(frames: 70, levelDb: { 30 + Double($0 % 9) }, band: shape)
        let a = SegmentShape.features(spectra: quiet, frames: 70, bands: Self.bands, hopSec: Self.hop)
        let b = SegmentShape.features(spectra: loud, frames: 70, bands: Self.bands, hopSec: Self.hop)
        for i in a.indices { #expect(abs(a[i] - b[i]) < 1e-3 * max(1, abs(a[i])), "\(SegmentShape.names[i])") }
    }

    @Test func syllablesAtFourPerSecondAreFoundInTheEnvelope() {
        // 4 Hz amplitude modulation (±10 dB) over 3 s, flat spectrum.
        let frames = 94
        let s = Self.spectrogram(frames: frames, levelDb: { 10 * sin(2 * Double.pi * 4 * Double($0) * Self.hop) },
                                 band: { _, _ in 1 })
        let v = SegmentShape.features(spectra: s, frames: frames, bands: Self.bands, hopSec: Self.hop)
        #expect(Self.value(v, "envelope_mod_2_8hz_share") > 0.9)
        #expect(abs(Self.value(v, "envelope_mod_peak_hz") - 4) < 0.2)          // bins of 0.12 Hz (256 points)
        #expect(Self.value(v, "flux_rise_mean_db") > 1 && Self.value(v, "flux_fall_mean_db") > 0.5)
        // A slow swell (0.8 Hz) is outside the syllable band.
        let slow = Self.spectrogram(frames: frames, levelDb: { 10 * sin(2 * Double.pi * 0.8 * Double($0) * Self.hop) },
                                    band: { _, _ in 1 })
        let w = SegmentShape.features(spectra: slow, frames: frames, bands: Self.bands, hopSec: Self.hop)
        #expect(Self.value(w, "envelope_mod_2_8hz_share") < 0.2)
        // Too short for a modulation.
        let short = SegmentShape.features(spectra: s, frames: 15, bands: Self.bands, hopSec: Self.hop)
        #expect(Self.value(short, "envelope_mod_2_8hz_share") == -1 && Self.value(short, "envelope_mod_peak_hz") == -1)
    }

    @Test func aRisingSoundHasARisingCentroidAndItsEnergyMovesUpTheThirds() {
        // A narrow band moving from band 5 to band 34 over 60 frames (a whistle sliding up).
        let frames = 60
        let s = Self.spectrogram(frames: frames, levelDb: { _ in 0 }, band: { t, b in
            let centre = 5 + 29 * Double(t) / Double(frames - 1)
            return exp(-pow(Double(b) - centre, 2) / 2) + 1e-6
        })
        let v = SegmentShape.features(spectra: s, frames: frames, bands: Self.bands, hopSec: Self.hop)
        let expectedSlope = 29 / (Double(frames - 1) * Self.hop)           // bands per second
        #expect(abs(Double(Self.value(v, "centroid_band_slope_per_s")) - expectedSlope) < 0.05 * expectedSlope)
        #expect(Self.value(v, "centroid_band_first_minus_last") < -15)
        #expect(Self.value(v, "shape_t0_g1_db") > Self.value(v, "shape_t2_g1_db") + 10)
        #expect(Self.value(v, "shape_t2_g6_db") > Self.value(v, "shape_t0_g6_db") + 10)
        #expect(Self.value(v, "group1_std_db") > 5)
    }

    @Test func longSegmentsUseALongerTransform() {
        // A configuration with segments over 256 frames (8 s) still measures the modulation, on all of it.
        let frames = 300
        let s = Self.spectrogram(frames: frames, levelDb: { 10 * sin(2 * Double.pi * 5 * Double($0) * Self.hop) },
                                 band: { _, _ in 1 })
        let v = SegmentShape.features(spectra: s, frames: frames, bands: Self.bands, hopSec: Self.hop)
        #expect(abs(Self.value(v, "envelope_mod_peak_hz") - 5) < 0.1)
        #expect(Self.value(v, "envelope_mod_2_8hz_share") > 0.9)
    }
}
