import Foundation
import SleepCycleBus
import SleepCycleAudio
import SleepCycleDSP

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
    public let bus = EventBus()
    /// Names of the consumers on the bus, in order.
    public let consumerNames: [String]
    public let capabilities: Set<SleepAnalysisFeature>

    private var extractors: [any StreamingFeatureExtractor] = []
    private let collector: ResultCollector
    private let observers: SessionObservers?
    private var sideInputs: [AnalysisEvent]
    private var sideIndex = 0
    /// Where the next read is expected on the timeline.
    public private(set) var position: SampleTime = 0
    private var started = false
    private var ended = false

    /// - Parameters:
    ///   - info: the session (id, clock, source rate / channels).
    ///   - format: the source's format (`analysisChannelCount` channels are analysed).
    ///   - listeners: audio-event listeners, called on the analysing thread in batches of
    ///     `options.listenerBatchSeconds`.
    ///   - observers: where stream observers listen (nil: none).
    public init(info: SessionInfo, format: SourceFormat, sourcePath: String, options: PipelineOptions = .default,
                listeners: [any AudioEventListener] = [], observers: SessionObservers? = nil) throws {
        self.info = info
        self.format = format
        self.sourcePath = sourcePath
        self.options = options
        self.observers = observers
        let channels = max(1, format.analysisChannelCount)
        if let factory = options.featureExtractor ?? PipelineBuilder.defaultFeatureExtractor {
            extractors = try (0..<channels).map { try factory($0, options.frameLength, options.hopLength) }
        }
        let context = PipelineContext(info: info, channelCount: channels, options: options)
        let registrations = try PipelineBuilder.consumers(for: context)
        for r in registrations { bus.subscribe(r.consumer) }
        consumerNames = registrations.map(\.name)
        capabilities = registrations.reduce(into: []) { $0.formUnion($1.provides) }
        collector = ResultCollector(info: info, observers: observers)
        collector.alarmOption = options.alarm
        let collector = self.collector
        bus.observe { collector.observe($0) }
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
        sideInputs = options.sideInputs.enumerated().sorted {
            (Self.time(of: $0.element), $0.offset) < (Self.time(of: $1.element), $1.offset)
        }.map(\.element)
    }

    /// Reads `source` to its end on the calling thread and returns the result. `progress` is called after every
    /// read with the stream time analysed so far; `shouldStop` is checked before every read.
    public func run(source: any AudioSource, progress: ((SampleTime) -> Void)? = nil,
                    shouldStop: (() -> Bool)? = nil) throws -> AnalysisResult {
        start()
        while shouldStop?() != true {
            let read = try source.read()
            guard process(read) else { break }
            progress?(position)
        }
        return finish()
    }

    /// Publishes `.sessionStarted` (once).
    public func start() {
        guard !started else { return }
        started = true
        bus.publish(.sessionStarted(info))
    }

    /// Steps the pipeline with one source read; returns false at `.end`.
    @discardableResult
    public func process(_ read: SourceRead) -> Bool {
        start()
        guard !ended else { return false }
        switch read {
        case .audio(var start, var channels):
            if start < position {
                // Audio repeating time already analysed (sources promise not to): drop the repeat.
                let skip = Int(min(position - start, SampleTime(channels.first?.count ?? 0)))
                channels = channels.map { Array($0.dropFirst(skip)) }
                start += SampleTime(skip)
            }
            let frames = channels.first?.count ?? 0
            guard frames > 0 else { return true }
            if start > position { gap(start: position, length: start - position, reason: .missingInput) }
            let blockStart = start
            publishSideInputs(before: blockStart + SampleTime(frames))
            bus.publish(.audio(AudioBlock(start: blockStart, channels: channels)))
            for (c, extractor) in extractors.enumerated() where c < channels.count {
                let block = channels[c].withUnsafeBufferPointer { extractor.process($0) }
                if let block { bus.publish(.features(block)) }
            }
            position = blockStart + SampleTime(frames)
            observers?.progress.yield(position)
            return true
        case .gap(let start, let length, let reason):
            guard length > 0 else { return true }
            let s = max(start, position)
            gap(start: s, length: start + length - s, reason: GapReason(rawValue: reason.rawValue) ?? .missingInput)
            return true
        case .end:
            return false
        }
    }

    /// Flushes the features and every consumer (`.sessionEnding`, `.sessionEnded`) and builds the result.
    public func finish() -> AnalysisResult {
        start()
        if !ended {
            ended = true
            flushFeatures()
            publishSideInputs(before: .max)
            bus.publish(.sessionEnding(at: position))
            bus.publish(.sessionEnded(at: position))
        }
        let durationSec: Double
        if let frames = format.frameCount, format.sampleRate > 0 {
            durationSec = Double(frames) / Double(format.sampleRate)
        } else {
            durationSec = AnalysisClock.seconds(position)
        }
        let source = SourceSummary(path: sourcePath, sampleRate: format.sampleRate, channels: format.channelCount,
                                   durationSec: durationSec)
        return collector.result(end: position, source: source, droppedObserverItems: observers?.droppedCount ?? 0)
    }

    // MARK: - Helpers

    private func gap(start: SampleTime, length: SampleTime, reason: GapReason) {
        guard length > 0 else { return }
        flushFeatures()
        publishSideInputs(before: start + length)
        bus.publish(.gap(AudioGap(start: start, length: length, reason: reason)))
        position = start + length
        for e in extractors { e.reset(startSample: position) }
    }

    private func flushFeatures() {
        for extractor in extractors {
            if let block = extractor.finish() { bus.publish(.features(block)) }
        }
    }

    private func publishSideInputs(before end: SampleTime) {
        while sideIndex < sideInputs.count, Self.time(of: sideInputs[sideIndex]) < end {
            bus.publish(sideInputs[sideIndex])
            sideIndex += 1
        }
    }

    private static func time(of event: AnalysisEvent) -> SampleTime {
        switch event {
        case .heartRate(let s): s.time
        case .motion(let m): m.time
        case .alarm(let a): a.time
        default: 0
        }
    }
}
