import Foundation
import SleepCycleBus
import SleepCycleDSP
import AudioHealth
import EventDetection
import Breathing
import Staging
import SleepStatistics
import SmartAlarm

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
    /// Where each kind of side input came from (e.g. its file), named in warnings.
    public var sideInputOrigins: [SideInputKind: String] = [:]
    /// Options the lead wires into consumers (alarm time/window, snorer count, channel separation, clip folder).
    public var alarm: AlarmOption?
    public var clipsDirectory: String?
    /// Sound-event detection on (default). Off only to measure what detection costs (`analyze --no-detection`).
    public var eventDetection = true

    public init() {}
    public static let `default` = PipelineOptions()

    /// The smart alarm: wake the sleeper at the latest at `time`, in light sleep or at a movement within the window
    /// of `windowSeconds` before it (`--alarm HH:MM --alarm-window 30m`).
    public struct AlarmOption: Sendable, Hashable {
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

/// What a session knows when its consumers are built.
public struct PipelineContext: Sendable {
    public var info: SessionInfo
    /// Channels delivered to analysis (1 or 2).
    public var channelCount: Int
    public var options: PipelineOptions
}

/// A bus consumer and the capabilities it brings.
public struct ConsumerRegistration {
    public var name: String
    public var provides: Set<SleepAnalysisFeature>
    public var consumer: any AnalysisConsumer
    public init(name: String, provides: Set<SleepAnalysisFeature> = [], consumer: any AnalysisConsumer) {
        self.name = name; self.provides = provides; self.consumer = consumer
    }
}

/// THE place where the pipeline's consumers are listed, in bus order. Each consumer receives every event after the
/// ones above it; events they publish join the back of the FIFO.
///
/// Wiring a consumer = one line in `consumers(for:)` plus its capabilities in `capabilities(channelCount:)`.
public enum PipelineBuilder {
    /// The feature extractor used when `PipelineOptions.featureExtractor` is nil (nil = no features yet).
    public static var defaultFeatureExtractor: FeatureExtractorFactory? {
        { channel, frame, hop in
            try FeatureAnalyzer(frameLength: frame, hopLength: hop, sampleRate: AnalysisClock.sampleRate,
                                channel: channel)
        }
    }

    public static func consumers(for context: PipelineContext) throws -> [ConsumerRegistration] {
        var list: [ConsumerRegistration] = []
        // Audio health, one monitor per analysed channel (tagged only for stereo).
        for c in 0..<context.channelCount {
            let tag: AudioChannel? = context.channelCount > 1 ? AudioChannel(rawValue: c) : nil
            list.append(ConsumerRegistration(
                name: "AudioHealth[\(c)]",
                consumer: AudioHealthMonitor(configuration: context.options.health, channelIndex: c, channelTag: tag)))
        }
        // Sound events: snoring (with signatures), talking, coughing, movement, from the frame features.
        if context.options.eventDetection {
            list.append(ConsumerRegistration(name: "EventDetection", provides: [.audioEvents, .snoringDetection],
                                             consumer: try EventDetector()))
        }
        // Breathing rate: one estimator for all channels (tags stereo output by channel).
        list.append(ConsumerRegistration(name: "Breathing", consumer: BreathingRateEstimator()))
        // Staging reads events, breathing rates, heart rate and motion; online epochs every 30 s, the whole-night
        // Viterbi pass as `.sleepStageRevised` at the end.
        list.append(ConsumerRegistration(name: "Staging", provides: [.sleepStaging, .realTimeSleepStaging],
                                         consumer: try SleepStager()))
        if let alarm = context.options.alarm {
            let spec = alarm.spec(clock: context.info.clock)
            list.append(ConsumerRegistration(name: "SmartAlarm", provides: [.smartAlarm], consumer: SmartAlarm(spec: spec)))
        }
        return list
    }

    /// Capabilities of this build for a session of `channelCount` channels (see `SleepAnalysisFeatures`).
    public static func capabilities(channelCount: Int = 1, options: PipelineOptions = .default)
        -> Set<SleepAnalysisFeature> {
        let info = SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                               sourceSampleRate: AnalysisClock.sampleRate, channelCount: channelCount)
        let context = PipelineContext(info: info, channelCount: channelCount, options: options)
        let provided = ((try? consumers(for: context)) ?? []).reduce(into: Set<SleepAnalysisFeature>()) {
            $0.formUnion($1.provides)
        }
        return provided
    }

    /// The night statistics from the final stage epochs and events: the SleepStatistics module's `NightStatistics`
    /// (conventions in docs/0007) over the whole analysed recording as time in bed (`bedStart` 0, `bedEnd` the
    /// end), converted to seconds and dates. As the JSON contract fixes, when there was no sleep (`finalWakeTime`
    /// nil) every other statistic is reported as 0.
    public static func statistics(epochs: [StageEpoch], events: [SoundEvent], end: SampleTime,
                                  clock: AnalysisClock) -> SleepSessionStatistics {
        var stats = SleepSessionStatistics()
        for stage in SleepStage.allCases { stats.sleepStageDurations[stage] = 0 }
        let night = NightStatistics(hypnogram: epochs.sorted { $0.start < $1.start }, events: events,
                                    bedStart: 0, bedEnd: end)
        guard let finalWake = night.finalWakeTime else { return stats }
        stats.finalWakeTime = clock.date(of: finalWake)
        stats.totalSleepDuration = AnalysisClock.seconds(night.totalSleepDuration)
        stats.sleepOnsetLatency = AnalysisClock.seconds(night.sleepOnsetLatency)
        stats.sleepEfficiency = night.sleepEfficiency
        stats.numberOfAwakenings = night.numberOfAwakenings
        stats.snoreTime = AnalysisClock.seconds(night.snoreTime)
        stats.snoreSessions = night.snoreSessions.map {
            DateInterval(start: clock.date(of: $0.start), end: clock.date(of: $0.end))
        }
        for stage in SleepStage.allCases {
            stats.sleepStageDurations[stage] = AnalysisClock.seconds(night.sleepStageDurations[stage] ?? 0)
        }
        return stats
    }
}
