import Foundation
import SleepCycleBus
import SleepCycleAudio
import SleepCycleDSP
import ChannelSeparation

/// One session's synchronous analysis: source reads → features → the ordered bus → consumers → result.
///
/// The same code serves the CLI (`run(source:)`, a plain loop on the calling thread, no async per block) and the
/// `SleepAnalysisEngine` actor (which runs `run` on its own thread). Per block it publishes one `.audio` and, per
/// channel, one `.features(FeatureBlock)`: nothing happens per frame on the bus. Not thread-safe.
public final class AnalysisPipeline {
    public let info: SessionInfo
    public let format: SourceFormat
    public let sourcePath: String
    public let options: PipelineOptions
    public let bus: EventBus
    /// Names of the consumers on the bus, in order.
    public let consumerNames: [String]
    public let capabilities: Set<SleepAnalysisFeature>

    private let feeder: AnalysisFeeder
    private let replay: NightReplay?
    /// The events the resumed journal left undecided, as the resume decides them (`NightReplay.undecidedEvents`).
    private let resumedEvents: [SoundEvent]
    private let inboxLock = NSLock()
    private var inbox: [AnalysisEvent] = []
    private let collector: ResultCollector
    private let observers: SessionObservers?
    /// Side inputs per kind: how many were given and how many lie before the session start (not published).
    private var sideInputTotals: [SideInputKind: Int] = [:]
    private var sideInputsBefore: [SideInputKind: Int] = [:]
    /// Warnings gathered during the session (the source's are added by the caller).
    public private(set) var warnings: [AnalysisWarning] = []
    /// Where the next read is expected on the timeline.
    public var position: SampleTime { feeder.position }
    private var started = false
    /// The two-sleeper configuration, when the session separates its channels.
    public private(set) var separation: ChannelSeparationConfig?

    /// - Parameters:
    ///   - info: the session (id, clock, source rate / channels).
    ///   - format: the source's format (`analysisChannelCount` channels are analysed).
    ///   - sourcePath: how the result names the source (`source.path`).
    ///   - options: side inputs, the alarm and other settings.
    ///   - listeners: audio-event listeners, called on the analysing thread in batches of
    ///     `options.listenerBatchSeconds`.
    ///   - observers: where stream observers listen (nil: none).
    ///   - replay: the journal of the interrupted night this session continues: replayed into the whole-night
    ///     consumers and the result at `start()`, after which the timeline continues from its last position.
    public init(info: SessionInfo, format: SourceFormat, sourcePath: String, options: PipelineOptions = .default,
                listeners: [any AudioEventListener] = [], observers: SessionObservers? = nil,
                resuming replay: NightReplay? = nil) throws {
        var info = info
        info.timelineStart = replay?.position ?? 0
        self.info = info
        self.format = format
        self.sourcePath = sourcePath
        self.options = options
        self.observers = observers
        self.replay = replay
        let channels = max(1, format.analysisChannelCount)
        var extractors: [any StreamingFeatureExtractor] = []
        if let factory = options.featureExtractor ?? PipelineBuilder.defaultFeatureExtractor {
            extractors = try (0..<channels).map { try factory($0, options.frameLength, options.hopLength) }
        }
        let bus = EventBus()
        self.bus = bus
        feeder = AnalysisFeeder(extractors: extractors, start: replay?.position ?? 0) { bus.publish($0) }
        var context = PipelineContext(info: info, channelCount: channels, options: options)
        // Decided once: the events the journal left undecided, published at `start()`.
        let undecided = try replay?.undecidedEvents() ?? (events: [], newIds: 0)
        resumedEvents = undecided.events
        context.firstEventId = (replay?.journalNextEventId ?? 0) + undecided.newIds
        (context.earlierClips, context.unclippedEvents) = replay?.clipRecords ?? ([], [])
        let registrations = try PipelineBuilder.consumers(for: context)
        for r in registrations { bus.subscribe(r.consumer, replays: r.replays) }
        consumerNames = registrations.map(\.name)
        capabilities = registrations.reduce(into: []) { $0.formUnion($1.provides) }
        collector = ResultCollector(info: info, observers: observers)
        collector.alarmOption = options.alarm
        if let separation = options.channelSeparation {
            guard channels == 2 else {
                throw ChannelSeparationError("channel separation needs a stereo input; \(sourcePath) has "
                    + "\(format.channelCount) channel(s)")
            }
            self.separation = separation
            collector.sessionIds = Self.sessionIds(for: info.id)
        }
        let collector = self.collector
        bus.observe(replays: true) { collector.observe($0) }
        if !listeners.isEmpty {
            let batchLength = max(1, Int((options.listenerBatchSeconds * Double(AnalysisClock.sampleRate)).rounded()))
            let sessionId = info.id, clock = info.clock
            bus.subscribe(ListenerBatcher(batchLength: batchLength) { batch in
                let started = batch.eventsStarted.map { SleepEvent($0, clock: clock, sessionId: sessionId) }
                let ended = batch.eventsEnded.map { SleepEvent($0, clock: clock, sessionId: sessionId) }
                for l in listeners {
                    l.onAudioAnalysisBatchCompleted(
                        sessionId: sessionId, audioSamples: batch.samples, audioSampleRate: AnalysisClock.sampleRate,
                        audioStartTime: clock.date(of: batch.start), audioEndTime: clock.date(of: batch.end),
                        eventsStarted: started, eventsEnded: ended, rms: batch.rms)
                }
            })
        }
        add(sideInputs: options.sideInputs)
    }

