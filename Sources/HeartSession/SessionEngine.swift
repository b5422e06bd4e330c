// The session engine after Synheart's: readings in, frames over a sliding window every emit interval and a summary
// at the end, with the metric keys of the contract (docs/0011).
import Foundation

/// The session engine (Synheart's `SessionEngine`): `start(config:callback:)`, readings pushed in time order (by the
/// host, or by a `BiosignalProvider` the engine reads on its own thread), `stop(sessionId:)`, `getStatus()`. Frames
/// are timed by the readings' own clock (a file replays exactly; a live provider stamps its readings), so the same
/// readings always give the same frames. One session at a time.
public final class SessionEngine: @unchecked Sendable {
    public enum Status: String, Sendable { case idle, running }
    private let lock = NSLock()
    private var sessionId: String?
    private var lastSessionId: String?
    private var callback: ((SessionEvent) -> Void)?
    private var window: SessionWindow?
    private var provider: (any BiosignalProvider)?
    /// Signalled when the provider's reading thread ends (each waiter signals it again for the next).
    private var readerDone: DispatchSemaphore?
    /// The provider's failure, if it ended with one (reported by `stop` and `wait`).
    private var providerError: (any Error)?
    /// The mode and profile `session_started` reports, until the first reading (whose time it carries) arrives.
    private var pendingStart: (SessionMode, ComputeProfile)?

    public init() {}

    public func getStatus() -> Status { lock.withLock { sessionId == nil ? .idle : .running } }

    /// Starts a session fed by `push(_:)`; returns its id. `callback` receives every event, on the pushing thread.
    @discardableResult
    public func start(config: SessionConfig, sessionId: String = UUID().uuidString.lowercased(),
                      callback: @escaping (SessionEvent) -> Void) throws(SessionError) -> String {
        try begin(config: config, sessionId: sessionId, provider: nil, callback: callback)
    }

    /// Starts a session fed by `provider`, read on a thread of the engine until it ends (then the session ends by
    /// itself, with its summary) or `stop(sessionId:)`. `callback` receives every event on that thread.
    @discardableResult
    public func start(config: SessionConfig, provider: any BiosignalProvider,
                      sessionId: String = UUID().uuidString.lowercased(),
                      callback: @escaping (SessionEvent) -> Void) throws(SessionError) -> String {
        let id = try begin(config: config, sessionId: sessionId, provider: provider, callback: callback)
        let done = DispatchSemaphore(value: 0)
        lock.withLock { readerDone = done }
        let thread = Thread { [self] in
            do {
                while let sample = try provider.next() {
                    do { try push(sample) } catch { break }     // stopped meanwhile
                }
            } catch {
                lock.withLock { providerError = error }
            }
            try? finish(sessionId: id)
            done.signal()
        }
        thread.name = "sleepcycle.heart-session"
        thread.start()
        return id
    }

    private func begin(config: SessionConfig, sessionId: String, provider: (any BiosignalProvider)?,
                       callback: @escaping (SessionEvent) -> Void) throws(SessionError) -> String {
        if let problem = config.problem { throw SessionError(problem) }
        try locked { () throws(SessionError) in
            guard self.sessionId == nil else { throw SessionError("a session is already running") }
            self.sessionId = sessionId
            self.callback = callback
            self.provider = provider
            readerDone = nil
            providerError = nil
            window = SessionWindow(profile: config.profile, includeRaw: config.includeRaw,
                                   correctsArtefacts: config.correctsArtefacts)
            pendingStart = (config.mode, config.profile)
        }
        return sessionId
    }

    /// A reading. Readings must come in time order; an earlier one is refused.
    public func push(_ sample: BiosignalSample) throws(SessionError) {
        let (events, callback) = try locked { () throws(SessionError) -> ([SessionEvent], ((SessionEvent) -> Void)?) in
            guard let id = sessionId, window != nil else { throw SessionError("no session is running") }
            var out: [SessionEvent] = []
            if let (mode, profile) = pendingStart {
                out.append(.started(sessionId: id, mode: mode, profile: profile, startMs: sample.timestampMs))
                pendingStart = nil
            }
            // In place (`window!`): a copy of the window would copy every reading so far, at every reading.
            out += try window!.add(sample).map { Self.event($0, id: id) }
            return (out, self.callback)
        }
        for e in events { callback?(e) }
    }

    /// Ends the session: the frames still due up to the last reading, then the summary over the whole session. With
    /// a provider, stops reading it first (a session its provider already ended is stopped without error) and
    /// rethrows the provider's failure, if it had one.
    public func stop(sessionId: String) throws {
        let (provider, done, running) = lock.withLock { (self.provider, readerDone, self.sessionId) }
        if let provider, let done, running == sessionId || lastSessionId == sessionId {
            provider.cancel()
            done.wait(); done.signal()
            let error = lock.withLock { () -> (any Error)? in
                self.provider = nil; readerDone = nil
                defer { providerError = nil }
                return providerError
            }
            if let error { throw error }
            return
        }
        try finish(sessionId: sessionId)
    }

    /// Blocks until the running session's provider ends (and with it the session); rethrows its failure.
    public func wait() throws {
        guard let done = lock.withLock({ readerDone }) else { return }
        done.wait(); done.signal()
        if let error = lock.withLock({ providerError }) { throw error }
    }

    private func finish(sessionId: String) throws(SessionError) {
        let (events, callback) = try locked { () throws(SessionError) -> ([SessionEvent], ((SessionEvent) -> Void)?) in
            guard self.sessionId == sessionId, var w = window else { throw SessionError("no running session \(sessionId)") }
            let (outputs, summary) = w.finish()
            var out = outputs.map { Self.event($0, id: sessionId) }
            if let summary { out.append(.summary(sessionId: sessionId, metrics: summary)) }
            let cb = self.callback
            self.sessionId = nil; self.callback = nil; window = nil; lastSessionId = sessionId
            return (out, cb)
        }
        for e in events { callback?(e) }
    }

    private static func event(_ output: SessionWindow.Output, id: String) -> SessionEvent {
        switch output {
        case .frame(let metrics, _, _): .frame(sessionId: id, metrics: metrics)
        case .raw(let samples, let start, let end): .biosignal(sessionId: id, samples: samples, startMs: start, endMs: end)
        }
    }

    private func locked<T>(_ body: () throws(SessionError) -> T) throws(SessionError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
