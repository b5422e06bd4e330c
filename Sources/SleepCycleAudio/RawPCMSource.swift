// Headerless interleaved PCM from a descriptor (`sleepcycle record --input -`) as 16 kHz analysis blocks.
import Foundation
import SleepCycleDSP

/// What a `RawPCMSource` has read so far. Frames are at the input rate, samples delivered at 16 kHz.
public struct RawPCMStatistics: Sendable, Equatable {
    /// Bytes read from the descriptor (a dropped partial frame included).
    public var bytesRead: Int64 = 0
    /// `read(2)` calls that returned data: how finely the writer's output arrived.
    public var reads: Int64 = 0
    /// Whole frames read.
    public var framesRead: Int64 = 0
    /// Analysis-rate samples per channel delivered in `.audio` reads.
    public var samplesDelivered: Int64 = 0
    /// f32le samples replaced by silence (NaN, ±Inf, beyond ±`SampleSanitizer.bound`), and the frame of the first
    /// (counted from the first frame read).
    public var invalidSamples: Int64 = 0
    public var firstInvalidSampleFrame: Int64?
    /// Bytes of an incomplete frame at the end of the input, dropped.
    public var partialFrameBytes = 0
    public init() {}
}

/// An `AudioSource` reading headerless, interleaved little-endian PCM (`s16le` or `f32le`, 1 or 2 channels,
/// 8–192 kHz) from a descriptor — standard input fed by `arecord -t raw`, `pw-record`, `parec` or `ffmpeg` — for live
/// recording.
///
/// * **Same samples as a file.** s16 is scaled by 1/32768, f32 is sanitised (`SampleSanitizer`: NaN, ±Inf and values
///   beyond ±16 become 0, counted, one `.invalidSamples` warning), and each channel goes through its own `Resampler`
///   exactly as in `AudioFileSource`: a WAV holding the same samples gives bit-identical blocks. Stereo stays two
///   channels.
/// * **Timeline = sample count.** The input is taken as arriving in real time without holes: analysis sample `k` of
///   the stream is at position `start + k`, whatever the wall-clock jitter of its arrival. Reads are `.audio` blocks of
///   `blockFrames` samples per channel (the last may be shorter) and, at the end of the input, `.end`; never a gap.
///   Total length per channel: round(frames · 16000 / rate). A trailing partial frame is dropped with a `.truncated`
///   warning.
/// * **Pace and memory.** `read()` blocks in `poll(2)` until the descriptor has data and reads it in chunks of at most
///   one block's worth as it arrives, returning as soon as a block is complete (no busy waiting, no timer). Nothing is
///   read ahead of analysis: when analysis is slower than the input, the writer blocks on the full pipe
///   (backpressure), nothing is dropped, and memory stays about two blocks.
/// * **Closing.** `close()` from any thread (a signal handler's thread, a `--duration` timer) wakes a blocked
///   `read()` through a wake-up pipe; it returns `.end` at once, dropping audio not yet delivered. The descriptor
///   itself is never closed.
/// * A failing `read(2)` (EIO, …) ends the input: the audio read before it is delivered, then `read()` throws an
///   `AudioError(.unreadable)` naming the input, then returns `.end`.
///
/// One thread reads; `close()`, `warnings` and `statistics` may be used from any thread.
public final class RawPCMSource: AudioSource, @unchecked Sendable {
    public let format: SourceFormat
    public let name: String
    public let encoding: RawPCMEncoding
    /// Analysis-timeline position (16 kHz samples) of the first frame read.
    public let start: Int64
    /// Analysis-rate samples per channel in each `.audio` block (the last may be shorter).
    public let blockFrames: Int

    /// `.truncated` (a partial trailing frame) and `.invalidSamples`, one line each; complete after `.end`.
    public var warnings: [AudioError] { lock.withLock { collectedWarnings } }
    public var statistics: RawPCMStatistics { lock.withLock { stats } }

    private let reader: InterruptibleReader
    private let lock = NSLock()
    // Under `lock`:
    private var closed = false
    private var collectedWarnings: [AudioError] = []
    private var stats = RawPCMStatistics()

