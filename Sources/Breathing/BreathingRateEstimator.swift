import SleepCycleBus
import SleepCycleDSP

/// Breathing rate from room audio: a bus consumer.
///
/// Input: `.features` (default; band energies of the engine's feature frames) or `.audio` (16 kHz, any block
/// size; `Configuration.envelopeSource`), `.audio` also for the channel count (mono or stereo), `.gap`,
/// `.sessionStarted`, `.sessionEnding`.
/// Output: `.breathingTrace` (the new envelope samples, ~10 Hz, dB, after every block that completed at
/// least one) and `.breathingRate` (one estimate per answered window, timed at the window centre;
/// `channel` is nil for mono, `.primary`/`.secondary` for stereo).
///
/// ## State
/// Per channel, an envelope accumulator (`FeatureEnvelope`, or `BreathingEnvelope` in `.audio` mode), the
/// last `window` envelope samples of the current *segment* (audio without gaps), and the answers of the last
/// `priorSpanSec` (at most 21 at a 30-s hop): when they hold steady, their median is the analyser's `prior`, the
/// night's rhythm that tells one breath of two equal bursts from breathing at twice the rate. Memory is fixed by
/// the window length whatever the length of the night.
///
/// ```
/// enum State (per channel)
///   filling(segment)   – fewer than `window` samples since the segment began; nothing estimated yet
///   sliding(segment)   – a window has been analysed; the next one is due `hop` samples later
/// ```
/// A full window triggers an analysis, then the buffer slides by `hop`. When a segment ends (`.gap`,
/// `.sessionEnding`) while still *filling*, the shorter segment is analysed once if it spans at least
/// `minimumSegmentSec` (the analyser itself requires three breath periods), so a recording shorter than
/// the window still gets one estimate. Windows without a clear rhythm publish nothing.
public struct BreathingRateEstimator: AnalysisConsumer {
    /// Where the envelope comes from.
    public enum EnvelopeSource: String, Sendable, Equatable {
        /// Band energies (300–2000 Hz) of the `.features` frames the engine publishes: almost free.
        case features
        /// The `.audio` samples, decimated and band-passed here (`bandLowHz`…`bandHighHz`): for hosts that
        /// publish no features.
        case audio
    }

    public struct Configuration: Sendable, Equatable {
        /// Envelope input (default: the engine's feature frames).
        public var envelopeSource: EnvelopeSource = .features
        /// Analysis window and hop (seconds).
        public var windowSec: Double = 60
        public var hopSec: Double = 30
        /// Envelope block (samples at 16 kHz); 1600 = 100 ms = 10 Hz trace.
        public var envelopeHopLength: Int = 1600
        /// Pass band of the breath-sound energy (Hz).
        public var bandLowHz: Double = 200
        public var bandHighHz: Double = 2000
        /// Shortest segment analysed at its end when no full window was available (seconds).
        public var minimumSegmentSec: Double = 6
        /// The night's rhythm: the median of the answers of the last `priorSpanSec` is the analyser's `prior` when
        /// there are at least `priorMinimumAnswers` of them, and `priorSteadyShare` of them and one of the latest two
        /// lie within the analyser's `priorAgreementFraction` of it (a steady rate, not one in transition).
        public var priorSpanSec: Double = 600
        public var priorMinimumAnswers: Int = 6
        public var priorSteadyShare: Double = 0.75
        /// With a steady prior, an answer that is not within these factors of it is not published (a window that read
        /// a third or half of a steady night's rate, or twice it, when no rule tied it to the night's rhythm); it
        /// still enters the history, so that breathing which really changed that much is answered again within a
        /// window or two.
        public var priorJumpRange: ClosedRange<Double> = 0.6...1.6
        /// Rate range, thresholds (see `BreathingRateAnalyzer`).
        public var analyzer = BreathingRateAnalyzer.Parameters()
        public init() {}

        var envelopeRateHz: Double { Double(AnalysisClock.sampleRate) / Double(envelopeHopLength) }
        var windowLength: Int { max(8, Int((windowSec * envelopeRateHz).rounded())) }
        var hopLength: Int { max(1, min(windowLength, Int((hopSec * envelopeRateHz).rounded()))) }
    }

    struct ChannelState: Sendable {
        var envelope: BreathingEnvelope
        var features: FeatureEnvelope
        /// Envelope samples of the current segment (at most `windowLength` + `hopLength`: a segment that starts off
        /// the grid holds the samples before its first grid point until its first window).
        var buffer: [Float] = []
        /// The tone of each sample in `buffer` (`FeatureEnvelope`; NaN from the audio envelope).
        var tones: [Float] = []
        /// Envelope block index of `buffer[0]`.
        var bufferStart: Int64 = 0
        /// True once a window of the current segment has been analysed.
        var sliding = false
        /// The channel's recent answers (envelope index of the window's centre, rate as the window alone gave it),
        /// oldest first, over the last `priorSpanSec`: the night's rhythm (`prior(_:at:)`).
        var recent: [(index: Int64, bpm: Double)] = []
    }

