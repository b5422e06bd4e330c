import CFFTW
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How hard FFTW's planner searches for a fast algorithm (FFTW manual §4.3.2 "Planner Flags").
public enum FFTPlanningRigor: Sendable {
    /// `FFTW_ESTIMATE`: a heuristic plan, made in microseconds.
    case estimate
    /// `FFTW_MEASURE`: times several algorithms once per size (tens of ms for 1024 points), then faster transforms.
    case measure

    var flags: UInt32 { self == .estimate ? UInt32(FFTW_ESTIMATE) : UInt32(FFTW_MEASURE) }
}

/// A forward real-to-complex single-precision FFTW plan of one size, shared by every user of that size.
///
/// Executing is thread-safe: `fftwf_execute_dft_r2c` (the "new-array execute" interface, FFTW manual §4.6)
/// may run concurrently on different arrays, provided they are aligned like the planning arrays — always true
/// for buffers from `FFTBuffer`. Plans are never destroyed (one per size for the life of the process).
public struct RealFFTPlan: @unchecked Sendable {
    private let plan: OpaquePointer
    /// Transform length (real input samples).
    public let size: Int
    /// Complex output bins: `size / 2 + 1`.
    public var binCount: Int { size / 2 + 1 }

    fileprivate init(plan: OpaquePointer, size: Int) { self.plan = plan; self.size = size }

    /// Transforms `input` (`size` reals) into `output` (`binCount` complex values stored re, im, re, im, …).
    /// FFTW may overwrite the input (FFTW_DESTROY_INPUT is the default for r2c, FFTW manual §4.3.2), so
    /// callers pass a scratch copy. Both pointers must come from `FFTBuffer`.
    @inline(__always)
    public func execute(_ input: UnsafeMutablePointer<Float>, _ output: UnsafeMutablePointer<Float>) {
        output.withMemoryRebound(to: fftwf_complex.self, capacity: binCount) { out in
            fftwf_execute_dft_r2c(plan, input, out)
        }
    }

    /// The shared plan for `size` real points, created on first use under the global planner lock.
    public static func forward(size: Int) -> RealFFTPlan { FFTPlanCache.shared.plan(size: size) }
}

/// An inverse complex-to-real single-precision FFTW plan of one size (unnormalised: a forward then inverse
/// transform multiplies by `size`), shared like `RealFFTPlan`.
public struct RealInverseFFTPlan: @unchecked Sendable {
    private let plan: OpaquePointer
    /// Transform length (real output samples).
    public let size: Int
    /// Complex input bins: `size / 2 + 1`.
    public var binCount: Int { size / 2 + 1 }

    fileprivate init(plan: OpaquePointer, size: Int) { self.plan = plan; self.size = size }

    /// Transforms `input` (`binCount` complex values, re, im, …) into `output` (`size` reals). FFTW's c2r
    /// transforms always overwrite their input (FFTW manual §4.3.2). Both pointers must come from `FFTBuffer`.
    @inline(__always)
    public func execute(_ input: UnsafeMutablePointer<Float>, _ output: UnsafeMutablePointer<Float>) {
        input.withMemoryRebound(to: fftwf_complex.self, capacity: binCount) { inp in
            fftwf_execute_dft_c2r(plan, inp, output)
        }
    }

    /// The shared inverse plan for `size` real points, created on first use under the global planner lock.
    public static func inverse(size: Int) -> RealInverseFFTPlan { FFTPlanCache.shared.inversePlan(size: size) }
}

/// SIMD-aligned storage for FFT input/output (allocated with `fftwf_malloc`, as FFTW requires for
/// new-array execution with plans made on aligned arrays).
public enum FFTBuffer {
    /// `count` zeroed floats, SIMD-aligned. Free with `deallocate(_:)`.
    public static func allocate(_ count: Int) -> UnsafeMutablePointer<Float> {
        let p = fftwf_alloc_real(max(count, 1))!
        p.initialize(repeating: 0, count: max(count, 1))
        return p
    }
    public static func deallocate(_ p: UnsafeMutablePointer<Float>) { fftwf_free(p) }
}

/// The process-wide plan cache. FFTW's planner is not thread-safe (FFTW manual §5.4 "Thread safety"):
/// every call into it happens under `lock`; only `fftwf_execute*` runs outside.
public final class FFTPlanCache: @unchecked Sendable {
    public static let shared = FFTPlanCache()

    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private var plans: [Int: RealFFTPlan] = [:]
    private var rigorValue: FFTPlanningRigor = .estimate

    private init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
    }

    /// Planner rigor for plans created from now on. Default `.estimate`: the same plan in every run, so the
    /// same input gives bit-identical features (FFTW_MEASURE picks by timing, and different algorithms round
    /// differently), and it was faster overall on a 1-hour file (docs/0001-dsp-features.md).
    public var rigor: FFTPlanningRigor {
        get { withLock { rigorValue } }
        set { withLock { rigorValue = newValue } }
    }

    /// Number of distinct plan sizes created so far.
    public var planCount: Int { withLock { plans.count } }

    /// Times a plan of `size` was created (1 after first use; never more, whatever the concurrency).
    func creations(size: Int) -> Int { withLock { created[size, default: 0] } }
    private var created: [Int: Int] = [:]

    func plan(size: Int) -> RealFFTPlan {
        cached(size, in: \.plans) { real, complex, flags in
            guard let raw = fftwf_plan_dft_r2c_1d(Int32(size), real, complex, flags) else {
                fatalError("FFTW could not plan a real FFT of size \(size)")
            }
            created[size, default: 0] += 1
            return RealFFTPlan(plan: raw, size: size)
        }
    }

    private var inversePlans: [Int: RealInverseFFTPlan] = [:]

    func inversePlan(size: Int) -> RealInverseFFTPlan {
        cached(size, in: \.inversePlans) { real, complex, flags in
            guard let raw = fftwf_plan_dft_c2r_1d(Int32(size), complex, real, flags) else {
                fatalError("FFTW could not plan an inverse real FFT of size \(size)")
            }
            return RealInverseFFTPlan(plan: raw, size: size)
        }
    }

    /// The plan of `size` in `cache`, made under the planner lock on first use by `make` (given scratch real and
    /// complex arrays: FFTW_MEASURE overwrites the arrays it plans on, and the planner flags).
    private func cached<P>(_ size: Int, in cache: ReferenceWritableKeyPath<FFTPlanCache, [Int: P]>,
                           make: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<fftwf_complex>, UInt32) -> P) -> P {
        precondition(size >= 2, "FFT size must be at least 2, got \(size)")
        return withLock {
            if let p = self[keyPath: cache][size] { return p }
            let real = fftwf_alloc_real(size)!
            let complex = fftwf_alloc_complex(size / 2 + 1)!
            defer { fftwf_free(real); fftwf_free(complex) }
            let p = make(real, complex, rigorValue.flags)
            self[keyPath: cache][size] = p
            return p
        }
    }

    private func withLock<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return body()
    }
}
