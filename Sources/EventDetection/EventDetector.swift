import SleepCycleBus
import SleepCycleDSP

/// The event-detection consumer: `.features` in, `.eventStarted` + `.eventEnded` out (published together once a
/// segment is classified, with a start in the past; latency = the segment's length + bridge gap + merge gap).
///
/// `enum State`: per channel a `SegmentExtractor` (noise floor + segmenter) and an `EventAssembler`
/// (merging + snore bouts); both bounded. `.audio` blocks are ignored (features only: detection costs a few
/// hundred flops per frame). `.gap` and `.sessionEnding` close everything open.
public struct EventDetector: AnalysisConsumer {
    public let configuration: DetectorConfiguration
    let classifier: any SegmentClassifier
    let signature: SnoreSignature
    private var channelCount = 1
    private var extractors: [Int: SegmentExtractor] = [:]
    private var assemblers: [Int: EventAssembler] = [:]
    private var nextId = 0

    /// - Parameter classifier: nil uses the built-in model (`NeuralSegmentClassifier.builtIn()`).
    public init(configuration: DetectorConfiguration = .default, classifier: (any SegmentClassifier)? = nil) throws {
        try configuration.validate()
        self.configuration = configuration
        self.classifier = try classifier ?? NeuralSegmentClassifier.builtIn()
        self.signature = try SnoreSignature.builtIn()
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .sessionStarted(let info):
            channelCount = info.channelCount
            extractors.removeAll(); assemblers.removeAll()
            return []
        case .features(let block):
            var extractor = try! extractors[block.channel] ?? SegmentExtractor(configuration: configuration,
                                                                               channel: block.channel)
            let segments = extractor.process(block)
            extractors[block.channel] = extractor
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
