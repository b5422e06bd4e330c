import Foundation

/// The result of analysing one window of the breathing envelope.
public struct BreathingRateAnalysis: Sendable, Equatable {
    /// Final rate (breaths/min): the mean of the two agreeing estimates.
    public var bpm: Double
    /// 0…1, see `BreathingRateAnalyzer`.
    public var confidence: Double
    /// Rate from the autocorrelation peak (breaths/min).
    public var autocorrelationBpm: Double
    /// Rate from the harmonic-sum spectral peak (breaths/min).
    public var spectralBpm: Double
    /// Normalised autocorrelation at the chosen breathing period (−1…1).
    public var periodicity: Double
    /// The period was doubled because the night's recent rate (`analyze`'s `prior`) is half the burst rate.
    public var doubledByPrior = false
}

/// Breathing rate of one window of the envelope: an autocorrelation estimate and a spectral estimate
/// that must agree.
///
/// Method (after Nam, Reyes & Chon, IEEE JBHI 20(6):1493–1501, 2016, who estimate the rate from the
/// sound-energy envelope both by its autocorrelation and by its spectrum, and the envelope-periodicity
/// approach of Avalur, "Human breath detection using a microphone", MSc thesis, Univ. Groningen, 2013):
///
/// 1. The envelope (dB, ~10 Hz) is smoothed with a 5-tap binomial filter and linearly detrended.
/// 2. **Spectrum.** The Hann-windowed envelope's power P(f) is evaluated at arbitrary frequencies
///    (Goertzel's recurrence) on a 0.5 breaths/min grid, refined at 0.05, from `minBpm`/1.1 (or three
///    periods per window) to 1.1·`maxBpm`; its maximum is the spectral estimate.
/// 3. **Autocorrelation.** r(L) = Σ x[i]x[i+L] / √(Σx[i]² · Σx[i+L]²) over the overlap (a Pearson-like
///    normalisation that does not decay with lag), from half the shortest period searched (for the octave
///    check) up to the longest period searched or a third of the window (at least three breaths). Among its
///    local maxima the one with the highest biased value r(L)·(n−L)/n is taken (the bias favours the period
///    over its multiples; the normalised-autocorrelation period picking of pitch detectors, e.g. McLeod &
///    Wyvill, "A smarter way to find pitch", ICMC 2005), refined by parabolic interpolation. Inhale and
///    exhale are often separate bursts: if r at twice the lag exceeds r at the lag by `cycleDoublingMargin`,
///    the doubled lag (the whole cycle) is tried first. It is also tried first when the bursts alternate in
///    **tone** (see `analyze(_:tone:)`): inhale and exhale of equal level, told apart by their spectra. And it is
///    the only lag tried when the bursts pair up at the doubled lag as a short inhale and a longer, quieter exhale
///    (`quieterBurstIsLonger`): the bursts are then half breaths, and if the whole breath is not confirmed the
///    window has no value rather than the burst rate.
/// 4. **Agreement.** The two rates must agree within max(`agreementBpm`, `agreementFraction`·rate). When the
///    spectral peak sits at twice the autocorrelation rate (the inhale/exhale burst rate), the cycle is
///    accepted only if the spectrum holds at least `cycleFundamentalShare` of the peak power at the cycle
///    rate, or at least `cycleWeakFundamentalShare` with r at the cycle `cycleRepeatMargin` above r at half of
///    it (the envelope repeats per breath, not per burst) and burst levels that do not alternate, or at least
///    `cycleQuietFundamentalShare` when the quieter burst of each pair is clearly the longer (a long, quiet
///    exhale after a short inhale), or if the bursts alternate in tone at half the cycle. Otherwise, or when the rate is outside
///    [`minBpm`, `maxBpm`], no value. The rate reported is the mean of the two estimates.
/// 4b. **Octave check** (f against 2f, as in the subharmonic tests of pitch detectors, e.g. Sun,
///    "Pitch determination and voice quality analysis using subharmonic-to-harmonic ratio", ICASSP 2002):
///    if r at half the chosen lag is within `octaveMargin` of r at the lag (the envelope repeats just as
///    well every half period) and the spectrum near 2f is at least as strong as near f, the rhythm is 2f —
///    heart sounds, or breathing faster than the range — and reporting f would halve it: no value. A cycle
///    accepted on tone alternation is exempt (its half lag is the other phase of the same breath).
/// 5. **Confidence** = periodicity × min(1, concentration / 0.5), where periodicity is r at the chosen lag and
///    concentration is the share of the envelope's 3–90 breaths/min power within ±2 bins of the rate and
///    its second harmonic. A window is answered only when periodicity ≥ `minPeriodicity` and confidence ≥
///    `minConfidence`.
///
/// `analyze` allocates nothing after `init` (scratch buffers are sized for the longest window).
public struct BreathingRateAnalyzer: Sendable {
    public struct Parameters: Sendable, Equatable {
        /// Envelope sample rate (Hz).
        public var envelopeRateHz: Double = 10
        /// Lowest and highest breathing rate reported (breaths/min).
        public var minBpm: Double = 4
        public var maxBpm: Double = 45
        /// Minimum normalised autocorrelation at the breathing period for a value.
        public var minPeriodicity: Double = 0.3
        /// Minimum confidence for a value.
        public var minConfidence: Double = 0.15
        /// Relative and absolute tolerance for the agreement of the two estimates.
        public var agreementFraction: Double = 0.10
        public var agreementBpm: Double = 1.0
        /// When the spectral peak is at twice the autocorrelation rate (inhale and exhale heard as two
        /// bursts), the spectral power at the autocorrelation rate must be at least this share of the peak.
        public var cycleFundamentalShare: Double = 0.2
        /// A weaker fundamental, at least this share of the peak, also confirms the cycle when the envelope repeats
        /// clearly better over the whole cycle than over one burst, r(L) − r(L/2) ≥ `cycleRepeatMargin` (the two
        /// bursts differ in length or shape: the two halves of one breath), and the burst levels do not alternate
        /// (`toneLevelAlternationLimit`: deep and shallow breaths in turn look the same to r).
        public var cycleWeakFundamentalShare: Double = 0.1
        public var cycleRepeatMargin: Double = 0.15
        /// A still weaker fundamental, at least `cycleQuietFundamentalShare` of the peak, confirms the cycle when its
        /// two bursts differ as inhale and exhale do, whatever their levels: in at least `cycleQuietPairShare` of
        /// `cycleQuietMinimumPairs` or more neighbouring burst pairs, the quieter burst is `cycleQuietWidthRatio` times
        /// as long as the louder. A burst stands `cycleQuietProminenceDb` over the lowest point within a quarter
        /// cycle; its width is where it stays within `cycleBurstWidthDropShare` of that prominence of its peak (a
        /// share, not fixed dB, so that a quieter copy of the same shape measures as long on the smoothed envelope).
        /// At rest the exhale lasts about twice the inhale, and a quiet, long exhale after a short, loud inhale
        /// leaves little power at the breath rate; a shallow breath between deep ones is quieter but not longer.
        /// Infinity (`cycleQuietWidthRatio`) disables the cue.
        public var cycleQuietFundamentalShare: Double = 0.05
        public var cycleQuietWidthRatio: Double = 1.3
        public var cycleBurstWidthDropShare: Double = 0.3
        public var cycleQuietProminenceDb: Double = 6
        public var cycleQuietMinimumPairs: Int = 4
        public var cycleQuietPairShare: Double = 0.6
        /// Octave check: a rate f is refused when the envelope repeats as well at half the lag (r within
        /// this margin of r at the lag) and the spectrum's line near 2f is at least as strong as near f — the
        /// rhythm is then 2f (heart sounds, breathing faster than the range), not f.
        public var octaveMargin: Double = 0.05
        /// The autocorrelation period is doubled (half a cycle was found) when r at twice the lag exceeds
        /// r at the lag by more than this.
        public var cycleDoublingMargin: Double = 0.05
        /// The night's rhythm: with a `prior` rate (the recent answers of a steady night), a window whose first pick
        /// is within `priorAgreementFraction` of twice the prior is taken at the autocorrelation peak within that
        /// fraction of the prior's lag when r there is at most `priorMargin` lower (else it has no value): one breath
        /// of two equal bursts, as the night's other windows found, not breathing suddenly twice as fast.
        public var priorMargin: Double = 0.2
        public var priorAgreementFraction: Double = 0.15
        /// Tone alternation: the period is also doubled when the tone of the bursts correlates at most
        /// −`toneAlternation` with the tone one lag later and at least +`toneAlternation` two lags later
        /// (inhale, exhale, inhale, …); the doubled period then needs no spectral line at its own rate and skips
        /// the octave check. Infinity disables the cue.
        public var toneAlternation: Double = 0.3
        /// Blocks whose level is within this many dB of the window's 95th-percentile level count as bursts for
        /// the tone and burst-level correlations (the tone of the pauses between bursts is that of the room).
        public var toneBurstRangeDb: Double = 15
        /// Burst pairs a tone correlation needs.
        public var toneMinimumPairs: Int = 10
        /// The tone and the weaker fundamental are not used when the burst levels alternate: their correlation two
        /// lags on exceeds that one lag on by this much or more (evenly spaced equal bursts: 0.1–0.5; breaths 8 dB
        /// apart in turn: 0.8–0.9).
        public var toneLevelAlternationLimit: Double = 0.6
        public init() {}
    }