    /// Adds timed side inputs (`.heartRate`, `.motion`) to those already given; they are published in time order
    /// with the audio. Samples dated before the session start are counted and not used; those at or after its end
    /// are counted at `finish()`. Both are reported once per kind in `warnings`.
    public func add(sideInputs events: [AnalysisEvent]) {
        var before = 0
        for event in events {
            guard let kind = SideInputKind(event) else { continue }
            let readings = kind.readings(in: event)
            sideInputTotals[kind, default: 0] += readings
            if AnalysisFeeder.time(of: event) < 0 { sideInputsBefore[kind, default: 0] += readings; before += 1 }
        }
        // Copied only when some must go (a night of 50 Hz motion samples is millions of events).
        feeder.add(sideInputs: before == 0 ? events : events.filter { AnalysisFeeder.time(of: $0) >= 0 })
    }

    /// Reads `source` to its end on the calling thread and returns the result. `progress` is called after every
    /// read with the stream time analysed so far; `shouldStop` is checked before every read.
    ///
    /// `offset` moves every read of the source that far along the timeline: a resumed night's new audio starts at
    /// its wall-clock place, after the downtime.
    public func run(source: any AudioSource, offset: SampleTime = 0, progress: ((SampleTime) -> Void)? = nil,
                    shouldStop: (() -> Bool)? = nil) throws -> AnalysisResult {
        start()
        let tapped = tapSourceRate(of: source)
        defer { source.setSourceRateTap(nil) }
        while shouldStop?() != true {
            let read = try source.read()
            takeInbox()
            if let tapped { publishSourceAudio(tapped, offset: offset) }
            guard process(Self.shifted(read, by: offset)) else { break }
            progress?(position)
        }
        for warning in source.warnings { addWarning(AnalysisWarning(audio: warning)) }
        return finish()
    }

    /// Source-rate audio handed over by the source during a read, published before that read.
    private final class SourceRateQueue { var blocks: [SourceRateAudio] = [] }

    /// Taps `source`'s source-rate audio when a consumer needs it (audio clips); nil otherwise.
    private func tapSourceRate(of source: any AudioSource) -> SourceRateQueue? {
        guard options.clips != nil else { return nil }
        let queue = SourceRateQueue()
        guard source.setSourceRateTap({ queue.blocks.append($0) }) else {
            addWarning(AnalysisWarning(.clipsDropped, "\(sourcePath): this source cannot provide its audio for clips; "
                + "no clips were made"))
            return nil
        }
        return queue
    }

    /// Publishes the tapped audio as `.sourceAudio`, on the timeline moved by `offset`.
    private func publishSourceAudio(_ queue: SourceRateQueue, offset: SampleTime) {
        guard !queue.blocks.isEmpty else { return }
        for audio in queue.blocks {
            bus.publish(.sourceAudio(SourceAudioBlock(sampleRate: format.sampleRate, origin: audio.origin + offset,
                                                      start: audio.start, samples: audio.samples,
                                                      integerBits: format.integerBits)))
        }
        queue.blocks.removeAll(keepingCapacity: true)
    }

    /// Watches the bus after every consumer and the result (a journal, a live display); not during a replay.
    public func observe(_ observer: @escaping (AnalysisEvent) -> Void) {
        bus.observe(observer)
    }

    /// Timed side inputs pushed from any thread while the session runs (a wearable streaming heart rate); they
    /// join the others before the next read is processed.
    public func push(sideInputs events: [AnalysisEvent]) {
        inboxLock.lock()
        inbox += events
        inboxLock.unlock()
    }

    private func takeInbox() {
        inboxLock.lock()
        let events = inbox
        inbox = []
        let actions = controls
        controls = []
        inboxLock.unlock()
        if !events.isEmpty { add(sideInputs: events) }
        for action in actions { action(self) }
    }

