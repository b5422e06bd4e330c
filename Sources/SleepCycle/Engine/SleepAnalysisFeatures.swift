/// A capability of the engine (Sleep Cycle SDK vocabulary).
public enum SleepAnalysisFeature: String, Sendable, Hashable, CaseIterable {
    case sleepStaging, smartAlarm, audioEvents, snoringDetection, realTimeSleepStaging, multiChannelAnalysis, audioClips,
        heartSession
}

/// Which capabilities this build and configuration provide (`SleepAnalysisEngine.initialize`).
public struct SleepAnalysisFeatures: Sendable, Hashable {
    public var sleepStaging: Bool
    public var smartAlarm: Bool
    public var audioEvents: Bool
    public var snoringDetection: Bool
    public var realTimeSleepStaging: Bool
    public var multiChannelAnalysis: Bool
    public var audioClips: Bool
    /// Heart frames and a night summary from a wearable's readings (`push(heartRate:…)`, `analyze --hr`).
    public var heartSession: Bool

    public init(_ set: Set<SleepAnalysisFeature>) {
        sleepStaging = set.contains(.sleepStaging)
        smartAlarm = set.contains(.smartAlarm)
        audioEvents = set.contains(.audioEvents)
        snoringDetection = set.contains(.snoringDetection)
        realTimeSleepStaging = set.contains(.realTimeSleepStaging)
        multiChannelAnalysis = set.contains(.multiChannelAnalysis)
        audioClips = set.contains(.audioClips)
        heartSession = set.contains(.heartSession)
    }

    public func contains(_ feature: SleepAnalysisFeature) -> Bool {
        switch feature {
        case .sleepStaging: sleepStaging
        case .smartAlarm: smartAlarm
        case .audioEvents: audioEvents
        case .snoringDetection: snoringDetection
        case .realTimeSleepStaging: realTimeSleepStaging
        case .multiChannelAnalysis: multiChannelAnalysis
        case .audioClips: audioClips
        case .heartSession: heartSession
        }
    }
}
