// The heart session on a night's bus: the wearable's readings (`.heartRate`) in, heart frames (`.heartFrame`) every
// epoch and a night summary (`.heartSummary`) out. Staging reads the frames' per-epoch heart rate; the result keeps
// the summary and the frames.
import SleepCycleBus

/// A bus consumer running a heart session over the night's `.heartRate` readings. Frames end on epoch boundaries
/// (multiples of the emit interval from the session's start) and cover the sliding window before them; a frame is
/// published once the audio has passed its end by `latenessSec` (readings pushed live may arrive a little after
/// their time) and only when its window holds a reading. At `.sessionEnding` the frames still due and the summary over
/// the whole night. (With two sleepers the pipeline scopes it to the sleeper who wears the device.)
///
/// States: `running` (collecting) → `finished` (after the summary; later events are ignored).
public struct HeartSessionConsumer: AnalysisConsumer {
    public enum State: Sendable { case running, finished }
    /// A night's frames: HRV over the last 5 minutes (the Task Force's short-term recording), every 30-s epoch.
    public static let nightProfile = ComputeProfile(windowSec: 300, emitIntervalSec: 30)

    /// Frames ending on whole 5 minutes (the ones a night's result keeps) carry LF/HF; the others leave it null.
    public static let spectrumEveryMs: Int64 = 300_000

    public private(set) var state = State.running
    /// Readings refused because they came earlier than one already taken (a live push too late), or before the
    /// session's start.
    public private(set) var refusedReadings = 0
    private var window: SessionWindow
    private let latenessMs: Int64
    private static let samplesPerMs = SampleTime(AnalysisClock.sampleRate / 1000)

    public init(profile: ComputeProfile = nightProfile, latenessSec: Double = 10) throws(SessionError) {
        if let problem = SessionConfig(profile: profile).problem { throw SessionError(problem) }
        window = SessionWindow(profile: profile, includeRaw: false, alignsFrames: true,
                               spectrumEveryMs: Self.spectrumEveryMs)
        latenessMs = Int64(latenessSec * 1000)
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        guard state == .running else { return [] }
        switch event {
        case .heartRate(let s):
            guard s.time >= 0 else { refusedReadings += 1; return [] }
            let reading = BiosignalSample(timestampMs: Self.ms(s.time), hrBpm: s.bpm,
                                          rrMs: s.rrMs.map { [$0] } ?? [])
            // The window is changed before anything reads `self` again (`Self.publish` is static): a method of `self`
            // called around the change would copy the consumer, and with it every reading of the night.
            do {
                let outputs = try window.add(reading)
                return Self.publish(outputs)
            } catch {
                refusedReadings += 1
                return []
            }
        case .audio(let block):
            let outputs = window.advance(to: Self.ms(block.end) - latenessMs)
            return Self.publish(outputs)
        case .gap(let gap):
            let outputs = window.advance(to: Self.ms(gap.start + gap.length) - latenessMs)
            return Self.publish(outputs)
        case .sessionEnding(let end):
            state = .finished
            let (outputs, summary) = window.finish(end: Self.ms(end))
            var out = Self.publish(outputs)
            if let summary, summary.sampleCount > 0 {
                out.append(.heartSummary(HeartFrame(start: Self.time(summary.startMs), end: Self.time(summary.endMs),
                                                    intervalStart: Self.time(summary.startMs),
                                                    intervalHrMeanBpm: summary.hrMeanBpm,
                                                    metrics: summary.values)))
            }
            return out
        default:
            return []
        }
    }

    private static func ms(_ t: SampleTime) -> Int64 { Int64(t / samplesPerMs) }
    private static func time(_ ms: Int64) -> SampleTime { SampleTime(ms) * samplesPerMs }

    private static func publish(_ outputs: [SessionWindow.Output]) -> [AnalysisEvent] {
        outputs.compactMap { output in
            guard case .frame(let m, let intervalStart, let intervalHr) = output, m.sampleCount > 0 else { return nil }
            return .heartFrame(HeartFrame(start: time(m.startMs), end: time(m.endMs), intervalStart: time(intervalStart),
                                          intervalHrMeanBpm: intervalHr, metrics: m.values))
        }
    }
}
