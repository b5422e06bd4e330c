import Foundation
import Testing

/// Paths of committed fixtures, found from this file's location (works whatever `--scratch-path` is).
enum FixturePaths {
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let golden = packageRoot.appendingPathComponent("Fixtures/golden")
}

/// Minimal RIFF/WAVE PCM16 reader for the golden signals (the DSP module has no I/O of its own).
/// Returns one array per channel, samples scaled by 1/32768 like libsndfile's float reads.
func readPCM16WAV(_ url: URL) throws -> [[Float]] {
    let data = try Data(contentsOf: url)
    func u32(_ o: Int) -> Int { Int(data[o]) | Int(data[o + 1]) << 8 | Int(data[o + 2]) << 16 | Int(data[o + 3]) << 24 }
    func u16(_ o: Int) -> Int { Int(data[o]) | Int(data[o + 1]) << 8 }
    guard data.count >= 12, String(decoding: data[0..<4], as: UTF8.self) == "RIFF" else {
        throw CocoaError(.fileReadCorruptFile)
    }
    var o = 12, channels = 1, bits = 16
    while o + 8 <= data.count {
        let id = String(decoding: data[o..<o + 4], as: UTF8.self), size = u32(o + 4)
        if id == "fmt " { channels = u16(o + 10); bits = u16(o + 22) }
        if id == "data" {
            #expect(bits == 16)
            let frames = size / (2 * channels)
            var out = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
            for i in 0..<frames {
                for c in 0..<channels {
                    out[c][i] = Float(Int16(bitPattern: UInt16(u16(o + 8 + 2 * (i * channels + c))))) / 32768
                }
            }
            return out
        }
        o += 8 + size + (size & 1)
    }
    throw CocoaError(.fileReadCorruptFile)
}