    public let parameters: Parameters
    private let capacity: Int
    private var x: [Double]
    private var r: [Double]
    private var window: [Double]
    private var powers: [Double] = []
    private var acLow = 1, acHigh = 0
    private var tones: [Double]
    private var bursts: [Bool]
    private var levels: [Float]
    private var burstLevels: [Double]
    private var peaks: [(index: Int, level: Double, width: Int)] = []

    /// - Parameter capacity: the longest window (envelope samples) that will be analysed.
    public init(parameters: Parameters = Parameters(), capacity: Int) {
        precondition(parameters.minBpm > 0 && parameters.maxBpm > parameters.minBpm, "bad breathing-rate range")
        precondition(parameters.envelopeRateHz > 0, "bad envelope rate")
        precondition(capacity > 0, "capacity must be positive")
        self.parameters = parameters
        self.capacity = capacity
        x = [Double](repeating: 0, count: capacity)
        r = [Double](repeating: 0, count: capacity)
        window = [Double](repeating: 0, count: capacity)
        tones = [Double](repeating: 0, count: capacity)
        bursts = [Bool](repeating: false, count: capacity)
        levels = [Float](repeating: 0, count: capacity)
        burstLevels = [Double](repeating: 0, count: capacity)
        peaks.reserveCapacity(capacity)
        powers.reserveCapacity(512)
    }

