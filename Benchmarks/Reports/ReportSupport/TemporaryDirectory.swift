// A scratch directory for the files a report writes, removed when the report ends.
import Foundation

/// A fresh temporary directory, removed when the value is deinitialised.
public final class TemporaryDirectory {
    public let url: URL

    public init(prefix: String) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}
