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
