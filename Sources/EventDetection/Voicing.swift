import DequeModule
import Foundation
import SleepCycleBus
import SleepCycleDSP

/// The periodicity of one analysed frame.
public struct PitchFrame: Sendable, Equatable {
    /// Height of the chosen normalised-autocorrelation peak, 0…1 (0 when no peak lies in the f0 range).
    public var r: Float
    /// Fundamental frequency of that peak (Hz); 0 when `r == 0`.
    public var f0Hz: Float
    /// Harmonics-to-noise ratio `10·log10(r / (1 − r))` with `r` clamped to 0.001…0.999 (so −30…+30 dB).
    public var hnrDb: Float {
        let c = min(max(r, 0.001), 0.999)
        return 10 * log10f(c / (1 - c))
    }
    public static let unvoiced = PitchFrame(r: 0, f0Hz: 0)
}

/// Short-term periodicity (f0, voicing strength, HNR) after Boersma 1993, "Accurate short-term analysis of the
/// fundamental frequency and the harmonics-to-noise ratio of a sampled sound", IFA Proceedings 17, 97–110.
///
/// Per frame: the 16-kHz input is low-passed (31-tap Hamming-windowed sinc FIR, cut-off 1.8 kHz; Oppenheim &
/// Schafer, *Discrete-Time Signal Processing*, §7.5) and decimated by 4 to 4 kHz — f0 ≤ 1 kHz needs no more, and
/// it makes the transforms 4× shorter. The 256-sample (64 ms, 3.8 periods of 60 Hz) frame has its mean removed
/// and is Hann-windowed; its autocorrelation `r_a(τ)` is the inverse transform of the power spectrum, zero-padded
/// to 512 points (no circular wrap for lags ≤ 256), normalised by `r_a(0)` and divided by the normalised
/// autocorrelation of the window `r_w(τ)` (Boersma's eq. 9: `r_x(τ) ≈ r_a(τ) / r_w(τ)`, which removes the window's
/// taper from the peak heights). Both transforms are forward real FFTs of the project's `FFTPlanCache` (the power
/// spectrum is real and even, so its forward transform is the autocorrelation up to a factor N).
///
/// Candidates are the local maxima of `r_x` for lags of 1/1000…1/60 s, refined by parabolic interpolation; the
/// chosen one maximises Boersma's strength `r − octaveCost · log2(minF0 · τ)` (octave cost 0.01 per octave,
/// Praat's default, which prefers the shortest of several equal peaks T, 2T, 3T). A frame is voiced when its
/// `r ≥ voicingThreshold` (0.45, Praat's default voicing threshold). Level-invariant by construction (every
/// quantity is a ratio of autocorrelations). Boersma's Viterbi path and sinc interpolation are left out: a
/// segment's summary needs per-frame values only, and parabolic interpolation is within 1 % at ≤ 440 Hz
/// (tests).
public struct VoicingAnalyzer: Sendable {
    public static let decimation = 4
    public static let rate: Float = 4000
    /// Analysis frame at 4 kHz (64 ms).
    public static let windowLength = 256
    static let fftSize = 512
    public static let minF0: Float = 60
    public static let maxF0: Float = 1000
    public static let voicingThreshold: Float = 0.45
    static let octaveCost: Float = 0.01
    static let firLength = 31

    /// 16-kHz input samples one frame needs (1024 + 30).
    public static var frameSpan: Int { windowLength * decimation + firLength - 1 }

    let fir: [Float]
    let window: [Float]
    let windowAutocorrelation: [Float]   // normalised r_w(τ), τ = 0…lagMax + 1
    let lagMin: Int
    let lagMax: Int
    let plan: RealFFTPlan

