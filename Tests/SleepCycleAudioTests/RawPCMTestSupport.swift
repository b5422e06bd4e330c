// Helpers for the raw PCM tests: a pipe fed by a writer thread in chosen chunk sizes, raw bytes and their WAV.
import Foundation
import SleepCycleAudio

/// A real `pipe()` whose write end a thread fills with `bytes`, write by write in the sizes `chunkSizes` lists (the
/// last size repeats), then closes, unless `holdOpen` (then `closeWriteEnd()` ends the input). The read end is closed
/// when the value goes away (a writer still blocked then gets EPIPE and stops).
final class PipeFeeder: @unchecked Sendable {
    let readEnd: Int32
    let total: Int
    private let state: State

    private final class State: @unchecked Sendable {
        let condition = NSCondition()
        var written = 0
        var done = false
        var writeEndOpen = true
        let writeEnd: Int32
        init(writeEnd: Int32) { self.writeEnd = writeEnd }

        func closeWriteEnd() {
            condition.lock()
            defer { condition.unlock() }
            guard writeEndOpen else { return }
            writeEndOpen = false
            Foundation.close(writeEnd)
        }
    }

    init(_ bytes: [UInt8], chunkSizes: [Int] = [4_096], holdOpen: Bool = false) {
        signal(SIGPIPE, SIG_IGN)
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        readEnd = fds[0]
        total = bytes.count
        let state = State(writeEnd: fds[1])
        self.state = state
        let sizes = chunkSizes.isEmpty ? [4_096] : chunkSizes
        Thread {
            bytes.withUnsafeBytes { raw in
                var offset = 0, k = 0
                writing: while offset < raw.count {
                    let size = min(sizes[min(k, sizes.count - 1)], raw.count - offset)
                    k += 1
                    let end = offset + size
                    while offset < end {
                        let n = write(state.writeEnd, raw.baseAddress! + offset, end - offset)
                        if n < 0 && errno == EINTR { continue }
                        if n <= 0 { break writing }   // the reader is gone
                        offset += n
                    }
                    state.condition.lock(); state.written = offset; state.condition.unlock()
                }
            }
            if !holdOpen { state.closeWriteEnd() }
            state.condition.lock(); state.done = true; state.condition.broadcast(); state.condition.unlock()
        }.start()
    }

    deinit {
        Foundation.close(readEnd)
        state.condition.lock()
        while !state.done { state.condition.wait() }
        state.condition.unlock()
        state.closeWriteEnd()
    }

    /// Bytes the writer has handed to the pipe so far.
    var written: Int { state.condition.withLock { state.written } }

    /// True once every byte is in the pipe.
    var finished: Bool { state.condition.withLock { state.done } }

    /// Ends the input (EOF for the reader) of a `holdOpen` feeder once its bytes are written.
    func closeWriteEnd() {
        state.condition.lock()
        while !state.done { state.condition.wait() }
        state.condition.unlock()
        state.closeWriteEnd()
    }
}

enum RawPCMFixture {
    /// Interleaved 16-bit samples: two tones and noise per channel, both extremes included.
    static func s16(frames: Int, channels: Int, rate: Int) -> [Int16] {
        var seed: UInt32 = 2_654_435_761
        var samples: [Int16] = []
        samples.reserveCapacity(frames * channels)
        for i in 0..<frames {
            for c in 0..<channels {
                seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5
                let t = Double(i) / Double(rate)
                let x = 0.4 * sin(2 * .pi * (440 + 220 * Double(c)) * t) + 0.2 * sin(2 * .pi * 3_000 * t)
                    + (Double(seed) / Double(UInt32.max) - 0.5) * 0.1
                samples.append(Int16(max(-32_768, min(32_767, (x * 32_768).rounded()))))
            }
        }
        if samples.count >= 2 { samples[0] = .min; samples[1] = .max }
        return samples
    }

    /// Interleaved float samples (the same signal, a little louder than full scale in places).
    static func f32(frames: Int, channels: Int, rate: Int) -> [Float] {
        s16(frames: frames, channels: channels, rate: rate).map { Float($0) / 30_000 }
    }

    /// The little-endian bytes of `samples`.
    static func bytes<T: FixedWidthInteger>(_ samples: [T]) -> [UInt8] {
        samples.flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) }
    }

    static func bytes(_ samples: [Float]) -> [UInt8] { bytes(samples.map(\.bitPattern)) }

    /// A canonical 44-byte-header WAV (PCM, or IEEE float for f32le) holding exactly `data`.
    static func wav(_ data: [UInt8], encoding: RawPCMEncoding, rate: Int, channels: Int) -> [UInt8] {
        func u32(_ v: Int) -> [UInt8] { bytes([UInt32(v)]) }
        func u16(_ v: Int) -> [UInt8] { bytes([UInt16(v)]) }
        let sampleBytes = encoding.bytesPerSample
        var header = Array("RIFF".utf8) + u32(36 + data.count) + Array("WAVEfmt ".utf8) + u32(16)
        header += u16(encoding == .f32le ? 3 : 1) + u16(channels) + u32(rate) + u32(rate * channels * sampleBytes)
        header += u16(channels * sampleBytes) + u16(8 * sampleBytes) + Array("data".utf8) + u32(data.count)
        return header + data
    }

    /// Every read of `source` up to `.end` (a thrown error ends the list and is returned).
    static func reads(_ source: any AudioSource) -> (reads: [SourceRead], error: (any Error)?) {
        var reads: [SourceRead] = []
        while true {
            do {
                let read = try source.read()
                if case .end = read { return (reads, nil) }
                reads.append(read)
            } catch {
                return (reads, error)
            }
        }
    }

    /// Where two sample sequences first differ (short enough for a failure message), nil if they are equal.
    static func difference(_ a: [Float], _ b: [Float]) -> String? {
        if let i = (0..<min(a.count, b.count)).first(where: { a[$0] != b[$0] }) {
            return "sample \(i): \(a[i]) vs \(b[i])"
        }
        return a.count == b.count ? nil : "\(a.count) vs \(b.count) samples"
    }

    /// The `.audio` reads as (start, channels); nil if any read is not audio.
    static func audio(_ reads: [SourceRead]) -> [(start: Int64, channels: [[Float]])]? {
        var out: [(Int64, [[Float]])] = []
        for read in reads {
            guard case .audio(let start, let channels) = read else { return nil }
            out.append((start, channels))
        }
        return out
    }
}
