import Foundation
import Logging
import SleepCycleBus
import SleepCycleAudio
import SleepCycleStore

/// The sleep-analysis engine with the Sleep Cycle SDK's lifecycle:
/// `initialize` → `startAnalysis(config:at:using:eventListeners:)` → (streams) → `stopAnalysis()`.
///
/// The analysis runs on its own thread, never on the actor's executor: a file is read as fast as it decodes, a
/// live source may block in `read()`. The actor only guards the lifecycle. Outward streams are bounded and lossy
/// for slow observers (`ObserverStream`); analysis never waits for them.
public actor SleepAnalysisEngine {
    public enum State: String, Sendable, Hashable { case uninitialized, initialized, running }

    public private(set) var currentState: State = .uninitialized
    private var options: PipelineOptions
    private var features = SleepAnalysisFeatures([])
    private var session: SessionRunner?
    /// The store live nights are journaled into (nil: none), and its recorder lock, held while the engine records.
    private var store: NightStore?
    private var recorderLock: RecorderLock?
    /// The running session's journal, and its clock (for pushed samples).
    private var journal: JournalWriter?
    private var clock: AnalysisClock?
    private var accelerometer = false
    /// A resumed night's journaled end: side inputs pushed with an earlier date were journaled before the interruption
    /// (published with the audio up to there) and are replayed from the journal, so a wearable file read again from
    /// its start on `--resume` does not count them twice. 0 for a new night.
    private var journaledUntil: SampleTime = 0
    /// The running session's pipeline, and with a two-sleeper data source, each sleeper's running session.
    private var pipeline: AnalysisPipeline?
    private var dataSource = false
    private var channelSessions: [AudioChannel: UUID] = [:]
    /// The two-sleeper result of the last session stopped with `stopAnalysis()` when it separated its channels
    /// (`PipelineOptions.channelSeparation` on stereo input); nil otherwise.
    public private(set) var separatedResult: SeparatedAnalysisResult?
    private nonisolated let observers: SessionObservers
    private nonisolated let states: ObserverFanOut<State>

    public init(options: PipelineOptions = .default) {
        self.options = options
        observers = SessionObservers(capacity: options.observerBufferSize)
        states = ObserverFanOut(capacity: 16)
    }

    /// Prepares the engine and reports what this build and configuration provide.
    ///
    /// - Parameters:
    ///   - options: the pipeline's settings (nil: keep those given before).
    ///   - channelCount: the channels the sessions will have, for the capabilities reported.
    ///   - store: journal every session into this store, so that a night survives a crash
    ///     (`isResumePossible()`, `resumeAnalysis`) and its result is kept. The engine holds the store's recorder
    ///     lock from now on: a second recorder on the same store is refused here (`StoreError`, kind `.busy`).
    @discardableResult
    public func initialize(options: PipelineOptions? = nil, channelCount: Int = 1,
                           store: NightStore? = nil) throws -> SleepAnalysisFeatures {
        guard currentState != .running else { throw SleepAnalysisEngineError.alreadyRunning }
        if let options { self.options = options }
        if let store, store !== self.store {
            recorderLock = try store.lockForRecording()
            recorderLock?.recording(nil)
        } else if store == nil {
            recorderLock?.release()
            recorderLock = nil
        }
        self.store = store
        features = SleepAnalysisFeatures(PipelineBuilder.capabilities(channelCount: channelCount, options: self.options))
        setState(.initialized)
        return features
    }

    /// Makes audio clips of the events of every session started from now on (replacing an earlier producer):
    /// files under `directory` (`<sessionId>/<event id>-<type>.flac`, encrypted with `key` when given), and each clip
    /// with its samples on the producer's `clips` stream. Without a directory nothing is written to disk.
    public func createAudioClipsProducer(config: AudioClipsConfig = .default, directory: String? = nil,
                                         key: ClipKey? = nil) throws -> AudioClipsProducer {
        guard currentState != .running else { throw SleepAnalysisEngineError.alreadyRunning }
        if let problem = config.problem { throw SleepAnalysisEngineError.unsupportedConfiguration("audio clips: \(problem)") }
        if let directory { try AudioClipsFolder.prepare(directory) }
        clipsProducer?.finish()
        let producer = AudioClipsProducer(config: config, directory: directory, bufferSize: options.observerBufferSize)
        clipsProducer = producer
        options.clips = PipelineOptions.ClipsOption(config: config, directory: directory, key: key, durable: true)
        features.audioClips = true
        return producer
    }
    private var clipsProducer: AudioClipsProducer?

    public func isFeatureEnabled(_ feature: SleepAnalysisFeature) -> Bool {
        currentState != .uninitialized && features.contains(feature)
    }

    /// State changes from now on (bounded, newest kept).
    public nonisolated var stateStream: ObserverStream<State> { states.makeStream() }
    // Each stream below is a new bounded observer (`.bufferingNewest(observerBufferSize)`) that receives items
    // from now on and finishes when the current (or, between sessions, the next) session ends.

    /// Events as they end (complete events).
    public nonisolated var eventStream: ObserverStream<SleepEvent> { observers.events.makeStream() }
    public nonisolated var breathingRateStream: ObserverStream<BreathingRate> { observers.breathingRates.makeStream() }
    /// Stage epochs as they are scored.
    public nonisolated var sleepStageStream: ObserverStream<SleepStageInterval> { observers.sleepStages.makeStream() }
    /// Audio-input health changes (`end` is nil: the status lasts until the next update).
    public nonisolated var audioHealthStream: ObserverStream<AudioHealthUpdate> { observers.audioHealth.makeStream() }
    /// Stream time analysed so far.
    public nonisolated var progressStream: ObserverStream<SampleTime> { observers.progress.makeStream() }
    /// The smart alarm when it fires (live; not again when a resumed night's journal is replayed).
    public nonisolated var alarmStream: ObserverStream<AlarmRinging> { observers.alarms.makeStream() }
    /// Items lost by slow observers so far.
    public nonisolated var droppedObserverItems: Int { observers.droppedCount }

    /// A one-line problem while the running session's journal cannot be written (a full disk: the night goes on in
    /// memory), else nil.
    public var storeProblem: String? { journal?.problem }

    /// Starts analysing `source` on a thread of its own; `date` is the wall-clock time of the source's first sample.
    /// The engine owns `source` from now on and closes it at `stopAnalysis()`.
    public func startAnalysis(config: SleepAnalysisConfig = SleepAnalysisConfig(), at date: Date,
                              using source: sending any AudioSource,
                              eventListeners: sending [any AudioEventListener] = []) throws -> UUID {
        switch currentState {
        case .uninitialized: throw SleepAnalysisEngineError.notInitialized
        case .running: throw SleepAnalysisEngineError.alreadyRunning
        case .initialized: break
        }
        guard config.useAudio else {
            throw SleepAnalysisEngineError.unsupportedConfiguration("useAudio must be true (audio is the analysis input)")
        }
        if !config.useAccelerometer, options.sideInputs.contains(where: { if case .motion = $0 { true } else { false } }) {
            throw SleepAnalysisEngineError.unsupportedConfiguration(
                "motion samples were given but useAccelerometer is false: set it to use them")
        }
        let id = config.sessionId ?? UUID()
        let format = source.format
        let info = SessionInfo(id: id, clock: AnalysisClock(start: date), sourceSampleRate: format.sampleRate,
                               channelCount: format.channelCount)
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: source.name,
                                            options: withClipsReceiver(options, sessionId: id),
                                            listeners: eventListeners, observers: observers)
        if let store {
            let header = NightHeader(
                sessionId: id, start: date, utcOffsetSeconds: config.utcOffsetSeconds, sourceName: source.name,
                sourceSampleRate: format.sampleRate, sourceChannels: format.channelCount,
                analysisChannels: max(1, format.analysisChannelCount), frameLength: options.frameLength,
                hopLength: options.hopLength, eventDetection: options.eventDetection, alarm: options.alarm,
                useAccelerometer: config.useAccelerometer, recorderSettings: config.recorderSettings,
                channelSeparation: pipeline.separation, wearableEncrypted: options.wearableKey != nil)
            try store.beginNight(id: id, startTime: date, utcOffsetSeconds: config.utcOffsetSeconds,
                                 source: Self.sourceJSON(name: source.name, format: format),
                                 header: try JSONEncoder().encode(header))
            attachJournal(to: pipeline, night: id, start: date, from: 0, nextSequence: 0)
        }
        let runner = SessionRunner(pipeline: pipeline, source: source, observers: observers,
                                   utcOffsetSeconds: config.utcOffsetSeconds)
        self.pipeline = pipeline
        Self.log.debug("session \(id) started on \(source.name): \(format.sampleRate) Hz, \(format.channelCount) channel(s)")
        begin(runner, clock: info.clock, accelerometer: config.useAccelerometer)
        return id
    }

    /// Whether the store holds an interrupted night (a recorder that crashed or lost power) to resume.
    public func isResumePossible() throws -> Bool {
        try store?.latestInterrupted() != nil
    }

    /// The longest stretch of missing input `resumeAnalysis` bridges (the longest night `record` records).
    public static let longestResumeGapSeconds: Double = 48 * 3600

    /// Continues an interrupted night — `night`, or the most recent one — on a new source: the same session id, the
    /// journal replayed into staging, the alarm and the result, and the new audio placed at its wall-clock time
    /// (`date`, the time of the source's first sample); the time in between is a `missingInput` gap.
    ///
    /// - Throws: `SleepAnalysisEngineError.unsupportedConfiguration` without a store, with no interrupted night, or
    ///   when the source's channels differ from the night's, or when `date` is more than
    ///   `longestResumeGapSeconds` after the night's last audio; `StoreError` when the store cannot be read.
    public func resumeAnalysis(night requested: UUID? = nil, at date: Date, using source: sending any AudioSource,
                               eventListeners: sending [any AudioEventListener] = []) throws -> UUID {
        switch currentState {
        case .uninitialized: throw SleepAnalysisEngineError.notInitialized
        case .running: throw SleepAnalysisEngineError.alreadyRunning
        case .initialized: break
        }
        guard let store else {
            throw SleepAnalysisEngineError.unsupportedConfiguration("resuming needs a store (initialize(store:))")
        }
        let stored = try requested.map { try store.night($0) } ?? store.latestInterrupted()
        guard let stored, stored.state == .interrupted else {
            throw SleepAnalysisEngineError.unsupportedConfiguration(requested.map {
                "night \($0.uuidString) is not an interrupted night of this store" } ?? "no interrupted night to resume")
        }
        let header = try store.header(of: stored)
        let format = source.format
        guard max(1, format.analysisChannelCount) == header.analysisChannels else {
            throw SleepAnalysisEngineError.unsupportedConfiguration("the night was recorded with "
                + "\(header.analysisChannels) channel(s); the new input has \(format.analysisChannelCount)")
        }
        if header.wearableEncrypted == true && options.wearableKey == nil {
            throw SleepAnalysisEngineError.unsupportedConfiguration("night \(stored.id.uuidString)'s wearable readings "
                + "are encrypted: resuming it needs their key (--wearable-key)")
        }
        let (replay, _, lastSequence) = try store.journalReplay(of: stored, key: options.wearableKey)
        let records = replay.records
        // The gap is analysed as missing input, block by block: a date days later is another night, not this one.
        let gapSeconds = date.timeIntervalSince(header.start) - AnalysisClock.seconds(replay.position)
        guard gapSeconds <= Self.longestResumeGapSeconds else {
            throw SleepAnalysisEngineError.unsupportedConfiguration("the new input starts \(Int((gapSeconds / 3600).rounded())) h "
                + "after night \(stored.id.uuidString)'s last audio; a night resumes at most 48 h later")
        }
        var nightOptions = options
        nightOptions.frameLength = header.frameLength
        nightOptions.hopLength = header.hopLength
        nightOptions.eventDetection = header.eventDetection
        nightOptions.alarm = header.alarm
        nightOptions.channelSeparation = header.channelSeparation
        let clock = AnalysisClock(start: header.start)
        let info = SessionInfo(id: header.sessionId, clock: clock, sourceSampleRate: header.sourceSampleRate,
                               channelCount: header.sourceChannels)
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: header.sourceName,
                                            options: withClipsReceiver(nightOptions, sessionId: header.sessionId),
                                            listeners: eventListeners, observers: observers, resuming: replay)
        try store.reopenNight(id: stored.id, header: stored.header)
        attachJournal(to: pipeline, night: stored.id, start: header.start, from: replay.position,
                      nextSequence: (lastSequence ?? -1) + 1)
        journaledUntil = replay.position
        let offset = max(replay.position, AnalysisClock.samples(seconds: date.timeIntervalSince(header.start)))
        let runner = SessionRunner(pipeline: pipeline, source: source, observers: observers,
                                   utcOffsetSeconds: header.utcOffsetSeconds, offset: offset)
        self.pipeline = pipeline
        Self.log.info("resuming night \(stored.id) at \(ISO8601Time.utcString(from: clock.date(of: offset))) after \(records.count) journal records")
        begin(runner, clock: clock, accelerometer: header.useAccelerometer)
        return stored.id
    }

    /// Pushes a heart-rate sample (bpm and/or an RR interval) taken at `date` into the running session.
    public func push(heartRate bpm: Double? = nil, rrIntervalMs: Double? = nil, at date: Date) throws {
        guard let session, let clock else { throw SleepAnalysisEngineError.notRunning }
        let time = AnalysisClock.samples(seconds: date.timeIntervalSince(clock.start))
        guard time >= journaledUntil else { return }
        session.push(sideInputs: [.heartRate(HeartRateSample(time: time, bpm: bpm, rrMs: rrIntervalMs))])
    }

    /// Pushes a wearable's readings (`WearMetrics`, from any device) into the running session: their heart rate and
    /// RR intervals go to the heart session (and through it to staging); other metrics are not used yet.
    public func push(_ readings: [WearMetrics]) throws {
        guard let session, let clock else { throw SleepAnalysisEngineError.notRunning }
        let samples = WearMetrics.heartRateSamples(readings, start: clock.start).filter { $0.time >= journaledUntil }
        if !samples.isEmpty { session.push(sideInputs: samples.map { .heartRate($0) }) }
    }

    /// Pushes an accelerometer activity sample taken at `date` into the running session (needs `useAccelerometer`).
    public func push(motion activity: Double, at date: Date) throws {
        guard let session, let clock else { throw SleepAnalysisEngineError.notRunning }
        guard accelerometer else {
            throw SleepAnalysisEngineError.unsupportedConfiguration("motion samples need useAccelerometer")
        }
        let time = AnalysisClock.samples(seconds: date.timeIntervalSince(clock.start))
        guard time >= journaledUntil else { return }
        session.push(sideInputs: [.motion(MotionSample(time: time, activity: activity))])
    }

    /// `options` with the clips producer's receiver for session `sessionId`.
    private func withClipsReceiver(_ options: PipelineOptions, sessionId: UUID) -> PipelineOptions {
        guard let producer = clipsProducer, options.clips != nil else { return options }
        var options = options
        options.clips?.receiver = producer.receiver(sessionId: sessionId)
        return options
    }

    private func attachJournal(to pipeline: AnalysisPipeline, night: UUID, start: Date, from position: SampleTime,
                               nextSequence: Int64) {
        guard let store else { return }
        let writer = JournalWriter(store: store, night: night, clockStart: start, nextSequence: nextSequence)
        let recorder = JournalRecorder(writer: writer, start: position, clipsDirectory: pipeline.options.clips?.directory,
                                       wearableKey: pipeline.options.wearableKey)
        pipeline.observe { recorder.observe($0) }
        journal = writer
        recorderLock?.recording(night)
    }

    private func begin(_ runner: SessionRunner, clock: AnalysisClock, accelerometer: Bool) {
        session = runner
        separatedResult = nil
        self.clock = clock
        self.accelerometer = accelerometer
        setState(.running)
        runner.start()
    }

    /// The result's `source` object for a night that has just begun.
    private static func sourceJSON(name: String, format: SourceFormat) -> Data {
        Data(SourceSummary(path: name, sampleRate: format.sampleRate, channels: format.channelCount, durationSec: 0)
            .jsonString().utf8)
    }

    /// Waits until the source has ended by itself (a file fully analysed) or failed; the session stays running
    /// until `stopAnalysis()`.
    public func waitForSourceEnd() async throws {
        guard let session else { throw SleepAnalysisEngineError.notRunning }
        _ = await session.outcome()
    }

    /// Stops the source (a blocked live read returns), flushes every consumer and returns the session's result.
    /// For a file, call `waitForSourceEnd()` first to analyse all of it.
    ///
    /// With a store, the night's result is stored (the night becomes complete). Problems the store had during the
    /// night are in the result's `warnings`; a result that could not be stored is returned all the same, with a
    /// `notStored` warning.
    public func stopAnalysis() async throws -> AnalysisResult {
        guard currentState == .running, let session, !dataSource else { throw SleepAnalysisEngineError.notRunning }
        session.stop()
        let outcome = await session.outcome()
        let pipeline = self.pipeline
        self.session = nil
        self.pipeline = nil
        clock = nil; journaledUntil = 0
        defer { setState(.initialized) }
        var result: AnalysisResult
        do {
            result = try outcome.get()
        } catch {
            // The source failed: what was heard stays journaled (the night is interrupted, and resumable), and the
            // lock no longer names it as being recorded.
            if let journal { self.journal = nil; _ = journal.drain() }
            recorderLock?.recording(nil)
            throw error
        }
        var separated = pipeline?.separatedResult(from: result)
        guard let journal else {
            separatedResult = separated
            return result
        }
        self.journal = nil
        defer { recorderLock?.recording(nil) }
        let problems = journal.drain()
        for problem in problems { result.warnings.append(AnalysisWarning(.storeProblem, "\(journal.store.path): \(problem)")) }
        separated?.warnings = result.warnings
        do {
            try journal.complete(result: result, separated: separated)
        } catch {
            result.warnings.append(AnalysisWarning(.notStored, "the night's result is not stored: \(error.description)"))
            separated?.warnings = result.warnings
        }
        separatedResult = separated
        return result
    }

    // MARK: - Two sleepers: one data source, a session per channel (the Sleep Cycle SDK's multi-channel model)

    /// Starts a stereo data source whose channels belong to two sleepers (channel 0, left: `.primary`). The
    /// analysis runs from now on — detection, attribution (`channelSeparationConfig`), breathing, health and a
    /// stager per sleeper — and each sleeper's session is started and stopped on its own with
    /// `startAnalysis(channel:config:)` and `stopAnalysis(channel:)`. Not journaled into a store.
    ///
    /// - Throws: `unsupportedConfiguration` for a source that is not stereo or an invalid configuration.
    public func startDataSource(using source: sending any AudioSource, at date: Date,
                                channelSeparationConfig: ChannelSeparationConfig = .bedSideMics) throws {
        switch currentState {
        case .uninitialized: throw SleepAnalysisEngineError.notInitialized
        case .running: throw SleepAnalysisEngineError.alreadyRunning
        case .initialized: break
        }
        let format = source.format
        guard format.analysisChannelCount == 2 else {
            throw SleepAnalysisEngineError.unsupportedConfiguration(
                "a two-sleeper data source needs stereo input; \(source.name) has \(format.channelCount) channel(s)")
        }
        do { try channelSeparationConfig.validate() } catch {
            throw SleepAnalysisEngineError.unsupportedConfiguration("channel separation: \(error)")
        }
        var options = self.options
        options.channelSeparation = channelSeparationConfig
        let info = SessionInfo(id: UUID(), clock: AnalysisClock(start: date), sourceSampleRate: format.sampleRate,
                               channelCount: format.channelCount)
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: source.name,
                                            options: withClipsReceiver(options, sessionId: info.id), observers: observers)
        let runner = SessionRunner(pipeline: pipeline, source: source, observers: observers, utcOffsetSeconds: 0)
        self.pipeline = pipeline
        dataSource = true
        channelSessions = [:]
        begin(runner, clock: info.clock, accelerometer: options.sideInputs.contains {
            if case .motion = $0 { true } else { false } })
    }

    /// Starts the session of `channel`'s sleeper on the running data source, from the audio analysed next; returns
    /// its id (`config.sessionId`, or a new one).
    public func startAnalysis(channel: AudioChannel, config: SleepAnalysisConfig = SleepAnalysisConfig()) throws -> UUID {
        guard dataSource, let pipeline else { throw SleepAnalysisEngineError.notRunning }
        guard channelSessions[channel] == nil else { throw SleepAnalysisEngineError.alreadyRunning }
        let id = config.sessionId ?? UUID()
        channelSessions[channel] = id
        pipeline.setSessionId(id, for: channel)
        if !pipeline.perform({ $0.startChannel(channel) }) {
            channelSessions[channel] = nil
            throw SleepAnalysisEngineError.notRunning   // the source has ended
        }
        return id
    }

    /// Stops the session of `channel`'s sleeper and returns its result (their whole-night stage pass included);
    /// the other sleeper's session and the data source go on. After the source has ended, the session covers the
    /// audio up to its end.
    public func stopAnalysis(channel: AudioChannel) async throws -> AnalysisResult {
        guard dataSource, let pipeline, let session, let id = channelSessions[channel] else {
            throw SleepAnalysisEngineError.notRunning
        }
        channelSessions[channel] = nil
        let ended: AnalysisResult? = await withCheckedContinuation { continuation in
            if !pipeline.perform({ continuation.resume(returning: $0.endChannel(channel)) }) {
                continuation.resume(returning: nil)
            }
        }
        if let ended { return ended.withSessionId(id) }
        // The source ended first: the session's result is its share of the finished analysis.
        let combined = try await session.outcome().get()
        return pipeline.channelResult(channel, from: combined).withSessionId(id)
    }

    /// Stops the data source: the sessions still running are stopped too and their results discarded (as the
    /// SDK documents).
    public func stopDataSource() async {
        guard dataSource, let session else { return }
        session.stop()
        _ = await session.outcome()
        self.session = nil
        pipeline = nil
        dataSource = false
        channelSessions = [:]
        clock = nil; journaledUntil = 0
        setState(.initialized)
    }

    /// Analyses the whole recording at `path` (a file libsndfile reads) and returns its result: the same result,
    /// byte for byte, as `sleepcycle analyze` gives (`FileAnalysis`), computed on the engine's analysis thread.
    /// The engine must be initialized and idle; it is idle again afterwards.
    ///
    /// - Parameters:
    ///   - path: the recording.
    ///   - start: wall-clock time of the first sample (default `FileAnalysis.defaultStart`); part of the session id.
    ///   - utcOffsetSeconds: the sleeper's clock offset, for the text summary.
    public func analyze(file path: String, start: Date = FileAnalysis.defaultStart,
                        utcOffsetSeconds: Int = 0) async throws -> AnalysisResult {
        let source = try AudioFileSource(path: path)
        let id = SessionIdentifier.forFile(path: path, start: start)
            ?? SessionIdentifier.forFile(name: path, size: -1, edges: [], start: start)
        let motion = options.sideInputs.contains { if case .motion = $0 { true } else { false } }
        _ = try startAnalysis(config: SleepAnalysisConfig(useAccelerometer: motion, sessionId: id,
                                                          utcOffsetSeconds: utcOffsetSeconds),
                              at: start, using: source)
        try await waitForSourceEnd()
        return try await stopAnalysis()
    }

    static let log = Logger(label: "sleepcycle.engine")

    private func setState(_ state: State) {
        currentState = state
        states.yield(state)
    }
}
