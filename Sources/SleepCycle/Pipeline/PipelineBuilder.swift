import Foundation
import SleepCycleBus
import SleepCycleDSP
import AudioHealth
import EventDetection
import Breathing
import Staging
import SleepStatistics
import SmartAlarm
import ChannelSeparation
import AudioClips
import HeartSession

/// What a session knows when its consumers are built.
public struct PipelineContext: Sendable {
    public var info: SessionInfo
    /// Channels delivered to analysis (1 or 2).
    public var channelCount: Int
    public var options: PipelineOptions
    /// The id of the first sound event (a resumed night continues after the ids of its journal).
    public var firstEventId = 0
    /// A resumed night's clips written before the interruption (`NightReplay.clipRecords`).
    public var earlierClips: [EarlierClip] = []
    /// A resumed night's events without a clip record (`NightReplay.clipRecords`).
    public var unclippedEvents: [SoundEvent] = []
}

/// A bus consumer and the capabilities it brings.
public struct ConsumerRegistration {
    public var name: String
    public var provides: Set<SleepAnalysisFeature>
    public var consumer: any AnalysisConsumer
    /// Whether the consumer keeps whole-night state that a resumed night rebuilds by replaying its journal into
    /// it (staging, the alarm). Producers (health, detection, breathing) start afresh on the new audio instead.
    public var replays: Bool
    public init(name: String, provides: Set<SleepAnalysisFeature> = [], consumer: any AnalysisConsumer,
                replays: Bool = false) {
        self.name = name; self.provides = provides; self.consumer = consumer; self.replays = replays
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
            // The sound level, a reading per second (the reports' loudness and each event's `levelDb`).
            list.append(ConsumerRegistration(name: "LevelMeter[\(c)]",
                                             consumer: LevelMeter(channelIndex: c, channelTag: tag)))
        }
        // Two sleepers: the detector's events are candidates until the attributor gives each sound to one sleeper.
        let separation = context.channelCount == 2 ? context.options.channelSeparation : nil
        // Sound events: snoring (with signatures), talking, coughing, movement, from the frame features.
        if context.options.eventDetection {
            var detector = try EventDetector(firstEventId: context.firstEventId)
            detector.publishesCandidates = separation != nil
            list.append(ConsumerRegistration(name: "EventDetection", provides: [.audioEvents, .snoringDetection],
                                             consumer: detector))
            if let separation {
                list.append(ConsumerRegistration(name: "ChannelAttribution", provides: [.multiChannelAnalysis],
                                                 consumer: try ChannelAttributor(config: separation)))
            }
        }
        // The heart session over the wearable's readings: frames every epoch (staging reads their heart rate) and a
        // night summary. The wearable is the primary sleeper's.
        let heart = try HeartSessionConsumer()
        list.append(ConsumerRegistration(name: "HeartSession", provides: [.heartSession],
                                         consumer: separation == nil ? heart as any AnalysisConsumer
                                             : ChannelScoped(heart, channel: .primary, takesSideInputs: true, defersEnding: false),
                                         replays: true))
        // Breathing rate: one estimator for all channels (tags stereo output by channel).
        list.append(ConsumerRegistration(name: "Breathing", consumer: BreathingRateEstimator()))
        // Staging reads events, breathing rates, heart rate and motion; online epochs every 30 s, the whole-night
        // Viterbi pass as `.sleepStageRevised` at the end. With two sleepers, one stager per sleeper, each seeing
        // only its sleeper's share (the wearable's samples are the primary sleeper's); they wait the attributor's
        // decision delay longer before scoring an epoch online.
        if let separation {
            var configuration = SleepStager.Configuration()
            configuration.decisionLagSeconds += separation.decisionDelaySeconds
            for channel in AudioChannel.allCases {
                let stager = ChannelScoped(try SleepStager(configuration: configuration), channel: channel,
                                           takesSideInputs: channel == .primary, defersEnding: true)
                list.append(ConsumerRegistration(name: "Staging[\(channel.name)]",
                                                 provides: [.sleepStaging, .realTimeSleepStaging],
                                                 consumer: stager, replays: true))
            }
        } else {
            list.append(ConsumerRegistration(name: "Staging", provides: [.sleepStaging, .realTimeSleepStaging],
                                             consumer: try SleepStager(), replays: true))
        }
        if let alarm = context.options.alarm {
            let spec = alarm.spec(clock: context.info.clock)
            // With two sleepers the alarm wakes the primary sleeper (the one the wearable and the phone belong to).
            let consumer: any AnalysisConsumer = separation == nil ? SmartAlarm(spec: spec)
                : ChannelScoped(SmartAlarm(spec: spec), channel: .primary, takesSideInputs: true, defersEnding: false)
            list.append(ConsumerRegistration(name: "SmartAlarm", provides: [.smartAlarm], consumer: consumer,
                                             replays: true))
        }
        // Audio clips of the decided events, cut from the source-rate audio (`.sourceAudio`). With two sleepers an
        // event is decided the attributor's delay later, so the pre-roll holds that much more; each sleeper's clips go
        // to the folder of their own session id.
        if let clips = context.options.clips {
            var config = clips.config
            if let separation { config.preRollSeconds = config.effectivePreRoll + separation.decisionDelaySeconds }
            let ids = separation == nil ? nil : AnalysisPipeline.sessionIds(for: context.info.id)
            let session = context.info.id, clock = context.info.clock
            let folderName: @Sendable (AudioChannel?) -> String = { channel in
                (channel.flatMap { ids?[$0] } ?? session).uuidString
            }
            var receiver: (@Sendable (ClipDelivery) -> Void)?
            if let receive = clips.receiver { receiver = { delivery in receive(delivery, clock) } }
            let output = ClipOutput(directory: clips.directory, key: clips.key, folderName: folderName,
                                    receiver: receiver, durable: clips.durable)
            list.append(ConsumerRegistration(name: "AudioClips", provides: [.audioClips],
                                             consumer: try AudioClips(config: config, output: output,
                                                                            earlier: context.earlierClips,
                                                                            unclipped: context.unclippedEvents)))
        }
        return list
    }

    /// Capabilities of this build for a session of `channelCount` channels (see `SleepAnalysisFeatures`).
    public static func capabilities(channelCount: Int = 1, options: PipelineOptions = .default)
        -> Set<SleepAnalysisFeature> {
        let info = SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                               sourceSampleRate: AnalysisClock.sampleRate, channelCount: channelCount)
        var options = options
        // Two channels can always be separated (the default preset unless one is given).
        if channelCount == 2, options.channelSeparation == nil { options.channelSeparation = .bedSideMics }
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
    /// `levels`: events' levels (dBFS) by id and `backgroundLevelDb` the night's median epoch level, for the snore
    /// score.
    public static func statistics(epochs: [StageEpoch], events: [SoundEvent], start: SampleTime = 0, end: SampleTime,
                                  clock: AnalysisClock, levels: [Int: Double] = [:],
                                  backgroundLevelDb: Double? = nil) -> SleepSessionStatistics {
        var stats = SleepSessionStatistics()
        for stage in SleepStage.allCases { stats.sleepStageDurations[stage] = 0 }
        for stage in SleepStage.allCases where stage != .awake { stats.sleepStagePercentages[stage] = 0 }
        let night = NightStatistics(hypnogram: epochs.sorted { $0.start < $1.start }, events: events,
                                    bedStart: start, bedEnd: end, levels: levels, backgroundLevelDb: backgroundLevelDb)
        guard let finalWake = night.finalWakeTime else { return stats }
        stats.timeInBed = AnalysisClock.seconds(night.timeInBed)
        stats.sleepPeriodTime = AnalysisClock.seconds(night.sleepPeriodTime)
        stats.wakeAfterSleepOnset = AnalysisClock.seconds(night.wakeAfterSleepOnset)
        stats.remLatency = night.remLatency.map(AnalysisClock.seconds)
        stats.sleepStagePercentages = night.sleepStagePercentages
        stats.snoreScore = night.snoreScore
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
