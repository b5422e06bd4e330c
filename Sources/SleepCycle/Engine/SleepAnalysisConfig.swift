import Foundation

/// What a session analyses (Sleep Cycle SDK `SleepAnalysisConfig`).
public struct SleepAnalysisConfig: Sendable, Hashable {
    /// Analyse the audio source (the only analysis input of this build; must be true).
    public var useAudio: Bool
    /// Use accelerometer motion samples (`PipelineOptions.sideInputs` `.motion`, from a wearable or phone) as
    /// staging input. When false, a session given motion samples is refused (`unsupportedConfiguration`) rather than
    /// silently ignoring them.
    public var useAccelerometer: Bool
    /// The session id; nil = a random UUID (live sessions). Files analysed by the CLI use a name-based id.
    public var sessionId: UUID?
    /// Offset from UTC of the sleeper's clock, seconds east: the result's text summary shows clock times in it.
    public var utcOffsetSeconds: Int
    /// Settings of the program that records, kept with a journaled night for its resume (the command line keeps its
    /// input options here).
    public var recorderSettings: [String: String]
    public init(useAudio: Bool = true, useAccelerometer: Bool = false, sessionId: UUID? = nil,
                utcOffsetSeconds: Int = 0, recorderSettings: [String: String] = [:]) {
        self.useAudio = useAudio; self.useAccelerometer = useAccelerometer; self.sessionId = sessionId
        self.utcOffsetSeconds = utcOffsetSeconds; self.recorderSettings = recorderSettings
    }
}
