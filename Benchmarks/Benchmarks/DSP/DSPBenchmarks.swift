import Benchmark
import SleepCycleDSP

let benchmarks: @Sendable () -> Void = {
    Benchmark("Placeholder") { benchmark in
        blackHole(FeatureLayout.stride)
    }
}