    // The reading thread's state.
    private let frameBytes: Int
    /// Bytes as read: an incomplete frame left from the previous read (`carried` bytes) at the front, then new data.
    private let chunk: UnsafeMutableRawPointer
    private let chunkBytes: Int
    private var carried = 0
    private let planar: [UnsafeMutablePointer<Float>]
    private let resamplers: [Resampler]
    /// Analysis-rate samples per channel not yet delivered, from `pendingHead` on (compacted before each read).
    private var pending: [[Float]]
    private var pendingHead = 0
    private var nextStart: Int64
    private var framesConverted: Int64 = 0
    /// The input has ended (end of file or a read error) and the resamplers are flushed.
    private var inputEnded = false
    private var failure: AudioError?
    private var finished = false
    private var tap: SourceRateTap?
    /// The first bytes have been looked at for an audio file's header (a WAV or FLAC file given as raw PCM).
    private var headerChecked = false

    /// - Parameters:
    ///   - fileDescriptor: a pipe, FIFO, file or socket (standard input: 0), read from its current position and not
    ///     closed by the source. A terminal is refused.
    ///   - name: how messages name the input (`"-"` for standard input).
    ///   - encoding: the sample encoding.
    ///   - sampleRate: input frames per second, 8000–192000.
    ///   - channels: 1 or 2 (interleaved).
    ///   - start: the analysis-timeline position (16 kHz samples) of the first frame read: 0 for a new night, later
    ///     for a resumed one (the caller computes it from wall-clock time).
    ///   - blockFrames: analysis-rate samples per channel in each `.audio` block.
    /// - Throws: `AudioError(.invalidParameter)` for a parameter out of range or a terminal, `AudioError(.unreadable)`
    ///   for a descriptor that is not open or is a directory; one line naming the input.
    public init(fileDescriptor: Int32, name: String, encoding: RawPCMEncoding, sampleRate: Int, channels: Int,
                start: Int64 = 0, blockFrames: Int = 16_384) throws(AudioError) {
        func invalid(_ message: String) -> AudioError { AudioError(.invalidParameter, path: name, message: message) }
        guard Resampler.supportedRates.contains(sampleRate) else {
            throw invalid("sample rate \(sampleRate) Hz is not supported (expected "
                + "\(Resampler.supportedRates.lowerBound)–\(Resampler.supportedRates.upperBound) Hz)")
        }
        guard (1...2).contains(channels) else {
            throw invalid("\(channels) channels is not supported (expected 1 or 2 interleaved channels)")
        }
        guard blockFrames > 0 else { throw invalid("blockFrames must be positive (got \(blockFrames))") }
        guard start >= 0 else { throw invalid("start must not be negative (got \(start))") }
        reader = try InterruptibleReader(fileDescriptor: fileDescriptor, name: name)
        self.name = name
        self.encoding = encoding
        self.start = start
        self.blockFrames = blockFrames
        format = SourceFormat(sampleRate: sampleRate, channelCount: channels, analysisChannelCount: channels,
                              frameCount: nil, integerBits: encoding == .s16le ? 16 : nil)
        var resamplers: [Resampler] = []
        for _ in 0..<channels {
            do { resamplers.append(try Resampler(inputRate: sampleRate, outputRate: AudioFileSource.analysisRate)) }
            catch { throw invalid(error.description) }
        }
        self.resamplers = resamplers
        frameBytes = encoding.bytesPerSample * channels
        let framesPerChunk = AudioFileSource.framesPerRead(blockFrames: blockFrames, rate: sampleRate)
        chunkBytes = framesPerChunk * frameBytes
        chunk = .allocate(byteCount: chunkBytes, alignment: 16)
        planar = (0..<channels).map { _ in .allocate(capacity: framesPerChunk) }
        pending = (0..<channels).map { _ in
            var a = [Float](); a.reserveCapacity(blockFrames * 2 + 64); return a
        }
        nextStart = start
    }

