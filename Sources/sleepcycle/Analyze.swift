import ArgumentParser

struct Analyze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "TODO")
    func run() async throws { throw ValidationError("not implemented yet") }
}
