import ArgumentParser
import Foundation
import Logging
import SleepCycleFormats

/// `--verbose` / `--quiet`, shared by every command.
struct DiagnosticOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Also print what the command is doing (input format, speed) on standard error.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Print only errors: no warnings and no progress bar.")
    var quiet = false

    func validate() throws {
        if verbose && quiet { throw ValidationError("--verbose and --quiet cannot be used together") }
    }

    /// Routes swift-log's messages (the CLI's and the libraries') to standard error, one line each.
    func bootstrap() {
        let level: Logger.Level = quiet ? .error : verbose ? .debug : .warning
        Diagnostics.level = level
        LoggingSystem.bootstrap { _ in LineLogHandler(logLevel: level) }
    }
}

/// The command line's logger.
enum Diagnostics {
    nonisolated(unsafe) static var level: Logger.Level = .warning
    static let log = Logger(label: "sleepcycle")
}

/// One line per message on standard error: `warning: …`, `info: …`, `debug: …` (errors are printed by the
/// command's error handling, not logged twice). Control characters in messages are escaped.
struct LineLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let text = MessageText.line(event.message.description)
        StandardError.write("\(event.level == .critical ? "error" : event.level.rawValue): \(text)")
    }
}

/// Lines on standard error (unbuffered `write(2)`; a failure to write a message is ignored).
enum StandardError {
    static func write(_ line: String) { writeRaw(line + "\n") }

    /// `text` as it is (the progress bar's carriage returns and erase sequences).
    static func writeRaw(_ text: String) {
        var text = text
        text.withUTF8 { u in
            var done = 0
            while done < u.count {
                let n = Foundation.write(STDERR_FILENO, u.baseAddress! + done, u.count - done)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                done += n
            }
        }
    }
}
