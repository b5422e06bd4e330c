/// Feeds analysis-rate audio to a bus in the one order every consumer is built for: the engine's
/// pipeline, the offline breathing runner, the detector's developer tool and the tests all use it.
///
/// * `audio(_:)`: timed side inputs (heart rate, motion) dated before the block's end, then `.audio`, then, per
///   channel, the `.features` of the frames the block completes. Audio starting after the current position first
///   closes the hole as a `missingInput` gap; audio repeating time already fed is dropped.
/// * `gap(_:)`: the last frames of the stretch before it (`finish`), side inputs up to its end, `.gap`, and framing
///   restarted after it.
/// * `end()`: the last frames, the side inputs dated up to the end, `.sessionEnding` and `.sessionEnded`. Side
///   inputs dated after the end are not published; `unpublishedSideInputs` keeps them for the caller's report.
///
/// Not thread-safe; one feeder per session.
public final class AnalysisFeeder {
    /// Where the next audio is expected on the timeline.
    public private(set) var position: SampleTime
    public private(set) var ended = false
    private let extractors: [any StreamingFeatureExtractor]
    private let publish: (AnalysisEvent) -> Void
    private var sideInputs: [AnalysisEvent] = []
    private var sideIndex = 0
    /// Side inputs dated after the end of the session (set by `end()`; a slice of the stored ones, not a copy: a
    /// night of 50-Hz motion samples read over a short recording is millions of them).
    public private(set) var unpublishedSideInputs: ArraySlice<AnalysisEvent> = []

    /// - Parameters:
    ///   - extractors: one per channel (may be empty: no `.features`).
    ///   - start: the timeline position of the first audio (0 for a new session).
    ///   - publish: where events go (usually `EventBus.publish`).
    public init(extractors: [any StreamingFeatureExtractor], start: SampleTime = 0,
                publish: @escaping (AnalysisEvent) -> Void) {
        self.extractors = extractors
        self.position = start
        self.publish = publish
        // Framing starts at `start` too (a resumed night's audio may continue its journal without a hole, and its
        // features must be on the same timeline as its audio).
        if start != 0 { for e in extractors { e.reset(startSample: start) } }
    }

    /// Side inputs (`.heartRate`, `.motion`, …) to interleave by time; added to those not yet published.
    public func add(sideInputs events: [AnalysisEvent]) {
        guard !events.isEmpty else { return }
        // Readers deliver their samples in time order: then the new ones are merged in one pass (and a first batch is
        // kept as it is, without a copy). Otherwise they are sorted first, stably.
        let sorted = zip(events, events.dropFirst()).allSatisfy { Self.time(of: $0) <= Self.time(of: $1) }
            ? events
            : events.enumerated().sorted { (Self.time(of: $0.element), $0.offset) < (Self.time(of: $1.element), $1.offset) }
                .map(\.element)
        guard sideIndex < sideInputs.count else {
            sideInputs = sorted
            sideIndex = 0
            return
        }
        var merged: [AnalysisEvent] = []
        merged.reserveCapacity(sideInputs.count - sideIndex + sorted.count)
        var a = sideIndex, b = 0
        while a < sideInputs.count || b < sorted.count {
            // Ties keep the earlier-added sample first.
            if b == sorted.count || (a < sideInputs.count && Self.time(of: sideInputs[a]) <= Self.time(of: sorted[b])) {
                merged.append(sideInputs[a]); a += 1
            } else {
                merged.append(sorted[b]); b += 1
            }
        }
        sideInputs = merged
        sideIndex = 0
    }

    /// Feeds one block (all channels the same length).
    public func audio(_ block: AudioBlock) {
        guard !ended else { return }
        var block = block
        if block.start < position {
            let skip = Int(min(position - block.start, SampleTime(block.frameCount)))
            block = AudioBlock(start: block.start + SampleTime(skip), channels: block.channels.map { Array($0.dropFirst(skip)) })
        }
        let frames = block.frameCount
        guard frames > 0 else { return }
        if block.start > position { gap(AudioGap(start: position, length: block.start - position, reason: .missingInput)) }
        publishSideInputs(before: block.end)
        publish(.audio(block))
        for (c, extractor) in extractors.enumerated() where c < block.channels.count {
            if let features = block.channels[c].withUnsafeBufferPointer({ extractor.process($0) }) {
                publish(.features(features))
            }
        }
        position = block.end
    }

    /// Feeds a stretch without audio (the part before the current position is ignored).
    public func gap(_ gap: AudioGap) {
        guard !ended else { return }
        let start = max(gap.start, position)
        let end = gap.start + gap.length
        guard end > start else { return }
        flushFeatures()
        publishSideInputs(before: end)
        publish(.gap(AudioGap(start: start, length: end - start, reason: gap.reason)))
        position = end
        for e in extractors { e.reset(startSample: position) }
    }

    /// Ends the session at the current position (once).
    public func end() {
        guard !ended else { return }
        ended = true
        flushFeatures()
        publishSideInputs(before: position + 1)     // a sample at the last instant still belongs to the night
        unpublishedSideInputs = sideInputs[sideIndex...]
        sideIndex = sideInputs.count
        publish(.sessionEnding(at: position))
        publish(.sessionEnded(at: position))
    }

    private func flushFeatures() {
        for extractor in extractors {
            if let block = extractor.finish() { publish(.features(block)) }
        }
    }

    private func publishSideInputs(before end: SampleTime) {
        while sideIndex < sideInputs.count, Self.time(of: sideInputs[sideIndex]) < end {
            publish(sideInputs[sideIndex])
            sideIndex += 1
        }
    }

    /// The time a side input is dated at.
    public static func time(of event: AnalysisEvent) -> SampleTime {
        switch event {
        case .heartRate(let s): s.time
        case .motion(let m): m.time
        case .alarm(let a): a.time
        default: 0
        }
    }
}
