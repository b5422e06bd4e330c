import SleepCycleBus

/// Thresholds of the audio-health monitor. Defaults and their reasons: docs/0004-bus-and-engine.md §Audio health.
public struct AudioHealthConfiguration: Sendable, Hashable {
    /// A sample is "active" when it differs from the previous one by at least this much (full scale = 1).
    /// 1e-5 (−100 dBFS) is a third of a 16-bit LSB: any real room recorded at 16 bits or more moves by at least one
    /// LSB between samples many times a second, while digital zero and a DC offset (even after resampling) do not.
    public var variationThreshold: Float = 1e-5
    /// Analysis chunk, in samples; a chunk is active if at least `minActiveFraction` of its samples are active.
    public var chunkLength: Int = 800
    /// 1 % of a chunk: a single step (zero → DC) or a lone click is not activity.
    public var minActiveFraction: Double = 0.01
    /// A stretch without activity at least this long (seconds) is a flatline (starting at its first sample).
    public var minFlatlineSeconds: Double = 1.0
    /// Gaps at least this long (seconds) are `missingInput`; shorter ones (xruns) are only counted.
    public var minMissingInputSeconds: Double = 1.0

    public init() {}
    public static let `default` = AudioHealthConfiguration()
}

/// Counters kept by the monitor alongside the status changes.
public struct AudioHealthCounters: Sendable, Hashable {
    /// Gaps seen on the bus (any length) and the samples they cover.
    public var gapCount = 0
    public var gapSamples: SampleTime = 0
    /// Gaps by reason (`overrun` = ALSA xruns).
    public var overrunCount = 0
    /// Audio samples inspected.
    public var analysedSamples: SampleTime = 0
    public init() {}
}

/// Audio-input health of one channel, as a bus consumer: publishes `.healthChanged` whenever the status changes.
///
/// Statuses (`AudioHealthStatus`):
/// * `healthy` — the signal varies (a real room, even a very quiet one).
/// * `flatline` — no sample-to-sample variation (`variationThreshold`) for ≥ `minFlatlineSeconds`: digital zero, a
///   DC offset, a dead or muted microphone. The change is dated at the first flat sample (known 1 s later).
/// * `missingInput` — a `.gap` of ≥ `minMissingInputSeconds`: no audio arrived. Dated at the gap's start; the next
///   status is decided afresh after the gap.
///
/// Method: the first difference x[n] − x[n−1] removes any DC offset; a flat stretch is one with (almost) no
/// differences above the threshold. This is the "stuck signal"/flat-line check of audio QC tools (e.g. the EBU
/// R 128-s1 / AES "digital silence" and stuck-sample detectors; see docs/0004 for the references and thresholds).
/// The per-chunk pass is a branch-free count that vectorises; only active chunks are scanned for their first
/// and last active sample, which gives sample-exact boundaries.
public struct AudioHealthMonitor: AnalysisConsumer, Sendable {
    /// The monitor's state machine.
    public enum State: Sendable, Hashable {
        /// Nothing decided yet for the stretch starting at `since` (session start or the end of a gap): it becomes
        /// `healthy` at the first active chunk or `flatline` after `minFlatlineSeconds` without one.
        case undecided(since: SampleTime)
        case healthy(since: SampleTime)
        case flatline(since: SampleTime)
        case missingInput(since: SampleTime)

        public var status: AudioHealthStatus? {
            switch self {
            case .undecided: nil
            case .healthy: .healthy
            case .flatline: .flatline
            case .missingInput: .missingInput
            }
        }
    }

    public let configuration: AudioHealthConfiguration
    /// Channel index inspected (0 = primary); `channelTag` is put on the published changes (nil for mono).
    public let channelIndex: Int
    public let channelTag: AudioChannel?
    public private(set) var state: State = .undecided(since: 0)
    public private(set) var counters = AudioHealthCounters()

    /// Last audio sample seen (for the first difference across blocks) and whether there is one.
    private var previous: Float = 0
    private var hasPrevious = false
    /// First sample of the current run without activity.
    private var flatRunStart: SampleTime = 0
    /// Where the next audio sample is expected.
    private var expected: SampleTime = 0
    /// The chunk being filled: samples in it, active samples, first and last active sample.
    private var chunkFill = 0
    private var chunkCount = 0
    private var chunkFirstActive: SampleTime?
    private var chunkLastActive: SampleTime?
    private let minFlat: SampleTime
    private let minMissing: SampleTime
    private let minActive: Int

