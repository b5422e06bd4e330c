import Foundation
import SleepCycleBus

/// Receives the analysed audio in fixed batches with the events started and ended meanwhile
/// (Sleep Cycle SDK `AudioEventListener`). Called on the analysis thread: return quickly.
public protocol AudioEventListener: AnyObject {
    /// - Parameters:
    ///   - audioSamples: the batch's analysis-rate samples (the mean of the channels for stereo).
    ///   - audioStartTime / audioEndTime: wall-clock span of the samples, end exclusive.
    ///   - eventsStarted / eventsEnded: events whose start / end was published since the previous batch.
    ///   - rms: root-mean-square of `audioSamples`.
    func onAudioAnalysisBatchCompleted(sessionId: UUID, audioSamples: [Float], audioSampleRate: Int,
                                       audioStartTime: Date, audioEndTime: Date, eventsStarted: [SleepEvent],
                                       eventsEnded: [SleepEvent], rms: Float)
}
