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

    public private(set) var state = State.running
    /// Readings refused because they came earlier than one already taken (a live push too late), or before the
    /// session's start.
    public private(set) var refusedReadings = 0
    private var window: SessionWindow
    private let latenessMs: Int64
    private static let samplesPerMs = SampleTime(AnalysisClock.sampleRate / 1000)

    public init(profile: ComputeProfile = nightProfile, latenessSec: Double = 10) throws(SessionError) {
        if let problem = SessionConfig(profile: profile).problem { throw SessionError(problem) }
        window = SessionWindow(profile: profile, includeRaw: false, alignsFrames: true)
        latenessMs = Int64(latenessSec * 1000)
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        guard state == .running else { return [] }
        switch event {
        case .heartRate(let s):
            guard s.time >= 0 else { refusedReadings += 1; return [] }
            let reading = BiosignalSample(timestampMs: Int64(s.time / Self.samplesPerMs), hrBpm: s.bpm,
                                          rrMs: s.rrMs.map { [$0] } ?? [])
            do { return publish(try window.add(reading)) } catch { refusedReadings += 1; return [] }
        case .audio(let block):
            return publish(window.advance(to: ms(block.end) - latenessMs))
        case .gap(let gap):
            return publish(window.advance(to: ms(gap.start + gap.length) - latenessMs))
        case .sessionEnding(let end):
            state = .finished
            let (outputs, summary) = window.finish(end: ms(end))
            var out = publish(outputs)
            if let summary, summary.sampleCount > 0 {
                out.append(.heartSummary(HeartFrame(start: time(summary.startMs), end: time(summary.endMs),
                                                    intervalStart: time(summary.startMs), intervalHrMeanBpm: summary.hrMeanBpm,
                                                    metrics: summary.values)))
            }
            return out
        default:
            return []
        }
    }

    private func ms(_ t: SampleTime) -> Int64 { Int64(t / Self.samplesPerMs) }
    private func time(_ ms: Int64) -> SampleTime { SampleTime(ms) * Self.samplesPerMs }

    private func publish(_ outputs: [SessionWindow.Output]) -> [AnalysisEvent] {
        outputs.compactMap { output in
            guard case .frame(let m, let intervalStart, let intervalHr) = output, m.sampleCount > 0 else { return nil }
            return .heartFrame(HeartFrame(start: time(m.startMs), end: time(m.endMs), intervalStart: time(intervalStart),
                                          intervalHrMeanBpm: intervalHr, metrics: m.values))
        }
    }
}
