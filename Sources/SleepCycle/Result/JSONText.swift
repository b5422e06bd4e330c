import Foundation
import SleepCycleFormats

/// A tiny pretty-printing JSON writer that keeps keys in the order written.
struct JSONText {
    private(set) var text = ""
    private var depth = 0
    private var needsComma = [false]

    /// `expectedBytes`: the output's likely size, reserved at once so that a long night's JSON is not copied
    /// again each time the string outgrows its storage (it would briefly need up to three times its size).
    init(expectedBytes: Int = 0) {
        text.reserveCapacity(expectedBytes)
    }

    private mutating func valueStart() {
        if needsComma[needsComma.count - 1] { text += "," }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func newline() {
        if !text.isEmpty { text += "\n" + String(repeating: "  ", count: depth) }
    }

    mutating func key(_ k: String) {
        valueStart()
        newline()
        text += Self.quoted(k) + ": "
        needsComma[needsComma.count - 1] = false   // the value that follows carries no comma
        pendingKey = true
    }

    private var pendingKey = false

    private mutating func scalar(_ s: String) {
        if pendingKey { pendingKey = false; needsComma[needsComma.count - 1] = true } else { valueStart(); newline() }
        text += s
    }

    mutating func string(_ s: String) { scalar(Self.quoted(s)) }
    mutating func int(_ v: Int) { scalar(String(v)) }
    mutating func number(_ v: Double, _ decimals: Int) { scalar(AnalysisResult.fixed(v, decimals)) }
    mutating func date(_ d: Date) { scalar(Self.quoted(ISO8601Time.utcString(from: d))) }
    mutating func null() { scalar("null") }
    mutating func inlineArray(_ items: [String]) { scalar("[" + items.joined(separator: ", ") + "]") }

    mutating func object(_ body: (inout JSONText) -> Void) {
        container("{", "}") { body(&$0) }
    }

    mutating func array<T>(_ items: [T], _ element: (inout JSONText, T) -> Void) {
        container("[", "]") { w in for item in items { element(&w, item) } }
    }

    private mutating func container(_ open: String, _ close: String, _ body: (inout JSONText) -> Void) {
        scalar(open)
        depth += 1
        needsComma.append(false)
        body(&self)
        let empty = !needsComma.removeLast()
        depth -= 1
        if !empty { newline() }
        text += close
    }

    static func quoted(_ s: String) -> String { JSONEscaping.quoted(s) }
}

/// JSON string literals, for every JSON writer in the project (RFC 8259 escaping; control characters as \u00XX).
public enum JSONEscaping {
    /// `s` as a quoted JSON string.
    public static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
