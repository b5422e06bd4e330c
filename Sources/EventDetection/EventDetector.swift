import SleepCycleBus
import SleepCycleDSP

/// The event-detection consumer: `.features` in, `.eventStarted` + `.eventEnded` out (published together once a
/// segment is classified, with a start in the past; latency = the segment's length + bridge gap + merge gap).
///
/// `enum State`: per channel a `SegmentExtractor` (noise floor + segmenter) and an `EventAssembler`
/// (merging + snore bouts); both bounded. `.audio` blocks go into each channel's 8-s raw-sample ring (the
/// voicing features of a segment are computed from it at segment close; the engine publishes `.audio` before the
/// `.features` of the same samples). `.gap` and `.sessionEnding` close everything open.
public struct EventDetector: AnalysisConsumer {
    public let configuration: DetectorConfiguration
    let classifier: any SegmentClassifier
    let signature: SnoreSignature
    private var channelCount = 1
    private var extractors: [Int: SegmentExtractor] = [:]
    private var assemblers: [Int: EventAssembler] = [:]
    private var nextId = 0

    /// - Parameter classifier: nil uses the built-in model (`SegmentModel.builtIn()`).
    public init(configuration: DetectorConfiguration = .default, classifier: (any SegmentClassifier)? = nil) throws {
        try configuration.validate()
        self.configuration = configuration
        self.classifier = try classifier ?? SegmentModel.builtIn()
        self.signature = try SnoreSignature.builtIn()
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .sessionStarted(let info):
            channelCount = info.channelCount
            extractors.removeAll(); assemblers.removeAll()
            return []
        case .audio(let block):
            for (c, samples) in block.channels.enumerated() {
                ensureExtractor(c)
                // In place (no copy of the ring): the dictionary's storage is mutated through the subscript.
                samples.withUnsafeBufferPointer { extractors[c]!.append(audio: $0, start: block.start) }
            }
            return []
        case .features(let block):
            ensureExtractor(block.channel)
            let segments = extractors[block.channel]!.process(block)
            var out = segments.flatMap { assemble($0) }
            let now = block.start + SampleTime(max(block.count - 1, 0) * block.hopLength)
            out += emit(channel: block.channel) { $0.advance(to: now) }
            return out
        case .gap:
            return flushAll()
        case .sessionEnding:
            return flushAll()
        default:
            return []
        }
    }

    private mutating func ensureExtractor(_ channel: Int) {
        if extractors[channel] == nil {
            extractors[channel] = try! SegmentExtractor(configuration: configuration, channel: channel)
        }
    }

    /// Classifies a candidate segment (exposed for tools and tests).
    public func classify(_ segment: CandidateSegment) -> ClassProbabilities {
        classifier.classify(segment.features)
    }

    private mutating func assemble(_ segment: CandidateSegment) -> [AnalysisEvent] {
        let probabilities = classifier.classify(segment.features)
        let (type, p) = probabilities.best
        guard let type, p >= configuration.minProbability else { return [] }
        let s = ClassifiedSegment(type: type, start: segment.start, end: segment.end, probability: p,
                                  signature: type == .snoring ? signature.normalise(segment.rawSignature) : nil)
        return emit(channel: segment.channel) { $0.add(s) }
    }

    private mutating func flushAll() -> [AnalysisEvent] {
        var out: [AnalysisEvent] = []
        for ch in extractors.keys.sorted() {
            for segment in extractors[ch]!.flush() { out += assemble(segment) }
        }
        for ch in assemblers.keys.sorted() { out += emit(channel: ch) { $0.flush() } }
        return out
    }

    private mutating func emit(channel: Int, _ body: (inout EventAssembler) -> [ClassifiedSegment]) -> [AnalysisEvent] {
        var assembler = assemblers[channel] ?? EventAssembler(configuration: configuration)
        let finished = body(&assembler)
        assemblers[channel] = assembler
        var out: [AnalysisEvent] = []
        for f in finished {
            let event = SoundEvent(id: nextId, type: f.type, start: f.start, end: f.end, probability: f.probability,
                                   source: .audio,
                                   channel: channelCount > 1 ? AudioChannel(rawValue: channel) : nil,
                                   signature: f.signature)
            nextId += 1
            out.append(.eventStarted(event))
            out.append(.eventEnded(event))
        }
        return out
    }
}
