import SleepCycleBus

/// What audio clips a session keeps (the SDK's `AudioClipsConfig`; `--clips DIR` and its options).
public struct AudioClipsConfig: Sendable, Hashable, Codable {
    /// Event types that get a clip (default snoring, talking, coughing).
    public var eventTypes: Set<EventType>
    /// Per type, the shortest event (seconds) that gets a clip; types not listed: any length.
    public var minimumDuration: [EventType: Double]
    /// A clip's length for an event shorter than it, centred on the event (seconds, default 10).
    public var clipLength: Double
    /// The longest clip (seconds, default 60): a longer event's clip is its first `maxClipLength` seconds.
    public var maxClipLength: Double
    /// Per-night size cap of the clip files in bytes (nil: none). When a new clip would pass it, the least probable
    /// clips are given up (their files removed) until it fits.
    public var maxBytesPerNight: Int64?
    /// Per-type count limit (nil: none): the most probable events of a type keep their clips.
    public var maxClipsPerType: Int?
    /// Source audio held for events that are decided after they end (seconds); nil: `automaticPreRoll`. The detector
    /// decides snoring and coughing up to ~18 s after they end, talking ~108 s after (its sustained-speech rule waits
    /// 90 s to know whether the talk went on), and channel separation adds its decision delay (the engine adds it).
    /// A clip reaching further back than the audio held starts where the audio held does. Memory: this × rate ×
    /// channels × 2 bytes (16-bit sources) or 4 bytes.
    public var preRollSeconds: Double?

    /// The decision delay plus 42 s or the clip length if longer: 150 s with talking among the types (a 10-s clip
    /// of a talking event up to ~40 s long, decided ~108 s after it ends), else 60 s (a clip of up to ~40 s of
    /// snoring or coughing decided ~18 s after it ends); with `--clip-length 10m` 708 s and 618 s, so that a long
    /// clip is whole and centred (a 150-s pre-roll cut 10-min clips to 150 s, off their events).
    public var automaticPreRoll: Double { (eventTypes.contains(.talking) ? 108 : 18) + max(42, clipLength) }

    /// The pre-roll in effect.
    public var effectivePreRoll: Double { preRollSeconds ?? automaticPreRoll }

    /// Whether `event` gets a clip: a sound of a chosen type lasting at least its minimum.
    public func wantsClip(_ event: SoundEvent) -> Bool {
        event.source == .audio && eventTypes.contains(event.type)
            && AnalysisClock.seconds(event.end - event.start) >= (minimumDuration[event.type] ?? 0)
    }

    public init(eventTypes: Set<EventType> = [.snoring, .talking, .coughing], minimumDuration: [EventType: Double] = [:],
                clipLength: Double = 10, maxClipLength: Double = 60, maxBytesPerNight: Int64? = 1 << 30,
                maxClipsPerType: Int? = nil, preRollSeconds: Double? = nil) {
        self.eventTypes = eventTypes; self.minimumDuration = minimumDuration; self.clipLength = clipLength
        self.maxClipLength = maxClipLength; self.maxBytesPerNight = maxBytesPerNight
        self.maxClipsPerType = maxClipsPerType; self.preRollSeconds = preRollSeconds
    }

    public static let `default` = AudioClipsConfig()

    /// A one-line problem with the settings, or nil.
    public var problem: String? {
        if eventTypes.isEmpty { return "no event types chosen for clips" }
        if !(clipLength > 0 && clipLength <= 600) { return "clip length \(clipLength) s must be in (0, 600]" }
        if !(maxClipLength >= clipLength && maxClipLength <= 600) {
            return "maximum clip length \(maxClipLength) s must be at least the clip length and at most 600"
        }
        if minimumDuration.values.contains(where: { !($0 >= 0 && $0.isFinite) }) {
            return "minimum durations must be finite and not negative"
        }
        if let cap = maxBytesPerNight, cap <= 0 { return "the per-night size cap must be positive" }
        if let limit = maxClipsPerType, limit <= 0 { return "the per-type clip limit must be positive" }
        if let preRollSeconds, !(preRollSeconds >= clipLength && preRollSeconds <= 3600) {
            return "pre-roll \(preRollSeconds) s must be at least the clip length and at most 3600"
        }
        return nil
    }
}
