import Foundation

/// Something that did not stop an analysis but that the user should know: a truncated or damaged file, samples
/// that were not numbers, wearable samples outside the recording. `message` is one line and names the input.
public struct AnalysisWarning: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of problem (extensible, like `AudioError.Code`).
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file ends before the length its header declares; the audio present was analysed.
        public static let truncated = Code("truncated")
        /// Stretches of damaged audio data were skipped and put on the timeline as missing input.
        public static let damagedAudio = Code("damagedAudio")
        /// Samples that were not finite or far out of range were replaced by silence.
        public static let invalidSamples = Code("invalidSamples")
        /// Heart-rate or motion samples fell outside the recording and were not used.
        public static let sideInputOutsideRecording = Code("sideInputOutsideRecording")
        /// The store could not be written for a while during a live night (a full disk); the journal was kept in
        /// memory meanwhile.
        public static let storeProblem = Code("storeProblem")
        /// The night's result could not be stored (it is in this result only).
        public static let notStored = Code("notStored")
        /// Some events of the chosen types have no audio clip (a size cap or per-type limit kept more probable
        /// events' clips, or a clip could not be written).
        public static let clipsDropped = Code("clipsDropped")
        /// A stored night's wearable readings are encrypted and no key was given: its result lacks them.
        public static let wearableEncrypted = Code("wearableEncrypted")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// Which kind of timed side input a sample is (for messages).
public enum SideInputKind: String, Sendable, Hashable, CaseIterable {
    case heartRate = "heart-rate"
    case motion

    init?(_ event: AnalysisEvent) {
        switch event {
        case .heartRate: self = .heartRate
        case .motion: self = .motion
        default: return nil
        }
    }

    /// The readings a side input stands for (a grouped motion sample is several; warnings count readings).
    func readings(in event: AnalysisEvent) -> Int {
        if case .motion(let m) = event { m.count } else { 1 }
    }
}
