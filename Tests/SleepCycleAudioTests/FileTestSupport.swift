// Helpers for the file-input tests: a temporary directory, signal generators and whole-file reads.
import Foundation
import SleepCycleAudio

enum FileFixture {
    /// A fresh temporary directory, removed when the value is deinitialised.
    final class TemporaryDirectory {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory
                .appendingPathComponent("sleepcycle-file-tests-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    /// A sine of `frequency` Hz at `rate`, `count` samples, amplitude `amplitude`.
    static func sine(_ frequency: Double, rate: Int, count: Int, amplitude: Double = 0.5) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
    }

    /// Writes planar `channels` to a new file.
    @discardableResult
    static func writeFile(_ path: String, _ format: AudioFileFormat, rate: Int, channels: [[Float]],
                   vorbisQuality: Double? = nil) throws -> String {
        let writer = try AudioFileWriter(path: path, format: format, sampleRate: rate, channelCount: channels.count,
                                         vorbisQuality: vorbisQuality)
        try writer.write(channels: channels)
        writer.close()
        return path
    }

    /// Reads a whole source, checking that blocks tile the timeline; returns the planar analysis-rate channels and the
    /// block lengths.
    static func readAll(_ source: AudioSource) throws -> (channels: [[Float]], blocks: [Int], contiguous: Bool) {
        var channels: [[Float]] = Array(repeating: [], count: source.format.analysisChannelCount)
        var blocks: [Int] = []
        var contiguous = true
        var expected: Int64 = 0
        loop: while true {
            switch try source.read() {
            case .audio(let start, let block):
                if start != expected || block.count != channels.count || Set(block.map(\.count)).count != 1 {
                    contiguous = false
                }
                for c in block.indices where c < channels.count { channels[c].append(contentsOf: block[c]) }
                blocks.append(block.first?.count ?? 0)
                expected = start + Int64(block.first?.count ?? 0)
            case .gap:
                contiguous = false
            case .end:
                break loop
            }
        }
        return (channels, blocks, contiguous)
    }

    /// RMS of `x[range]`.
    static func rms(_ x: ArraySlice<Float>) -> Double {
        guard !x.isEmpty else { return 0 }
        return (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
    }

    /// Amplitude of the `frequency` component of `x` at `rate` (single-bin DFT with a Hann window, amplitude-scaled).
    static func toneAmplitude(_ x: ArraySlice<Float>, frequency: Double, rate: Int) -> Double {
        let n = x.count
        var re = 0.0, im = 0.0, wsum = 0.0
        for (i, v) in x.enumerated() {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))
            let phase = 2 * Double.pi * frequency * Double(i) / Double(rate)
            re += w * Double(v) * cos(phase); im -= w * Double(v) * sin(phase)
            wsum += w
        }
        return 2 * (re * re + im * im).squareRoot() / wsum
    }

    /// libsndfile's integer PCM round trip: it writes rint(x · (2^(b−1) − 1)) and reads k / 2^(b−1).
    static func quantised(_ x: Float, bits: Int) -> Double {
        let full = Double(1 << (bits - 1))
        return (Double(x) * (full - 1)).rounded(.toNearestOrEven) / full
    }

    /// Largest difference between `decoded` and the quantised `original`, in LSBs of a `bits`-bit encoding.
    static func maxQuantisationError(_ decoded: [Float], _ original: [Float], bits: Int) -> Double {
        let lsb = 1 / Double(1 << (bits - 1))
        return zip(decoded, original).map { abs(Double($0) - quantised($1, bits: bits)) / lsb }.max() ?? .infinity
    }
}

extension FileFixture {
    /// Byte offset of the RIFF chunk `id` (e.g. "fmt ") in a WAV file's bytes.
    static func chunkOffset(_ bytes: [UInt8], _ id: String) -> Int? {
        let tag = Array(id.utf8)
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16
                | Int(bytes[offset + 7]) << 24
            if Array(bytes[offset..<(offset + 4)]) == tag { return offset }
            offset += 8 + size + (size & 1)
        }
        return nil
    }
}

extension FileFixture {
    /// A whole source read as one timeline: channel 0 with gaps filled by `gapValue`, the gaps, and whether the reads
    /// tiled the timeline (each starts where the previous ended, from 0, no overlap).
    struct Timeline {
        var samples: [Float] = []
        var gaps: [(start: Int64, length: Int64, reason: SourceGapReason)] = []
        var tiles = true
        var reads = 0
    }

    static func readTimeline(_ source: AudioSource, gapValue: Float = 0) throws -> Timeline {
        var timeline = Timeline()
        var expected: Int64 = 0
        loop: while true {
            let read = try source.read()
            timeline.reads += 1
            switch read {
            case .audio(let start, let block):
                if start != expected || block.isEmpty || block[0].isEmpty { timeline.tiles = false }
                timeline.samples.append(contentsOf: block.first ?? [])
                expected = start + Int64(block.first?.count ?? 0)
            case .gap(let start, let length, let reason):
                if start != expected || length <= 0 { timeline.tiles = false }
                timeline.gaps.append((start, length, reason))
                timeline.samples.append(contentsOf: repeatElement(gapValue, count: Int(max(0, length))))
                expected = start + length
            case .end:
                break loop
            }
        }
        return timeline
    }

    /// First index in `x[range]` where |x| exceeds `threshold`, or nil.
    static func onset(_ x: [Float], in range: Range<Int>, threshold: Float) -> Int? {
        range.clamped(to: 0..<x.count).first { abs(x[$0]) > threshold }
    }

    /// Quiet noise (±0.005) with 0.1-s 1 kHz bursts of amplitude 0.5 starting every second at t = k + 0.5 s.
    static func burstSignal(rate: Int, seconds: Int) -> [Float] {
        var seed: UInt32 = 88_172_645
        return (0..<(rate * seconds)).map { i in
            seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5
            let t = Double(i) / Double(rate)
            let phase = t - t.rounded(.down) - 0.5
            let burst = phase >= 0 && phase < 0.1 ? 0.5 * sin(2 * Double.pi * 1_000 * (phase)) : 0
            return Float(burst + (Double(seed) / Double(UInt32.max) - 0.5) * 0.01)
        }
    }

    /// Byte offset of the first FLAC frame (after "fLaC" and the metadata blocks, FLAC format spec "STREAM").
    static func firstFLACFrame(_ bytes: [UInt8]) -> Int? {
        var offset = 4
        while offset + 4 <= bytes.count {
            let last = bytes[offset] & 0x80 != 0
            let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            offset += 4 + length
            if last { return offset }
        }
        return nil
    }

    /// Byte offsets and lengths of the Ogg pages of a stream (RFC 3533 §6: 27-byte header, segment table, body).
    static func oggPages(_ bytes: [UInt8]) -> [(offset: Int, length: Int)] {
        var pages: [(Int, Int)] = []
        var offset = 0
        while offset + 27 <= bytes.count, bytes[offset..<(offset + 4)].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[offset + 26])
            guard offset + 27 + segments <= bytes.count else { break }
            let body = bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
            pages.append((offset, 27 + segments + body))
            offset += 27 + segments + body
        }
        return pages
    }
}