    deinit {
        chunk.deallocate()
        for p in planar { p.deallocate() }
    }

    /// The next block of analysis-rate audio (waiting for the input as needed), or `.end` once the input has ended
    /// or the source is closed.
    public func read() throws(AudioError) -> SourceRead {
        while true {
            if finished || lock.withLock({ closed }) { return end() }
            let available = pending[0].count - pendingHead
            if available >= blockFrames || (inputEnded && available > 0) {
                return takeBlock(min(blockFrames, available))
            }
            if inputEnded {
                if let failure {
                    _ = end()
                    throw failure
                }
                return end()
            }
            compactPending()
            readChunk()
        }
    }

    @discardableResult
    public func setSourceRateTap(_ tap: SourceRateTap?) -> Bool {
        self.tap = tap
        return true
    }

    /// Stops the source from any thread: a `read()` waiting for input returns `.end` at once, and so does every later
    /// one. The descriptor stays open. Idempotent.
    public func close() {
        let first = lock.withLock {
            defer { closed = true }
            return !closed
        }
        if first { reader.interrupt() }
    }

    // MARK: - Reading

    /// One `read(2)` of what the input has (waiting for it), converted and resampled into `pending`.
    private func readChunk() {
        let outcome: InterruptibleReader.Outcome
        do { outcome = try reader.read(into: chunk + carried, count: chunkBytes - carried) } catch {
            failure = error
            endInput(atEndOfInput: false)
            return
        }
        switch outcome {
        case .interrupted:
            return   // close() has set `closed`
        case .endOfInput:
            // An input shorter than a container's header: its whole frames are audio.
            if !headerChecked, carried > 0 {
                headerChecked = true
                convertCarried(carried)
            }
            endInput(atEndOfInput: true)
        case .bytes(let n):
            let total = carried + n
            lock.withLock {
                stats.bytesRead += Int64(n)
                stats.reads += 1
            }
            if !headerChecked {
                // The first bytes are held (not converted) until there are enough to tell a container's header.
                if total < AudioContainer.headerBytes { carried = total; return }
                headerChecked = true
                if let container = AudioContainer(header: UnsafeRawBufferPointer(start: chunk, count: total)) {
                    failure = Self.notRawPCM(container, name: name, encoding: encoding)
                    carried = 0
                    endInput(atEndOfInput: false)
                    return
                }
            }
            convertCarried(total)
        }
    }

    /// The refusal of an audio file given as raw PCM.
    private static func notRawPCM(_ container: AudioContainer, name: String, encoding: RawPCMEncoding) -> AudioError {
        let file = container.analyzable ? "`sleepcycle analyze` reads it" : "convert it (e.g. to FLAC) for `sleepcycle analyze`"
        return AudioError(.notAudio, path: name, message: "is \(container.description), not headerless PCM: \(file) "
            + "(record --input takes raw \(encoding.rawValue) samples, e.g. from `arecord -t raw` or "
            + "`ffmpeg -f \(encoding.rawValue) -`)")
    }

    /// The refusal `read()` would give for `fileDescriptor`, known before anything is read when it is a regular file
    /// (looked at from its current position, which is left unchanged): a command can refuse before it makes
    /// anything. nil for any other input (a pipe cannot be looked at without taking its bytes) or raw audio.
    public static func refusal(fileDescriptor fd: Int32, name: String, encoding: RawPCMEncoding) -> AudioError? {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let offset = lseek(fd, 0, SEEK_CUR)
        guard offset >= 0 else { return nil }
        var header = [UInt8](repeating: 0, count: AudioContainer.headerBytes)
        let n = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
        guard n == header.count else { return nil }
        return header.withUnsafeBytes { AudioContainer(header: $0) }.map { notRawPCM($0, name: name, encoding: encoding) }
    }