    public init() {
        let m = Self.firLength
        let cutoff = 1800.0 / 16000.0   // cycles per sample
        var h = [Double](repeating: 0, count: m)
        for k in 0..<m {
            let t = Double(k - (m - 1) / 2)
            let sinc = t == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * t) / (Double.pi * t)
            h[k] = sinc * (0.54 - 0.46 * cos(2 * Double.pi * Double(k) / Double(m - 1)))
        }
        let gain = h.reduce(0, +)
        fir = h.map { Float($0 / gain) }
        let w = Self.windowLength
        let hann = (0..<w).map { 0.5 - 0.5 * cos(2 * Double.pi * (Double($0) + 0.5) / Double(w)) }
        window = hann.map { Float($0) }
        lagMin = Int((Double(Self.rate) / Double(Self.maxF0)).rounded(.down))
        lagMax = Int((Double(Self.rate) / Double(Self.minF0)).rounded(.up))
        var rw = [Float](repeating: 0, count: lagMax + 2)
        var r0 = 0.0
        for i in 0..<w { r0 += hann[i] * hann[i] }
        for tau in 0..<(lagMax + 2) {
            var acc = 0.0
            for i in 0..<(w - tau) { acc += hann[i] * hann[i + tau] }
            rw[tau] = Float(acc / r0)
        }
        windowAutocorrelation = rw
        plan = RealFFTPlan.forward(size: Self.fftSize)
    }

    /// FFT work buffers (FFTW-aligned), allocated once per segment analysis and freed with `release()`.
    struct Scratch {
        let input: UnsafeMutablePointer<Float>
        let output: UnsafeMutablePointer<Float>
        /// The 16-kHz frame split into its `decimation` polyphase components (`phaseLength` each).
        let phases: UnsafeMutablePointer<Float>
        static var phaseLength: Int { VoicingAnalyzer.frameSpan / VoicingAnalyzer.decimation + 1 }
        init() {
            input = FFTBuffer.allocate(VoicingAnalyzer.fftSize)
            output = FFTBuffer.allocate(VoicingAnalyzer.fftSize + 2)
            let n = VoicingAnalyzer.decimation * Self.phaseLength
            phases = .allocate(capacity: n)
            phases.initialize(repeating: 0, count: n)
        }
        func release() { FFTBuffer.deallocate(input); FFTBuffer.deallocate(output); phases.deallocate() }
    }

    /// Analyses one frame: `samples` holds `frameSpan` 16-kHz samples (the frame is centred on the middle one).
    public func analyze(_ samples: UnsafeBufferPointer<Float>) -> PitchFrame {
        let scratch = Scratch()
        defer { scratch.release() }
        return analyze(samples, scratch: scratch)
    }

    func analyze(_ samples: UnsafeBufferPointer<Float>, scratch: Scratch) -> PitchFrame {
        precondition(samples.count >= Self.frameSpan, "a voicing frame needs \(Self.frameSpan) samples")
        let w = Self.windowLength, n = Self.fftSize, m = Self.firLength, d = Self.decimation
        let x = scratch.input, y = scratch.output
        // Low-pass and decimate by 4 in polyphase form (y[j] = Σ_k h[k]·s[4j + k] with k = 4q + p is
        // Σ_p Σ_q h[4q + p]·s_p[j + q], s_p[i] = s[4i + p]): each tap is one pass over contiguous memory, which the
        // compiler vectorises (the direct form is a scalar reduction per output). Then mean removal and window.
        let pl = Scratch.phaseLength, ph = scratch.phases
        for p in 0..<d {
            let dst = ph + p * pl
            var i = 0, k = p
            while k < Self.frameSpan { dst[i] = samples[k]; i += 1; k += d }
        }
        for j in 0..<w { x[j] = 0 }
        fir.withUnsafeBufferPointer { h in
            for k in 0..<m {
                let c = h[k]
                let src = ph + (k % d) * pl + k / d
                for j in 0..<w { x[j] += c * src[j] }
            }
        }
        var mean: Float = 0
        for j in 0..<w { mean += x[j] }
        mean /= Float(w)
        for j in 0..<w { x[j] = (x[j] - mean) * window[j] }
        for j in w..<n { x[j] = 0 }
        plan.execute(x, y)
        // Power spectrum laid out as a real even sequence of length n; its forward transform is n·r_a(τ).
        let half = n / 2
        for k in 0...half { x[k] = y[2 * k] * y[2 * k] + y[2 * k + 1] * y[2 * k + 1] }
        for k in 1..<half { x[n - k] = x[k] }
        plan.execute(x, y)
        let r0 = y[0]
        guard r0 > 0, r0.isFinite else { return .unvoiced }
        @inline(__always) func rx(_ tau: Int) -> Float { (y[2 * tau] / r0) / windowAutocorrelation[tau] }
        var best = PitchFrame.unvoiced
        var bestStrength = -Float.infinity
        var prev = rx(lagMin - 1), cur = rx(lagMin)
        for tau in lagMin...lagMax {
            let next = rx(tau + 1)
            if cur > prev && cur >= next && cur > 0 {
                let denom = prev - 2 * cur + next
                let shift = denom < 0 ? min(max(0.5 * (prev - next) / denom, -0.5), 0.5) : 0
                let lag = Float(tau) + shift
                let peak = min(cur - 0.25 * (prev - next) * shift, 1)
                let f0 = Self.rate / lag
                if f0 >= Self.minF0 && f0 <= Self.maxF0 {
                    let strength = peak - Self.octaveCost * log2f(Self.minF0 * lag / Self.rate)
                    if strength > bestStrength { bestStrength = strength; best = PitchFrame(r: peak, f0Hz: f0) }
                }
            }
            prev = cur; cur = next
        }
        return best
    }
}