    /// Analyses `envelope` (dB values at `envelopeRateHz`); nil when there is no clear breathing rhythm.
    ///
    /// `tone`, when given, holds each envelope sample's spectral tone (dB; `FeatureEnvelope`): if the bursts
    /// alternate in tone at the autocorrelation lag, the lag is half a breath (inhale, then exhale) even when the
    /// two bursts are equally loud and evenly spaced, which the level alone cannot tell from breathing at twice
    /// the rate.
    ///
    /// `prior`, when given, is the rate (breaths/min) the night has held over its recent windows
    /// (`BreathingRateEstimator`): equal bursts at twice that rate are taken as its inhale and exhale (`priorMargin`).
    public mutating func analyze(_ envelope: ArraySlice<Float>, tone: ArraySlice<Float>? = nil,
                                 prior: Double? = nil) -> BreathingRateAnalysis? {
        let n = min(envelope.count, capacity)
        let fs = parameters.envelopeRateHz
        // Search 10 % beyond the reported range so that a rate just outside it is found (and refused)
        // rather than mistaken for its harmonic; the autocorrelation reaches down to half the shortest
        // period for the octave check.
        let minLag = Int((60 / (2 * parameters.maxBpm * 1.1) * fs).rounded(.down))
        let maxPeriodLag = Int((60 / (parameters.minBpm / 1.1) * fs).rounded(.up))
        let maxLag = min(maxPeriodLag, n / 3)
        let shortestBreathLag = 60 / parameters.maxBpm * fs
        guard n >= 8, maxLag >= Int(shortestBreathLag.rounded(.up)) + 1 else { return nil }
        prepare(envelope.prefix(n), count: n, into: &x)

        // Signal energy check: a constant envelope (digital silence, DC) has no rhythm.
        var energy = 0.0
        for i in 0..<n { energy += x[i] * x[i] }
        guard energy / Double(n) > 1e-6 else { return nil }

        // Two independent estimates of the period that must agree.
        // At least three breaths in the window: the slowest rate searched is 60/(maxLag/fs).
        let lowBpm = max(parameters.minBpm / 1.1, 60 * fs / Double(maxLag))
        applyWindow(count: n)
        let peak = spectralPeak(count: n, low: lowBpm, high: parameters.maxBpm * 1.1)
        computeAutocorrelation(count: n, minLag: minLag, maxLag: maxLag)
        guard let first = autocorrelationPeak(count: n, from: shortestBreathLag / 1.1, to: Double(maxLag)) else {
            return nil
        }
        // Inhale and exhale bursts of one cycle differ (level, length, the pause after exhaling): if the
        // signal repeats better at twice the lag, the lag found is probably half a cycle. Try the doubled
        // lag first and fall back to the first one if the spectrum does not confirm it. (Trying half the
        // lag as well was measured to turn refusals into burst-rate errors, so it is not done.)
        var candidates = [first]
        var toneDoubled = false, exhaleDoubled = false, priorDoubled = false
        if let double = autocorrelationPeak(count: n, from: 2 * first.lag - 2, to: min(2 * first.lag + 2, Double(maxLag))) {
            if double.value > first.value + parameters.cycleDoublingMargin {
                candidates.insert(double, at: 0)
            } else if let tone, double.value >= parameters.minPeriodicity,
                      tonesAlternate(envelope.prefix(n), tone: tone.prefix(n), lag: first.lag) {
                candidates.insert(double, at: 0)
                toneDoubled = true
            } else if double.value >= parameters.minPeriodicity, quieterBurstIsLonger(count: n, lag: double.lag) {
                // The bursts pair up as a short inhale and a longer, quieter exhale: the doubled lag is the breath
                // even though the envelope repeats nearly as well per burst.
                candidates.insert(double, at: 0)
                exhaleDoubled = true
            }
        }
        if candidates.count == 1, let prior,
           abs(60 * fs / first.lag - 2 * prior) <= parameters.priorAgreementFraction * 2 * prior {
            // Bursts at twice the night's recent rate. If the envelope repeats about as well at that rate, they are the
            // inhale and exhale of the breathing the night has shown (alike in level and tone, nothing else tells them
            // from breathing at twice the rate). The breath is sought near the prior: the inhale and exhale need not
            // be evenly spaced, so it is not always at exactly twice the burst lag. If it does not, the window has
            // no value: its only answer would be twice the night's rate (breathing that really doubled is answered
            // again once the estimator's history no longer agrees on a prior).
            let f = parameters.priorAgreementFraction
            guard let whole = autocorrelationPeak(count: n, from: 60 * fs / (prior * (1 + f)),
                                                  to: min(60 * fs / (prior * (1 - f)), Double(maxLag))),
                  whole.value >= parameters.minPeriodicity, whole.value >= first.value - parameters.priorMargin else {
                return nil
            }
            candidates.insert(whole, at: 0)
            toneDoubled = true
            priorDoubled = true
        }
        var agreed: (lag: (lag: Double, value: Double), acBpm: Double, spectralBpm: Double, halfLagR: Double)?
        var agreedByTone = false
        for (index, lag) in candidates.enumerated() {
            // Whether the tone says this lag is a whole breath of two bursts (computed when first needed).
            var byTone: Bool? = toneDoubled && index == 0 ? true : (tone == nil ? false : nil)
            // Bursts that pair up as inhale and exhale are half a breath each: their rate is not the breath rate.
            if exhaleDoubled && index > 0 { break }
            let acBpm = 60 * fs / lag.lag
            let tolerance = max(parameters.agreementBpm, parameters.agreementFraction * acBpm)
            let halfLagR = autocorrelationNear(lag.lag / 2)
            if abs(peak.bpm - acBpm) <= tolerance {
                agreed = (lag, acBpm, peak.bpm, halfLagR); agreedByTone = byTone ?? false; break
            }
            // Inhale and exhale are separate bursts: the strongest spectral line can be the burst rate,
            // twice the breathing rate, while the autocorrelation (bursts alternate in shape and level)
            // peaks at the whole cycle. Accept the cycle when the spectrum also shows its fundamental (a weaker
            // one when the envelope repeats clearly better per cycle than per burst and the burst levels do not
            // alternate, which deep and shallow breaths in turn do; a still weaker one when the quieter burst of
            // each pair is clearly the longer, as an exhale is), or when the two bursts alternate in tone (equal
            // bursts leave no line at the cycle rate).
            guard abs(peak.bpm / 2 - acBpm) <= tolerance else { continue }
            let half = spectralPeak(count: n, low: max(lowBpm, acBpm - tolerance), high: acBpm + tolerance)
            guard abs(half.bpm - acBpm) <= tolerance else { continue }
            if half.power < parameters.cycleFundamentalShare * peak.power, byTone == nil, let tone {
                byTone = tonesAlternate(envelope.prefix(n), tone: tone.prefix(n), lag: lag.lag / 2)
            }
            // The weaker fundamental is checked last: its level guard sorts the window's levels.
            if byTone == true || half.power >= parameters.cycleFundamentalShare * peak.power
                || (half.power >= parameters.cycleWeakFundamentalShare * peak.power
                    && lag.value - halfLagR >= parameters.cycleRepeatMargin
                    && !burstLevelsAlternate(envelope.prefix(n), lag: lag.lag / 2))
                || (half.power >= parameters.cycleQuietFundamentalShare * peak.power
                    && ((exhaleDoubled && index == 0) || quieterBurstIsLonger(count: n, lag: lag.lag))) {
                agreed = (lag, acBpm, half.bpm, halfLagR); agreedByTone = byTone ?? false; break
            }
        }
        guard let (lag, acBpm, spectralBpm, halfLagR) = agreed else { return nil }
        // Octave check (f against 2f): if the envelope repeats as well at half the lag and the spectrum is
        // at least as strong near 2f as near f, the rhythm is 2f — heart sounds, or breathing faster than
        // the window's range, whose lag doubled is still periodic. Reporting f would halve it: refuse.
        // A period doubled by tone alternation is exempt: its half lag is the other phase of the breath.
        if !agreedByTone, halfLagR >= lag.value - parameters.octaveMargin {
            let tolerance = max(parameters.agreementBpm, parameters.agreementFraction * spectralBpm)
            let (low, high) = (spectralBpm - tolerance, spectralBpm + tolerance)
            let atRate = spectralPeak(count: n, low: max(lowBpm, low), high: high)
            let atDouble = spectralPeak(count: n, low: 2 * low, high: 2 * high)
            if atDouble.power >= atRate.power { return nil }
        }
        let spectral = (bpm: spectralBpm, concentration: concentration(bpm: spectralBpm, count: n))

        let periodicity = lag.value
        let confidence = max(0, min(1, periodicity * min(1, spectral.concentration / 0.5)))
        guard periodicity >= parameters.minPeriodicity, confidence >= parameters.minConfidence else { return nil }
        let bpm = (acBpm + spectral.bpm) / 2
        guard bpm >= parameters.minBpm, bpm <= parameters.maxBpm else { return nil }
        return BreathingRateAnalysis(bpm: bpm, confidence: confidence, autocorrelationBpm: acBpm,
                                     spectralBpm: spectral.bpm, periodicity: periodicity,
                                     doubledByPrior: priorDoubled && agreedByTone && lag.lag > first.lag)
    }

