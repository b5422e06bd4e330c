import Foundation

/// What the host's pushes cost or needed fixing. Frames are at the source's own rate.
public struct InjectedAudioStatistics: Sendable, Equatable {
    /// Buffers pushed (accepted wholly, partly, or dropped).
    public var buffersPushed = 0
    /// Frames of audio accepted onto the timeline.
    public var framesAccepted: Int64 = 0
    /// Holes before a buffer no longer than `lateThresholdSec`, reported as `.late` gaps.
    public var lateGaps = 0
    public var lateFrames: Int64 = 0
    /// Longer holes (and a trailing hole declared by `finish(at:)`), reported as `.missingInput` gaps.
    public var missingInputGaps = 0
    public var missingInputFrames: Int64 = 0
    /// Buffers that started before the end of the audio already delivered (a repeat of time); the
    /// repeated frames are dropped.
    public var overlappingBuffers = 0
    public var overlapFramesDropped: Int64 = 0
    /// Buffers timed before the previous buffer's start (arrived out of order); their frames that fall in
    /// time already delivered or already reported as a gap are dropped.
    public var outOfOrderBuffers = 0
    public var outOfOrderFramesDropped: Int64 = 0
    /// Date-stamped buffers within `dateToleranceSec` of the expected position, placed exactly there.
    public var snappedBuffers = 0
    /// Times the ring was full (analysis too slow) and unread audio was dropped as an `.overrun` gap.
    public var ringOverflows = 0
    public var ringFramesDropped: Int64 = 0
    /// Samples replaced by silence because they were NaN, ±Inf or beyond ±`SampleSanitizer.bound`, and the
    /// sample time (frames at the pushed rate) of the first.
    public var invalidSamples: Int64 = 0
    public var firstInvalidSampleTime: Int64?
    public init() {}
}

/// A source the host program pushes audio into (the SmartSpectra / VitalLens "injected buffers" mode):
/// each buffer carries its time, either a sample index at the buffer's own rate since the source's start,
/// or a `Date`.
///
/// Rules (docs/0003-live-capture-and-injected-sources.md): a buffer that starts after the end of the audio
/// delivered so far leaves a hole, reported as a gap — `.late` when at most `lateThresholdSec`, else
/// `.missingInput`; a buffer that repeats time already delivered has the repeat dropped and counted
/// (`overlapping`, or `outOfOrder` when it starts before the previous buffer). Nothing is silently glued:
/// the only adjustment is snapping a Date-stamped buffer within `dateToleranceSec` of the expected position
/// onto it (clock jitter), which is counted. Samples that cannot be audio (NaN, ±Inf, beyond ±16) are replaced by
/// silence and counted (`statistics.invalidSamples`, `SampleSanitizer`). `push` never waits: a full ring drops the oldest unread audio
/// as an `.overrun` gap. `read()` blocks until audio, a gap, or the end, and delivers 16 kHz (other rates
/// go through `TimelineResampler`; sample times and counters stay at the pushed rate). Thread-safe.
public final class InjectedAudioSource: AudioSource, @unchecked Sendable {
    public let format: SourceFormat
    public let name: String
    /// Holes up to this long are `.late`; longer ones `.missingInput`.
    public let lateThresholdSec: Double
    /// Date-stamped buffers this close to the expected position are placed exactly at it.
    public let dateToleranceSec: Double

    private let timeline: TimelineBuffer
    private let reader: AnalysisRateReader
    private let lock = NSLock()
    private var startDate: Date?
    private var expected: Int64 = 0
    private var lastStart: Int64?
    private var ended = false
    private var stats = InjectedAudioStatistics()

