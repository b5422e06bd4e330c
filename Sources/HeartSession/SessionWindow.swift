// The readings of one session and its frame schedule: what the session engine and the bus consumer share.
import SleepCycleBus

/// One session's readings and schedule, in ms on the readings' own clock. A frame's metrics are over the window
/// `(end − windowSec, end]` (from the session's first reading on) and it is due once time passes its end; raw frames
/// hand over the readings of each raw interval. A value type stepped by readings and time, with no clock of its own.
struct SessionWindow {
    enum Output {
        /// Metrics over the window, and the mean heart rate of the last emit interval `(intervalStartMs, endMs]`.
        case frame(SessionMetrics, intervalStartMs: Int64, intervalHrMeanBpm: Double?)
        case raw([BiosignalSample], startMs: Int64, endMs: Int64)
    }

    let profile: ComputeProfile
    let includeRaw: Bool
    /// When set, frames end at whole multiples of the emit interval on the clock (epoch boundaries) instead of every
    /// emit interval after the first reading.
    let alignsFrames: Bool
    let correctsArtefacts: Bool
    /// When set, only frames ending on a multiple of it (ms) carry the frequency domain (the Welch spectrum is most of
    /// a frame's cost; a night keeps LF/HF every 5 minutes, not every epoch).
    let spectrumEveryMs: Int64?
    private(set) var samples: [BiosignalSample] = []
    private(set) var startMs: Int64?
    private(set) var lastMs: Int64 = 0
    private var nextFrameMs: Int64 = 0
    private var nextRawMs: Int64 = 0
    private var rawFrom = 0
    /// The first reading of the latest frame's window (windows only move forward).
    private var frameFrom = 0

    private var windowMs: Int64 { Int64((profile.windowSec * 1000).rounded()) }
    private var emitMs: Int64 { Int64((profile.emitIntervalSec * 1000).rounded()) }
    private var rawMs: Int64 { Int64((profile.rawEmitIntervalSec * 1000).rounded()) }

    init(profile: ComputeProfile, includeRaw: Bool, alignsFrames: Bool = false, correctsArtefacts: Bool = true,
         spectrumEveryMs: Int64? = nil) {
        self.profile = profile; self.includeRaw = includeRaw; self.alignsFrames = alignsFrames
        self.correctsArtefacts = correctsArtefacts; self.spectrumEveryMs = spectrumEveryMs
    }

    /// Adds a reading (after the frames due before it); readings must come in time order.
    mutating func add(_ sample: BiosignalSample) throws(SessionError) -> [Output] {
        if startMs == nil {
            startMs = sample.timestampMs
            lastMs = sample.timestampMs
            let emit = emitMs
            nextFrameMs = alignsFrames ? Self.floorDiv(sample.timestampMs, emit) * emit + emit : sample.timestampMs + emit
            nextRawMs = sample.timestampMs + rawMs
        }
        guard sample.timestampMs >= lastMs else {
            throw SessionError("a reading at \(sample.timestampMs) ms comes before the previous one at \(lastMs) ms")
        }
        let out = due(before: sample.timestampMs)
        samples.append(sample)
        lastMs = sample.timestampMs
        return out
    }

    /// The frames whose end is before `time` (a clock other than the readings': the audio of a night).
    mutating func advance(to time: Int64) -> [Output] {
        startMs == nil ? [] : due(before: time)
    }

    /// The frames still due up to the last reading (or `end`, when later) and the remaining raw readings; then the
    /// summary over every reading, from the first to the last.
    mutating func finish(end: Int64? = nil) -> (outputs: [Output], summary: SessionMetrics?) {
        guard let start = startMs else { return ([], nil) }
        let last = max(lastMs, end ?? lastMs)
        var out = due(before: last + 1)
        if includeRaw && rawFrom < samples.count {
            out.append(.raw(Array(samples[rawFrom...]), startMs: nextRawMs - rawMs, endMs: lastMs))
            rawFrom = samples.count
        }
        let summary = HeartMetrics.of(samples, correctsArtefacts: correctsArtefacts)
        return (out, SessionMetrics(startMs: start, endMs: lastMs, values: summary))
    }

    /// The first reading at or after index `from` later than `t` (readings are in time order): scans resume where
    /// the last frame's left off, so a long session costs its window per frame, not its whole length.
    private func index(after t: Int64, from: Int) -> Int {
        var i = from
        while i < samples.count && samples[i].timestampMs <= t { i += 1 }
        return i
    }

    /// Frames (and raw frames) whose time has come before `time`.
    private mutating func due(before time: Int64) -> [Output] {
        var out: [Output] = []
        let first = startMs ?? 0
        while nextFrameMs < time || (includeRaw && nextRawMs < time) {
            if includeRaw && nextRawMs <= nextFrameMs && nextRawMs < time {
                if rawFrom == samples.count {
                    // Every reading handed over: the raw frames before `time` are empty (none is written).
                    nextRawMs += Self.steps(from: nextRawMs, to: time, by: rawMs) * rawMs
                    continue
                }
                let upto = index(after: nextRawMs, from: rawFrom)
                if upto > rawFrom { out.append(.raw(Array(samples[rawFrom..<upto]), startMs: nextRawMs - rawMs, endMs: nextRawMs)) }
                rawFrom = upto
                nextRawMs += rawMs
                continue
            }
            guard nextFrameMs < time else { break }
            // The window is (frame − window, frame]: half-open like every later one, so the session's first reading
            // is in it only while the window reaches before it (a window ending exactly `window` after the first
            // reading held one reading more than the rest).
            let reach = nextFrameMs - windowMs
            let start = max(first, reach)
            let lo = reach < first ? 0 : index(after: reach, from: frameFrom)
            let hi = index(after: nextFrameMs, from: lo)
            if !alignsFrames && lo == hi && hi == samples.count {
                // No reading in this window nor after it before `time`: the wearable was off for longer than the
                // window. Such frames are skipped (not written empty, one per emit interval of a gap that may be
                // years long); frames resume with the first whose end reaches `time`. A night's frames (aligned to
                // its epochs, bounded by its audio) are all kept.
                nextFrameMs += Self.steps(from: nextFrameMs, to: time, by: emitMs) * emitMs
                continue
            }
            frameFrom = lo
            let intervalReach = nextFrameMs - emitMs
            let intervalStart = max(first, intervalReach)
            let intervalLo = intervalReach < first ? lo : index(after: intervalReach, from: lo)
            let spectrum = spectrumEveryMs.map { nextFrameMs % $0 == 0 } ?? true
            let metrics = SessionMetrics(startMs: start, endMs: nextFrameMs,
                                         values: .of(samples[lo..<hi], correctsArtefacts: correctsArtefacts, spectrum: spectrum))
            let intervalHr = intervalLo < hi
                ? HeartMetrics.of(samples[intervalLo..<hi], correctsArtefacts: correctsArtefacts, spectrum: false).hrMeanBpm : nil
            out.append(.frame(metrics, intervalStartMs: intervalStart, intervalHrMeanBpm: intervalHr))
            nextFrameMs += emitMs
        }
        return out
    }

    /// The number of `step`s that take `from` to `to` or past it (`from < to`).
    private static func steps(from: Int64, to: Int64, by step: Int64) -> Int64 { (to - from + step - 1) / step }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
}