    /// Whether the bursts alternate in tone, and not in level, at `lag` (envelope samples): over the blocks
    /// within `toneBurstRangeDb` of the window's 95th-percentile level, the tone correlates at most
    /// −`toneAlternation` with the tone `lag` later and at least +`toneAlternation` with the tone twice `lag`
    /// later, while the level's correlation two lags on exceeds its correlation one lag on by less than
    /// `toneLevelAlternationLimit`. Bursts that alternate in level (deep and shallow breaths, whose tone can
    /// follow their depth) are left to the level's own cues.
    private mutating func tonesAlternate(_ envelope: ArraySlice<Float>, tone: ArraySlice<Float>, lag: Double) -> Bool {
        let n = min(envelope.count, tone.count)
        let lag1 = Int(lag.rounded()), lag2 = Int((2 * lag).rounded())
        guard parameters.toneAlternation.isFinite, lag1 >= 1, lag2 < n else { return false }
        markBursts(envelope.prefix(n), tone: tone.prefix(n))
        let a = parameters.toneAlternation
        guard let r1 = burstCorrelation(tones, count: n, lag: lag1), r1 <= -a,
              let r2 = burstCorrelation(tones, count: n, lag: lag2), r2 >= a else { return false }
        return burstLevelAlternation(count: n, lag1: lag1, lag2: lag2) < parameters.toneLevelAlternationLimit
    }

