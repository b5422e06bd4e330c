// The one error type of audio input (files, ALSA devices, injected buffers).
import SleepCycleFormats

/// An audio input problem a person can act on: which file or device, what was expected, what was
/// found, and the underlying cause (e.g. libsndfile's `sf_strerror`, an ALSA `snd_strerror`).
///
/// `description` is ONE line, `"<path or device>: <message>"`, optionally followed by `" (<cause>)"`; the CLI
/// prints it to stderr and exits non-zero. `code` is extensible: other files add codes with
/// `extension AudioError.Code { public static let myCode = Code("myCode") }`.
public struct AudioError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of problem (a string-backed code rather than a closed enum, so other sources can add their own).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The file does not exist.
        public static let notFound = Code("notFound")
        /// The file exists but cannot be opened or read (permissions, a directory, an I/O error).
        public static let unreadable = Code("unreadable")
        /// The file is not in an audio format libsndfile recognises.
        public static let notAudio = Code("notAudio")
        /// The audio holds no frames.
        public static let empty = Code("empty")
        /// The file ends before the frame count its header declares.
        public static let truncated = Code("truncated")
        /// Damaged audio data (a corrupt FLAC frame, a lost Ogg page) skipped and replaced by a gap (a warning).
        public static let damagedData = Code("damagedData")
        /// Decoded samples that cannot be audio (NaN, ±Inf, beyond ±16) replaced by silence (a warning).
        public static let invalidSamples = Code("invalidSamples")
        /// A recognised container with an encoding that cannot be decoded (e.g. a compressed WAV codec).
        public static let unsupportedEncoding = Code("unsupportedEncoding")
        /// A sample rate outside 8–192 kHz.
        public static let unsupportedRate = Code("unsupportedRate")
        /// More channels than the source can deliver.
        public static let tooManyChannels = Code("tooManyChannels")
        /// An audio device could not be opened or configured.
        public static let device = Code("device")
        /// An audio device vanished while capturing.
        public static let deviceLost = Code("deviceLost")
        /// A parameter (block size, channel count, …) is out of range.
        public static let invalidParameter = Code("invalidParameter")
        /// Writing an audio file failed.
        public static let writeFailed = Code("writeFailed")
    }

    public var code: Code
    /// The file path or device name the problem concerns.
    public var path: String
    /// What was expected and what was found, e.g. "sample rate 4000 Hz is not supported (expected 8000–192000 Hz)".
    public var message: String
    /// The underlying cause, e.g. libsndfile's "File contains data in an unknown format.", or nil.
    public var underlying: String?

    public init(_ code: Code, path: String, message: String, underlying: String? = nil) {
        self.code = code; self.path = path; self.message = message; self.underlying = underlying
    }

    /// One line: `"<path>: <message>"` plus `" (<underlying>)"` when there is a cause that adds information.
    public var description: String {
        var line = "\(MessageText.path(path)): \(message)"
        if let underlying, !underlying.isEmpty, underlying != message { line += " (\(underlying))" }
        return Self.singleLine(line)
    }

    /// Collapses newlines and runs of whitespace so the description is guaranteed to be one line.
    static func singleLine(_ text: String) -> String {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\t" })
            .map { $0.trimmingCharacters(in: " ") }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}

private extension Substring {
    func trimmingCharacters(in set: Character) -> Substring {
        var s = self
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return s
    }
}
