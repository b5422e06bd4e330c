/// A problem with staging input, printed as one line: `path:line: message`.
public struct StagingError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file, when the input came from one.
    public var path: String?
    /// 1-based line number, when the problem is on one line.
    public var line: Int?
    public var message: String
    public init(path: String?, line: Int?, message: String) {
        self.path = path; self.line = line; self.message = message
    }
    public var description: String {
        switch (path, line) {
        case let (p?, l?): return "\(p):\(l): \(message)"
        case let (p?, nil): return "\(p): \(message)"
        default: return message
        }
    }
}