/// The level-invariant voicing summary of a segment (the last six `SegmentFeatures.names`).
///
/// `frames` evenly spaced analysis frames over `[start, end)` (one per 64 ms, at most `maxFrames` = 6; the
/// cost bound of docs/0005), each centred at `start + (2i + 1)·D / (2K)`. A frame whose samples the ring does
/// not hold (a gap, or audio that has left the ring) counts as unvoiced (`r = 0`): nothing is invented.
/// * `voiced_share`: share of frames with `r ≥ 0.45`.
/// * `voicing_r_top_mean`: mean `r` of the best half of the frames (rounded up).
/// * `voiced_log2_f0_median`: median of `log2(f0 / 100 Hz)` over voiced frames; −1 (50 Hz, below the search
///   range) when no frame is voiced.
/// * `f0_std_semitones`: standard deviation of `12·log2 f0` over voiced frames (0 with fewer than two):
///   a hum's f0 is constant, speech prosody moves by several semitones.
/// * `voiced_run_max_s`: the longest run of consecutive voiced frames × the frame spacing `D / K` (seconds).
/// * `hnr_mean_db`: mean HNR over all frames (unvoiced / missing frames count with their own clamped `r`).
public enum SegmentVoicing {
    public static let names = ["voiced_share", "voicing_r_top_mean", "voiced_log2_f0_median", "f0_std_semitones",
                               "voiced_run_max_s", "hnr_mean_db"]
    public static let maxFrames = 6
    public static let unvoicedLog2F0: Float = -1

    /// Per-frame analysis of the segment `[start, end)` from `ring` (nil = frame not held by the ring).
    public static func frames(_ analyzer: VoicingAnalyzer, ring: AudioRing, start: SampleTime,
                              end: SampleTime) -> [PitchFrame?] {
        let length = max(end - start, 1)
        let k = min(maxFrames, max(1, Int(length) / (VoicingAnalyzer.windowLength * VoicingAnalyzer.decimation)))
        let span = VoicingAnalyzer.frameSpan
        let scratch = VoicingAnalyzer.Scratch()
        defer { scratch.release() }
        var buffer = [Float](repeating: 0, count: span)
        var out: [PitchFrame?] = []
        out.reserveCapacity(k)
        for i in 0..<k {
            let centre = start + (SampleTime(2 * i + 1) * length) / SampleTime(2 * k)
            let from = centre - SampleTime(span / 2)
            let held = buffer.withUnsafeMutableBufferPointer { ring.copy(from: from, into: $0) }
            out.append(held ? buffer.withUnsafeBufferPointer { analyzer.analyze($0, scratch: scratch) } : nil)
        }
        return out
    }

    /// The six summary values (order of `names`) of per-frame results over a segment of `durationSec`.
    public static func summary(_ frames: [PitchFrame?], durationSec: Double) -> [Float] {
        let all = frames.map { $0 ?? .unvoiced }
        let k = max(all.count, 1)
        let voiced = all.filter { $0.r >= VoicingAnalyzer.voicingThreshold }
        let top = all.map(\.r).sorted(by: >).prefix((k + 1) / 2)
        let topMean = top.isEmpty ? 0 : top.reduce(0, +) / Float(top.count)
        let logs = voiced.map { log2f($0.f0Hz / 100) }.sorted()
        let median: Float
        if logs.isEmpty { median = unvoicedLog2F0 } else if logs.count % 2 == 1 { median = logs[logs.count / 2] } else {
            median = 0.5 * (logs[logs.count / 2 - 1] + logs[logs.count / 2])
        }
        var spread: Float = 0
        if logs.count >= 2 {
            let semis = logs.map { 12 * $0 }
            let m = semis.reduce(0, +) / Float(semis.count)
            spread = (semis.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Float(semis.count)).squareRoot()
        }
        var run = 0, longest = 0
        for f in all {
            if f.r >= VoicingAnalyzer.voicingThreshold { run += 1; longest = max(longest, run) } else { run = 0 }
        }
        let spacing = durationSec / Double(k)
        let hnr = all.reduce(Float(0)) { $0 + $1.hnrDb } / Float(k)
        return [Float(voiced.count) / Float(k), topMean, median, spread, Float(Double(longest) * spacing), hnr]
    }
}

