import Foundation
import Logging
import SleepCycleBus
import SleepCycleAudio

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
    private nonisolated let observers: SessionObservers
    private nonisolated let states: ObserverFanOut<State>

    public init(options: PipelineOptions = .default) {
        self.options = options
        observers = SessionObservers(capacity: options.observerBufferSize)
        states = ObserverFanOut(capacity: 16)
    }

    /// Prepares the engine and reports what this build and configuration provide.
    @discardableResult
    public func initialize(options: PipelineOptions? = nil, channelCount: Int = 1) throws -> SleepAnalysisFeatures {
        guard currentState != .running else { throw SleepAnalysisEngineError.alreadyRunning }
        if let options { self.options = options }
        features = SleepAnalysisFeatures(PipelineBuilder.capabilities(channelCount: channelCount, options: self.options))
        setState(.initialized)
        return features
    }

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
    /// Items lost by slow observers so far.
    public nonisolated var droppedObserverItems: Int { observers.droppedCount }

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
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: source.name, options: options,
                                            listeners: eventListeners, observers: observers)
        let runner = SessionRunner(pipeline: pipeline, source: source, observers: observers,
                                   utcOffsetSeconds: config.utcOffsetSeconds)
        Self.log.debug("session \(id) started on \(source.name): \(format.sampleRate) Hz, \(format.channelCount) channel(s)")
        session = runner
        setState(.running)
        runner.start()
        return id
    }

    /// Waits until the source has ended by itself (a file fully analysed) or failed; the session stays running
    /// until `stopAnalysis()`.
    public func waitForSourceEnd() async throws {
        guard let session else { throw SleepAnalysisEngineError.notRunning }
        _ = await session.outcome()
    }

    /// Stops the source (a blocked live read returns), flushes every consumer and returns the session's result.
    /// For a file, call `waitForSourceEnd()` first to analyse all of it.
    public func stopAnalysis() async throws -> AnalysisResult {
        guard currentState == .running, let session else { throw SleepAnalysisEngineError.notRunning }
        session.stop()
        let outcome = await session.outcome()
        self.session = nil
        setState(.initialized)
        return try outcome.get()
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
