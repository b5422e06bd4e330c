import Foundation
import SleepCycleBus
import HeartSession

/// A night's heart session (with a wearable: `analyze --hr`, `push(heartRate:…)`): the summary over the night and a
/// frame every 5 minutes over the 5 minutes before it (the Task Force's short-term HRV). The result's `heart` key.
public struct HeartReport: Sendable, Hashable {
    public struct Frame: Sendable, Hashable {
        public var start: Date
        public var end: Date
        public var metrics: HeartMetrics
        public init(start: Date, end: Date, metrics: HeartMetrics) { self.start = start; self.end = end; self.metrics = metrics }
    }
    /// From the first reading to the last (or the end of the recording).
    public var start: Date
    public var end: Date
    public var summary: HeartMetrics
    public var frames: [Frame]
    public init(start: Date, end: Date, summary: HeartMetrics, frames: [Frame]) {
        self.start = start; self.end = end; self.summary = summary; self.frames = frames
    }

    /// The frames the result keeps: those ending on a whole 5 minutes (non-overlapping windows; the ones with LF/HF).
    static let frameInterval = SampleTime(HeartSessionConsumer.spectrumEveryMs) * SampleTime(AnalysisClock.sampleRate / 1000)
}

extension HeartReport {
    /// `{"summary": {contract keys, start_ms/end_ms from the recording's start}, "frames": [{"start", "end", keys}]}`.
    func write(to w: inout JSONText, recordingStart: Date) {
        func ms(_ d: Date) -> Int { Int((d.timeIntervalSince(recordingStart) * 1000).rounded()) }
        w.object { w in
            w.key("summary"); w.object { w in
                Self.write(summary, to: &w, span: (ms(start), ms(end)))
            }
            w.key("frames"); w.array(frames) { w, f in
                w.object { w in
                    w.key("start"); w.date(f.start)
                    w.key("end"); w.date(f.end)
                    Self.write(f.metrics, to: &w, span: nil)
                }
            }
        }
    }

    /// The contract's metric keys in its order, values to 3 decimals, null when not computed.
    static func write(_ m: HeartMetrics, to w: inout JSONText, span: (Int, Int)?) {
        func value(_ x: Double?) { if let x { w.number(x, 3) } else { w.null() } }
        w.key("hr_mean_bpm"); value(m.hrMeanBpm)
        w.key("hr_sdnn_ms"); value(m.hrSdnnMs)
        w.key("rmssd_ms"); value(m.rmssdMs)
        w.key("sample_count"); w.int(m.sampleCount)
        if let (start, end) = span {
            w.key("start_ms"); w.int(start)
            w.key("end_ms"); w.int(end)
        }
        w.key("mean_nn_ms"); value(m.meanNNMs)
        w.key("pnn50"); value(m.pnn50)
        w.key("baevsky_si"); value(m.baevskySI)
        w.key("lf_ms2"); value(m.lfMs2)
        w.key("hf_ms2"); value(m.hfMs2)
        w.key("lf_hf"); value(m.lfHf)
        w.key("artifact_count"); w.int(m.artifactCount)
    }
}

extension HeartReport {
    /// The text summary's lines: the night's heart rate and HRV, and the lowest 5-minute heart rate.
    func textLines(time t: (Date) -> String, zone: String) -> [String] {
        func f(_ x: Double?, _ unit: String) -> String { x.map { String(format: "%.1f", $0) + unit } ?? "n/a" }
        let m = summary
        var lines = ["  readings    \(m.sampleCount) from \(t(start)) to \(t(end)) \(zone)"
                         + (m.artifactCount > 0 ? ", \(m.artifactCount) artefacts corrected" : "")]
        lines.append("  heart rate  mean \(f(m.hrMeanBpm, " bpm"))")
        if m.rmssdMs != nil {
            lines.append("  HRV         RMSSD \(f(m.rmssdMs, " ms")), SDNN \(f(m.hrSdnnMs, " ms")), pNN50 \(f(m.pnn50, " %"))")
        } else {
            lines.append("  HRV         n/a (needs beat-to-beat RR intervals)")
        }
        if let low = frames.filter({ $0.metrics.hrMeanBpm != nil }).min(by: { $0.metrics.hrMeanBpm! < $1.metrics.hrMeanBpm! }) {
            lines.append("  lowest      \(f(low.metrics.hrMeanBpm, " bpm")) (5 min to \(t(low.end)))")
        }
        return lines
    }
}

/// The `heart` key as `Codable` (the stored result is read back through it).
struct HeartJSON: Codable {
    struct Metrics: Codable {
        var hr_mean_bpm: Double?, hr_sdnn_ms: Double?, rmssd_ms: Double?
        var sample_count: Int
        var start_ms: Int?, end_ms: Int?
        var mean_nn_ms: Double?, pnn50: Double?, baevsky_si: Double?
        var lf_ms2: Double?, hf_ms2: Double?, lf_hf: Double?
        var artifact_count: Int

        init(_ m: HeartMetrics, span: (Int, Int)?) {
            func r(_ x: Double?) -> Double? { x.map { Double(AnalysisResult.fixed($0, 3)) ?? 0 } }
            hr_mean_bpm = r(m.hrMeanBpm); hr_sdnn_ms = r(m.hrSdnnMs); rmssd_ms = r(m.rmssdMs)
            sample_count = m.sampleCount; start_ms = span?.0; end_ms = span?.1
            mean_nn_ms = r(m.meanNNMs); pnn50 = r(m.pnn50); baevsky_si = r(m.baevskySI)
            lf_ms2 = r(m.lfMs2); hf_ms2 = r(m.hfMs2); lf_hf = r(m.lfHf); artifact_count = m.artifactCount
        }
        var metrics: HeartMetrics {
            HeartMetrics(sampleCount: sample_count, hrMeanBpm: hr_mean_bpm, hrSdnnMs: hr_sdnn_ms, rmssdMs: rmssd_ms,
                         meanNNMs: mean_nn_ms, pnn50: pnn50, baevskySI: baevsky_si, lfMs2: lf_ms2, hfMs2: hf_ms2,
                         lfHf: lf_hf, artifactCount: artifact_count)
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(hr_mean_bpm, forKey: .hr_mean_bpm)
            try c.encode(hr_sdnn_ms, forKey: .hr_sdnn_ms)
            try c.encode(rmssd_ms, forKey: .rmssd_ms)
            try c.encode(sample_count, forKey: .sample_count)
            try c.encodeIfPresent(start_ms, forKey: .start_ms)
            try c.encodeIfPresent(end_ms, forKey: .end_ms)
            try c.encode(mean_nn_ms, forKey: .mean_nn_ms)
            try c.encode(pnn50, forKey: .pnn50)
            try c.encode(baevsky_si, forKey: .baevsky_si)
            try c.encode(lf_ms2, forKey: .lf_ms2)
            try c.encode(hf_ms2, forKey: .hf_ms2)
            try c.encode(lf_hf, forKey: .lf_hf)
            try c.encode(artifact_count, forKey: .artifact_count)
        }
    }
    struct Frame: Codable {
        var start: String, end: String
        var metrics: Metrics
        init(start: String, end: String, metrics: Metrics) { self.start = start; self.end = end; self.metrics = metrics }
        // The metric keys sit beside start and end.
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            start = try c.decode(String.self, forKey: .start)
            end = try c.decode(String.self, forKey: .end)
            metrics = try Metrics(from: decoder)
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(start, forKey: .start)
            try c.encode(end, forKey: .end)
            try metrics.encode(to: encoder)
        }
        enum Keys: String, CodingKey { case start, end }
    }
    var summary: Metrics
    var frames: [Frame]
}
