/// Lifecycle errors of the engine: calls made in the wrong state or with an unusable configuration.
public enum SleepAnalysisEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    case notInitialized
    case alreadyRunning
    case notRunning
    case unsupportedConfiguration(String)

    public var description: String {
        switch self {
        case .notInitialized: "the engine is not initialized: call initialize() before startAnalysis"
        case .alreadyRunning: "an analysis is already running: call stopAnalysis() first"
        case .notRunning: "no analysis is running: call startAnalysis first"
        case .unsupportedConfiguration(let why): "unsupported configuration: \(why)"
        }
    }
}
