import SleepCycleBus

/// The smart alarm, a bus consumer: wakes the sleeper in light sleep within a window before the alarm time.
///
/// Rules, checked in stream-time order inside the window [alarmTime − window, alarmTime], first one wins
/// (after the "smart alarm" principle of waking from light sleep, e.g. Sleep Cycle, and the lower sleep inertia
/// on waking from N1/N2 than from N3 — Tassi & Muzet 2000, Sleep Med Rev 4(4) 341–353):
/// * `"lightSleep"` — at the end of a `.sleepStage` epoch that completes a run of at least
///   `sustainedEpochs` (default 2) consecutive `light` or `awake` epochs; the run may begin before the window.
/// * `"movement"` — at the start of a movement event that makes `burstEvents` (default 2) movement events
///   starting within `burstSpanSeconds` (default 60 s): a burst of body movement means the sleeper is near waking.
/// * `"deadline"` — at `alarmTime` if nothing fired earlier, as soon as stream time reaches it (audio, gap,
///   feature or stage events, or `.sessionEnding` at or after it). A session that ends before the alarm
///   time never fires.
///
/// Publishes exactly one `.alarm(AlarmFired(time:rule:))` per session.
public struct SmartAlarm: AnalysisConsumer, Sendable {
    public struct Configuration: Sendable {
        public var sustainedEpochs = 2
        public var burstEvents = 2
        public var burstSpanSeconds = 60.0
        public init() {}
    }

    /// waiting → fired(at:rule:).
    public enum State: Sendable, Equatable { case waiting, fired(time: SampleTime, rule: String) }

    public let spec: AlarmSpec
    public let configuration: Configuration
    public private(set) var state: State = .waiting
    private var lightRun = 0
    private var recentMovements: [SampleTime] = []

    public init(spec: AlarmSpec, configuration: Configuration = Configuration()) {
        self.spec = spec; self.configuration = configuration
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        guard state == .waiting else { return [] }
        switch event {
        case .sessionStarted:
            lightRun = 0; recentMovements = []
            return []
        case .sleepStage(let epoch):
            if let out = deadline(epoch.end) { return out }
            lightRun = (epoch.stage == .light || epoch.stage == .awake) ? lightRun + 1 : 0
            if lightRun >= configuration.sustainedEpochs, epoch.end >= spec.windowStart {
                return fire(at: epoch.end, rule: "lightSleep")
            }
            return []
        case .eventStarted(let e) where e.type == .movement:
            if let out = deadline(e.start) { return out }
            let span = AnalysisClock.samples(seconds: configuration.burstSpanSeconds)
            recentMovements = recentMovements.filter { e.start - $0 <= span } + [e.start]
            if recentMovements.count >= configuration.burstEvents, e.start >= spec.windowStart {
                return fire(at: e.start, rule: "movement")
            }
            return []
        case .audio(let block): return deadline(block.end) ?? []
        case .gap(let gap): return deadline(gap.start + gap.length) ?? []
        case .features(let f): return deadline(f.start) ?? []
        case .sessionEnding(let end): return deadline(end) ?? []
        default: return []
        }
    }

    private mutating func deadline(_ now: SampleTime) -> [AnalysisEvent]? {
        now >= spec.alarmTime ? fire(at: spec.alarmTime, rule: "deadline") : nil
    }

    private mutating func fire(at time: SampleTime, rule: String) -> [AnalysisEvent] {
        state = .fired(time: time, rule: rule)
        return [.alarm(AlarmFired(time: time, rule: rule))]
    }
}
