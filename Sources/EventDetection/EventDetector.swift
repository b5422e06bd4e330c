import SleepCycleBus
import SleepCycleDSP

/// The event-detection consumer: `.features` in, `.eventStarted` + `.eventEnded` out (published together once a
/// segment is decided, with a start in the past; latency = the segment's length + bridge gap + the context stage's
/// 10-s look-ahead + merge gap, about 18 s at most; talking events 90 s more, for the sustained-speech rule).
///
/// `enum State`: per channel a `SegmentExtractor` (noise floor + segmenter + the screen), a `ContextQueue` (segments waiting for
/// the context stage, `SegmentContextModel`), an `EventAssembler` (merging + snore bouts), a `SustainedSpeechGate`
/// (talking events held until the speech around them is known) and the echo strengths of its last 20 segments
/// (`EchoTracker`: is a machine ticking?); all bounded.
/// `.audio` blocks go into each channel's 8-s raw-sample ring (the voicing features of a segment are computed from
/// it at segment close; the engine publishes `.audio` before the `.features` of the same samples). `.gap` and
/// `.sessionEnding` close everything open.
public struct EventDetector: AnalysisConsumer {
    public let configuration: DetectorConfiguration
    let classifier: any SegmentClassifier
    /// The context stage (nil: segments are decided by the segment classifier alone).
    let context: SegmentContextModel?
    /// Decides plainly-none segments before their voicing, shape and classifier (nil: every segment is classified).
    let screen: SegmentScreen?
    let signature: SnoreSignature
    private var channelCount = 1
    private var extractors: [Int: SegmentExtractor] = [:]
    private var queues: [Int: ContextQueue] = [:]
    private var assemblers: [Int: EventAssembler] = [:]
    private var gates: [Int: SustainedSpeechGate] = [:]
    /// Per channel, the echo strengths of the last `recentEchoes` closed segments.
    private var echoes: [Int: [Float]] = [:]
    static let recentEchoes = 20
    private var nextId = 0
    /// With channel separation: each event is published as `.eventCandidate` (with its channel) for the attributor,
    /// not as `.eventStarted` + `.eventEnded`.
    public var publishesCandidates = false

