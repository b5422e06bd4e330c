import SleepCycleBus
import SleepCycleDSP

/// The input's sound level, as a bus consumer: for one channel, publishes a `.level(LevelReading)` per second of
/// the analysis timeline, the mean power of the frames centred in that second (the equivalent continuous level
/// Leq over 1 s, unweighted, in dBFS: IEC 61672-1's Leq with full scale as the reference instead of 20 µPa, since
/// a microphone's gain is unknown). Reports read it for the night's loudness and each snore's level (docs/0012).
///
/// `State`: the second being accumulated and its power sum; a frame in a later second (or the session's end)
/// publishes the accumulated one. Frames are read from `FeatureBlock` rows (`FeatureLayout.rms`), so the meter
/// costs one multiply-add per frame.
public struct LevelMeter: AnalysisConsumer, Sendable {
    public struct State: Sendable, Hashable {
        /// The second being accumulated (index on the timeline: `start / 16000`), nil before the first frame.
        public var second: Int64?
        public var powerSum = 0.0
        public var frames = 0
    }

    public private(set) var state = State()
    public let channelIndex: Int
    public let channelTag: AudioChannel?
    public static let readingSamples = SampleTime(AnalysisClock.sampleRate)

    public init(channelIndex: Int = 0, channelTag: AudioChannel? = nil) {
        self.channelIndex = channelIndex
        self.channelTag = channelTag
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .features(let block) where block.channel == channelIndex:
            var out: [AnalysisEvent] = []
            for i in 0..<block.count {
                let centre = block.start + Int64(i * block.hopLength)
                let second = centre >= 0 ? centre / Self.readingSamples : (centre - Self.readingSamples + 1) / Self.readingSamples
                if let current = state.second, current != second, let reading = flush() { out.append(.level(reading)) }
                state.second = second
                let rms = Double(block[frame: i, FeatureLayout.rms])
                state.powerSum += rms * rms
                state.frames += 1
            }
            return out
        case .sessionEnding:
            return flush().map { [.level($0)] } ?? []
        default:
            return []
        }
    }

    /// The accumulated second as a reading (nil when it has no frames); starts the next one empty.
    private mutating func flush() -> LevelReading? {
        defer { state.powerSum = 0; state.frames = 0 }
        guard let second = state.second, state.frames > 0 else { return nil }
        return LevelReading(start: second * Self.readingSamples, end: (second + 1) * Self.readingSamples,
                            power: state.powerSum / Double(state.frames), channel: channelTag)
    }
}