    /// - Parameters:
    ///   - sampleRate: rate of the pushed audio (8–192 kHz); analysis receives it resampled to 16 kHz.
    ///   - channels: 1 or 2.
    ///   - start: wall-clock time of sample 0, for Date-stamped pushes; nil takes the first such push's date.
    ///   - bufferSeconds: audio held for a slow analysis thread before the oldest is dropped.
    ///   - name: how messages name this source.
    public init(sampleRate: Int, channels: Int, start: Date? = nil, bufferSeconds: Double = 30,
                lateThresholdSec: Double = 1, dateToleranceSec: Double = 0.005, name: String = "injected") throws {
        func invalid(_ message: String) -> AudioError { AudioError(.invalidParameter, path: name, message: message) }
        guard (8000...192_000).contains(sampleRate) else {
            throw AudioError(.unsupportedRate, path: name,
                             message: "sample rate \(sampleRate) Hz is not supported (expected 8000–192000 Hz)")
        }
        guard (1...2).contains(channels) else {
            throw invalid("channels \(channels) is not supported (expected 1 or 2)")
        }
        guard bufferSeconds.isFinite, bufferSeconds > 0 else { throw invalid("bufferSeconds must be positive") }
        guard lateThresholdSec >= 0, dateToleranceSec >= 0 else { throw invalid("thresholds must not be negative") }
        self.name = name
        self.lateThresholdSec = lateThresholdSec
        self.dateToleranceSec = dateToleranceSec
        startDate = start
        format = SourceFormat(sampleRate: sampleRate, channelCount: channels, analysisChannelCount: channels,
                              frameCount: nil)
        timeline = TimelineBuffer(capacityFrames: max(1, Int(bufferSeconds * Double(sampleRate))), channels: channels)
        do {
            reader = try AnalysisRateReader(timeline: timeline, inputRate: sampleRate, channels: channels)
        } catch {
            throw AudioError(.unsupportedRate, path: name, message: "\(error)")
        }
    }

    /// Wall-clock time of sample 0 (nil until given or taken from the first Date-stamped push).
    public var start: Date? { lock.withLock { startDate } }

    public var statistics: InjectedAudioStatistics {
        var s = lock.withLock { stats }
        let drops = timeline.dropCounters
        s.ringOverflows = drops.events
        s.ringFramesDropped = drops.frames
        return s
    }

    // MARK: - Pushing

    /// Pushes one array per channel, the first frame at `sampleTime` (frames at `format.sampleRate` since
    /// sample 0).
    public func push(_ channels: [[Float]], at sampleTime: Int64) throws {
        try push(interleaved: interleave(channels), at: sampleTime)
    }

    /// Pushes interleaved frames, the first at `sampleTime`.
    public func push(interleaved samples: [Float], at sampleTime: Int64) throws {
        let frames = try frameCount(samples)
        try lock.withLock {
            try checkOpen()
            place(samples, frames: frames, at: sampleTime)
        }
    }

    /// Pushes one array per channel whose first frame was captured at `date`.
    public func push(_ channels: [[Float]], at date: Date) throws {
        try push(interleaved: interleave(channels), at: date)
    }

    /// Pushes interleaved frames whose first frame was captured at `date`.
    public func push(interleaved samples: [Float], at date: Date) throws {
        let frames = try frameCount(samples)
        try lock.withLock {
            try checkOpen()
            let origin = startDate ?? date
            startDate = origin
            var t = Int64((date.timeIntervalSince(origin) * Double(format.sampleRate)).rounded())
            let tolerance = Int64((dateToleranceSec * Double(format.sampleRate)).rounded())
            if t != expected && abs(t - expected) <= tolerance {
                t = expected
                stats.snappedBuffers += 1
            }
            place(samples, frames: frames, at: t)
        }
    }

    /// No more buffers: `read()` returns what is buffered, then `.end`. If `endSampleTime` lies beyond the
    /// audio delivered, the rest is reported as a `.missingInput` gap first. Idempotent.
    public func finish(at endSampleTime: Int64? = nil) {
        lock.withLock {
            guard !ended else { return }
            ended = true
            if let end = endSampleTime, end > expected {
                timeline.appendGap(length: end - expected, reason: .missingInput)
                stats.missingInputGaps += 1
                stats.missingInputFrames += end - expected
                expected = end
            }
        }
        timeline.finish()
    }

