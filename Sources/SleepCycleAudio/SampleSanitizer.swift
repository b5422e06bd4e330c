// Replaces decoded samples that cannot be audio (NaN, ±Inf, absurdly large) by silence, before anything filters them.

/// The plausibility rule for float samples entering analysis, applied at every source (files, injected buffers,
/// float ALSA capture) *before* resampling: the resampler's FIR would spread one NaN over ~300 outputs, and the
/// noise floor and feature state downstream would stay NaN for the rest of the night.
///
/// A sample is invalid when it is not finite or its magnitude exceeds `bound` = 16 (+24 dBFS). Integer PCM decodes
/// to [−1, 1); float WAV/CAF and injected buffers may legitimately exceed 1.0 a little (inter-sample overshoot,
/// un-normalised gain), but nothing from a microphone reaches +24 dBFS, while uninitialised or garbage float data
/// does (1e30, denormal-exponent junk). Invalid samples become 0 and are counted.
///
/// The scan is SIMD: eight lanes compare −16 ≤ x ≤ 16 (false for NaN), and only a chunk with a failing lane
/// takes the slow path that replaces and counts. On valid audio this costs one compare and a mask test per eight
/// samples (measured in `SampleSanitizerTests.cost`).
public enum SampleSanitizer {
    /// Largest magnitude kept (16 = +24 dBFS).
    public static let bound: Float = 16

    /// What one pass found.
    public struct Result: Sendable, Equatable {
        /// Samples replaced by 0.
        public var replaced: Int
        /// Index (in the buffer) of the first one, nil if none.
        public var firstIndex: Int?
        public init(replaced: Int = 0, firstIndex: Int? = nil) { self.replaced = replaced; self.firstIndex = firstIndex }
    }

    /// Replaces every non-finite sample or one beyond ±`bound` in `buffer` by 0.
    @inlinable
    public static func sanitize(_ buffer: UnsafeMutableBufferPointer<Float>) -> Result {
        guard let base = buffer.baseAddress else { return Result() }
        let n = buffer.count
        var result = Result()
        var i = 0
        let limit = SIMD8<Float>(repeating: bound)
        while i + 8 <= n {
            let v = UnsafeRawPointer(base + i).loadUnaligned(as: SIMD8<Float>.self)
            // NaN compares false, so a NaN lane fails like an infinite or huge one.
            let ok = (v .<= limit) .& (v .>= -limit)
            if !all(ok) {
                let cleaned = v.replacing(with: 0, where: .!ok)
                UnsafeMutableRawPointer(base + i).storeBytes(of: cleaned, as: SIMD8<Float>.self)
                for lane in 0..<8 where !ok[lane] {
                    if result.firstIndex == nil { result.firstIndex = i + lane }
                    result.replaced += 1
                }
            }
            i += 8
        }
        while i < n {
            if !(abs(base[i]) <= bound) {
                if result.firstIndex == nil { result.firstIndex = i }
                result.replaced += 1
                base[i] = 0
            }
            i += 1
        }
        return result
    }

    /// Index of the first invalid sample of `buffer`, nil if all are valid (a read-only scan, for callers that copy
    /// only when something needs replacing).
    @inlinable
    public static func firstInvalid(in buffer: UnsafeBufferPointer<Float>) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        let n = buffer.count
        var i = 0
        let limit = SIMD8<Float>(repeating: bound)
        while i + 8 <= n {
            let v = UnsafeRawPointer(base + i).loadUnaligned(as: SIMD8<Float>.self)
            if !all((v .<= limit) .& (v .>= -limit)) { break }
            i += 8
        }
        while i < n {
            if !(abs(base[i]) <= bound) { return i }
            i += 1
        }
        return nil
    }
}