    /// Whether the burst levels alternate at `lag` (envelope samples): over the blocks within `toneBurstRangeDb`
    /// of the window's 95th-percentile level, their correlation two lags on exceeds that one lag on by
    /// `toneLevelAlternationLimit` or more (deep and shallow breaths in turn).
    private mutating func burstLevelsAlternate(_ envelope: ArraySlice<Float>, lag: Double) -> Bool {
        let n = envelope.count
        let lag1 = Int(lag.rounded()), lag2 = Int((2 * lag).rounded())
        guard lag1 >= 1, lag2 < n else { return false }
        markBursts(envelope, tone: nil)
        return burstLevelAlternation(count: n, lag1: lag1, lag2: lag2) >= parameters.toneLevelAlternationLimit
    }

    /// Whether the bursts, two per cycle of `lag` envelope samples, come in pairs whose quieter burst is clearly the
    /// longer (`cycleQuietWidthRatio` and its companions). The bursts are the smoothed envelope's points that are the
    /// highest within a quarter cycle and stand `cycleQuietProminenceDb` above the lowest point there; a burst's width
    /// is the run around its peak above peak − `cycleBurstWidthDropShare` · prominence (at most a quarter cycle each
    /// way). Neighbouring bursts 0.3–0.7 cycles apart whose levels differ by 3 dB or more are a pair; a pair counts
    /// when its quieter burst is `cycleQuietWidthRatio` times as wide as the louder and two envelope samples wider.
    private mutating func quieterBurstIsLonger(count n: Int, lag: Double) -> Bool {
        let quarter = Int((lag / 4).rounded())
        guard parameters.cycleQuietWidthRatio.isFinite, quarter >= 2, Double(n) >= 2 * lag else { return false }
        // `x` holds the smoothed, detrended envelope (`prepare`): a straight trend barely moves a burst's width.
        peaks.removeAll(keepingCapacity: true)
        for i in 0..<n {
            let lo = max(0, i - quarter), hi = min(n - 1, i + quarter)
            var highest = true, lowest = x[i]
            for j in lo...hi {
                if x[j] > x[i] || (x[j] == x[i] && j < i) { highest = false; break }
                lowest = min(lowest, x[j])
            }
            guard highest, x[i] - lowest >= parameters.cycleQuietProminenceDb else { continue }
            let floor = x[i] - parameters.cycleBurstWidthDropShare * (x[i] - lowest)
            var width = 1
            var j = i - 1
            while j >= lo, x[j] >= floor { width += 1; j -= 1 }
            j = i + 1
            while j <= hi, x[j] >= floor { width += 1; j += 1 }
            peaks.append((i, x[i], width))
        }
        var pairs = 0, quieterLonger = 0
        for k in peaks.indices.dropFirst() {
            let (a, b) = (peaks[k - 1], peaks[k])
            let spacing = Double(b.index - a.index) / lag
            guard spacing >= 0.3, spacing <= 0.7, abs(a.level - b.level) >= 3 else { continue }
            let (loud, quiet) = a.level > b.level ? (a, b) : (b, a)
            pairs += 1
            if Double(quiet.width) >= parameters.cycleQuietWidthRatio * Double(loud.width), quiet.width >= loud.width + 2 {
                quieterLonger += 1
            }
        }
        return pairs >= parameters.cycleQuietMinimumPairs
            && Double(quieterLonger) >= parameters.cycleQuietPairShare * Double(pairs)
    }

