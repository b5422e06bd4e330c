// A frame's or summary's metrics: heart rate and HRV of a span of readings, after artefact correction.
import Foundation
import SleepCycleBus

/// A frame's or summary's metrics over `startMs...endMs`: the values (`HeartMetrics`, read through this type as
/// `metrics.rmssdMs`, …) and the span. HRV values are nil ("latest valid sample": published as null) when the span
/// holds fewer than `HRV.minimumIntervals` beats after artefact correction.
@dynamicMemberLookup
public struct SessionMetrics: Sendable, Hashable {
    public var startMs: Int64
    public var endMs: Int64
    public var values: HeartMetrics

    public init(startMs: Int64, endMs: Int64, values: HeartMetrics) {
        self.startMs = startMs; self.endMs = endMs; self.values = values
    }

    public subscript<T>(dynamicMember path: KeyPath<HeartMetrics, T>) -> T { values[keyPath: path] }
}

extension HeartMetrics {
    /// The metrics of a span's readings: with RR intervals, artefact correction (`ArtefactCorrection`) then the
    /// heart rate of the NN intervals and their time-domain HRV; with heart-rate readings only, their mean.
    public static func of<S: Sequence<BiosignalSample>>(_ samples: S, correctsArtefacts: Bool = true,
                                                        spectrum: Bool = true) -> HeartMetrics {
        var rr: [Double] = [], hr: [Double] = []
        for s in samples {
            rr += s.rrMs
            if let bpm = s.hrBpm { hr.append(bpm) }
        }
        return of(rr: rr, hr: hr, correctsArtefacts: correctsArtefacts, spectrum: spectrum)
    }

    /// The metrics of RR intervals (ms, in beat order) or, without any, of heart-rate readings (bpm). Without
    /// `correctsArtefacts` the RR intervals are taken as NN intervals as they are (to compare with a library run on
    /// the same series). Without `spectrum` the frequency domain is left out (null).
    public static func of(rr: [Double], hr: [Double], correctsArtefacts: Bool = true, spectrum: Bool = true) -> HeartMetrics {
        var m = HeartMetrics()
        if rr.isEmpty {
            m.sampleCount = hr.count
            m.hrMeanBpm = hr.isEmpty ? nil : hr.reduce(0, +) / Double(hr.count)
            return m
        }
        let (nn, counts) = correctsArtefacts ? ArtefactCorrection.correct(rr) : (rr, ArtefactCounts())
        m.sampleCount = nn.count
        m.artifactCount = counts.total
        m.hrMeanBpm = nn.isEmpty ? nil : nn.reduce(0) { $0 + 60_000 / $1 } / Double(nn.count)
        if let h = HRV.timeDomain(nn) {
            m.hrSdnnMs = h.sdnn; m.rmssdMs = h.rmssd; m.meanNNMs = h.meanNN; m.pnn50 = h.pnn50; m.baevskySI = h.baevskySI
        }
        if spectrum, let f = HRV.frequencyDomain(nn) { m.lfMs2 = f.lf; m.hfMs2 = f.hf; m.lfHf = f.lfHfRatio.isFinite ? f.lfHfRatio : nil }
        return m
    }
}

extension SessionMetrics: Encodable {
    private enum Key: String, CodingKey {
        case startMs = "start_ms", endMs = "end_ms", sampleCount = "sample_count", hrMeanBpm = "hr_mean_bpm"
        case hrSdnnMs = "hr_sdnn_ms", rmssdMs = "rmssd_ms", meanNNMs = "mean_nn_ms", pnn50, baevskySI = "baevsky_si"
        case lfMs2 = "lf_ms2", hfMs2 = "hf_ms2", lfHf = "lf_hf", artifactCount = "artifact_count"
    }

    /// The contract's keys (`hr_mean_bpm`, `hr_sdnn_ms`, `rmssd_ms`, `sample_count`, `mean_nn_ms`, `pnn50`,
    /// `baevsky_si`, `artifact_count`), the frequency domain's (`lf_ms2`, `hf_ms2`, `lf_hf`) and the span
    /// (`start_ms`, `end_ms`); values rounded to 0.001, a missing value null.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        func put(_ x: Double?, _ key: Key) throws {
            if let x { try c.encode((x * 1000).rounded() / 1000, forKey: key) } else { try c.encodeNil(forKey: key) }
        }
        try c.encode(startMs, forKey: .startMs)
        try c.encode(endMs, forKey: .endMs)
        try c.encode(values.sampleCount, forKey: .sampleCount)
        try c.encode(values.artifactCount, forKey: .artifactCount)
        try put(values.hrMeanBpm, .hrMeanBpm); try put(values.hrSdnnMs, .hrSdnnMs); try put(values.rmssdMs, .rmssdMs)
        try put(values.meanNNMs, .meanNNMs); try put(values.pnn50, .pnn50); try put(values.baevskySI, .baevskySI)
        try put(values.lfMs2, .lfMs2); try put(values.hfMs2, .hfMs2); try put(values.lfHf, .lfHf)
    }
}
