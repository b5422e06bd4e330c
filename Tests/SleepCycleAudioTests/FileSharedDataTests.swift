// Optional: the real Khan WAVs of shared/data/formats (44.1/48 kHz, mono/stereo PCM16) decoded, resampled and
// mixed to mono, compared with the SoX conversions of the same clips (`sox -R IN -r 16000 -c 1 -b 16 OUT.flac`).
// Skipped when the development data is not beside the repository (it is never copied into it).
import Foundation
import SleepCycleDSP
import Testing
@testable import SleepCycleAudio

enum SharedFormatsData {
    /// shared/data, found from $SLEEPCYCLE_SHARED_DATA, ../shared/data beside the package, or /work/shared/data.
    static let root: URL? = {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates = [ProcessInfo.processInfo.environment["SLEEPCYCLE_SHARED_DATA"],
                          packageRoot.appendingPathComponent("../shared/data").path,
                          "/work/shared/data"].compactMap { $0 }
        return candidates.map { URL(fileURLWithPath: $0) }
            .first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("formats/manifest.csv").path) }
    }()

    /// (wav path, flac copy path, rate, channels) per manifest row.
    static func rows() throws -> [(wav: String, flac: String, rate: Int, channels: Int)] {
        guard let root else { return [] }
        let text = try String(contentsOf: root.appendingPathComponent("formats/manifest.csv"), encoding: .utf8)
        var rows: [(String, String, Int, Int)] = []
        for line in text.split(separator: "\n").dropFirst() {
            // The licence column is quoted and contains commas: take the first field and the last four.
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 5, let rate = Int(fields[fields.count - 5]),
                  let channels = Int(fields[fields.count - 4]) else { continue }
            rows.append((root.appendingPathComponent("formats/\(fields[0])").path,
                         root.appendingPathComponent(fields[fields.count - 1]).path, rate, channels))
        }
        return rows
    }
}

@Suite("AudioFileSource on the shared Khan WAVs", .enabled(if: SharedFormatsData.root != nil, "shared/data absent"))
struct FileSharedDataTests {
    /// Both signals are first band-limited to 5.4 kHz (the same 16 → 12 kHz `Resampler` for both) so that the
    /// comparison is about decoding, timing, level and down-mix, not about where each resampler's pass band ends
    /// (SoX's default passes ~95 % of Nyquist, this one 90 %). SoX's 16-bit output carries TPDF dither +
    /// quantisation noise of RMS LSB/2 (LSB = 2⁻¹⁵), which bounds the agreement for quiet clips (three "other" clips
    /// are at −57 to −70 dBFS). The requirement is therefore SNR ≥ min(40 dB, that bound − 3 dB).
    @Test("Decoded + resampled + mono-mixed clips match SoX's conversions (SNR ≥ 40 dB or dither-limited)")
    func matchesSoX() throws {
        let rows = try SharedFormatsData.rows()
        #expect(rows.count == 30)
        var worst = Double.infinity, worstMargin = Double.infinity
        for row in rows {
            let source = try AudioFileSource(path: row.wav)
            #expect(source.format.sampleRate == row.rate && source.format.channelCount == row.channels)
            let mine16 = ChannelRule.downmixToMono(try FileFixture.readAll(source).channels)
            let sox16 = try FileFixture.readAll(try AudioFileSource(path: row.flac)).channels[0]
            #expect(abs(mine16.count - sox16.count) <= 1, "\(row.wav): \(mine16.count) vs \(sox16.count)")
            let mine = try Resampler.resample(mine16, from: 16_000, to: 12_000)
            let sox = try Resampler.resample(sox16, from: 16_000, to: 12_000)
            let n = min(mine.count, sox.count)
            // Compare away from the edges (SoX and this resampler pad the ends differently).
            let range = 300..<(n - 300)
            var signal = 0.0, error = 0.0
            for i in range {
                signal += Double(sox[i]) * Double(sox[i])
                error += Double(mine[i] - sox[i]) * Double(mine[i] - sox[i])
            }
            let snr = 10 * log10(signal / max(error, 1e-20))
            // Dither noise is white: 5.4/8 of it is left after band-limiting.
            let ditherBound = 10 * log10(signal / Double(range.count) / (pow(0.5 / 32_768, 2) * 5.4 / 8))
            let required = min(40, ditherBound - 3)
            worst = min(worst, snr)
            worstMargin = min(worstMargin, snr - required)
            #expect(snr >= required, "\(row.wav): SNR \(snr) dB against the SoX conversion (required \(required))")
        }
        print("shared formats: worst SNR against SoX \(String(format: "%.1f", worst)) dB, smallest margin over the "
            + "requirement \(String(format: "%.1f", worstMargin)) dB, \(rows.count) clips")
    }
}
