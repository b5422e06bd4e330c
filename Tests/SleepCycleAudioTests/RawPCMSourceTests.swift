// RawPCMSource: headerless s16le / f32le through a real pipe, against AudioFileSource on a WAV of the same bytes.
import Foundation
import Testing
@testable import SleepCycleAudio

@Suite("Raw PCM from a descriptor (record --input -)")
struct RawPCMSourceTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let encoding: RawPCMEncoding
        let channels: Int
        let rate: Int
        var testDescription: String { "\(encoding.rawValue) \(channels) ch \(rate) Hz" }
    }

    static let cases: [Case] = RawPCMEncoding.allCases.flatMap { encoding in
        [1, 2].flatMap { channels in [16_000, 44_100].map { Case(encoding: encoding, channels: channels, rate: $0) } }
    }

    /// 0.4 s of the test signal in `encoding`.
    static func data(_ c: Case, frames: Int? = nil) -> [UInt8] {
        let n = frames ?? c.rate * 2 / 5
        switch c.encoding {
        case .s16le: return RawPCMFixture.bytes(RawPCMFixture.s16(frames: n, channels: c.channels, rate: c.rate))
        case .f32le: return RawPCMFixture.bytes(RawPCMFixture.f32(frames: n, channels: c.channels, rate: c.rate))
        }
    }

    /// The reads of `AudioFileSource` on a WAV holding exactly `data`.
    static func wavReads(_ data: [UInt8], _ c: Case, blockFrames: Int) throws -> [SourceRead] {
        let dir = try FileFixture.TemporaryDirectory()
        let path = dir.path("same.wav")
        try Data(RawPCMFixture.wav(data, encoding: c.encoding, rate: c.rate, channels: c.channels))
            .write(to: URL(fileURLWithPath: path))
        return RawPCMFixture.reads(try AudioFileSource(path: path, blockFrames: blockFrames)).reads
    }

    static func expectSameAudio(_ raw: [SourceRead], _ file: [SourceRead], _ label: String,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        let a = RawPCMFixture.audio(raw), b = RawPCMFixture.audio(file)
        #expect(a != nil && b != nil && a!.count == b!.count, "\(label): read counts", sourceLocation: sourceLocation)
        guard let a, let b, a.count == b.count else { return }
        #expect(a.map(\.start) == b.map(\.start), "\(label): block starts", sourceLocation: sourceLocation)
        #expect(a.map { $0.channels.count } == b.map { $0.channels.count }, "\(label): channels",
                sourceLocation: sourceLocation)
        #expect(a.map { $0.channels[0].count } == b.map { $0.channels[0].count }, "\(label): block lengths",
                sourceLocation: sourceLocation)
        for c in 0..<(a.first?.channels.count ?? 0) {
            let x = a.flatMap { $0.channels[c] }, y = b.flatMap { $0.channels[c] }
            #expect(RawPCMFixture.difference(x, y) == nil, "\(label): channel \(c)", sourceLocation: sourceLocation)
        }
    }

    @Test("Identical analysis-rate blocks to AudioFileSource on a WAV of the same samples, written in odd chunks",
          arguments: cases)
    func sameAsWAV(c: Case) throws {
        let data = Self.data(c)
        let feeder = PipeFeeder(data, chunkSizes: [997, 1, 3, 5, 4_096, 65_537, 7, 12_345])
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: c.encoding,
                                      sampleRate: c.rate, channels: c.channels, blockFrames: 1_500)
        #expect(source.format == SourceFormat(sampleRate: c.rate, channelCount: c.channels,
                                              analysisChannelCount: c.channels, frameCount: nil,
                                              integerBits: c.encoding == .s16le ? 16 : nil))
        let raw = RawPCMFixture.reads(source)
        #expect(raw.error == nil)
        let file = try Self.wavReads(data, c, blockFrames: 1_500)
        Self.expectSameAudio(raw.reads, file, c.testDescription)
        let frames = Int64(c.rate * 2 / 5)
        let expectedSamples = (frames * 16_000 + Int64(c.rate) / 2) / Int64(c.rate)
        let stats = source.statistics
        #expect(stats.bytesRead == Int64(data.count) && stats.framesRead == frames)
        #expect(stats.samplesDelivered == expectedSamples && stats.invalidSamples == 0 && stats.partialFrameBytes == 0)
        #expect(source.warnings.isEmpty)
        #expect(fcntl(feeder.readEnd, F_GETFD) != -1, "the descriptor stays open")
    }

    @Test("s16le is scaled by exactly 1/32768 and passes through at 16 kHz unchanged")
    func s16Scaling() throws {
        let samples: [Int16] = [.min, -1, 0, 1, .max, 12_345, -12_345]
        let feeder = PipeFeeder(RawPCMFixture.bytes(samples))
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .s16le,
                                      sampleRate: 16_000, channels: 1)
        let audio = try #require(RawPCMFixture.audio(RawPCMFixture.reads(source).reads))
        #expect(RawPCMFixture.difference(audio.flatMap { $0.channels[0] }, samples.map { Float($0) / 32_768 }) == nil)
    }

    @Test("A stretch written one byte at a time gives the same blocks as one large write")
    func oneByteAtATime() throws {
        let c = Case(encoding: .s16le, channels: 2, rate: 44_100)
        let data = Self.data(c, frames: 8_820)
        let trickled = PipeFeeder(data, chunkSizes: Array(repeating: 1, count: 6_001) + [3, 4_096])
        let whole = PipeFeeder(data, chunkSizes: [data.count])
        var reads: [[SourceRead]] = []
        for feeder in [trickled, whole] {
            let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: c.encoding,
                                          sampleRate: c.rate, channels: c.channels, blockFrames: 1_000)
            let r = RawPCMFixture.reads(source)
            #expect(r.error == nil && source.statistics.framesRead == 8_820)
            reads.append(r.reads)
        }
        Self.expectSameAudio(reads[0], reads[1], "1-byte writes")
        Self.expectSameAudio(reads[0], try Self.wavReads(data, c, blockFrames: 1_000), "1-byte writes vs WAV")
    }

    @Test("An audio file given as raw PCM is refused by its header, even one byte at a time; nothing is delivered")
    func anAudioFileIsNotRawPCM() throws {
        let c = Case(encoding: .s16le, channels: 1, rate: 16_000)
        let wav = RawPCMFixture.wav(Self.data(c, frames: 4_000), encoding: c.encoding, rate: c.rate, channels: 1)
        let flac = Array("fLaC".utf8) + [0, 0, 0, 34] + [UInt8](repeating: 7, count: 2_000)
        for (bytes, what) in [(wav, "a WAV file"), (flac, "a FLAC file")] {
            for chunks in [[bytes.count], Array(repeating: 1, count: 20) + [bytes.count - 20]] {
                let feeder = PipeFeeder(bytes, chunkSizes: chunks)
                let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "night.x", encoding: .s16le,
                                              sampleRate: 16_000, channels: 1, blockFrames: 400)
                let r = RawPCMFixture.reads(source)
                #expect(r.reads.isEmpty && source.statistics.framesRead == 0)
                let error = try #require(r.error as? AudioError)
                #expect(error.code == .notAudio && error.description.hasPrefix("night.x: is \(what), not headerless PCM"))
            }
        }
        // Raw audio shorter than a header is audio.
        let short = PipeFeeder([1, 0, 2, 0, 3, 0], chunkSizes: [2, 2, 2])
        let source = try RawPCMSource(fileDescriptor: short.readEnd, name: "-", encoding: .s16le, sampleRate: 16_000,
                                      channels: 1, blockFrames: 400)
        let r = RawPCMFixture.reads(source)
        #expect(r.error == nil && RawPCMFixture.audio(r.reads)?.flatMap { $0.channels[0] } == [1, 2, 3].map { Float($0) / 32_768 })
    }

    @Test("A partial trailing frame is dropped with one warning; the whole frames before it are delivered")
    func partialTrailingFrame() throws {
        let samples = RawPCMFixture.s16(frames: 1_000, channels: 2, rate: 16_000)
        let feeder = PipeFeeder(RawPCMFixture.bytes(samples) + [0x12, 0x34, 0x56], chunkSizes: [1_001])
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .s16le,
                                      sampleRate: 16_000, channels: 2, blockFrames: 400)
        let audio = try #require(RawPCMFixture.audio(RawPCMFixture.reads(source).reads))
        #expect(audio.map(\.start) == [0, 400, 800] && audio.map { $0.channels[0].count } == [400, 400, 200])
        let right = stride(from: 1, to: samples.count, by: 2).map { Float(samples[$0]) / 32_768 }
        #expect(RawPCMFixture.difference(audio.flatMap { $0.channels[1] }, right) == nil)
        #expect(source.warnings.map(\.description)
            == ["-: the input ended inside a frame: the last 3 bytes dropped (a s16le stereo frame is 4 bytes)"])
        #expect(source.warnings.first?.code == .truncated)
        let stats = source.statistics
        #expect(stats.partialFrameBytes == 3 && stats.bytesRead == 4_003 && stats.framesRead == 1_000)
    }

    @Test("NaN and ±Inf in f32le are replaced and counted before resampling, as AudioFileSource does on a float WAV")
    func invalidFloats() throws {
        let c = Case(encoding: .f32le, channels: 2, rate: 44_100)
        var samples = RawPCMFixture.f32(frames: 8_820, channels: 2, rate: 44_100)
        for (i, bad) in [(2 * 4_410 + 1, Float.nan), (2 * 5_000, .infinity), (2 * 5_000 + 1, -.infinity),
                         (2 * 7_000, 1e30)] { samples[i] = bad }
        let data = RawPCMFixture.bytes(samples)
        let feeder = PipeFeeder(data, chunkSizes: [333])
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .f32le,
                                      sampleRate: 44_100, channels: 2, blockFrames: 2_000)
        let raw = RawPCMFixture.reads(source).reads
        let audio = try #require(RawPCMFixture.audio(raw))
        #expect(audio.allSatisfy { $0.channels.allSatisfy { $0.allSatisfy(\.isFinite) } })
        Self.expectSameAudio(raw, try Self.wavReads(data, c, blockFrames: 2_000), "f32 with NaN/Inf")
        let stats = source.statistics
        #expect(stats.invalidSamples == 4 && stats.firstInvalidSampleFrame == 4_410)
        #expect(source.warnings.map(\.description) == ["-: 4 non-finite or out-of-range samples (NaN, ±Inf or beyond "
            + "±16) replaced by silence, the first at 0:00:00.1"])
        #expect(source.warnings.first?.code == .invalidSamples)
    }

    @Test("Positions start at `start` and tile the timeline")
    func startOffset() throws {
        let feeder = PipeFeeder(RawPCMFixture.bytes(RawPCMFixture.s16(frames: 2_500, channels: 1, rate: 16_000)))
        let start: Int64 = 123_456_789
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .s16le,
                                      sampleRate: 16_000, channels: 1, start: start, blockFrames: 1_000)
        #expect(source.start == start)
        let audio = try #require(RawPCMFixture.audio(RawPCMFixture.reads(source).reads))
        #expect(audio.map(\.start) == [start, start + 1_000, start + 2_000])
        #expect(audio.map { $0.channels[0].count } == [1_000, 1_000, 500])
    }

    @Test("A complete block is returned while the writer is still connected (no latency beyond one block)")
    func blockWithoutEndOfInput() throws {
        let feeder = PipeFeeder(RawPCMFixture.bytes(RawPCMFixture.s16(frames: 1_600, channels: 1, rate: 16_000)),
                                holdOpen: true)
        defer { feeder.closeWriteEnd() }
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .s16le,
                                      sampleRate: 16_000, channels: 1, blockFrames: 1_600)
        // If the block were held back, the watchdog's close() would turn the read into `.end` after 10 s.
        let watchdog = DispatchWorkItem { source.close() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 10, execute: watchdog)
        defer { watchdog.cancel() }
        guard case .audio(0, let channels) = try source.read() else {
            Issue.record("no block before the end of the input")
            return
        }
        #expect(channels[0].count == 1_600)
    }

    @Test("close() from another thread while read() waits on an idle pipe: .end within about 100 ms")
    func closeWakesBlockedRead() throws {
        // 1 000 frames arrive (less than a block), then the writer goes quiet without closing the pipe.
        let feeder = PipeFeeder(RawPCMFixture.bytes(RawPCMFixture.s16(frames: 1_000, channels: 1, rate: 16_000)),
                                holdOpen: true)
        defer { feeder.closeWriteEnd() }
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .s16le,
                                      sampleRate: 16_000, channels: 1, blockFrames: 16_000)
        let returned = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: SourceRead?
        nonisolated(unsafe) var returnedAt = DispatchTime.now()
        Thread {
            result = try? source.read()
            returnedAt = DispatchTime.now()
            returned.signal()
        }.start()
        let deadline = Date().addingTimeInterval(10)
        while source.statistics.bytesRead < 2_000 && Date() < deadline { usleep(1_000) }
        #expect(source.statistics.bytesRead == 2_000, "the reader has taken what was written and waits")
        let closedAt = DispatchTime.now()
        source.close()
        guard returned.wait(timeout: .now() + 5) == .success else {
            Issue.record("read() did not return within 5 s of close()")
            return
        }
        let milliseconds = Double(returnedAt.uptimeNanoseconds &- closedAt.uptimeNanoseconds) / 1e6
        #expect(milliseconds < 100, "read() returned \(milliseconds) ms after close()")
        if case .end = result {} else { Issue.record("expected .end, got \(String(describing: result))") }
        if case .end = try source.read() {} else { Issue.record("a read after close() is not .end") }
        source.close()
        #expect(fcntl(feeder.readEnd, F_GETFD) != -1, "the descriptor stays open")
    }

    @Test("close() before the first read: .end without touching the input")
    func closeBeforeRead() throws {
        let feeder = PipeFeeder(RawPCMFixture.bytes(RawPCMFixture.s16(frames: 100, channels: 1, rate: 16_000)))
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .s16le,
                                      sampleRate: 16_000, channels: 1)
        source.close()
        if case .end = try source.read() {} else { Issue.record("expected .end") }
        #expect(source.statistics.bytesRead == 0)
    }

    @Test("End of input right away: .end, no warnings, and .end again")
    func emptyInput() throws {
        for encoding in RawPCMEncoding.allCases {
            let feeder = PipeFeeder([])
            let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: encoding,
                                          sampleRate: 48_000, channels: 2)
            if case .end = try source.read() {} else { Issue.record("\(encoding): expected .end") }
            if case .end = try source.read() {} else { Issue.record("\(encoding): expected .end again") }
            #expect(source.warnings.isEmpty && source.statistics == RawPCMStatistics())
        }
    }

    @Test("Backpressure: the source reads no further ahead than a block, the writer waits, nothing is dropped")
    func backpressure() throws {
        let samples = RawPCMFixture.s16(frames: 128_000, channels: 1, rate: 16_000)   // 256 KB: 4 pipe buffers
        let feeder = PipeFeeder(RawPCMFixture.bytes(samples), chunkSizes: [2_048])
        let block = 1_600
        let source = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .s16le,
                                      sampleRate: 16_000, channels: 1, blockFrames: block)
        var delivered: [Float] = []
        var ahead = 0
        while case .audio(let start, let channels) = try source.read() {
            #expect(start == Int64(delivered.count))
            delivered += channels[0]
            let stats = source.statistics
            ahead = max(ahead, Int(stats.bytesRead) - 2 * delivered.count)
            if delivered.count == block {
                #expect(!feeder.finished, "the writer waits on the full pipe while analysis has not read")
                #expect(feeder.written <= Int(stats.bytesRead) + (1 << 20))
            }
        }
        #expect(ahead <= 2 * block * 2, "read \(ahead) bytes beyond what was delivered")
        #expect(RawPCMFixture.difference(delivered, samples.map { Float($0) / 32_768 }) == nil)
    }

    @Test("Bad parameters throw one line naming the input",
          arguments: [(4_000, 1, 16_384, Int64(0),
                       "-: sample rate 4000 Hz is not supported (expected 8000–192000 Hz)"),
                      (200_000, 1, 16_384, 0, "-: sample rate 200000 Hz is not supported (expected 8000–192000 Hz)"),
                      (16_000, 0, 16_384, 0, "-: 0 channels is not supported (expected 1 or 2 interleaved channels)"),
                      (16_000, 3, 16_384, 0, "-: 3 channels is not supported (expected 1 or 2 interleaved channels)"),
                      (16_000, 1, 0, 0, "-: blockFrames must be positive (got 0)"),
                      (16_000, 1, 16_384, -1, "-: start must not be negative (got -1)")])
    func badParameters(rate: Int, channels: Int, blockFrames: Int, start: Int64, line: String) {
        let feeder = PipeFeeder([])
        do {
            _ = try RawPCMSource(fileDescriptor: feeder.readEnd, name: "-", encoding: .s16le, sampleRate: rate,
                                 channels: channels, start: start, blockFrames: blockFrames)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidParameter && error.description == line)
        }
    }

    @Test("Bad descriptors: not open, a directory; one line each")
    func badDescriptors() throws {
        let feeder = PipeFeeder([])
        let closed = dup(feeder.readEnd)
        close(closed)
        do {
            _ = try RawPCMSource(fileDescriptor: closed, name: "-", encoding: .s16le, sampleRate: 16_000, channels: 1)
            Issue.record("a closed descriptor accepted")
        } catch {
            #expect(error.code == .unreadable && error.description.hasPrefix("-: descriptor \(closed) is not open"))
        }
        let dir = try FileFixture.TemporaryDirectory()
        let dirFD = open(dir.url.path, O_RDONLY | O_DIRECTORY)
        defer { close(dirFD) }
        do {
            _ = try RawPCMSource(fileDescriptor: dirFD, name: "-", encoding: .s16le, sampleRate: 16_000, channels: 1)
            Issue.record("a directory accepted")
        } catch {
            #expect(error.code == .unreadable && error.description.hasPrefix("-: is a directory"))
        }
    }

    /// The master side of a new pseudo-terminal (a terminal to `isatty`), or -1 where there is none.
    static let pseudoTerminal: Int32 = open("/dev/ptmx", O_RDWR | O_NOCTTY)

    @Test("A terminal is refused (raw audio is piped in, not typed)",
          .enabled(if: pseudoTerminal >= 0, "no pseudo-terminal available"))
    func terminal() {
        do {
            _ = try RawPCMSource(fileDescriptor: Self.pseudoTerminal, name: "-", encoding: .s16le, sampleRate: 16_000,
                                 channels: 1)
            Issue.record("a terminal accepted")
        } catch {
            #expect(error.code == .invalidParameter && error.description.hasPrefix("-: is a terminal"))
        }
    }

    @Test("A failing read(2) throws one line naming the input, then .end")
    func readError() throws {
        // /dev/null opened for writing polls readable, and read(2) on it fails with EBADF.
        let fd = open("/dev/null", O_WRONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        let source = try RawPCMSource(fileDescriptor: fd, name: "-", encoding: .f32le, sampleRate: 16_000, channels: 1)
        let r = RawPCMFixture.reads(source)
        #expect(r.reads.isEmpty)
        let error = try #require(r.error as? AudioError)
        #expect(error.code == .unreadable && error.description == "-: reading raw PCM failed (Bad file descriptor)")
        if case .end = try source.read() {} else { Issue.record("expected .end after the error") }
    }

    @Test("A regular file on the descriptor is read from its current position to its end")
    func regularFile() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let samples = RawPCMFixture.s16(frames: 3_000, channels: 1, rate: 16_000)
        let path = dir.path("x.raw")
        try Data([0xAA, 0xBB] + RawPCMFixture.bytes(samples)).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(lseek(fd, 2, SEEK_SET) == 2)
        let source = try RawPCMSource(fileDescriptor: fd, name: "x.raw", encoding: .s16le, sampleRate: 16_000,
                                      channels: 1, blockFrames: 1_024)
        let audio = try #require(RawPCMFixture.audio(RawPCMFixture.reads(source).reads))
        #expect(RawPCMFixture.difference(audio.flatMap { $0.channels[0] }, samples.map { Float($0) / 32_768 }) == nil)
    }
}