    /// Converts the whole frames among the first `total` bytes of `chunk`, and keeps the rest of a frame for the
    /// next read.
    private func convertCarried(_ total: Int) {
        let frames = total / frameBytes
        let invalid = frames > 0 ? convert(frames: frames) : SampleSanitizer.Result()
        carried = total - frames * frameBytes
        if frames > 0 && carried > 0 { chunk.copyMemory(from: chunk + frames * frameBytes, byteCount: carried) }
        lock.withLock {
            stats.framesRead += Int64(frames)
            if invalid.replaced > 0 {
                stats.invalidSamples += Int64(invalid.replaced)
                if stats.firstInvalidSampleFrame == nil, let i = invalid.firstIndex {
                    stats.firstInvalidSampleFrame = framesConverted - Int64(frames) + Int64(i)
                }
            }
        }
    }

    /// De-interleaves `frames` whole frames from the front of `chunk`, sanitises f32, and resamples them into
    /// `pending`. Returns what the sanitiser replaced (`firstIndex` is the earliest frame over the channels).
    private func convert(frames: Int) -> SampleSanitizer.Result {
        encoding.deinterleave(chunk, frames: frames, channels: planar.count, into: planar)
        var invalid = SampleSanitizer.Result()
        if encoding == .f32le {
            for p in planar {
                let r = SampleSanitizer.sanitize(UnsafeMutableBufferPointer(start: p, count: frames))
                invalid.replaced += r.replaced
                if let i = r.firstIndex { invalid.firstIndex = min(invalid.firstIndex ?? i, i) }
            }
        }
        tap?(SourceRateAudio(origin: start, start: framesConverted,
                             samples: sourceRateSamples(planar, frames: frames, integerBits: format.integerBits)))
        for c in planar.indices {
            resamplers[c].process(UnsafeBufferPointer(start: planar[c], count: frames), into: &pending[c])
        }
        framesConverted += Int64(frames)
        return invalid
    }

    /// The input has ended: flushes the resamplers, whose outputs then total exactly round(frames · 16000 / rate) per
    /// channel (the `Resampler` contract), and reports a partial trailing frame.
    private func endInput(atEndOfInput: Bool) {
        inputEnded = true
        for c in resamplers.indices { resamplers[c].finish(into: &pending[c]) }
        guard atEndOfInput, carried > 0 else { return }
        let channels = planar.count == 1 ? "mono" : "stereo"
        let warning = AudioError(.truncated, path: name, message: "the input ended inside a frame: the last "
            + "\(carried) byte\(carried == 1 ? "" : "s") dropped (a \(encoding.rawValue) \(channels) frame is "
            + "\(frameBytes) bytes)")
        lock.withLock {
            stats.partialFrameBytes = carried
            collectedWarnings.append(warning)
        }
        carried = 0
    }

    private func takeBlock(_ n: Int) -> SourceRead {
        var channels: [[Float]] = []
        channels.reserveCapacity(pending.count)
        for c in pending.indices { channels.append(Array(pending[c][pendingHead..<(pendingHead + n)])) }
        pendingHead += n
        let blockStart = nextStart
        nextStart += Int64(n)
        lock.withLock { stats.samplesDelivered += Int64(n) }
        return .audio(start: blockStart, channels: channels)
    }

    /// Moves the undelivered tail of each pending buffer to its front, keeping the capacity (no reallocation).
    private func compactPending() {
        guard pendingHead > 0 else { return }
        for c in pending.indices {
            let unread = pending[c].count - pendingHead
            pending[c].withUnsafeMutableBufferPointer { p in
                guard let base = p.baseAddress else { return }
                _ = memmove(base, base + pendingHead, unread * MemoryLayout<Float>.stride)
            }
            pending[c].removeLast(pendingHead)
        }
        pendingHead = 0
    }

    /// `.end`, completing the warnings the first time.
    private func end() -> SourceRead {
        guard !finished else { return .end }
        finished = true
        lock.withLock {
            let seconds = stats.firstInvalidSampleFrame.map { Double($0) / Double(format.sampleRate) } ?? 0
            if let warning = AudioFileSource.invalidSampleWarning(path: name, count: stats.invalidSamples,
                                                                  firstTime: seconds) {
                collectedWarnings.append(warning)
            }
        }
        return .end
    }
}
