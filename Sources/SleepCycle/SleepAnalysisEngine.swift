import Foundation
import SleepCycleBus
import SleepCycleAudio

/// What a session analyses (Sleep Cycle SDK `SleepAnalysisConfig`).
public struct SleepAnalysisConfig: Sendable, Hashable {
    /// Analyse the audio source (the only analysis input of this build; must be true).
    public var useAudio: Bool
    /// Accept accelerometer motion samples (`PipelineOptions.sideInputs`) as staging input.
    public var useAccelerometer: Bool
    /// The session id; nil = a random UUID (live sessions). Files analysed by the CLI use a name-based id.
    public var sessionId: UUID?
    public init(useAudio: Bool = true, useAccelerometer: Bool = false, sessionId: UUID? = nil) {
        self.useAudio = useAudio; self.useAccelerometer = useAccelerometer; self.sessionId = sessionId
    }
}

/// Lifecycle errors of the engine: calls made in the wrong state or with an unusable configuration.
public enum SleepAnalysisEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    case notInitialized
    case alreadyRunning
    case notRunning
    case unsupportedConfiguration(String)

    public var description: String {
        switch self {
        case .notInitialized: "the engine is not initialized: call initialize() before startAnalysis"
        case .alreadyRunning: "an analysis is already running: call stopAnalysis() first"
        case .notRunning: "no analysis is running: call startAnalysis first"
        case .unsupportedConfiguration(let why): "unsupported configuration: \(why)"
        }
    }
}

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
        let id = config.sessionId ?? UUID()
        let format = source.format
        let info = SessionInfo(id: id, clock: AnalysisClock(start: date), sourceSampleRate: format.sampleRate,
                               channelCount: format.channelCount)
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: source.name, options: options,
                                            listeners: eventListeners, observers: observers)
        let runner = SessionRunner(pipeline: pipeline, source: source, observers: observers)
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

    private func setState(_ state: State) {
        currentState = state
        states.yield(state)
    }
}

/// Runs one pipeline on its own thread and hands its outcome to any number of waiters.
final class SessionRunner: @unchecked Sendable {
    // The pipeline and source are only touched by the analysis thread once `start()` is called; `stop()` only
    // calls the source's `close()`, which sources support from another thread (AudioSource contract).
    private let pipeline: AnalysisPipeline
    private let source: any AudioSource
    private let observers: SessionObservers
    private let lock = NSLock()
    private var result: Result<AnalysisResult, any Error>?
    private var waiters: [CheckedContinuation<Result<AnalysisResult, any Error>, Never>] = []

    init(pipeline: AnalysisPipeline, source: any AudioSource, observers: SessionObservers) {
        self.pipeline = pipeline
        self.source = source
        self.observers = observers
    }

    func start() {
        let thread = Thread { [self] in
            let outcome: Result<AnalysisResult, any Error>
            do {
                outcome = .success(try pipeline.run(source: source, shouldStop: { [self] in stopRequested }))
            } catch {
                outcome = .failure(error)
            }
            source.close()
            observers.finishCurrentStreams()
            lock.lock()
            result = outcome
            let toResume = waiters
            waiters.removeAll()
            lock.unlock()
            for w in toResume { w.resume(returning: outcome) }
        }
        thread.name = "sleepcycle.analysis"
        thread.start()
    }

    private var stopRequested: Bool { lock.lock(); defer { lock.unlock() }; return stopFlag }
    private var stopFlag = false

    /// Ends the analysis at the next read. A live source (unknown length) or a paced replay is closed right away so
    /// that a blocked read returns; a file source is closed by the analysis thread itself (libsndfile handles are
    /// not safe to close under a concurrent read).
    func stop() {
        lock.lock(); stopFlag = true; lock.unlock()
        if source.format.frameCount == nil || source is PacedSource { source.close() }
    }

    func outcome() async -> Result<AnalysisResult, any Error> {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let result { lock.unlock(); continuation.resume(returning: result); return }
            waiters.append(continuation)
            lock.unlock()
        }
    }
}
