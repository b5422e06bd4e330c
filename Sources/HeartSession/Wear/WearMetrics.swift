import Foundation
import SleepCycleBus

/// One reading of a wearable in one schema for every device and export (Synheart Wear's `WearMetrics`): when, from
/// which device, the metrics it carried under Synheart's names (`hr` in bpm, `hrv_rmssd` and `hrv_sdnn` in ms, …)
/// and the RR intervals (ms) of the beats that ended by then.
public struct WearMetrics: Sendable, Hashable {
    /// Where readings came from: the file format, or a live/mock provider.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        case csv, jsonLines = "json_lines", polarRR = "polar_rr", fitbit, appleHealth = "apple_health", mock, live
    }
    public var timestamp: Date
    public var deviceId: String?
    public var source: Source
    public var metrics: [String: Double]
    public var rrIntervals: [Double]

    public init(timestamp: Date, deviceId: String? = nil, source: Source, metrics: [String: Double] = [:],
                rrIntervals: [Double] = []) {
        self.timestamp = timestamp; self.deviceId = deviceId; self.source = source; self.metrics = metrics
        self.rrIntervals = rrIntervals
    }

    /// Heart rate (bpm), if the reading has one.
    public var hr: Double? { metrics["hr"] }
}

extension WearMetrics {
    /// The readings as the bus's heart-rate samples on a recording that starts at `start`: one per RR interval
    /// (the beats of a reading stamped back from its time, the last at it), or one with the heart rate.
    public static func heartRateSamples(_ readings: [WearMetrics], start: Date) -> [HeartRateSample] {
        var out: [HeartRateSample] = []
        out.reserveCapacity(readings.count)
        for r in readings {
            let t = r.timestamp.timeIntervalSince(start)
            if r.rrIntervals.isEmpty {
                if let hr = r.hr { out.append(HeartRateSample(time: AnalysisClock.samples(seconds: t), bpm: hr)) }
                continue
            }
            var beat = t - r.rrIntervals.dropFirst().reduce(0, +) / 1000
            for (i, rr) in r.rrIntervals.enumerated() {
                if i > 0 { beat += rr / 1000 }
                out.append(HeartRateSample(time: AnalysisClock.samples(seconds: beat), bpm: i == 0 ? r.hr : nil, rrMs: rr))
            }
        }
        return out
    }

    /// The readings as a session's readings, in ms from the first reading.
    public static func biosignalSamples(_ readings: [WearMetrics]) -> [BiosignalSample] {
        guard let t0 = readings.first?.timestamp else { return [] }
        return readings.map {
            BiosignalSample(timestampMs: Int64(($0.timestamp.timeIntervalSince(t0) * 1000).rounded()), hrBpm: $0.hr,
                            rrMs: $0.rrIntervals)
        }
    }
}