    /// Marks the burst blocks (`bursts`: within `toneBurstRangeDb` of the 95th-percentile level, and with a
    /// finite tone when `tone` is given) and fills `burstLevels` and, with `tone`, `tones` (0 outside bursts).
    private mutating func markBursts(_ envelope: ArraySlice<Float>, tone: ArraySlice<Float>?) {
        let n = envelope.count
        for (i, v) in envelope.enumerated() { levels[i] = v }
        levels[0..<n].sort()
        let loud = levels[min(n - 1, Int(0.95 * Double(n - 1)))] - Float(parameters.toneBurstRangeDb)
        for i in 0..<n {
            let v = envelope[envelope.startIndex + i]
            if let tone {
                let t = tone[tone.startIndex + i]
                bursts[i] = v >= loud && t.isFinite
                tones[i] = bursts[i] ? Double(t) : 0
            } else {
                bursts[i] = v >= loud
            }
            burstLevels[i] = Double(v)
        }
    }

    /// How much better the marked bursts' levels repeat `lag2` on than `lag1` on (a missing correlation counts 0).
    private func burstLevelAlternation(count n: Int, lag1: Int, lag2: Int) -> Double {
        (burstCorrelation(burstLevels, count: n, lag: lag2) ?? 0) - (burstCorrelation(burstLevels, count: n, lag: lag1) ?? 0)
    }

