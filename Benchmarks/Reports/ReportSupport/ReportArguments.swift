// Command-line arguments of the report executables: `--name value` options, positional arguments, `--help`.
import Foundation

/// The arguments of a report executable. `--help` prints `usage` and exits 0; a malformed command line prints
/// one line and the usage on stderr and exits 2.
public struct ReportArguments {
    public private(set) var options: [String: String] = [:]
    public private(set) var positional: [String] = []
    let usage: String

    /// Parses `CommandLine.arguments`; `optionNames` are the accepted `--name value` options.
    public init(usage: String, optionNames: Set<String> = [], maxPositional: Int = 0,
                arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        self.usage = usage
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            if argument == "--help" || argument == "-h" {
                print(usage)
                exit(0)
            } else if argument.hasPrefix("--") {
                let name = String(argument.dropFirst(2))
                guard optionNames.contains(name) else { fail("unknown option '\(argument)'") }
                guard let value = rest.popFirst() else { fail("option '\(argument)' needs a value") }
                options[name] = value
            } else {
                guard positional.count < maxPositional else { fail("unexpected argument '\(argument)'") }
                positional.append(argument)
            }
        }
    }

    /// The integer value of `--name`, or `defaultValue`; fails unless it is in `range`.
    public func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) -> Int {
        guard let text = options[name] else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            fail("--\(name) '\(text)' is not an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// Prints `message` and the usage on stderr and exits 2.
    public func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\(message)\n\(usage)\n".utf8))
        exit(2)
    }
}
