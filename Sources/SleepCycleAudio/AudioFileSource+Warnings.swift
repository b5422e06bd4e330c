// The one-line summary warnings of AudioFileSource (damaged data, invalid samples).

extension AudioFileSource {
    /// "damaged audio data: 3 stretches, 1.2 s in all, replaced by gaps, the first at 0:01:02.3", or nil.
    func damageWarning() -> AudioError? {
        guard damagedStretchCount > 0 else { return nil }
        let seconds = Double(damagedFrameCount) / Double(format.sampleRate)
        let stretches = damagedStretchCount == 1 ? "1 stretch" : "\(damagedStretchCount) stretches"
        let first = damagedStretchCount == 1 ? "at" : "the first at"
        return AudioError(.damagedData, path: path, message: "damaged audio data: \(stretches), "
            + "\(Self.formatDuration(seconds)) in all, replaced by gaps, \(first) "
            + Self.clockTime(firstDamageTime ?? 0))
    }

    /// "N non-finite or out-of-range samples (NaN, ±Inf or beyond ±16) replaced by silence, the first at 0:12:34.5".
    func invalidSampleWarning() -> AudioError? {
        Self.invalidSampleWarning(path: path, count: invalidSampleCount, firstTime: firstInvalidSampleTime ?? 0)
    }

    /// The same line for any source that sanitises: `count` samples replaced, the first `firstTime` seconds into the
    /// input; nil when `count` is 0.
    static func invalidSampleWarning(path: String, count: Int64, firstTime: Double) -> AudioError? {
        guard count > 0 else { return nil }
        let noun = count == 1 ? "sample" : "samples"
        let first = count == 1 ? "at" : "the first at"
        return AudioError(.invalidSamples, path: path, message: "\(count) non-finite or out-of-range "
            + "\(noun) (NaN, ±Inf or beyond ±\(Int(SampleSanitizer.bound))) replaced by silence, \(first) "
            + clockTime(firstTime))
    }

    /// A stream time as H:MM:SS.s (tenths truncated, so a sample at 1.96 s reads 0:00:01.9).
    static func clockTime(_ seconds: Double) -> String {
        let tenths = Int64((max(0, seconds) * 10).rounded(.down))
        let s = tenths / 10, h = s / 3600, m = s / 60 % 60
        let mm = m < 10 ? "0\(m)" : "\(m)", ss = s % 60 < 10 ? "0\(s % 60)" : "\(s % 60)"
        return "\(h):\(mm):\(ss).\(tenths % 10)"
    }

    /// A duration in seconds with one decimal below a minute ("1.2 s"), else as a clock time ("0:02:05.0").
    static func formatDuration(_ seconds: Double) -> String {
        if seconds < 60 {
            let tenths = Int64((seconds * 10).rounded())
            return tenths == 0 && seconds > 0 ? "< 0.1 s" : "\(tenths / 10).\(tenths % 10) s"
        }
        return clockTime(seconds)
    }
}