    /// Pearson correlation of `values` at burst blocks with `values` at burst blocks `lag` later; nil with fewer
    /// than `toneMinimumPairs` pairs or no variation.
    private func burstCorrelation(_ values: [Double], count n: Int, lag: Int) -> Double? {
        var pairs = 0, sa = 0.0, sb = 0.0
        for i in 0..<(n - lag) where bursts[i] && bursts[i + lag] { pairs += 1; sa += values[i]; sb += values[i + lag] }
        guard pairs >= parameters.toneMinimumPairs else { return nil }
        let ma = sa / Double(pairs), mb = sb / Double(pairs)
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for i in 0..<(n - lag) where bursts[i] && bursts[i + lag] {
            let a = values[i] - ma, b = values[i + lag] - mb
            sab += a * b; saa += a * a; sbb += b * b
        }
        let d = (saa * sbb).squareRoot()
        return d > 0 ? sab / d : nil
    }

    /// Smooths (5-tap binomial) and linearly detrends the envelope into `x`.
    private func prepare(_ envelope: ArraySlice<Float>, count n: Int, into x: inout [Double]) {
        let base = envelope.startIndex
        // Binomial [1 4 6 4 1]/16 low-pass (edges clamped): zero gain at fs/2, −0.9 dB at 42 breaths/min.
        @inline(__always) func e(_ i: Int) -> Double { Double(envelope[base + min(n - 1, max(0, i))]) }
        for i in 0..<n {
            x[i] = (e(i - 2) + 4 * e(i - 1) + 6 * e(i) + 4 * e(i + 1) + e(i + 2)) / 16
        }
        // Least-squares line through (i, x[i]).
        let meanI = Double(n - 1) / 2
        var meanX = 0.0
        for i in 0..<n { meanX += x[i] }
        meanX /= Double(n)
        var sxy = 0.0, sxx = 0.0
        for i in 0..<n {
            let di = Double(i) - meanI
            sxy += di * (x[i] - meanX); sxx += di * di
        }
        let slope = sxx > 0 ? sxy / sxx : 0
        for i in 0..<n { x[i] -= meanX + slope * (Double(i) - meanI) }
    }

    /// Normalised autocorrelation r(L) of `x` for L in [max(1, minLag−1), maxLag+1] into `r`.
    private mutating func computeAutocorrelation(count n: Int, minLag: Int, maxLag: Int) {
        acLow = max(1, minLag - 1); acHigh = min(n - 2, maxLag + 1)
        guard acHigh >= acLow else { return }
        x.withUnsafeBufferPointer { v in
            for lag in acLow...acHigh {
                let m = n - lag
                var sxy = SIMD4<Double>(repeating: 0), sxx = sxy, syy = sxy
                var i = 0
                while i + 4 <= m {
                    let a = SIMD4(v[i], v[i + 1], v[i + 2], v[i + 3])
                    let b = SIMD4(v[i + lag], v[i + lag + 1], v[i + lag + 2], v[i + lag + 3])
                    sxy += a * b; sxx += a * a; syy += b * b
                    i += 4
                }
                var xy = sxy.sum(), xx = sxx.sum(), yy = syy.sum()
                while i < m {
                    xy += v[i] * v[i + lag]; xx += v[i] * v[i]; yy += v[i + lag] * v[i + lag]
                    i += 1
                }
                let d = (xx * yy).squareRoot()
                r[lag] = d > 0 ? xy / d : 0
            }
        }
    }

    /// The highest local maximum of r within ±1 sample of `lag`, refined by parabolic interpolation (the
    /// largest sampled value there when r has no local maximum; −1 outside the computed lags).
    private func autocorrelationNear(_ lag: Double) -> Double {
        let lo = max(acLow + 1, Int((lag - 1).rounded(.down))), hi = min(acHigh - 1, Int((lag + 1).rounded(.up)))
        guard hi >= lo else { return -1 }
        var best = -Double.infinity, sampled = -Double.infinity
        for l in lo...hi {
            sampled = max(sampled, r[l])
            guard r[l] > r[l - 1], r[l] >= r[l + 1] else { continue }
            let (ym, y0, yp) = (r[l - 1], r[l], r[l + 1])
            let denom = ym - 2 * y0 + yp
            let shift = denom < 0 ? max(-0.5, min(0.5, 0.5 * (ym - yp) / denom)) : 0
            best = max(best, y0 - 0.25 * (ym - yp) * shift)
        }
        return best > -Double.infinity ? best : sampled
    }