/// A bounded window on one channel's most recent 16-kHz samples (the raw audio the voicing analysis reads at
/// segment close).
///
/// Holds at most `capacity` samples of the current contiguous stretch: a block that does not start where the
/// previous one ended (a gap, or a repeat) starts a new stretch, so samples across a hole are never joined.
/// `copy(from:into:)` succeeds only for ranges held completely.
///
/// It keeps the engine's audio blocks themselves (array slices: a reference, no copy) rather than copying their
/// samples into a buffer of its own: the engine reads every block into a fresh array, so holding it costs nothing,
/// and only the few stretches a closing segment analyses are ever copied (copying every block a segment could reach
/// was ~1 % of an `analyze` run, 4 % of detection's cost, on a night of audible breathing). Blocks shorter than
/// `shortBlock` (a host pushing 10-ms buffers) and samples given by pointer are copied into chunks of the ring's
/// own instead, so the blocks held stay few (about 2 × capacity / `shortBlock` at most) whatever the callers' block
/// sizes. A block leaves once all of it is older than `capacity` samples.
public struct AudioRing: Sendable {
    public let capacity: Int
    /// Arrays shorter than this are copied into the ring's own chunks of `chunk` samples.
    static let shortBlock = 4096
    static let chunk = 16_384
    private struct Block: Sendable {
        var start: SampleTime
        var samples: ArraySlice<Float>
        /// A chunk of the ring's own (appended to while it is the newest and has room).
        var owned: Bool
        var end: SampleTime { start + SampleTime(samples.count) }
    }
    /// The current stretch's blocks, oldest first, each starting where the one before it ends.
    private var blocks: Deque<Block> = []
    /// One past the newest sample held.
    public private(set) var end: SampleTime = 0
    private var stretchStart: SampleTime = 0

    /// 8 s by default: a 5-s segment, the 0.3-s bridge, the frame latency and one 16384-sample engine block.
    public init(capacity: Int = 8 * AnalysisClock.sampleRate) {
        precondition(capacity > 0, "AudioRing capacity must be positive")
        self.capacity = capacity
    }

    /// First sample held (`start == end`: empty).
    public var start: SampleTime { max(stretchStart, end - SampleTime(capacity)) }

    /// Copies the samples (only the newest `capacity` of them can be held).
    public mutating func append(_ samples: UnsafeBufferPointer<Float>, at time: SampleTime) {
        guard !samples.isEmpty else { return }
        begin(at: time)
        let skip = max(0, samples.count - capacity)
        copyIn(UnsafeBufferPointer(rebasing: samples[skip...]), at: time + SampleTime(skip))
        finish(end: time + SampleTime(samples.count))
    }

    /// Holds the array itself (no copy of its samples) unless it is shorter than `shortBlock`.
    public mutating func append(_ samples: [Float], at time: SampleTime) {
        guard !samples.isEmpty else { return }
        guard samples.count >= Self.shortBlock else {
            samples.withUnsafeBufferPointer { append($0, at: time) }
            return
        }
        begin(at: time)
        blocks.append(Block(start: time, samples: samples[...], owned: false))
        finish(end: time + SampleTime(samples.count))
    }

    /// A block that does not continue the stretch starts a new one.
    private mutating func begin(at time: SampleTime) {
        if time != end || start == end {
            stretchStart = time
            blocks.removeAll()
        }
    }

    /// Appends to the newest chunk of the ring's own while it has room, then to new chunks.
    private mutating func copyIn(_ samples: UnsafeBufferPointer<Float>, at time: SampleTime) {
        var i = 0
        while i < samples.count {
            if !(blocks.last.map { $0.owned && $0.samples.count < Self.chunk } ?? false) {
                var chunk = ArraySlice<Float>()
                chunk.reserveCapacity(Self.chunk)
                blocks.append(Block(start: time + SampleTime(i), samples: chunk, owned: true))
            }
            let last = blocks.count - 1
            let n = min(samples.count - i, Self.chunk - blocks[last].samples.count)
            blocks[last].samples.append(contentsOf: UnsafeBufferPointer(rebasing: samples[i..<(i + n)]))
            i += n
        }
    }

    /// Sets the end and lets go of the blocks wholly before the window.
    private mutating func finish(end newEnd: SampleTime) {
        end = newEnd
        let first = start
        while let oldest = blocks.first, oldest.end <= first { blocks.removeFirst() }
    }

    /// Copies `[from, from + into.count)` into `into`; false (and `into` untouched) unless all of it is held.
    public func copy(from: SampleTime, into: UnsafeMutableBufferPointer<Float>) -> Bool {
        let count = into.count
        guard from >= start, from + SampleTime(count) <= end, count <= capacity else { return false }
        var at = from, done = 0
        for block in blocks where done < count {
            guard block.end > at else { continue }
            let offset = Int(at - block.start), n = min(count - done, Int(block.end - at))
            block.samples.withUnsafeBufferPointer { b in
                _ = UnsafeMutableBufferPointer(rebasing: into[done..<(done + n)])
                    .update(fromContentsOf: UnsafeBufferPointer(rebasing: b[offset..<(offset + n)]))
            }
            done += n; at += SampleTime(n)
        }
        return true
    }
}