    public let configuration: Configuration
    private var analyzer: BreathingRateAnalyzer
    private var channels: [ChannelState] = []
    private var scratch: [EnvelopeSample] = []

    public init(configuration: Configuration = Configuration()) {
        precondition(configuration.windowSec > 0 && configuration.hopSec > 0, "breathing window/hop must be positive")
        precondition(configuration.envelopeHopLength > 0, "envelope hop must be positive")
        precondition(configuration.bandLowHz > 0 && configuration.bandHighHz > configuration.bandLowHz
                     && configuration.bandHighHz < Double(AnalysisClock.sampleRate) / 2, "bad breathing band")
        var config = configuration
        config.analyzer.envelopeRateHz = configuration.envelopeRateHz
        self.configuration = config
        analyzer = BreathingRateAnalyzer(parameters: config.analyzer, capacity: config.windowLength)
        scratch.reserveCapacity(64)
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .sessionStarted:
            channels.removeAll()
            return []
        case .audio(let block):
            return process(block)
        case .features(let block):
            return process(block)
        case .gap, .sessionEnding:
            var out: [AnalysisEvent] = []
            for c in channels.indices {
                if configuration.envelopeSource == .features {
                    scratch.removeAll(keepingCapacity: true)
                    channels[c].features.flush(into: &scratch)
                    ingest(channel: c, into: &out)
                }
                endSegment(c, into: &out)
            }
            return out
        default:
            return []
        }
    }

    private func channelTag(_ c: Int) -> AudioChannel? {
        channels.count == 1 ? nil : AudioChannel(rawValue: c)
    }

    /// Creates the per-channel state when the channel count changes (1 or 2 channels).
    private mutating func ensureChannels(_ count: Int) {
        let count = max(1, min(count, 2))
        guard channels.count != count else { return }
        channels = (0..<count).map { _ in
            ChannelState(envelope: BreathingEnvelope(
                hopLength: configuration.envelopeHopLength, lowHz: configuration.bandLowHz,
                highHz: configuration.bandHighHz, sampleRate: Double(AnalysisClock.sampleRate)),
                features: FeatureEnvelope(hopLength: configuration.envelopeHopLength))
        }
        for c in channels.indices {
            channels[c].buffer.reserveCapacity(configuration.windowLength + configuration.hopLength)
            channels[c].tones.reserveCapacity(configuration.windowLength + configuration.hopLength)
        }
    }

    private mutating func process(_ block: AudioBlock) -> [AnalysisEvent] {
        // The channel count comes from the audio in both modes (the engine publishes `.audio` first).
        ensureChannels(block.channels.count)
        guard configuration.envelopeSource == .audio else { return [] }
        var out: [AnalysisEvent] = []
        for c in 0..<channels.count {
            scratch.removeAll(keepingCapacity: true)
            block.channels[c].withUnsafeBufferPointer {
                channels[c].envelope.process($0, start: block.start, into: &scratch)
            }
            ingest(channel: c, into: &out)
        }
        return out
    }

    private mutating func process(_ block: FeatureBlock) -> [AnalysisEvent] {
        guard configuration.envelopeSource == .features, block.channel >= 0, block.channel < 2 else { return [] }
        if block.channel >= channels.count { ensureChannels(block.channel + 1) }
        var out: [AnalysisEvent] = []
        scratch.removeAll(keepingCapacity: true)
        channels[block.channel].features.process(block, into: &scratch)
        ingest(channel: block.channel, into: &out)
        return out
    }

    /// Publishes the new envelope samples in `scratch` as trace chunks and adds them to the window.
    private mutating func ingest(channel c: Int, into out: inout [AnalysisEvent]) {
        guard !scratch.isEmpty else { return }
        var traceStart = scratch[0].index
        var trace: [Float] = []
        trace.reserveCapacity(scratch.count)
        for sample in scratch {
            if !trace.isEmpty, sample.index != traceStart + Int64(trace.count) {
                out.append(traceEvent(start: traceStart, values: trace, channel: c))
                trace.removeAll(keepingCapacity: true); traceStart = sample.index
            }
            trace.append(sample.value)
            append(sample, channel: c, into: &out)
        }
        out.append(traceEvent(start: traceStart, values: trace, channel: c))
    }

    private func traceEvent(start: Int64, values: [Float], channel c: Int) -> AnalysisEvent {
        .breathingTrace(BreathingTraceChunk(start: start * Int64(configuration.envelopeHopLength),
                                            rateHz: configuration.envelopeRateHz, values: values,
                                            channel: channelTag(c)))
    }

    /// Adds one envelope sample to channel `c`'s segment; analyses a window when one is complete.
    private mutating func append(_ sample: EnvelopeSample, channel c: Int, into out: inout [AnalysisEvent]) {
        let index = sample.index
        if channels[c].buffer.isEmpty || index != channels[c].bufferStart + Int64(channels[c].buffer.count) {
            // A new segment (first sample, or the envelope skipped blocks).
            if !channels[c].buffer.isEmpty { endSegment(c, resetEnvelope: false, into: &out) }
            channels[c].bufferStart = index
            channels[c].sliding = false
        }
        channels[c].buffer.append(sample.value)
        channels[c].tones.append(sample.tone)
        // Sliding windows start on the timeline's grid (multiples of the hop), also after a gap or a resume, so
        // that the estimates after it are those an uninterrupted night gives there; the samples before the first
        // grid point of a segment only count if the segment never fills a window (`endSegment`).
        let window = configuration.windowLength, hop = Int64(configuration.hopLength)
        let start = channels[c].bufferStart
        let aligned = start >= 0 ? (start + hop - 1) / hop * hop : start / hop * hop
        let skip = Int(aligned - start)
        if channels[c].buffer.count - skip == window {
            if skip > 0 {
                channels[c].buffer.removeFirst(skip)
                channels[c].tones.removeFirst(skip)
                channels[c].bufferStart = aligned
            }
            analyze(c, count: window, into: &out)
            channels[c].sliding = true
            channels[c].buffer.removeFirst(Int(hop))
            channels[c].tones.removeFirst(Int(hop))
            channels[c].bufferStart += hop
        }
    }

    /// Closes channel `c`'s segment: a segment that never filled a window is analysed once.
    private mutating func endSegment(_ c: Int, resetEnvelope: Bool = true, into out: inout [AnalysisEvent]) {
        let n = channels[c].buffer.count
        let minimum = Int((configuration.minimumSegmentSec * configuration.envelopeRateHz).rounded())
        if !channels[c].sliding, n >= minimum { analyze(c, count: n, into: &out) }
        channels[c].buffer.removeAll(keepingCapacity: true)
        channels[c].tones.removeAll(keepingCapacity: true)
        channels[c].sliding = false
        if resetEnvelope { channels[c].envelope.reset(); channels[c].features.reset() }
    }

    /// Whether `result` may be published against the night's steady rate `prior` (`Configuration.priorJumpRange`).
    static func fits(_ result: BreathingRateAnalysis, prior: Double?, range: ClosedRange<Double>) -> Bool {
        guard let prior, !result.doubledByPrior else { return true }
        return range.contains(result.bpm / prior)
    }

    /// Channel `c`'s steady recent rate at envelope index `index` (`Configuration.priorSpanSec`), or nil.
    private mutating func prior(_ c: Int, at index: Int64) -> Double? {
        let span = Int64((configuration.priorSpanSec * configuration.envelopeRateHz).rounded())
        channels[c].recent.removeAll { $0.index <= index - span || $0.index > index }
        let answers = channels[c].recent.map(\.bpm).sorted()
        guard answers.count >= max(1, configuration.priorMinimumAnswers) else { return nil }
        let median = answers.count % 2 == 1 ? answers[answers.count / 2]
            : (answers[answers.count / 2 - 1] + answers[answers.count / 2]) / 2
        let tolerance = configuration.analyzer.priorAgreementFraction * median
        let steady = answers.filter { abs($0 - median) <= tolerance }.count
        // One of the two latest windows must agree too: breathing that really changed is answered at its new rate
        // from the third window after the change, not once the change has outvoted the old rate's minutes.
        guard channels[c].recent.suffix(2).contains(where: { abs($0.bpm - median) <= tolerance }) else { return nil }
        return Double(steady) >= configuration.priorSteadyShare * Double(answers.count) ? median : nil
    }

    private mutating func analyze(_ c: Int, count n: Int, into out: inout [AnalysisEvent]) {
        let tones = configuration.envelopeSource == .features ? channels[c].tones[0..<n] : nil
        let index = channels[c].bufferStart + Int64(n / 2)
        let prior = prior(c, at: index)
        guard let result = analyzer.analyze(channels[c].buffer[0..<n], tone: tones, prior: prior) else { return }
        // The history keeps what the window alone said (the burst rate when the prior doubled it), so that breathing
        // that really became twice as fast stops agreeing with the prior instead of being halved on.
        channels[c].recent.append((index, result.doubledByPrior ? 2 * result.bpm : result.bpm))
        guard Self.fits(result, prior: prior, range: configuration.priorJumpRange) else { return }
        let hop = Double(configuration.envelopeHopLength)
        let centre = (Double(channels[c].bufferStart) + Double(n) / 2) * hop
        out.append(.breathingRate(BreathingEstimate(time: SampleTime(centre.rounded()), bpm: result.bpm,
                                                    confidence: result.confidence, channel: channelTag(c))))
    }
}
