// How many randomly damaged FLAC and Ogg Vorbis files are analysed to their true end, the damage as gaps: the
// figures in docs/0002-audio-input-resampling.md ("Damaged data").
//   swift run -c release --package-path Benchmarks mutation-report [--mutations 1500] [--seed 1]
// A 10-s 44.1 kHz mono file of quiet noise with a tone burst every second is written as FLAC 16-bit and as Ogg
// Vorbis; each mutation XORs one random byte of the audio data (after the FLAC metadata blocks, after the three
// Vorbis header packets' pages) with a random non-zero value, and the file is read to its end with AudioFileSource.
// The generator is seeded, so a run prints the same figures every time. Exits 1 if any read does not tile the
// timeline (each read starting where the previous one ended).
import Foundation
import ReportSupport
import SleepCycleAudio

let arguments = ReportArguments(
    usage: "usage: mutation-report [--mutations N] [--seed S]   (defaults: 1500 mutations per file, seed 1)",
    optionNames: ["mutations", "seed"])
let mutations = arguments.integer("mutations", default: 1_500, in: 1...1_000_000)
let seed = UInt64(arguments.integer("seed", default: 1, in: 0...Int.max))

let rate = 44_100, seconds = 10
let analysisLength = 16_000 * seconds

/// Quiet noise (±0.005) with 0.1-s 1 kHz bursts of amplitude 0.5 starting every second at t = k + 0.5 s.
func burstSignal() -> [Float] {
    var state: UInt32 = 88_172_645
    return (0..<(rate * seconds)).map { i in
        state ^= state << 13; state ^= state >> 17; state ^= state << 5
        let t = Double(i) / Double(rate)
        let phase = t - t.rounded(.down) - 0.5
        let burst = phase >= 0 && phase < 0.1 ? 0.5 * sin(2 * Double.pi * 1_000 * phase) : 0
        return Float(burst + (Double(state) / Double(UInt32.max) - 0.5) * 0.01)
    }
}

struct Counts {
    var complete = 0, completeWithGaps = 0, early = 0, earlyInLastOggPage = 0, unopenable = 0, readErrors = 0
}

let directory = try TemporaryDirectory(prefix: "sleepcycle-mutation-report")
let signal = burstSignal()
var generator = SplitMix64(seed: seed)
var untiled: [String] = []
print("| file | mutations | reach the true end | … with the damage as gaps | end early "
      + "| … damage in the last Ogg page | cannot be opened | read error |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for (name, format) in [("FLAC 16-bit", AudioFileFormat.flac16), ("Ogg Vorbis", .oggVorbis)] {
    let ext = format == .flac16 ? "flac" : "ogg"
    let clean = directory.path("clean.\(ext)")
    let writer = try AudioFileWriter(path: clean, format: format, sampleRate: rate, channelCount: 1)
    try writer.write(channels: [signal])
    writer.close()
    let cleanTimeline = try SourceTimeline(reading: AudioFileSource(path: clean))
    guard cleanTimeline.tiles, cleanTimeline.gaps.isEmpty, cleanTimeline.length == analysisLength else {
        arguments.fail("\(name): the undamaged file decodes to \(cleanTimeline.length) samples, "
                       + "\(cleanTimeline.gaps.count) gaps (expected \(analysisLength), none)")
    }
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clean)))
    let pages = FileStructure.oggPages(bytes)
    let audioStart = format == .flac16 ? FileStructure.firstFLACFrame(bytes) : pages.dropFirst(3).first?.offset
    guard let audioStart, audioStart < bytes.count else { arguments.fail("\(name): no audio data found") }
    let lastPageStart = format == .oggVorbis ? pages.last?.offset : nil

    var counts = Counts()
    let path = directory.path("mutated.\(ext)")
    for _ in 0..<mutations {
        var mutated = bytes
        let at = Int.random(in: audioStart..<bytes.count, using: &generator)
        mutated[at] ^= UInt8.random(in: 1...255, using: &generator)
        try Data(mutated).write(to: URL(fileURLWithPath: path))
        let source: AudioFileSource
        do { source = try AudioFileSource(path: path) } catch { counts.unopenable += 1; continue }
        do {
            let timeline = try SourceTimeline(reading: source)
            if !timeline.tiles { untiled.append("\(name), byte \(at)") }
            if timeline.length == analysisLength {
                counts.complete += 1
                if !timeline.gaps.isEmpty { counts.completeWithGaps += 1 }
            } else {
                counts.early += 1
                if let lastPageStart, at >= lastPageStart { counts.earlyInLastOggPage += 1 }
            }
        } catch {
            counts.readErrors += 1
        }
    }
    print("| \(name) | \(mutations) | \(counts.complete) | \(counts.completeWithGaps) | \(counts.early) | "
          + "\(format == .oggVorbis ? String(counts.earlyInLastOggPage) : "—") | \(counts.unopenable) | "
          + "\(counts.readErrors) |")
}
print("\n(seed \(seed); every mutated byte lies in the audio data; a 10-s 44.1 kHz mono file, "
      + "\(analysisLength) analysis samples at its true end)")
if !untiled.isEmpty {
    FileHandle.standardError.write(Data(("mutation-report: reads did not tile the timeline: "
                                         + untiled.prefix(5).joined(separator: "; ") + "\n").utf8))
    exit(1)
}