    // MARK: - AudioSource

    /// The next 16 kHz block, gap or `.end` (positions are 16 kHz samples since sample 0).
    public func read() throws -> SourceRead { reader.next() }

    /// Taps the captured audio at the device's rate, on the thread that calls `read()`.
    @discardableResult
    public func setSourceRateTap(_ tap: SourceRateTap?) -> Bool {
        reader.tap = tap
        return true
    }

    public func close() {
        lock.withLock { ended = true }
        timeline.close()
    }

    // MARK: - Placement (under `lock`)

    private func place(_ samples: [Float], frames: Int, at t: Int64) {
        stats.buffersPushed += 1
        guard frames > 0 else { return }
        let outOfOrder = lastStart.map { t < $0 } ?? false
        lastStart = max(lastStart ?? t, t)
        var skip = 0
        if t < expected {
            skip = Int(min(expected - t, Int64(frames)))
            if outOfOrder {
                stats.outOfOrderBuffers += 1; stats.outOfOrderFramesDropped += Int64(skip)
            } else {
                stats.overlappingBuffers += 1; stats.overlapFramesDropped += Int64(skip)
            }
            if skip == frames { return }
        } else if t > expected {
            let hole = t - expected
            if Double(hole) <= lateThresholdSec * Double(format.sampleRate) {
                timeline.appendGap(length: hole, reason: .late)
                stats.lateGaps += 1; stats.lateFrames += hole
            } else {
                timeline.appendGap(length: hole, reason: .missingInput)
                stats.missingInputGaps += 1; stats.missingInputFrames += hole
            }
        }
        let channels = format.channelCount
        var samples = samples
        // NaN, ±Inf and absurd values become silence before the resampler can smear them (SampleSanitizer);
        // the copy is made only when there is something to replace.
        if samples.withUnsafeBufferPointer({ SampleSanitizer.firstInvalid(in: $0) }) != nil {
            let result = samples.withUnsafeMutableBufferPointer { SampleSanitizer.sanitize($0) }
            stats.invalidSamples += Int64(result.replaced)
            if let first = result.firstIndex, stats.firstInvalidSampleTime == nil {
                stats.firstInvalidSampleTime = t + Int64(first / channels)
            }
        }
        samples.withUnsafeBufferPointer { buf in
            let rest = UnsafeBufferPointer(rebasing: buf[(skip * channels)...])
            timeline.appendAudio(rest, frames: frames - skip)
        }
        stats.framesAccepted += Int64(frames - skip)
        expected = max(expected, t + Int64(frames))
    }

    private func checkOpen() throws {
        if ended || timeline.isClosed {
            throw AudioError(.invalidParameter, path: name, message: "buffer pushed after finish() or close()")
        }
    }

    private func frameCount(_ interleaved: [Float]) throws -> Int {
        let c = format.channelCount
        guard interleaved.count % c == 0 else {
            throw AudioError(.invalidParameter, path: name,
                             message: "\(interleaved.count) interleaved samples is not a whole number "
                                 + "of \(c)-channel frames")
        }
        return interleaved.count / c
    }

    private func interleave(_ channels: [[Float]]) throws -> [Float] {
        guard channels.count == format.channelCount else {
            throw AudioError(.invalidParameter, path: name,
                             message: "buffer has \(channels.count) channel(s), expected \(format.channelCount)")
        }
        let n = channels[0].count
        guard channels.allSatisfy({ $0.count == n }) else {
            throw AudioError(.invalidParameter, path: name, message: "channels of one buffer differ in length")
        }
        if channels.count == 1 { return channels[0] }
        var out = [Float](repeating: 0, count: n * channels.count)
        for (c, ch) in channels.enumerated() { for i in 0..<n { out[i * channels.count + c] = ch[i] } }
        return out
    }
}
