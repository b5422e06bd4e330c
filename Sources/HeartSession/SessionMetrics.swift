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

    /// The contract's keys; a missing value is null.
    public var dictionary: [String: Any] {
        var d = values.contractDictionary
        d["start_ms"] = startMs
        d["end_ms"] = endMs
        return d
    }
}

extension HeartMetrics {
    /// The contract's keys (`hr_mean_bpm`, `hr_sdnn_ms`, `rmssd_ms`, `sample_count`, `mean_nn_ms`, `pnn50`,
    /// `baevsky_si`, `artifact_count`) and the frequency domain's (`lf_ms2`, `hf_ms2`, `lf_hf`), values rounded to
    /// 0.001; a missing value is null.
    public var contractDictionary: [String: Any] {
        func value(_ x: Double?) -> Any { x.map { ($0 * 1000).rounded() / 1000 } ?? NSNull() }
        return ["sample_count": sampleCount, "hr_mean_bpm": value(hrMeanBpm), "hr_sdnn_ms": value(hrSdnnMs),
                "rmssd_ms": value(rmssdMs), "mean_nn_ms": value(meanNNMs), "pnn50": value(pnn50),
                "baevsky_si": value(baevskySI), "lf_ms2": value(lfMs2), "hf_ms2": value(hfMs2), "lf_hf": value(lfHf),
                "artifact_count": artifactCount]
    }

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
