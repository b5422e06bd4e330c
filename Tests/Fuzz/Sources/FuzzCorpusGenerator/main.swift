// Writes DecodeFuzzer's seed corpus: one tiny file per decoder path (each a few KB), made with AudioFileWriter.
// Usage: swift run --package-path Tests/Fuzz FuzzCorpusGenerator Tests/Fuzz/corpus/decode
import Foundation
import SleepCycleAudio

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: FuzzCorpusGenerator <directory>\n".utf8))
    exit(2)
}
let directory = CommandLine.arguments[1]

func tone(_ frequency: Double, rate: Int, count: Int, amplitude: Double = 0.5) -> [Float] {
    (0..<count).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
}

func write(_ name: String, _ format: AudioFileFormat, rate: Int, _ channels: [[Float]],
           damage: (inout [UInt8]) -> Void = { _ in }) throws {
    let path = "\(directory)/\(name)"
    let writer = try AudioFileWriter(path: path, format: format, sampleRate: rate, channelCount: channels.count,
                                     vorbisQuality: format == .oggVorbis ? 0.1 : nil)
    try writer.write(channels: channels)
    writer.close()
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    damage(&bytes)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    print("\(name): \(bytes.count) bytes")
}

do {
    try write("pcm16-8k-mono.wav", .wavPCM16, rate: 8_000, [tone(440, rate: 8_000, count: 400)])
    try write("pcm24-48k-mono.wav", .wavPCM24, rate: 48_000, [tone(1_000, rate: 48_000, count: 600)])
    var special = tone(300, rate: 44_100, count: 300)
    special[100] = .nan; special[150] = .infinity; special[200] = 1e30
    try write("float-44k-stereo-nan.wav", .wavFloat, rate: 44_100, [special, tone(900, rate: 44_100, count: 300)])
    try write("pcm16-22k-stereo.aiff", .aiff16, rate: 22_050, [tone(500, rate: 22_050, count: 400),
                                                               tone(700, rate: 22_050, count: 400)])
    try write("pcm16-16k-mono.caf", .caf16, rate: 16_000, [tone(250, rate: 16_000, count: 400)])
    // Three FLAC frames (blocksize 4096 at 44.1 kHz); the damaged copy has a byte flipped inside the second.
    let flac = tone(600, rate: 44_100, count: 9_000, amplitude: 0.3)
    try write("flac16-44k-mono.flac", .flac16, rate: 44_100, [flac])
    try write("flac16-44k-mono-damaged.flac", .flac16, rate: 44_100, [flac]) { $0[$0.count / 2] ^= 0x5A }
    try write("flac24-16k-stereo.flac", .flac24, rate: 16_000, [tone(300, rate: 16_000, count: 2_000),
                                                                tone(800, rate: 16_000, count: 2_000)])
    try write("vorbis-16k-mono.ogg", .oggVorbis, rate: 16_000, [tone(440, rate: 16_000, count: 1_600)])
    try write("vorbis-8k-3ch.ogg", .oggVorbis, rate: 8_000, [tone(300, rate: 8_000, count: 800),
                                                            tone(600, rate: 8_000, count: 800),
                                                            tone(900, rate: 8_000, count: 800)])
} catch {
    FileHandle.standardError.write(Data("FuzzCorpusGenerator: \(error)\n".utf8))
    exit(1)
}
