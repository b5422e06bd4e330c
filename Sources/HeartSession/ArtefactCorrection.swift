// Beat artefacts in RR series: missed beats, extra beats and ectopic (premature) beats, found against a local
// median and corrected before any HRV is computed. After the classification of Lipponen & Tarvainen, "A robust
// algorithm for heart rate variability time series artefact correction using novel beat classification", Journal of
// Medical Engineering & Technology 43(3):173–181, 2019 (missed, extra, ectopic, long/short), with fixed thresholds
// relative to the local median instead of their time-varying quartile-deviation thresholds.

/// What artefact correction found and changed.
public struct ArtefactCounts: Sendable, Hashable, Codable {
    /// Intervals that held two (or more) beats, split in equal parts.
    public var missed = 0
    /// Beats that split one interval in two, removed (the two intervals merged).
    public var extra = 0
    /// Premature beats (a short interval followed by a compensatory long one), both intervals replaced by their mean.
    public var ectopic = 0
    /// Other intervals far from the local median, replaced by it.
    public var outliers = 0
    public var total: Int { missed + extra + ectopic + outliers }
    public init() {}
}

public enum ArtefactCorrection {
    /// Beats on each side of an interval whose median is its reference.
    static let halfWindow = 5

    /// The NN intervals of `rr` (ms, in order) with its artefacts corrected, and what was corrected. An interval is
    /// judged against the median of the `halfWindow` intervals on each side of it (M):
    /// * **extra beat:** it is shorter than 0.75·M and, added to a neighbour, gives an interval within 25 % of M:
    ///   the two are merged (the beat between them was not a heart beat);
    /// * **ectopic beat:** it is shorter than 0.8·M, the next is longer than 1.15·M, and their sum is within 20 % of
    ///   2·M: both become their mean (a premature beat and its compensatory pause);
    /// * **missed beat:** it is k = round(RR / M) ≥ 2 times M within 20 %: split in k equal intervals;
    /// * **long/short:** anything else more than 35 % from M and more than 25 % of M from both of its neighbours (an
    ///   isolated interval, not a gradual excursion): replaced by M.
    public static func correct(_ rr: [Double]) -> (nn: [Double], counts: ArtefactCounts) {
        var counts = ArtefactCounts()
        guard rr.count >= 2 * halfWindow + 1 else { return (rr, counts) }
        var out: [Double] = []
        out.reserveCapacity(rr.count + rr.count / 20)
        var i = 0
        while i < rr.count {
            let x = rr[i]
            let m = localMedian(rr, around: i)
            let next = i + 1 < rr.count ? rr[i + 1] : nil
            if x < 0.75 * m, let n = next, abs(x + n - m) < 0.25 * m {
                out.append(x + n); counts.extra += 1; i += 2; continue
            }
            if x < 0.75 * m, let last = out.last, abs(x + last - m) < 0.25 * m, i > 0, last == rr[i - 1] {
                out[out.count - 1] = x + last; counts.extra += 1; i += 1; continue
            }
            if x < 0.8 * m, let n = next, n > 1.15 * m, abs(x + n - 2 * m) < 0.2 * m {
                out.append((x + n) / 2); out.append((x + n) / 2); counts.ectopic += 1; i += 2; continue
            }
            let k = (x / m).rounded()
            if k >= 2, abs(x - k * m) < 0.2 * m {
                for _ in 0..<Int(k) { out.append(x / k) }
                counts.missed += 1; i += 1; continue
            }
            // An isolated interval far from the median and from both neighbours (a gradual excursion over several
            // beats is physiology, not an artefact).
            let previous = i > 0 ? rr[i - 1] : m, following = next ?? m
            if abs(x - m) > 0.35 * m && abs(x - previous) > 0.25 * m && abs(x - following) > 0.25 * m {
                out.append(m); counts.outliers += 1; i += 1; continue
            }
            out.append(x)
            i += 1
        }
        return (out, counts)
    }

    /// The median of the intervals around `i` (not `i` itself).
    static func localMedian(_ rr: [Double], around i: Int) -> Double {
        let lo = max(0, min(i - halfWindow, rr.count - 2 * halfWindow - 1))
        let hi = min(rr.count, lo + 2 * halfWindow + 1)
        var window = (lo..<hi).filter { $0 != i }.map { rr[$0] }
        window.sort()
        let c = window.count
        return c % 2 == 1 ? window[c / 2] : (window[c / 2 - 1] + window[c / 2]) / 2
    }
}
