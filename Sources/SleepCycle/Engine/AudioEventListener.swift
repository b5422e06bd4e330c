import Foundation
import SleepCycleBus

/// Receives the analysed audio in fixed batches with the events started and ended meanwhile
/// (Sleep Cycle SDK `AudioEventListener`). Called on the analysis thread: return quickly.
public protocol AudioEventListener: AnyObject {
    /// - Parameters:
    ///   - sessionId: the session the batch belongs to.
    ///   - audioSamples: the batch's analysis-rate samples (the mean of the channels for stereo).
    ///   - audioSampleRate: the rate of `audioSamples` (16 kHz, the analysis rate).
    ///   - audioStartTime: wall-clock time of the first sample.
    ///   - audioEndTime: wall-clock time just after the last sample (end exclusive).
    ///   - eventsStarted: events whose start was published since the previous batch.
    ///   - eventsEnded: events whose end was published since the previous batch.
    ///   - rms: root-mean-square of `audioSamples`.
    func onAudioAnalysisBatchCompleted(sessionId: UUID, audioSamples: [Float], audioSampleRate: Int,
                                       audioStartTime: Date, audioEndTime: Date, eventsStarted: [SleepEvent],
                                       eventsEnded: [SleepEvent], rms: Float)
}
