// The development data's real WAVs against SoX: each clip of shared/data/formats (44.1/48 kHz, mono/stereo PCM16)
// decoded, resampled to 16 kHz and mixed to mono by sleepcycle, compared with the SoX conversion of the same clip
// (`sox -R IN -r 16000 -c 1 -b 16 OUT.flac`, the manifest's `flac_copy`, relative to the data directory's parent).
//   swift run -c release --package-path Benchmarks formats-check [DATA_DIR]   (default /work/shared/data/formats)
// Prints one line per clip and a summary; exits 1 if a clip disagrees, 2 if the data cannot be read. The data is
// never copied into the repository; the always-running tests check the same decoding paths on generated audio.
//
// Both signals are first band-limited to 5.4 kHz (the same 16 → 12 kHz `Resampler` for both), so that the comparison
// is about decoding, timing, level and down-mix, not about where each resampler's pass band ends (SoX's default
// passes ~95 % of Nyquist, sleepcycle's 90 %). SoX's 16-bit output carries TPDF dither + quantisation noise of RMS
// LSB/2 (LSB = 2⁻¹⁵), white, so 5.4/8 of it is left after band-limiting; that bounds the agreement for quiet clips.
// A clip agrees when its length is within one sample and its SNR ≥ min(40 dB, that bound − 3 dB), 300 samples
// away from the ends (the two resamplers pad the ends differently).
import Foundation
import ReportSupport
import SleepCycle
import SleepCycleAudio
import SleepCycleDSP

let arguments = ReportArguments(
    usage: "usage: formats-check [DATA_DIR]   (default /work/shared/data/formats: manifest.csv and the WAVs)",
    maxPositional: 1)
let directory = URL(fileURLWithPath: arguments.positional.first ?? "/work/shared/data/formats")
let manifestPath = directory.appendingPathComponent("manifest.csv").path

func unreadable(_ message: String) -> Never {
    FileHandle.standardError.write(Data("formats-check: \(message)\n".utf8))
    exit(2)
}

let table: CSVTable
do { table = try CSVTable.load(path: manifestPath) } catch { unreadable("\(error)") }
guard let header = table.records.first?.fields,
      let pathColumn = header.firstIndex(of: "path"), let rateColumn = header.firstIndex(of: "samplerate"),
      let channelsColumn = header.firstIndex(of: "channels"), let soxColumn = header.firstIndex(of: "flac_copy")
else { unreadable("\(manifestPath): expected the columns path, samplerate, channels and flac_copy") }
let rows = table.records.dropFirst()
guard !rows.isEmpty else { unreadable("\(manifestPath): no clips listed") }

/// Channel 0 of a whole decode, or all channels mixed to mono.
func decode(_ path: String, mono: Bool) throws -> (samples: [Float], format: SourceFormat) {
    let source = try AudioFileSource(path: path)
    let timeline = try SourceTimeline(reading: source)
    guard timeline.tiles, timeline.gaps.isEmpty else { throw AudioError(.damagedData, path: path, message: "decoded with gaps (expected an undamaged file)") }
    return (mono ? ChannelRule.downmixToMono(timeline.channels) : timeline.channels[0], source.format)
}

var mismatches = 0, worstSNR = Double.infinity, smallestMargin = Double.infinity
print("| clip | rate | channels | samples (sleepcycle − SoX) | SNR (dB) | required (dB) | |")
print("|---|---:|---:|---:|---:|---:|---|")
for row in rows {
    let fields = row.fields
    guard fields.count == header.count, let rate = Int(fields[rateColumn]), let channels = Int(fields[channelsColumn])
    else { unreadable("\(manifestPath), line \(row.line): expected \(header.count) fields") }
    let wav = directory.appendingPathComponent(fields[pathColumn]).path
    let soxPath = directory.deletingLastPathComponent().appendingPathComponent(fields[soxColumn]).path
    do {
        let (mine16, format) = try decode(wav, mono: true)
        let (sox16, _) = try decode(soxPath, mono: false)
        let mine = try Resampler.resample(mine16, from: 16_000, to: 12_000)
        let sox = try Resampler.resample(sox16, from: 16_000, to: 12_000)
        let range = 300..<(min(mine.count, sox.count) - 300)
        var signal = 0.0, error = 0.0
        for i in range {
            signal += Double(sox[i]) * Double(sox[i])
            error += Double(mine[i] - sox[i]) * Double(mine[i] - sox[i])
        }
        let snr = 10 * log10(signal / max(error, 1e-20))
        let ditherBound = 10 * log10(signal / Double(range.count) / (pow(0.5 / 32_768, 2) * 5.4 / 8))
        let required = min(40, ditherBound - 3)
        let lengthDifference = mine16.count - sox16.count
        let agrees = format.sampleRate == rate && format.channelCount == channels && abs(lengthDifference) <= 1
            && snr >= required
        if !agrees { mismatches += 1 }
        worstSNR = min(worstSNR, snr)
        smallestMargin = min(smallestMargin, snr - required)
        print("| \(fields[pathColumn]) | \(format.sampleRate) | \(format.channelCount) | \(lengthDifference) | "
              + String(format: "%.1f | %.1f", snr, required) + " | \(agrees ? "ok" : "MISMATCH") |")
    } catch {
        mismatches += 1
        print("| \(fields[pathColumn]) | \(rate) | \(channels) | — | — | — | MISMATCH: \(error) |")
    }
}
print("\n\(rows.count) clips, \(mismatches) mismatches; worst SNR against SoX " + String(format: "%.1f", worstSNR)
      + " dB, smallest margin over the requirement " + String(format: "%.1f", smallestMargin) + " dB")
exit(mismatches == 0 ? 0 : 1)
