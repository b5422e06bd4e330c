import Foundation
import SleepCycleBus

/// The engine's outward streams, one `ObserverFanOut` each: every `…Stream` access makes a new bounded observer
/// stream (`.bufferingNewest(observerBufferSize)`), and a slow observer only loses its own oldest items.
public final class SessionObservers: Sendable {
    public let events: ObserverFanOut<SleepEvent>
    public let breathingRates: ObserverFanOut<BreathingRate>
    public let sleepStages: ObserverFanOut<SleepStageInterval>
    public let audioHealth: ObserverFanOut<AudioHealthUpdate>
    /// Stream time analysed so far (one item per source read), for progress displays.
    public let progress: ObserverFanOut<SampleTime>
    /// The smart alarm when it fires (at most once per session).
    public let alarms: ObserverFanOut<AlarmRinging>

    public init(capacity: Int = 256) {
        events = ObserverFanOut(capacity: capacity)
        breathingRates = ObserverFanOut(capacity: capacity)
        sleepStages = ObserverFanOut(capacity: capacity)
        audioHealth = ObserverFanOut(capacity: capacity)
        progress = ObserverFanOut(capacity: capacity)
        alarms = ObserverFanOut(capacity: 4)
    }

    /// Items lost by slow observers, over all streams.
    public var droppedCount: Int {
        events.droppedCount + breathingRates.droppedCount + sleepStages.droppedCount + audioHealth.droppedCount
            + progress.droppedCount + alarms.droppedCount
    }

    /// Ends the current observers' loops (end of a session); later observers see the next session.
    func finishCurrentStreams() {
        events.finishCurrentStreams(); breathingRates.finishCurrentStreams(); sleepStages.finishCurrentStreams()
        audioHealth.finishCurrentStreams(); progress.finishCurrentStreams(); alarms.finishCurrentStreams()
    }
}

/// The smart alarm firing, as the engine's `alarmStream` reports it.
public struct AlarmRinging: Sendable, Hashable {
    /// When it fired (wall clock) and which rule fired it: `lightSleep`, `movement` or `deadline`.
    public var time: Date
    public var rule: String
    public var sessionId: UUID
    public init(time: Date, rule: String, sessionId: UUID) { self.time = time; self.rule = rule; self.sessionId = sessionId }
}