    /// - Parameters:
    ///   - classifier: nil uses the built-in model (`SegmentModel.builtIn()`), its context stage and its screen.
    ///   - context: the context stage of `classifier` (it must have been trained on that classifier's
    ///     probabilities); nil with a classifier of your own: segments are decided by the classifier alone.
    ///   - screen: decides plainly-none segments before their costlier features and the classifier
    ///     (`SegmentScreen`; it belongs to the model file it came with, `SegmentModel.loadStages`); nil with a
    ///     classifier of your own: every segment is classified.
    ///   - firstEventId: the id of the first event published (a resumed night continues after its journal's ids).
    public init(configuration: DetectorConfiguration = .default, classifier: (any SegmentClassifier)? = nil,
                context: SegmentContextModel? = nil, screen: SegmentScreen? = nil, firstEventId: Int = 0) throws {
        try configuration.validate()
        nextId = firstEventId
        self.configuration = configuration
        self.context = try classifier == nil ? context ?? SegmentContextModel.builtIn() : context
        self.screen = try classifier == nil ? screen ?? SegmentScreen.builtIn() : screen
        self.classifier = try classifier ?? SegmentModel.builtIn()
        self.signature = try SnoreSignature.builtIn()
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .sessionStarted(let info):
            channelCount = info.channelCount
            extractors.removeAll(); assemblers.removeAll(); queues.removeAll(); gates.removeAll(); echoes.removeAll()
            return []
        case .audio(let block):
            for (c, samples) in block.channels.enumerated() {
                let i = ensureExtractor(c)
                // In place (no copy of the extractor or its ring): `values[index]` mutates the dictionary's storage.
                // The array form holds the block itself (`AudioRing`: no copy of its samples).
                extractors.values[i].append(audio: samples, start: block.start)
            }
            return []
        case .features(let block):
            let i = ensureExtractor(block.channel)
            let segments = extractors.values[i].process(block)
            var out = segments.flatMap { classified($0) }
            // A segment still open may yet join a pending event (the next word of an utterance, the next cough of
            // a burst, a snore's partner): the assembler's clock is held at its start until it closes.
            var now = block.start + SampleTime(max(block.count - 1, 0) * block.hopLength)
            if let open = extractors.values[i].openSince { now = min(now, open) }
            if let context {
                // Segments that open from here on start at least a frame before `now` at the earliest.
                out += decide(channel: block.channel, model: context, now: now - SampleTime(2 * block.hopLength))
                // ...and a segment waiting for its context may yet join a pending event too.
                if let waiting = queues[block.channel]?.firstUndecidedStart { now = min(now, waiting) }
            }
            out += emit(channel: block.channel) { $0.advance(to: now) }
            if gates[block.channel] != nil { out += publish(channel: block.channel, gates[block.channel]!.release(upTo: now)) }
            return out
        case .gap:
            return flushAll()
        case .sessionEnding:
            return flushAll()
        default:
            return []
        }
    }

    /// The channel's extractor (created on first use), as an index for in-place access through `values`
    /// (`extractors[channel]` would copy the extractor out of the dictionary, and its buffers with it).
    private mutating func ensureExtractor(_ channel: Int) -> Dictionary<Int, SegmentExtractor>.Index {
        if let i = extractors.index(forKey: channel) { return i }
        var extractor = SegmentExtractor(validated: configuration, channel: channel)
        extractor.screen = screen
        extractors[channel] = extractor
        return extractors.index(forKey: channel)!
    }

    /// Classifies a candidate segment (exposed for tools and tests).
    public func classify(_ segment: CandidateSegment) -> ClassProbabilities {
        classifier.classify(segment.features)
    }

    /// A closed segment: decided at once, or queued for the context stage.
    private mutating func classified(_ segment: CandidateSegment) -> [AnalysisEvent] {
        echoes[segment.channel, default: []].append(segment.echo)
        if echoes[segment.channel]!.count > Self.recentEchoes { echoes[segment.channel]!.removeFirst() }
        let probabilities = segment.screened ? .screenedNone : classifier.classify(segment.features)
        guard context != nil else { return assemble(segment, probabilities) }
        queues[segment.channel, default: ContextQueue()].append(segment, probabilities: probabilities)
        return []
    }

    /// Decides the queued segments of `channel` whose context is complete by `now` (nil: all of them).
    private mutating func decide(channel: Int, model: SegmentContextModel, now: SampleTime?) -> [AnalysisEvent] {
        var decided: [(CandidateSegment, ClassProbabilities)] = []
        queues[channel, default: ContextQueue()].decide(model: model, now: now) { decided.append(($0, $1)) }
        return decided.flatMap { assemble($0, $1) }
    }

    private mutating func assemble(_ segment: CandidateSegment, _ probabilities: ClassProbabilities) -> [AnalysisEvent] {
        let (type, p) = probabilities.weighted(configuration.classWeights).best
        guard let type, p >= configuration.minProbability else { return [] }
        let limit = machineEchoLimit(segment.channel)
        guard segment.echo < limit else { return [] }
        if context != nil, configuration.machineEchoAfter, let i = extractors.index(forKey: segment.channel),
           extractors.values[i].echoAfter(start: segment.start) >= limit { return [] }
        let s = ClassifiedSegment(type: type, start: segment.start, end: segment.end, probability: p,
                                  signature: type == .snoring ? signature.normalise(segment.rawSignature) : nil)
        return emit(channel: segment.channel) { $0.add(s) }
    }

    /// While most recent segments of the channel echo the beat (a clock is ticking), a weaker echo suffices.
    private func machineEchoLimit(_ channel: Int) -> Float {
        guard configuration.machineEcho <= 1 else { return .infinity }
        let recent = echoes[channel] ?? []
        let ticking = recent.count >= Self.recentEchoes / 2
            && recent.filter { $0 >= configuration.machineTickingEcho }.count * 2 >= recent.count
        return ticking ? configuration.machineEchoWhileTicking : configuration.machineEcho
    }

    private mutating func flushAll() -> [AnalysisEvent] {
        var out: [AnalysisEvent] = []
        for ch in extractors.keys.sorted() {
            for segment in extractors[ch]!.flush() { out += classified(segment) }
            if let context { out += decide(channel: ch, model: context, now: nil) }
        }
        for ch in assemblers.keys.sorted() { out += emit(channel: ch) { $0.flush() } }
        for ch in gates.keys.sorted() { out += publish(channel: ch, gates[ch]!.flush()) }
        echoes.removeAll()   // the extractors' echo rings restart too
        return out
    }

    private mutating func emit(channel: Int, _ body: (inout EventAssembler) -> [ClassifiedSegment]) -> [AnalysisEvent] {
        // In place (no copy of the assembler's buffers per block).
        let fresh = EventAssembler(configuration: configuration)
        let finished = body(&assemblers[channel, default: fresh]).filter {
            $0.probability >= configuration.eventThreshold($0.type, durationSec: AnalysisClock.seconds($0.end - $0.start))
        }
        guard configuration.sustainedSpeechWindowSec > 0 else { return publish(channel: channel, finished) }
        let gate = SustainedSpeechGate(windowSec: configuration.sustainedSpeechWindowSec,
                                       share: configuration.sustainedSpeechShare)
        var out: [AnalysisEvent] = []
        for f in finished where f.type == .talking {
            gates[channel, default: gate].hold(f)
            // For the journal (with two sleepers, the attributor measures it while its audio is at hand).
            out.append(.eventHeld(soundEvent(f, channel: channel, id: -1)))
        }
        return out + publish(channel: channel, finished.filter { $0.type != .talking })
    }

    private func soundEvent(_ f: ClassifiedSegment, channel: Int, id: Int) -> SoundEvent {
        SoundEvent(id: id, type: f.type, start: f.start, end: f.end, probability: f.probability, source: .audio,
                   channel: channelCount > 1 ? AudioChannel(rawValue: channel) : nil, signature: f.signature)
    }

    /// The talking events among `held` (found, not yet decided when the audio stopped) that the sustained-speech
    /// rule reports, with `talk` every other talking event found around them (reported or dropped): the decision
    /// the detector takes at a gap. A resumed night takes it for the events its journal holds (`.eventHeld`).
    public static func sustainedSpeechDecision(held: [SoundEvent], talk: [SoundEvent],
                                               configuration: DetectorConfiguration = .default) -> [SoundEvent] {
        guard configuration.sustainedSpeechWindowSec > 0 else { return held }
        var gate = SustainedSpeechGate(windowSec: configuration.sustainedSpeechWindowSec,
                                       share: configuration.sustainedSpeechShare)
        func segment(_ e: SoundEvent) -> ClassifiedSegment {
            ClassifiedSegment(type: e.type, start: e.start, end: e.end, probability: e.probability, signature: nil)
        }
        for e in talk { gate.know(segment(e)) }
        for e in held { gate.hold(segment(e)) }
        let reported = gate.flush()
        return held.filter { e in reported.contains { $0.start == e.start && $0.end == e.end } }
    }

    private mutating func publish(channel: Int, _ finished: [ClassifiedSegment]) -> [AnalysisEvent] {
        var out: [AnalysisEvent] = []
        for f in finished {
            let event = soundEvent(f, channel: channel, id: nextId)
            nextId += 1
            if publishesCandidates {
                out.append(.eventCandidate(event))
            } else {
                out.append(.eventStarted(event))
                out.append(.eventEnded(event))
            }
        }
        return out
    }
}