    /// The local maximum of r with its lag in [from, to] (samples) that has the highest *biased* value
    /// r(L)·(n−L)/n, refined by parabolic interpolation; nil when r has no positive local maximum there.
    /// The bias down-weights long lags, whose few overlapping samples make r noisy, so that the breathing
    /// period wins over its multiples.
    private func autocorrelationPeak(count n: Int, from: Double, to: Double) -> (lag: Double, value: Double)? {
        let lo = max(acLow + 1, Int(from.rounded(.down))), hi = min(acHigh - 1, Int(to.rounded(.up)))
        guard hi >= lo else { return nil }
        var bestLag = -1, best = 0.0
        for lag in lo...hi where r[lag] > r[lag - 1] && r[lag] >= r[lag + 1] {
            let biased = r[lag] * Double(n - lag) / Double(n)
            if biased > best { best = biased; bestLag = lag }
        }
        guard bestLag > 0 else { return nil }
        let (ym, y0, yp) = (r[bestLag - 1], r[bestLag], r[bestLag + 1])
        let denom = ym - 2 * y0 + yp
        let shift = denom < 0 ? max(-0.5, min(0.5, 0.5 * (ym - yp) / denom)) : 0
        let lag = Double(bestLag) + shift
        guard lag >= from, lag <= to else { return nil }
        return (lag, y0 - 0.25 * (ym - yp) * shift)
    }

    /// Power |Σ w[i]·e^(−jωi)|² of the Hann-windowed `x` at the breathing rates `from + k·step` (breaths/min),
    /// k = 0..<m, into `powers`. Goertzel's recurrence (Goertzel, Am Math Monthly 65:34, 1958), four
    /// frequencies per pass in SIMD lanes.
    private mutating func gridPowers(from: Double, step: Double, count m: Int, samples n: Int) {
        powers.removeAll(keepingCapacity: true)
        let toRadians = 2 * Double.pi / (60 * parameters.envelopeRateHz)
        var k = 0
        window.withUnsafeBufferPointer { w in
            while k < m {
                var coeff = SIMD4<Double>(repeating: 0)
                for lane in 0..<4 { coeff[lane] = 2 * cos((from + Double(k + lane) * step) * toRadians) }
                var s1 = SIMD4<Double>(repeating: 0), s2 = SIMD4<Double>(repeating: 0)
                for i in 0..<n {
                    let s0 = SIMD4<Double>(repeating: w[i]) + coeff * s1 - s2
                    s2 = s1; s1 = s0
                }
                let p = s1 * s1 + s2 * s2 - coeff * s1 * s2
                for lane in 0..<min(4, m - k) { powers.append(p[lane]) }
                k += 4
            }
        }
    }

    /// Applies the Hann window to `x` (into `window`) before spectral evaluation.
    private mutating func applyWindow(count n: Int) {
        for i in 0..<n {
            let h = 0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))
            window[i] = x[i] * h
        }
    }

    /// The frequency (breaths/min) of the highest envelope power in [low, high]: 0.5 breaths/min grid,
    /// refined on a 0.05 grid around the best point.
    private mutating func spectralPeak(count n: Int, low: Double, high: Double) -> (bpm: Double, power: Double) {
        let m = max(1, Int(((high - low) / 0.5).rounded(.down)) + 1)
        gridPowers(from: low, step: 0.5, count: m, samples: n)
        var bestBpm = low, best = -1.0
        for (k, p) in powers.enumerated() where p > best { best = p; bestBpm = low + Double(k) * 0.5 }
        let centre = bestBpm
        gridPowers(from: centre - 0.5, step: 0.05, count: 21, samples: n)
        for (k, p) in powers.enumerated() {
            let f = centre - 0.5 + Double(k) * 0.05
            if f >= low, f <= high, p > best { best = p; bestBpm = f }
        }
        return (bestBpm, best)
    }

    /// Share of the envelope power from 3 to 90 breaths/min that lies within ±2 bins (bin = fs/n) of the
    /// breathing frequency `bpm` or its second harmonic.
    private mutating func concentration(bpm: Double, count n: Int) -> Double {
        let binBpm = 60 * parameters.envelopeRateHz / Double(n)
        let step = max(0.25, binBpm / 2)
        let m = Int(((90 - 3) / step).rounded(.down)) + 1
        gridPowers(from: 3, step: step, count: m, samples: n)
        var total = 0.0, near = 0.0
        for (k, p) in powers.enumerated() {
            let f = 3 + Double(k) * step
            total += p
            if abs(f - bpm) <= 2 * binBpm || abs(f - 2 * bpm) <= 2 * binBpm { near += p }
        }
        return total > 0 ? near / total : 0
    }
}
