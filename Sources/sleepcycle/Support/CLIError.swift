import AudioClips
import EventDetection
import HeartSession
import SleepCycle
import SleepCycleAudio
import SleepCycleFormats
import SleepCycleStore
import Staging

/// A failure the command line reports as ONE line on stderr and an exit status from the scheme below
/// (BSD `sysexits.h`, which swift-argument-parser already uses for usage errors). docs/cli.md lists it.
struct CLIError: Error, CustomStringConvertible {
    /// The exit statuses of every sleepcycle command.
    enum Status: Int32 {
        /// Success.
        case ok = 0
        /// A bad option or option value (EX_USAGE).
        case usage = 64
        /// An input that exists but is not what it should be: not audio, a malformed CSV (EX_DATAERR).
        case badInput = 65
        /// An input that cannot be opened: missing, unreadable, a directory (EX_NOINPUT).
        case noInput = 66
        /// An audio device that cannot be opened (EX_UNAVAILABLE).
        case unavailable = 69
        /// A bug: please report it (EX_SOFTWARE).
        case internalError = 70
        /// An output that must not or cannot be written: an input file, read-only, a directory (EX_CANTCREAT).
        case cannotCreate = 73
        /// Reading or writing failed midway: a full disk, a broken device (EX_IOERR).
        case ioError = 74
        /// Busy for now: another recorder holds the store (EX_TEMPFAIL).
        case busy = 75
        /// The reader of standard output went away (`sleepcycle features x | head`): stop quietly, as a command
        /// killed by SIGPIPE would (128 + 13), without being killed.
        case brokenPipe = 141
    }

    var status: Status
    /// The line printed (without a trailing newline); already names the file.
    var message: String

    init(_ status: Status, _ message: String) {
        self.status = status
        self.message = message
    }

    var description: String { message }

    /// The CLI's line and status for any error a command meets.
    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let e as CLIError: return e
        case let e as AudioError: return CLIError(status(of: e.code), e.description)
        case let e as InputFileError: return CLIError(e.kind == .unreadable ? .noInput : .badInput, e.description)
        case let e as StagingError: return CLIError(.badInput, e.description)
        case let e as ISO8601Time.ParseError: return CLIError(.usage, e.description)
        case let e as OutputError: return e.brokenPipe ? CLIError(.brokenPipe, "") : CLIError(.ioError, e.message)
        case let e as DetectDevError: return CLIError(.badInput, e.description)
        case let e as DetectionError:
            // A model file given with `detect-dev --model` (the built-in one loads from the bundle and is tested).
            switch e {
            case .modelUnreadable: return CLIError(.noInput, e.description)
            case .modelInvalid: return CLIError(.badInput, e.description)
            case .invalidConfiguration: return CLIError(.usage, e.description)
            }
        case let e as StoreError:
            switch e.kind {
            case .unwritable: return CLIError(.cannotCreate, e.description)
            case .busy: return CLIError(.busy, e.description)
            case .unusable, .damaged: return CLIError(.badInput, e.description)
            case .full, .failed: return CLIError(.ioError, e.description)
            }
        case let e as SleepAnalysisEngineError:
            // The library's "unsupported configuration:" prefix names the API's error case; a user needs the reason.
            if case .unsupportedConfiguration(let why) = e { return CLIError(.usage, why) }
            return CLIError(.usage, e.description)
        case let e as ChannelSeparationError: return CLIError(e.unreadable ? .noInput : .usage, e.description)
        case let e as SessionError: return CLIError(.usage, e.description)
        case let e as ClipError:
            switch e.kind {
            case .missing: return CLIError(.noInput, e.description)
            case .invalid: return CLIError(.badInput, e.description)
            case .unwritable: return CLIError(.cannotCreate, e.description)
            case .setting: return CLIError(.usage, e.description)
            }
        default: return CLIError(.internalError, "internal error: \(error) (please report this)")
        }
    }

    static func status(of code: AudioError.Code) -> Status {
        switch code {
        case .notFound, .unreadable: .noInput
        case .device: .unavailable
        case .deviceLost, .writeFailed: .ioError
        case .invalidParameter: .usage
        default: .badInput
        }
    }
}
