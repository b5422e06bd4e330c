import ArgumentParser

struct Stage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "TODO")
    func run() async throws { throw ValidationError("not implemented yet") }
}