    private var controls: [(AnalysisPipeline) -> Void] = []
    private var controlsClosed = false

    /// Runs `action` on the analysing thread before the next read is processed (or before the session's end is
    /// flushed). Returns false, without running it, once the session has finished.
    @discardableResult
    public func perform(_ action: @escaping (AnalysisPipeline) -> Void) -> Bool {
        inboxLock.lock()
        defer { inboxLock.unlock() }
        guard !controlsClosed else { return false }
        controls.append(action)
        return true
    }

    /// Where each sleeper's session began on the timeline (channel separation; analysing thread only).
    private var channelStarts: [AudioChannel: SampleTime] = [:]

    /// Starts `channel`'s sleeper session here (call through `perform`, or before the run; its id is set with
    /// `setSessionId`).
    public func startChannel(_ channel: AudioChannel) {
        channelStarts[channel] = position
    }

    /// Sets a sleeper's session id (any thread): streamed items and results carry it from now on.
    public func setSessionId(_ id: UUID, for channel: AudioChannel) {
        collector.sessionIds[channel] = id
    }

    /// Ends `channel`'s sleeper session here while the other goes on: its stager makes its whole-night pass, and
    /// its result covers its session (call through `perform`).
    public func endChannel(_ channel: AudioChannel) -> AnalysisResult {
        start()
        bus.publish(.channelEnding(channel, at: position))
        let source = SourceSummary(path: sourcePath, sampleRate: format.sampleRate, channels: format.channelCount,
                                   durationSec: AnalysisClock.seconds(position))
        var r = collector.result(end: position, source: source, droppedObserverItems: observers?.droppedCount ?? 0,
                                 channel: channel, from: channelStarts[channel] ?? 0)
        r.warnings = warnings
        return r
    }

    /// After the session has finished: `channel`'s sleeper session from where it began to the end, within
    /// `combined` (what `finish()` returned).
    public func channelResult(_ channel: AudioChannel, from combined: AnalysisResult) -> AnalysisResult {
        var r = collector.result(end: combined.analysedSamples, source: combined.source,
                                 droppedObserverItems: combined.droppedObserverItems, channel: channel,
                                 from: channelStarts[channel] ?? 0)
        r.utcOffsetSeconds = combined.utcOffsetSeconds
        r.warnings = combined.warnings
        return r
    }

    /// Publishes `.sessionStarted` (once); for a resumed night, then replays its journal into the whole-night
    /// consumers and the result (`EventBus.replaying`), closes the events the interruption cut off at the
    /// journal's last position and publishes the events it left undecided (`NightReplay.undecidedEvents`).
    public func start() {
        guard !started else { return }
        started = true
        bus.publish(.sessionStarted(info))
        guard let replay else { return }
        bus.replaying = true
        collector.replaying = true
        var open: [Int: SoundEvent] = [:], ended: [SoundEvent] = [], clipped = Set<Int>()
        for record in replay.records {
            switch record {
            case .eventStarted(let e): open[e.id] = e
            case .eventEnded(let e): open[e.id] = nil; ended.append(e)
            case .clip(let c): clipped.insert(c.eventId)
            default: break
            }
            if let event = record.replayedEvent { bus.publish(event) }
        }
        for var e in open.values.sorted(by: { $0.id < $1.id }) {
            e.end = max(e.start, min(e.end, replay.position))
            bus.publish(.eventEnded(e))
            ended.append(e)
        }
        bus.replaying = false
        collector.replaying = false
        // New to everyone (the journal, an app's streams): journaled, a later replay knows them as published.
        for e in resumedEvents {
            bus.publish(.eventStarted(e))
            bus.publish(.eventEnded(e))
        }
        // The clips the interruption took: of the events whose clip was still to be stored (their audio, or the
        // record of their written file, went with the process) and of those decided only now. Each is given up with
        // its reason, so the result's `clipsDropped` warning counts them instead of their clips going missing.
        guard let clips = options.clips?.config else { return }
        let unstored = "the recording was interrupted before its clip was stored"
        for e in ended where clips.wantsClip(e) && !clipped.contains(e.id) {
            bus.publish(.clip(.dropped(e, sampleRate: 0, reason: unstored)))
        }
        let late = "decided after the recording was interrupted, with its audio gone"
        for e in resumedEvents where clips.wantsClip(e) { bus.publish(.clip(.dropped(e, sampleRate: 0, reason: late))) }
    }

