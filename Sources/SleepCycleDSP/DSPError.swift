/// An invalid DSP parameter, with a message that names the parameter, what was expected and what was found.
public struct DSPError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable { case invalidParameter }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }
    public var description: String { message }
}
