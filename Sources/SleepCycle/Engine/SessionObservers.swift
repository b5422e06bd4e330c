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

    public init(capacity: Int = 256) {
        events = ObserverFanOut(capacity: capacity)
        breathingRates = ObserverFanOut(capacity: capacity)
        sleepStages = ObserverFanOut(capacity: capacity)
        audioHealth = ObserverFanOut(capacity: capacity)
        progress = ObserverFanOut(capacity: capacity)
    }

    /// Items lost by slow observers, over all streams.
    public var droppedCount: Int {
        events.droppedCount + breathingRates.droppedCount + sleepStages.droppedCount + audioHealth.droppedCount
            + progress.droppedCount
    }

    /// Ends the current observers' loops (end of a session); later observers see the next session.
    func finishCurrentStreams() {
        events.finishCurrentStreams(); breathingRates.finishCurrentStreams(); sleepStages.finishCurrentStreams()
        audioHealth.finishCurrentStreams(); progress.finishCurrentStreams()
    }
}
