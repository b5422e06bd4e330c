import SleepCycleBus

/// A consumer that sees one sleeper's share of a two-sleeper session (channel separation): their events, their
/// channel's breathing, health and features, their own stage epochs, and — for the primary sleeper — the wearable's
/// heart rate and motion. Its `.sleepStage` output is tagged with the channel. The inner consumer is a plain mono
/// consumer (the stager, the alarm) and never knows.
///
/// With `defersEnding`, `.sessionEnding` reaches the inner consumer only at `.sessionEnded`: the detector's last
/// candidates and the attributor's last decisions, published in reply to `.sessionEnding`, then reach the stager
/// before its whole-night pass.
struct ChannelScoped<Inner: AnalysisConsumer>: AnalysisConsumer {
    var inner: Inner
    let channel: AudioChannel
    /// Whether heart-rate and motion samples are this sleeper's (the wearable is worn by the primary sleeper).
    let takesSideInputs: Bool
    let defersEnding: Bool
    private var endingAt: SampleTime?

    init(_ inner: Inner, channel: AudioChannel, takesSideInputs: Bool, defersEnding: Bool) {
        self.inner = inner; self.channel = channel; self.takesSideInputs = takesSideInputs
        self.defersEnding = defersEnding
    }

    mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .sessionStarted(var info):
            info.channelCount = 1
            return forward(.sessionStarted(info))
        case .healthChanged(var h):
            guard h.channel == channel else { return [] }
            h.channel = nil
            return forward(.healthChanged(h))
        case .eventStarted(let e), .eventEnded(let e):
            return e.channel == channel ? forward(event) : []
        case .breathingRate(let b):
            return b.channel == channel ? forward(event) : []
        case .breathingTrace(let b):
            return b.channel == channel ? forward(event) : []
        case .features(let f):
            return f.channel == channel.rawValue ? forward(event) : []
        case .sleepStage(let s), .sleepStageRevised(let s):
            return s.channel == channel ? forward(event) : []
        case .heartRate, .heartFrame, .heartSummary, .motion:
            return takesSideInputs ? forward(event) : []
        case .channelEnding(let c, let end):
            return c == channel ? forward(.sessionEnding(at: end)) : []
        case .sessionEnding(let end) where defersEnding:
            endingAt = end
            return []
        case .sessionEnded:
            var out: [AnalysisEvent] = []
            if let end = endingAt { out = forward(.sessionEnding(at: end)); endingAt = nil }
            return out + forward(event)
        default:
            return forward(event)
        }
    }

    private mutating func forward(_ event: AnalysisEvent) -> [AnalysisEvent] {
        inner.handle(event).map { out in
            switch out {
            case .sleepStage(var s): s.channel = channel; return .sleepStage(s)
            case .sleepStageRevised(var s): s.channel = channel; return .sleepStageRevised(s)
            default: return out
            }
        }
    }
}
