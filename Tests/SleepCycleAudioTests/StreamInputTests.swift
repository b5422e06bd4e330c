// AudioFileSource(fileDescriptor:name:): standard input as a pipe (unknown length) or a redirected regular file.
import Foundation
import Testing
@testable import SleepCycleAudio

@Suite("Reading a file descriptor (standard input)")
struct StreamInputTests {
    /// A pipe whose write end a thread fills with `bytes` and then closes; returns the read end.
    static func pipe(feeding bytes: [UInt8]) -> Int32 {
        signal(SIGPIPE, SIG_IGN)   // a reader that stops early must not kill the test process
        var fds: [Int32] = [0, 0]
        precondition(Foundation.pipe(&fds) == 0)
        let writeEnd = fds[1]
        let writer = Thread {
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(writeEnd, raw.baseAddress! + offset, min(raw.count - offset, 3_000))
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        return fds[0]
    }

    func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test("A WAV streamed with an unknown length (data size 0xFFFFFFFF) through a pipe: frameCount nil, exact audio")
    func wavPipeUnknownLength() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(440, rate: 44_100, count: 44_100, amplitude: 0.5)
        let path = try FileFixture.writeFile(dir.path("x.wav"), .wavPCM16, rate: 44_100, channels: [x, x])
        var data = try bytes(path)
        // What a streaming writer (sox to a pipe, arecord) puts in the RIFF and data sizes when it cannot seek back.
        let dataChunk = try #require(FileFixture.chunkOffset(data, "data"))
        for i in 0..<4 { data[4 + i] = 0xFF; data[dataChunk + 4 + i] = 0xFF }
        let fd = Self.pipe(feeding: data)
        defer { close(fd) }
        let source = try AudioFileSource(fileDescriptor: fd, name: "-")
        #expect(source.name == "-" && source.format.frameCount == nil)
        let streamed = try FileFixture.readAll(source)
        let reference = try FileFixture.readAll(AudioFileSource(path: path))
        #expect(streamed.contiguous && streamed.channels == reference.channels)
        #expect(source.warnings.isEmpty)
        #expect(fcntl(fd, F_GETFD) != -1, "the descriptor stays open")
    }

