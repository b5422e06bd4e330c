import AudioClips
import Foundation
import SleepCycleBus

/// An event's audio clip as an app receives it (`SleepAnalysisEngine.createAudioClipsProducer`).
public struct AudioClip: Sendable {
    public var event: SleepEvent
    /// The clip's first and last sample in time.
    public var start: Date
    public var end: Date
    public var sampleRate: Int
    /// The clip's samples, mono, at the source's rate (the event's channel with stereo input).
    public var samples: [Float]
    /// The file written, when the producer writes files (nil otherwise).
    public var file: URL?
    /// The clip's first sample as a frame index at the source rate from the start of the recording.
    public var startFrame: Int64
}

/// Makes the audio clips of the sessions an engine starts: `clips` delivers each one as it is written (a bounded,
/// lossy stream like the engine's others: an app that falls behind loses the oldest).
public final class AudioClipsProducer: Sendable {
    public let config: AudioClipsConfig
    public let directory: String?
    public let clips: AsyncStream<AudioClip>
    private let continuation: AsyncStream<AudioClip>.Continuation

    init(config: AudioClipsConfig, directory: String?, bufferSize: Int) {
        self.config = config
        self.directory = directory
        (clips, continuation) = AsyncStream.makeStream(of: AudioClip.self, bufferingPolicy: .bufferingNewest(bufferSize))
    }

    /// The pipeline's receiver: written clips (not those given up) reach `clips`.
    func receiver(sessionId: UUID) -> @Sendable (ClipDelivery, AnalysisClock) -> Void {
        let continuation = self.continuation, directory = self.directory
        return { delivery, clock in
            let c = delivery.clip
            guard c.status == .written else { return }
            var event = SleepEvent(delivery.event, clock: clock, sessionId: sessionId)
            let file = c.path.flatMap { path in directory.map { URL(fileURLWithPath: $0).appendingPathComponent(path) } }
            event.clip = EventClip(c, clock: clock)
            continuation.yield(AudioClip(event: event, start: clock.date(of: c.start), end: clock.date(of: c.end),
                                         sampleRate: c.sampleRate, samples: delivery.floatSamples, file: file,
                                         startFrame: c.firstFrame))
        }
    }

    /// No more clips (the engine is done with the producer).
    public func finish() { continuation.finish() }
}
