import ArgumentParser
import AudioClips
import HeartSession
import Foundation
import SleepCycle
import SleepCycleAudio
import SleepCycleFormats
import Staging

@main
struct SleepCycleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleepcycle",
        abstract: "Audio-first sleep analysis: snoring, talking, coughing, movement, breathing, sleep stages.",
        discussion: "Exit status: 0 success, 64 bad option, 65 bad input file, 66 input missing or unreadable, "
            + "69 audio device unavailable, 70 internal error, 73 output refused or not creatable, 74 read or "
            + "write failure, 75 store busy (docs/cli.md).",
        version: SleepCycleVersion.current,
        subcommands: [Analyze.self, Record.self, Sessions.self, Clips.self, HRSession.self, Features.self, Stage.self, BreathingEval.self,
                      DetectDev.self, HRVDev.self, ReportDev.self]
    )

    /// Parses the arguments (file names that are not UTF-8 included), runs the command, and turns every failure
    /// into ONE line on standard error and an exit status of `CLIError.Status`.
    static func main() async {
        // A closed standard descriptor (`<&-`) is taken by a placeholder, /dev/null opened with the opposite
        // access: the files and pipes the command opens never become descriptor 0–2 (a pipe of its own read as
        // standard input, a report written into the store), while reading or writing it still fails (EBADF) as on a
        // closed descriptor, with the usual one-line error.
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let placeholder = open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC)
            if placeholder >= 0, placeholder != fd { dup2(placeholder, fd); close(placeholder) }
        }
        // A closed pipe on standard output must end the command with an error status, not kill it by a signal.
        signal(SIGPIPE, SIG_IGN)
        let arguments = (1..<Int(CommandLine.argc)).map { i -> String in
            guard let arg = CommandLine.unsafeArgv[i] else { return "" }
            return PathEncoding.string(fromBytes: UnsafeBufferPointer(start: UnsafeRawPointer(arg)
                .assumingMemoryBound(to: UInt8.self), count: strlen(arg)))
        }
        do {
            try checkHelpTopic(arguments)
            var command = try parseAsRoot(arguments)
            if var async = command as? any AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
            Foundation.exit(0)
        } catch {
            Foundation.exit(report(error, arguments: arguments))
        }
    }

    /// `help <subcommand> …` names existing subcommands: ArgumentParser prints the overview and succeeds for a name
    /// it does not know (`help analyse`), which hides the typo from a script.
    static func checkHelpTopic(_ arguments: [String]) throws(CLIError) {
        guard arguments.first == "help" else { return }
        var command: any ParsableCommand.Type = SleepCycleCommand.self
        for name in arguments.dropFirst() where !name.hasPrefix("-") {
            guard let sub = command.configuration.subcommands.first(where: { $0._commandName == name }) else {
                let path = ([SleepCycleCommand._commandName] + arguments.prefix { $0 != name }.dropFirst()).joined(separator: " ")
                throw CLIError(.usage, "\(path): no subcommand '\(MessageText.field(name))' (see '\(path) --help')")
            }
            command = sub
        }
    }

    /// Prints what `error` means for the user and returns the exit status.
    static func report(_ error: any Error, arguments: [String]) -> Int32 {
        switch error {
        case let code as ExitCode:
            return code.rawValue
        case is CLIError, is AudioError, is InputFileError, is StagingError, is OutputError, is DetectDevError,
             is StoreError, is SleepAnalysisEngineError, is ClipError, is SessionError:
            let failure = CLIError.from(error)
            if failure.status != .brokenPipe { StandardError.write(MessageText.line(failure.message)) }
            return failure.status.rawValue
        default:
            break
        }
        // swift-argument-parser's own outcomes: help, version and completion scripts (status 0) and usage errors.
        let code = exitCode(for: error)
        if code == .success {
            do {
                try OutputTarget.standardOutput.write(fullMessage(for: error) + "\n")
            } catch {
                return report(error, arguments: arguments)
            }
            return 0
        }
        guard code.rawValue == CLIError.Status.usage.rawValue else {
            let failure = CLIError.from(error)
            StandardError.write(MessageText.line(failure.message))
            return failure.status.rawValue
        }
        let usage = message(for: error).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
        let name = commandName(arguments)
        StandardError.write("\(name): \(MessageText.field(usage, limit: 400))\(fileReadAsOption(arguments)) (see '\(name) --help')")
        return CLIError.Status.usage.rawValue
    }

    /// A hint when an argument that starts with `-` names a file here (`analyze -night.wav`): the parser took it for
    /// options, and the usage error alone ("Missing expected argument") does not say why.
    static func fileReadAsOption(_ arguments: [String]) -> String {
        let before = arguments.prefix { $0 != "--" }
        guard let file = before.dropFirst().first(where: { argument in
            var st = stat()
            return argument.count > 1 && argument.hasPrefix("-") && !argument.hasPrefix("--")
                && PathEncoding.withCString(argument, { stat($0, &st) }) == 0
        }) else { return "" }
        let shown = MessageText.field(file)
        return "; '\(shown)' is a file but reads as options: write ./\(shown), or put it after --"
    }

    /// `sleepcycle`, `sleepcycle SUBCOMMAND` or `sleepcycle SUBCOMMAND SUBCOMMAND`, for usage messages.
    static func commandName(_ arguments: [String]) -> String {
        // The deepest command named (`sessions report`: its --help lists the options, `sessions --help` none).
        var name = "sleepcycle", commands = configuration.subcommands, rest = arguments[...]
        while let k = rest.firstIndex(where: { a in commands.contains { $0._commandName == a } }),
              let command = commands.first(where: { $0._commandName == rest[k] }) {
            name += " " + rest[k]
            commands = command.configuration.subcommands
            rest = rest[(k + 1)...]
        }
        return name
    }
}
