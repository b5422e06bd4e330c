import ArgumentParser
import Foundation
import SleepCycle
import SleepCycleFormats

@main
struct SleepCycleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleepcycle",
        abstract: "Audio-first sleep analysis: snoring, talking, coughing, movement, breathing, sleep stages.",
        discussion: "Exit status: 0 success, 64 bad option, 65 bad input file, 66 input missing or unreadable, "
            + "69 audio device unavailable, 70 internal error, 73 output refused or not creatable, 74 read or "
            + "write failure (docs/cli.md).",
        version: SleepCycleVersion.current,
        subcommands: [Analyze.self, Features.self, Stage.self, BreathingEval.self, DetectDev.self]
    )

    /// Parses the arguments (file names that are not UTF-8 included), runs the command, and turns every failure
    /// into ONE line on standard error and an exit status of `CLIError.Status`.
    static func main() async {
        // A closed pipe on standard output must end the command with an error status, not kill it by a signal.
        signal(SIGPIPE, SIG_IGN)
        let arguments = (1..<Int(CommandLine.argc)).map { i -> String in
            guard let arg = CommandLine.unsafeArgv[i] else { return "" }
            return PathEncoding.string(fromBytes: UnsafeBufferPointer(start: UnsafeRawPointer(arg)
                .assumingMemoryBound(to: UInt8.self), count: strlen(arg)))
        }
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help, --version, help screens, completion scripts: their full text, on standard output.
                FileHandle.standardOutput.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(0)
            }
            let usage = message(for: error).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }.joined(separator: "; ")
            let name = commandName(arguments)
            StandardError.write("\(name): \(MessageText.field(usage, limit: 400)) (see '\(name) --help')")
            Foundation.exit(code.rawValue == 0 ? CLIError.Status.usage.rawValue : code.rawValue)
        }
        do {
            if var async = command as? any AsyncParsableCommand {
                try await async.run()
            } else {
                var sync = command
                try sync.run()
            }
            Foundation.exit(0)
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            let failure = CLIError.from(error)
            if failure.status != .brokenPipe { StandardError.write(MessageText.field(failure.message, limit: 2000)) }
            Foundation.exit(failure.status.rawValue)
        }
    }

    /// `sleepcycle` or `sleepcycle SUBCOMMAND`, for usage messages.
    static func commandName(_ arguments: [String]) -> String {
        let names = configuration.subcommands.map { $0._commandName }
        return arguments.first(where: { names.contains($0) }).map { "sleepcycle \($0)" } ?? "sleepcycle"
    }
}
