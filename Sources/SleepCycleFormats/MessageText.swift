/// Text from a user's input, made safe to quote in a one-line message: control characters (including ESC, so no
/// terminal escape sequence is replayed) and bidirectional overrides (which reorder the rest of a line) are written as
/// `\u{…}` escapes, bytes of a non-UTF-8 file name as `\xNN`,
/// and long text is cut with a note of how much was left out (a 40 MB CSV field is not echoed).
public enum MessageText {
    /// `text` sanitised and cut to at most `limit` characters (plus the note).
    public static func field(_ text: some StringProtocol, limit: Int = 60) -> String {
        var out = ""
        var shown = 0
        var total = 0
        for scalar in text.unicodeScalars {
            total += 1
            guard shown < limit else { continue }
            shown += 1
            out += escaped(scalar)
        }
        if total > shown { out += "… (\(total - shown) more characters)" }
        return out
    }

    /// A whole message line sanitised like `field`; beyond `limit` characters its middle is left out, not its end
    /// (a message about a 3000-character path still ends with what is wrong with it).
    public static func line(_ text: some StringProtocol, limit: Int = 2000) -> String {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count > limit else { return scalars.map(escaped).joined() }
        let tail = limit / 4, head = limit - tail
        return scalars[..<head].map(escaped).joined() + " … (\(scalars.count - limit) characters left out) … "
            + scalars[(scalars.count - tail)...].map(escaped).joined()
    }

    /// A file path for a message: sanitised like `field` but never cut (a path is at most PATH_MAX bytes, and the
    /// user needs all of it).
    public static func path(_ path: String) -> String {
        // An empty path would leave a message starting with ": no such file".
        guard !path.isEmpty else { return "'' (an empty path)" }
        var out = ""
        for u in path.unicodeScalars { out += escaped(u) }
        return out
    }

    private static func escaped(_ u: Unicode.Scalar) -> String {
        if let byte = PathEncoding.rawByte(u) { return "\\x" + String(byte, radix: 16, uppercase: true) }
        switch u.value {
        case 0x09: return "\\t"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0..<0x20, 0x7F..<0xA0, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
        default: return String(u)
        }
    }
}
