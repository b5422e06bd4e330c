import Foundation
import SleepCycleBus

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

    private let utcOffsetSeconds: Int
    /// Where the source's first read lands on the timeline (after the downtime, for a resumed night).
    private let offset: SampleTime

    init(pipeline: AnalysisPipeline, source: any AudioSource, observers: SessionObservers, utcOffsetSeconds: Int,
         offset: SampleTime = 0) {
        self.pipeline = pipeline
        self.source = source
        self.observers = observers
        self.utcOffsetSeconds = utcOffsetSeconds
        self.offset = offset
    }

    /// Timed side inputs pushed while the session runs (any thread).
    func push(sideInputs events: [AnalysisEvent]) { pipeline.push(sideInputs: events) }

    func start() {
        let thread = Thread { [self] in
            let outcome: Result<AnalysisResult, any Error>
            do {
                var result = try pipeline.run(source: source, offset: offset, shouldStop: { [self] in stopRequested })
                result.utcOffsetSeconds = utcOffsetSeconds
                outcome = .success(result)
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
