import ArgumentParser

@main
struct SleepCycleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleepcycle",
        abstract: "Audio-first sleep analysis: snoring, talking, coughing, movement, breathing, sleep stages.",
        subcommands: [Analyze.self, Features.self, Stage.self, BreathingEval.self, DetectDev.self]
    )
}