    public init(configuration: AudioHealthConfiguration = .default, channelIndex: Int = 0,
                channelTag: AudioChannel? = nil) {
        self.configuration = configuration
        self.channelIndex = channelIndex
        self.channelTag = channelTag
        self.minFlat = AnalysisClock.samples(seconds: configuration.minFlatlineSeconds)
        self.minMissing = AnalysisClock.samples(seconds: configuration.minMissingInputSeconds)
        self.minActive = max(1, Int((Double(configuration.chunkLength) * configuration.minActiveFraction).rounded(.up)))
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .sessionStarted(let info):
            let t = info.timelineStart
            state = .undecided(since: t); flatRunStart = t; expected = t; hasPrevious = false
            chunkFill = 0; chunkCount = 0; chunkFirstActive = nil; chunkLastActive = nil
            counters = AudioHealthCounters()
            return []
        case .audio(let block):
            guard channelIndex < block.channels.count else { return [] }
            var out: [AnalysisEvent] = []
            if block.start > expected {
                // A hole the source did not announce as a gap: treat it as one.
                out += gap(from: expected, length: block.start - expected, reason: .missingInput)
            }
            block.channels[channelIndex].withUnsafeBufferPointer { out += inspect($0, start: block.start) }
            expected = block.end
            return out
        case .gap(let g):
            let out = gap(from: g.start, length: g.length, reason: g.reason)
            expected = max(expected, g.start + g.length)
            return out
        case .sessionEnding(let end):
            return finish(at: end)
        default:
            return []
        }
    }

    // MARK: - Transitions

    private mutating func change(to status: AudioHealthStatus, at time: SampleTime) -> [AnalysisEvent] {
        let new: State
        switch status {
        case .healthy: new = .healthy(since: time)
        case .flatline: new = .flatline(since: time)
        case .missingInput: new = .missingInput(since: time)
        }
        if state.status == status { return [] }
        state = new
        return [.healthChanged(AudioHealthChange(time: time, status: status, channel: channelTag))]
    }

    private mutating func gap(from start: SampleTime, length: SampleTime, reason: GapReason) -> [AnalysisEvent] {
        guard length > 0 else { return [] }
        counters.gapCount += 1
        counters.gapSamples += length
        if reason == .overrun { counters.overrunCount += 1 }
        guard length >= minMissing else {
            // A short hole (an xrun): the status carries on; the first difference restarts after it.
            hasPrevious = false
            return []
        }
        var out: [AnalysisEvent] = chunkFill > 0 ? closeChunk(end: start) : []
        if case .undecided(let since) = state, since < start {
            // A stretch shorter than the flatline minimum before the gap: flat only if it had no activity at all,
            // which is the only way to still be undecided.
            out += change(to: .flatline, at: since)
        } else if case .healthy = state, start - flatRunStart >= minFlat {
            out += change(to: .flatline, at: flatRunStart)
        }
        out += change(to: .missingInput, at: start)
        let resume = start + length
        state = .undecided(since: resume)
        flatRunStart = resume
        hasPrevious = false
        chunkFill = 0; chunkCount = 0; chunkFirstActive = nil; chunkLastActive = nil
        return out
    }

    private mutating func finish(at end: SampleTime) -> [AnalysisEvent] {
        var out: [AnalysisEvent] = chunkFill > 0 ? closeChunk(end: end) : []
        switch state {
        case .undecided(let since) where since < end:
            out += change(to: .flatline, at: since)
        case .healthy where end - flatRunStart >= minFlat:
            out += change(to: .flatline, at: flatRunStart)
        default:
            break
        }
        return out
    }

    // MARK: - Signal inspection

    /// Feeds samples into the current chunk (the chunk grid restarts at the session start and after each gap, so
    /// decisions do not depend on block sizes) and decides at each chunk's end.
    private mutating func inspect(_ x: UnsafeBufferPointer<Float>, start: SampleTime) -> [AnalysisEvent] {
        let n = x.count
        guard n > 0 else { return [] }
        counters.analysedSamples += SampleTime(n)
        var out: [AnalysisEvent] = []
        let threshold = configuration.variationThreshold
        var prev = hasPrevious ? previous : x[0]
        var i = 0
        while i < n {
            let m = min(configuration.chunkLength - chunkFill, n - i)
            // Branch-free count of active samples in x[i..<i+m]: the first against the previous sample, the rest
            // against their neighbour in the buffer (no loop-carried value, so the loop vectorises).
            let base = x.baseAddress!
            var count = abs(base[i] - (i == 0 ? prev : base[i - 1])) >= threshold ? 1 : 0
            var k = i + 1
            while k < i + m {
                count &+= abs(base[k] - base[k - 1]) >= threshold ? 1 : 0
                k += 1
            }
            let p = base[i + m - 1]
            if count > 0 {
                // First and last active sample of this run (exact boundaries); scanned only when there are some.
                if chunkFirstActive == nil {
                    var q = i == 0 ? prev : x[i - 1]
                    for k in i..<(i + m) {
                        if abs(x[k] - q) >= threshold { chunkFirstActive = start + SampleTime(k); break }
                        q = x[k]
                    }
                }
                var last = i + m - 1
                while last > i && abs(x[last] - x[last - 1]) < threshold { last -= 1 }
                chunkLastActive = start + SampleTime(last)
                chunkCount += count
            }
            chunkFill += m
            prev = p
            i += m
            if chunkFill == configuration.chunkLength { out += closeChunk(end: start + SampleTime(i)) }
        }
        previous = prev
        hasPrevious = true
        return out
    }

    /// Decides on the chunk ending at `end` and starts the next one.
    private mutating func closeChunk(end: SampleTime) -> [AnalysisEvent] {
        var out: [AnalysisEvent] = []
        if chunkCount >= minActive, let firstTime = chunkFirstActive, let lastTime = chunkLastActive {
            switch state {
            case .undecided(let since):
                if firstTime - since >= minFlat { out += change(to: .flatline, at: since) }
                out += change(to: .healthy, at: out.isEmpty ? since : firstTime)
            case .healthy:
                if firstTime - flatRunStart >= minFlat {
                    out += change(to: .flatline, at: flatRunStart)
                    out += change(to: .healthy, at: firstTime)
                }
            case .flatline, .missingInput:
                out += change(to: .healthy, at: firstTime)
            }
            flatRunStart = lastTime + 1
        } else {
            switch state {
            case .undecided(let since) where end - since >= minFlat:
                out += change(to: .flatline, at: since)
            case .healthy where end - flatRunStart >= minFlat:
                out += change(to: .flatline, at: flatRunStart)
            default: break
            }
        }
        chunkFill = 0; chunkCount = 0; chunkFirstActive = nil; chunkLastActive = nil
        return out
    }
}
