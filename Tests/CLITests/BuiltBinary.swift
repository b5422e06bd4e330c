import Foundation
import Testing

/// The built `sleepcycle` executable, run as a user would: every CLI test goes through here.
enum BuiltBinary {
    /// The executable next to this test bundle: walk up from the running test binary's own path
    /// (`<scratch>/<triple>/<config>/…xctest`), so any `--scratch-path` works.
    static let url: URL? = {
        let fm = FileManager.default
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = dir.appendingPathComponent("sleepcycle")
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue,
               fm.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }()

    struct Run { var status: Int32; var stdout: String; var stderr: String }

    /// Runs `sleepcycle arguments…` to completion, reading both pipes fully before waiting (outputs can exceed
    /// a pipe buffer). `stdin` is written to its standard input (nothing: /dev/null); `stdout` replaces the
    /// captured pipe (then `Run.stdout` is empty); `directory` is its working directory.
    static func run(_ arguments: [String], stdin: Data? = nil, stdinFile: FileHandle? = nil, stdout: FileHandle? = nil,
                    directory: URL? = nil) throws -> Run {
        let bin = try #require(url, "sleepcycle binary not found next to \(CommandLine.arguments[0])")
        let p = Process()
        p.executableURL = bin
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = stdout ?? out
        p.standardError = err
        p.standardInput = stdinFile ?? (stdin == nil ? FileHandle.nullDevice : input)
        try p.run()
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        if let stdin {
            // A command that exits without reading all of it (a usage error) closes the pipe: that must be a failed
            // write here, not a SIGPIPE that kills the test process.
            signal(SIGPIPE, SIG_IGN)
            DispatchQueue.global().async(group: group) {
                try? input.fileHandleForWriting.write(contentsOf: stdin)
                try? input.fileHandleForWriting.close()
            }
        }
        let outData = stdout == nil ? out.fileHandleForReading.readDataToEndOfFile() : Data()
        group.wait()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a shell command line with `$0` set to the binary (for arguments that are not UTF-8).
    static func shell(_ script: String) throws -> Run {
        let bin = try #require(url, "sleepcycle binary not found")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script, bin.path]
        return try capture(p)
    }

    /// Runs a configured process to completion with no standard input, reading both of its outputs fully before
    /// waiting (outputs can exceed a pipe buffer).
    static func capture(_ p: Process) throws -> Run {
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// A fresh folder under the system temporary directory, removed with everything in it when the value goes away
/// (a suite holds one per test: Swift Testing makes a suite instance per test).
final class TemporaryDirectory {
    let url: URL
    init(_ prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}
