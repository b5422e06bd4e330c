import Foundation
import SleepCycle
import SleepCycleAudio

/// The recording a command reads: a path, or standard input for `-`.
struct InputAudio {
    let file: AudioFileSource
    /// The path as given (`-` for standard input).
    let path: String

    static func open(_ path: String) throws -> InputAudio {
        guard path != "-" else {
            throw CLIError(.usage, "-: reading the recording from standard input is not available in this build")
        }
        return InputAudio(file: try AudioFileSource(path: path), path: path)
    }

    /// The session id of the contract: from the name, size, content digest and start.
    func sessionId(start: Date) -> UUID {
        SessionIdentifier.forFile(path: path, start: start)
            ?? SessionIdentifier.forFile(name: path, size: -1, edges: [], start: start)
    }
}