    /// On a pipe libsndfile reports SF_COUNT_MAX divided by the frame's bytes as the length of W64, NIST and other
    /// formats: that is an unknown length, not a truncation of a complete file.
    @Test("W64 and NIST through a pipe: the whole audio, no truncation warning", arguments: ["w64", "nist"])
    func pipedFormatsWithAnUnknownLength(kind: String) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(440, rate: 16_000, count: 16_000, amplitude: 0.5)
        let path = try FileFixture.writeFile(dir.path("x.\(kind)"), kind == "w64" ? .w64PCM16 : .nistPCM16, rate: 16_000,
                                             channels: [x])
        let fd = Self.pipe(feeding: try bytes(path))
        defer { close(fd) }
        let source = try AudioFileSource(fileDescriptor: fd, name: "-")
        let streamed = try FileFixture.readAll(source)
        #expect(streamed.channels == (try FileFixture.readAll(AudioFileSource(path: path))).channels)
        #expect(source.warnings.isEmpty, "\(source.warnings)")
    }

    @Test("FLAC and Ogg Vorbis through a pipe decode as from the file; damage is resynchronised there too",
          arguments: ["flac", "ogg"])
    func compressedPipe(kind: String) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.burstSignal(rate: 44_100, seconds: 4)
        let format: AudioFileFormat = kind == "flac" ? .flac16 : .oggVorbis
        let path = try FileFixture.writeFile(dir.path("x.\(kind)"), format, rate: 44_100, channels: [x])
        var data = try bytes(path)
        let clean = Self.pipe(feeding: data)
        defer { close(clean) }
        let source = try AudioFileSource(fileDescriptor: clean, name: "standard input", blockFrames: 4_000)
        let streamed = try FileFixture.readTimeline(source)
        let reference = try FileFixture.readTimeline(AudioFileSource(path: path, blockFrames: 4_000))
        #expect(streamed.tiles && streamed.samples == reference.samples && streamed.gaps.isEmpty)
        #expect(source.warnings.isEmpty)

        if kind == "flac" {
            data[data.count / 2] ^= 0x3C
        } else {
            let page = FileFixture.oggPages(data)[FileFixture.oggPages(data).count / 2]
            data[page.offset + page.length / 2] ^= 0x3C
        }
        let damagedPath = dir.path("d.\(kind)")
        try Data(data).write(to: URL(fileURLWithPath: damagedPath))
        let damagedFD = Self.pipe(feeding: data)
        defer { close(damagedFD) }
        let damagedSource = try AudioFileSource(fileDescriptor: damagedFD, name: "-", blockFrames: 4_000)
        let fromPipe = try FileFixture.readTimeline(damagedSource)
        let fromFile = try FileFixture.readTimeline(AudioFileSource(path: damagedPath, blockFrames: 4_000))
        #expect(fromPipe.tiles && fromPipe.gaps.count == 1 && fromPipe.samples.count == 64_000)
        #expect(fromPipe.gaps.map(\.start) == fromFile.gaps.map(\.start))
        #expect(fromPipe.samples == fromFile.samples)
        #expect(damagedSource.warnings.map(\.code) == [.damagedData])
    }

    @Test("A regular file on a descriptor (standard input redirected from a file) has its length, read from its position")
    func regularFileDescriptor() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(300, rate: 48_000, count: 24_000, amplitude: 0.4)
        for (name, format) in [("x.wav", AudioFileFormat.wavPCM24), ("x.flac", .flac24), ("x.ogg", .oggVorbis)] {
            let path = try FileFixture.writeFile(dir.path(name), format, rate: 48_000, channels: [x])
            let fd = open(path, O_RDONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            let source = try AudioFileSource(fileDescriptor: fd, name: "-")
            #expect(source.format.frameCount == 24_000, "\(name)")
            let streamed = try FileFixture.readAll(source)
            let reference = try FileFixture.readAll(AudioFileSource(path: path))
            #expect(streamed.contiguous && streamed.channels == reference.channels, "\(name)")
            source.close()
            #expect(fcntl(fd, F_GETFD) != -1, "\(name): the descriptor stays open")
        }
    }

    /// libsndfile 1.2's RF64 parser takes the first 8 bytes of the samples for a chunk header on a pipe and cannot
    /// seek back: it lost the first 4 frames of a 16-bit mono file, shifted the rest and reported a truncation.
    @Test("RF64 through a pipe: every sample from the first, its length known, no truncation warning",
          arguments: [("16-bit mono", 1), ("24-bit stereo", 2), ("float stereo", 2)])
    func rf64Pipe(kind: String, channels: Int) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(440, rate: 16_000, count: 16_001, amplitude: 0.5)
        let format: AudioFileFormat = kind.hasPrefix("16") ? .rf64PCM16 : kind.hasPrefix("24") ? .rf64PCM24 : .rf64Float
        let path = try FileFixture.writeFile(dir.path("x.rf64"), format, rate: 16_000,
                                             channels: Array(repeating: x, count: channels))
        let data = try bytes(path)
        let fd = Self.pipe(feeding: data)
        defer { close(fd) }
        let source = try AudioFileSource(fileDescriptor: fd, name: "-")
        #expect(source.format.frameCount == 16_001)
        let streamed = try FileFixture.readAll(source)
        let file = try FileFixture.readAll(AudioFileSource(path: path))
        #expect(streamed.channels == file.channels && file.channels[0].count == 16_001, "\(kind)")
        #expect(source.warnings.isEmpty, "\(source.warnings)")
        // Cut short in the pipe, the same file is a truncation at the frame where its bytes end.
        let cut = Self.pipe(feeding: Array(data.prefix(data.count - 4_000)))
        defer { close(cut) }
        let short = try AudioFileSource(fileDescriptor: cut, name: "-")
        let part = try FileFixture.readAll(short)
        #expect(part.channels[0] == Array(file.channels[0].prefix(part.channels[0].count)))
        #expect(short.warnings.count == 1 && short.warnings[0].code == .truncated, "\(short.warnings)")
    }

    /// Formats libsndfile can read only by seeking: from a pipe, one line that says to give the file instead.
    @Test("GSM 6.10 in WAV and CAF through a pipe: one line naming the stream and the way out",
          arguments: ["gsm", "caf"])
    func formatsThatNeedSeeking(kind: String) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let x = FileFixture.sine(440, rate: 8_000, count: 8_000, amplitude: 0.5)
        let path = try FileFixture.writeFile(dir.path("x.\(kind)"), kind == "gsm" ? .wavGSM : .caf16, rate: 8_000,
                                             channels: [x])
        #expect(try FileFixture.readAll(AudioFileSource(path: path)).channels[0].count >= 8_000)
        let fd = Self.pipe(feeding: try bytes(path))
        defer { close(fd) }
        do {
            // CAF opens and then yields nothing: the error comes from the first read.
            _ = try FileFixture.readAll(AudioFileSource(fileDescriptor: fd, name: "-"))
            Issue.record("\(kind) read from a pipe")
        } catch {
            let line = "\(error)"
            #expect(line.hasPrefix("-: ") && line.contains("give it as a file") && !line.contains("\n"), "\(line)")
        }
    }

    @Test("Bad streams give one line naming the stream: empty pipe, text, a directory descriptor")
    func badStreams() throws {
        let empty = Self.pipe(feeding: [])
        defer { close(empty) }
        #expect(throws: AudioError.self) { _ = try AudioFileSource(fileDescriptor: empty, name: "-") }
        let text = Self.pipe(feeding: Array(String(repeating: "not audio\n", count: 100).utf8))
        defer { close(text) }
        do {
            _ = try AudioFileSource(fileDescriptor: text, name: "-")
            Issue.record("text accepted as audio")
        } catch {
            #expect(error.code == .notAudio && error.description.hasPrefix("-: "), "\(error)")
        }
        let dir = try FileFixture.TemporaryDirectory()
        let dirFD = open(dir.url.path, O_RDONLY | O_DIRECTORY)
        defer { close(dirFD) }
        do {
            _ = try AudioFileSource(fileDescriptor: dirFD, name: "-")
            Issue.record("directory accepted")
        } catch {
            #expect(error.code == .unreadable && error.description.contains("directory"), "\(error)")
        }
    }
}
