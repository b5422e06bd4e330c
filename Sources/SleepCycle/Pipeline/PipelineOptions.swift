import Foundation
import AudioHealth
import SleepCycleBus
import SmartAlarm
import ChannelSeparation
import AudioClips

/// Everything a pipeline needs besides its source. `Sendable` so the actor can hand it to the analysis thread.
public struct PipelineOptions: Sendable {
    /// Frame / hop of the shared feature extraction (samples at 16 kHz).
    public var frameLength = 1024
    public var hopLength = 512
    /// Audio-event listener batch length (seconds of analysed audio per callback).
    public var listenerBatchSeconds = 1.0
    public var health = AudioHealthConfiguration.default
    /// Buffer of each observer stream (items); older items are dropped beyond it.
    public var observerBufferSize = 256
    /// Makes the per-channel feature extractor; nil = `PipelineBuilder.defaultFeatureExtractor`.
    public var featureExtractor: FeatureExtractorFactory?
    /// Timed side inputs put on the bus in time order, interleaved with the audio: `.heartRate`, `.motion`
    /// (`--hr FILE`, `--motion FILE`). Each is published before the first audio block starting after its time.
    /// Samples outside the recording are not used and are reported in the result's `warnings`.
    public var sideInputs: [AnalysisEvent] = []
    /// Appends to `sideInputs`; a first batch is stored as it is, without the copy `+=` makes (a night of 50-Hz
    /// motion is over a million events, 100 MB).
    public mutating func add(sideInputs events: [AnalysisEvent]) {
        if sideInputs.isEmpty { sideInputs = events } else { sideInputs += events }
    }
    /// Where each kind of side input came from (e.g. its file), named in warnings.
    public var sideInputOrigins: [SideInputKind: String] = [:]
    /// Options the lead wires into consumers (alarm time/window, snorer count, channel separation, clip folder).
    public var alarm: AlarmOption?
    /// Audio clips of events (`--clips DIR`): what to keep and where; nil: none (the default: bedroom audio is
    /// private).
    public var clips: ClipsOption?
    /// Two sleepers on a stereo input: how each channel's events are attributed to one sleeper, and a session per
    /// sleeper (`analyze --channel-separation`). nil: the channels are analysed as one session.
    public var channelSeparation: ChannelSeparationConfig?
    /// Sound-event detection on (default). Off only to measure what detection costs (`analyze --no-detection`).
    public var eventDetection = true
    /// Encrypts the wearable readings a live night journals into the store (`WearableSealing`); needed again to
    /// resume the night.
    public var wearableKey: ClipKey?

    public init() {}
    public static let `default` = PipelineOptions()

    /// Audio clips: the settings, the folder (nil: samples to `receiver` only), the key that encrypts them.
    public struct ClipsOption: Sendable {
        public var config: AudioClipsConfig
        public var directory: String?
        public var key: ClipKey?
        /// Called on the analysing thread with each clip (its samples, and its file) as it is published, with the
        /// session's clock.
        public var receiver: (@Sendable (ClipDelivery, AnalysisClock) -> Void)?
        /// Flush each clip file to the disk before it takes its name (live nights; see `ClipOutput.durable`).
        public var durable: Bool
        public init(config: AudioClipsConfig = .default, directory: String?, key: ClipKey? = nil,
                    receiver: (@Sendable (ClipDelivery, AnalysisClock) -> Void)? = nil, durable: Bool = false) {
            self.config = config; self.directory = directory; self.key = key; self.receiver = receiver
            self.durable = durable
        }
    }

    /// The smart alarm: wake the sleeper at the latest at `time`, in light sleep or at a movement within the window
    /// of `windowSeconds` before it (`--alarm HH:MM --alarm-window 30m`).
    public struct AlarmOption: Sendable, Hashable, Codable {
        /// The latest moment to wake.
        public var time: Date
        public var windowSeconds: Double
        public init(time: Date, windowSeconds: Double = 1800) { self.time = time; self.windowSeconds = windowSeconds }

        /// The alarm on a session's timeline.
        func spec(clock: AnalysisClock) -> AlarmSpec {
            AlarmSpec(alarmTime: AnalysisClock.samples(seconds: time.timeIntervalSince(clock.start)),
                      window: AnalysisClock.samples(seconds: windowSeconds))
        }
    }
}
