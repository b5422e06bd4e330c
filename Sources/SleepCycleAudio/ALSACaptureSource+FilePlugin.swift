import Foundation

extension ALSACaptureSource {
    /// ALSA configuration text for a capture PCM named `name` that replays the raw interleaved samples of
    /// `infile` through alsa-lib's `file` plugin over a `null` slave — real ALSA without a sound card, for
    /// tests and demos. Pass it as `configText:` with `device: name`; the raw file must hold samples in the
    /// negotiated format (S16_LE, which the `null` slave always grants), and since the plugin is not paced
    /// and replays stale data past the end of `infile`, also pass `maxFrames:` = the file's frame count.
    /// See docs/0003-live-capture-and-injected-sources.md.
    public static func filePluginConfig(name: String = "sctest", infile: String) -> String {
        func quoted(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "pcm.\(name) { type file; slave.pcm { type null }; file \"/dev/null\"; infile \(quoted(infile)); "
            + "format \"raw\" }"
    }
}
