// The types a SleepCycle user names come with `import SleepCycle`: the bus vocabulary (`SleepStage`, `EventType`,
// `HeartRateSample`, `MotionSample`, `AnalysisEvent`, …), the audio sources (`AudioFileSource`,
// `InjectedAudioSource`, `ALSACaptureSource`, `PacedSource`), the text formats (`ISO8601Time`, `CSVTable`) and the
// night store (`NightStore`).
// swift-nio's `NIO` module re-exports `NIOCore` the same way.
@_exported import SleepCycleAudio
@_exported import SleepCycleBus
@_exported import SleepCycleFormats
@_exported import SleepCycleStore
@_exported import ChannelSeparation
@_exported import AudioClips
@_exported import HeartSession
