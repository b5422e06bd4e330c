// Heart-rate variability in the time domain (Task Force of the European Society of Cardiology and the North
// American Society of Pacing and Electrophysiology, "Heart rate variability: standards of measurement, physiological
// interpretation and clinical use", Circulation 93(5):1043–1065, 1996), and Baevsky's stress index (Baevsky &
// Berseneva, "Methodical recommendations: use of the Kardivar system for determination of the stress level and
// estimation of the body adaptability", 2008).

/// Time-domain HRV of a window of NN intervals (normal-to-normal beat intervals, ms).
public struct HRVTimeDomain: Sendable, Hashable, Codable {
    /// NN intervals in the window.
    public var sampleCount: Int
    /// Mean NN interval (ms).
    public var meanNN: Double
    /// Mean heart rate (bpm): the mean of 60000 / NN over the intervals (hrv-analysis's and neurokit2's `mean_hr`).
    public var hrMean: Double
    /// Standard deviation of the heart rate (bpm) over the intervals, n − 1 in the denominator.
    public var hrSD: Double
    /// SDNN (ms): standard deviation of the NN intervals, n − 1 in the denominator.
    public var sdnn: Double
    /// RMSSD (ms): root mean square of the n − 1 successive differences.
    public var rmssd: Double
    /// SDSD (ms): standard deviation of the successive differences, n − 2 in the denominator (unbiased, as SDNN).
    public var sdsd: Double
    /// NN50: successive differences larger than 50 ms (in absolute value).
    public var nn50: Int
    /// pNN50 (%): NN50 over the n − 1 differences.
    public var pnn50: Double
    /// Baevsky's stress index: AMo / (2 · Mo · MxDMn) with a 50-ms histogram (see `HRV.baevskyStressIndex`).
    public var baevskySI: Double
}

public enum HRV {
    /// The fewest NN intervals a window needs for its HRV to be reported; fewer publish nothing ("latest valid
    /// sample"): an SDNN of three beats is not a number to show anyone.
    public static let minimumIntervals = 20

    /// Time-domain HRV of `nn` (ms, in order), or nil with fewer than `minimumIntervals` intervals or any interval that
    /// is not a positive finite number.
    public static func timeDomain(_ nn: [Double], minimumIntervals: Int = minimumIntervals) -> HRVTimeDomain? {
        let n = nn.count
        guard n >= max(3, minimumIntervals), nn.allSatisfy({ $0.isFinite && $0 > 0 }) else { return nil }
        let mean = nn.reduce(0, +) / Double(n)
        let sdnn = (nn.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n - 1)).squareRoot()
        let hr = nn.map { 60_000 / $0 }
        let hrMean = hr.reduce(0, +) / Double(n)
        let hrSD = (hr.reduce(0) { $0 + ($1 - hrMean) * ($1 - hrMean) } / Double(n - 1)).squareRoot()
        var sumSquares = 0.0, sumDiff = 0.0, nn50 = 0
        for i in 1..<n {
            let d = nn[i] - nn[i - 1]
            sumSquares += d * d
            sumDiff += d
            if abs(d) > 50 { nn50 += 1 }
        }
        let m = Double(n - 1)
        let rmssd = (sumSquares / m).squareRoot()
        let meanDiff = sumDiff / m
        let sdsd = (max(0, sumSquares - m * meanDiff * meanDiff) / (m - 1)).squareRoot()
        return HRVTimeDomain(sampleCount: n, meanNN: mean, hrMean: hrMean, hrSD: hrSD, sdnn: sdnn, rmssd: rmssd,
                             sdsd: sdsd, nn50: nn50, pnn50: 100 * Double(nn50) / m,
                             baevskySI: baevskyStressIndex(nn))
    }

    /// Baevsky's stress index SI = AMo / (2 · Mo · MxDMn): the intervals in 50-ms bins [k·50, (k+1)·50) ms; Mo the
    /// modal bin's centre (s; the lowest of tied bins), AMo its share of the intervals (%), MxDMn the range of the
    /// intervals (s). 0 when every interval is the same (no spread to divide by is reported as no stress measure).
    public static func baevskyStressIndex(_ nn: [Double], binWidth: Double = 50) -> Double {
        guard let lo = nn.min(), let hi = nn.max(), hi > lo else { return 0 }
        var counts: [Int: Int] = [:]
        for x in nn { counts[Int((x / binWidth).rounded(.down)), default: 0] += 1 }
        let modal = counts.max { ($0.value, -$0.key) < ($1.value, -$1.key) }!
        let mo = (Double(modal.key) + 0.5) * binWidth / 1000
        let amo = 100 * Double(modal.value) / Double(nn.count)
        return amo / (2 * mo * (hi - lo) / 1000)
    }
}
