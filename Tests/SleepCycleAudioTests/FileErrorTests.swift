// AudioFileSource: every kind of bad input gives an AudioError with one clear line naming the file.
import Foundation
import Testing
@testable import SleepCycleAudio

@Suite("AudioFileSource errors")
struct FileErrorTests {
    /// Opens `path` expecting an AudioError; returns it.
    func openError(_ path: String, truncation: AudioFileSource.TruncationPolicy = .analyseAvailable) -> AudioError? {
        do {
            _ = try AudioFileSource(path: path, truncation: truncation)
            return nil
        } catch {
            return error
        }
    }

    func expectOneLine(_ error: AudioError?, _ code: AudioError.Code, path: String, mentions words: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error else { Issue.record("no error for \(path)", sourceLocation: sourceLocation); return }
        let line = error.description
        #expect(error.code == code, "\(line)", sourceLocation: sourceLocation)
        #expect(error.path == path, sourceLocation: sourceLocation)
        #expect(line.hasPrefix("\(path): "), "\(line)", sourceLocation: sourceLocation)
        #expect(!line.contains("\n"), sourceLocation: sourceLocation)
        for word in words {
            #expect(line.lowercased().contains(word.lowercased()), "\(line) should mention \(word)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test("Missing file")
    func missing() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let path = dir.path("nope.wav")
        expectOneLine(openError(path), .notFound, path: path, mentions: ["no such file"])
    }

    @Test("A directory is not an audio file")
    func directory() throws {
        let dir = try FileFixture.TemporaryDirectory()
        expectOneLine(openError(dir.url.path), .unreadable, path: dir.url.path, mentions: ["directory"])
    }

    @Test("Unreadable file (permissions)", .enabled(if: getuid() != 0, "root can read any file"))
    func permission() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let path = try FileFixture.writeFile(dir.path("locked.wav"), .wavPCM16, rate: 16_000, channels: [[0, 0]])
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: path)
        expectOneLine(openError(path), .unreadable, path: path, mentions: ["permission"])
    }

    @Test("A text file is not audio")
    func notAudio() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let path = dir.path("notes.wav")
        try String(repeating: "not audio at all\n", count: 50).write(toFile: path, atomically: true, encoding: .utf8)
        expectOneLine(openError(path), .notAudio, path: path, mentions: ["not a recognised audio file", "expected"])
    }

    @Test("Empty: a 0-byte file and a WAV with no frames")
    func empty() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let zeroBytes = dir.path("zero.wav")
        #expect(FileManager.default.createFile(atPath: zeroBytes, contents: Data()))
        expectOneLine(openError(zeroBytes), .empty, path: zeroBytes, mentions: ["empty", "0 bytes"])
        let noFrames = try FileFixture.writeFile(dir.path("noframes.wav"), .wavPCM16, rate: 44_100, channels: [[]])
        expectOneLine(openError(noFrames), .empty, path: noFrames, mentions: ["no audio frames"])
    }

    @Test("Sample rates outside 8–192 kHz are refused", arguments: [4_000, 7_999, 192_001, 384_000])
    func unsupportedRate(rate: Int) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let path = try FileFixture.writeFile(dir.path("r.wav"), .wavPCM16, rate: rate,
                                             channels: [[Float](repeating: 0.1, count: 100)])
        expectOneLine(openError(path), .unsupportedRate, path: path, mentions: ["\(rate) Hz", "8000", "192000"])
    }

    @Test("A WAV whose codec libsndfile lacks (MP3 format tag) is an unsupported encoding")
    func unsupportedEncoding() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let path = try FileFixture.writeFile(dir.path("mp3tag.wav"), .wavPCM16, rate: 16_000,
                                             channels: [[Float](repeating: 0.1, count: 1000)])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let fmt = try #require(FileFixture.chunkOffset(bytes, "fmt "))
        bytes[fmt + 8] = 0x55; bytes[fmt + 9] = 0x00          // WAVE_FORMAT_MPEGLAYER3
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        expectOneLine(openError(path), .unsupportedEncoding, path: path, mentions: ["MPEG Layer 3", "0x0055"])
    }

    @Test("Truncated WAV (data chunk claims more than the file holds): analysed with a warning, or refused")
    func truncatedWAV() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(440, rate: 16_000, count: 16_000, amplitude: 0.5)
        let full = try FileFixture.writeFile(dir.path("full.wav"), .wavPCM16, rate: 16_000, channels: [x])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let path = dir.path("cut.wav")
        try bytes.prefix(44 + 2 * 10_000).write(to: URL(fileURLWithPath: path))   // 10 000 of 16 000 frames

        // libsndfile itself clamps the frame count to what is present and reports no error: checked here so the
        // detection below keeps working if that changes.
        let source = try AudioFileSource(path: path)
        #expect(source.format.frameCount == 10_000)
        #expect(source.warnings.count == 1)
        expectOneLine(source.warnings.first, .truncated, path: path, mentions: ["truncated", "16000", "10000"])
        let (channels, _, contiguous) = try FileFixture.readAll(source)
        #expect(contiguous && channels[0].count == 10_000)
        #expect(FileFixture.maxQuantisationError(channels[0], Array(x.prefix(10_000)), bits: 16) < 0.01)

        expectOneLine(openError(path, truncation: .fail), .truncated, path: path, mentions: ["truncated"])
    }

    @Test("Truncated FLAC (stream info claims more frames): the decodable part is analysed with a warning")
    func truncatedFLAC() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(440, rate: 16_000, count: 32_000, amplitude: 0.5)
        let full = try FileFixture.writeFile(dir.path("full.flac"), .flac16, rate: 16_000, channels: [x])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let path = dir.path("cut.flac")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))

        let source = try AudioFileSource(path: path, blockFrames: 4_096)
        #expect(source.format.frameCount == 32_000)
        let (channels, _, contiguous) = try FileFixture.readAll(source)
        #expect(contiguous)
        #expect(channels[0].count > 4_000 && channels[0].count < 32_000)
        #expect(source.warnings.count == 1)
        expectOneLine(source.warnings.first, .truncated, path: path, mentions: ["truncated", "32000"])
        // What was decoded is the start of the signal.
        let n = min(channels[0].count, 4_000)
        #expect(FileFixture.maxQuantisationError(Array(channels[0].prefix(n)), Array(x.prefix(n)), bits: 16) < 0.01)

        let strict = try AudioFileSource(path: path, blockFrames: 4_096, truncation: .fail)
        #expect(throws: AudioError.self) { _ = try FileFixture.readAll(strict) }
    }

    @Test("Truncated AIFF is detected from libsndfile's parse log")
    func truncatedAIFF() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(440, rate: 16_000, count: 16_000, amplitude: 0.5)
        let full = try FileFixture.writeFile(dir.path("full.aiff"), .aiff16, rate: 16_000, channels: [x])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        let path = dir.path("cut.aiff")
        try bytes.prefix(bytes.count - 12_000).write(to: URL(fileURLWithPath: path))
        let source = try AudioFileSource(path: path)
        #expect(source.warnings.first?.code == .truncated)
        let (channels, _, _) = try FileFixture.readAll(source)
        #expect(channels[0].count == 10_000)
    }

    @Test("More than 64 channels is refused")
    func tooManyChannels() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let path = try FileFixture.writeFile(dir.path("many.wav"), .wavFloat, rate: 16_000,
                                             channels: Array(repeating: [0.1, 0.2, 0.3], count: 65))
        expectOneLine(openError(path), .tooManyChannels, path: path, mentions: ["65 channels", "1–64"])
    }

    @Test("Invalid block size")
    func invalidBlockFrames() throws {
        #expect(throws: AudioError.self) { _ = try AudioFileSource(path: "/x.wav", blockFrames: 0) }
    }

    @Test("AudioError.description is one line even if a cause spans lines")
    func oneLine() {
        let e = AudioError(.notAudio, path: "night.wav", message: "bad\nthing", underlying: "line one\nline two")
        #expect(e.description == "night.wav: bad thing (line one line two)")
        #expect(AudioError.Code("custom") == AudioError.Code("custom"))
    }
}