    /// Steps the pipeline with one source read; returns false at `.end`.
    @discardableResult
    public func process(_ read: SourceRead) -> Bool {
        start()
        guard !feeder.ended else { return false }
        switch read {
        case .audio(let start, let channels):
            feeder.audio(AudioBlock(start: start, channels: channels))
            observers?.progress.yield(feeder.position)
            return true
        case .gap(let start, let length, let reason):
            feeder.gap(AudioGap(start: start, length: length, reason: GapReason(rawValue: reason.rawValue) ?? .missingInput))
            return true
        case .end:
            return false
        }
    }

    /// Flushes the features and every consumer (`.sessionEnding`, `.sessionEnded`) and builds the result.
    public func finish() -> AnalysisResult {
        start()
        inboxLock.lock()
        controlsClosed = true
        inboxLock.unlock()
        takeInbox()
        if !feeder.ended {
            feeder.end()
            reportSideInputsOutside(after: feeder.unpublishedSideInputs)
        }
        let end = feeder.position
        // The header's length, exact at the source's rate, when the timeline agrees with it to within the
        // resampler's rounding; otherwise (a truncated file, a FLAC whose STREAMINFO total is short) the timeline.
        var durationSec = AnalysisClock.seconds(end)
        if replay == nil, let frames = format.frameCount, format.sampleRate > 0,
           abs(Double(frames) / Double(format.sampleRate) - durationSec) < 0.01 {
            durationSec = Double(frames) / Double(format.sampleRate)
        }
        let source = SourceSummary(path: sourcePath, sampleRate: format.sampleRate, channels: format.channelCount,
                                   durationSec: durationSec)
        if collector.droppedClips > 0 {
            addWarning(AnalysisWarning(.clipsDropped, "\(collector.droppedClips) event(s) of the chosen types have no "
                + "audio clip: " + collector.droppedClipReasons.joined(separator: "; ")))
        }
        var result = collector.result(end: end, source: source, droppedObserverItems: observers?.droppedCount ?? 0)
        result.warnings = warnings
        return result
    }

    /// Each sleeper's session id with channel separation: the session's own for the primary sleeper, and a
    /// name-based (version 5) id derived from it for the secondary — the same input gives the same two ids.
    public static func sessionIds(for id: UUID) -> [AudioChannel: UUID] {
        [.primary: id, .secondary: SessionIdentifier.uuidV5(namespace: id, name: "secondary")]
    }

    /// With channel separation, `combined` (what `finish()` returned, with any warnings added since) split into
    /// one session per sleeper; nil without separation.
    public func separatedResult(from combined: AnalysisResult) -> SeparatedAnalysisResult? {
        guard let separation else { return nil }
        return SeparatedAnalysisResult(source: combined.source, config: separation,
                                       sessions: AudioChannel.allCases.map { channelResult($0, from: combined) },
                                       warnings: combined.warnings)
    }

    /// Adds a warning to the result (e.g. the source's: a truncated or damaged file).
    public func addWarning(_ warning: AnalysisWarning) {
        if !warnings.contains(warning) { warnings.append(warning) }
    }

    // MARK: - Helpers

    private static func shifted(_ read: SourceRead, by offset: SampleTime) -> SourceRead {
        guard offset != 0 else { return read }
        switch read {
        case .audio(let start, let channels): return .audio(start: start + offset, channels: channels)
        case .gap(let start, let length, let reason): return .gap(start: start + offset, length: length, reason: reason)
        case .end: return .end
        }
    }

    /// One warning per kind of side input with samples outside `[0, end)`.
    private func reportSideInputsOutside(after: ArraySlice<AnalysisEvent>) {
        var afterCounts: [SideInputKind: Int] = [:]
        for event in after { if let kind = SideInputKind(event) { afterCounts[kind, default: 0] += kind.readings(in: event) } }
        let end = feeder.position
        for kind in SideInputKind.allCases {
            let total = sideInputTotals[kind] ?? 0
            let before = sideInputsBefore[kind] ?? 0, late = afterCounts[kind] ?? 0
            guard before + late > 0 else { continue }
            let origin = options.sideInputOrigins[kind].map { " (\($0))" } ?? ""
            let span = "the recording spans \(ISO8601Time.utcString(from: info.clock.start)) to "
                + ISO8601Time.utcString(from: info.clock.date(of: end))
            let message: String
            if before + late == total {
                message = "\(kind.rawValue) samples\(origin): none of \(total) lie within the recording "
                    + "(\(before) before it, \(late) after it; \(span)), so they are not used. "
                    + "Is the recording's start time right?"
            } else {
                message = "\(kind.rawValue) samples\(origin): \(before + late) of \(total) lie outside the recording "
                    + "(\(before) before it, \(late) after it; \(span)); the \(total - before - late) inside are used"
            }
            addWarning(AnalysisWarning(.sideInputOutsideRecording, message))
        }
    }
}
