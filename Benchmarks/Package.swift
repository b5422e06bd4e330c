// swift-tools-version:6.1
// Speed and memory benchmarks for sleepcycle (ordo-one/benchmark). Run: `swift package benchmark` here.
// Report generators (the measured tables docs cite) are executables in Reports/: `swift run -c release <name>` here.
// Accuracy evaluations and the comparison scripts live in Scripts/ (see README.md).
import PackageDescription

let package = Package(
    name: "sleepcycle-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "sleepcycle", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "DSPBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SleepCycleDSP", package: "sleepcycle"),
                .product(name: "SleepCycleAudio", package: "sleepcycle"),
                .product(name: "SleepCycle", package: "sleepcycle"),
            ],
            path: "Benchmarks/DSP",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // CPU cost of the live sources: ALSA capture (alsa-lib's `file` plugin) and injected buffers.
        .executableTarget(
            name: "CaptureBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SleepCycleAudio", package: "sleepcycle"),
            ],
            path: "Benchmarks/Capture",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),

        // Report generators: public API only, each prints the table a design note cites.
        .target(name: "ReportSupport", dependencies: [.product(name: "SleepCycleAudio", package: "sleepcycle")],
                path: "Reports/ReportSupport"),
        .executableTarget(name: "resampler-report", dependencies: [
            "ReportSupport", .product(name: "SleepCycleDSP", package: "sleepcycle"),
        ], path: "Reports/resampler-report"),
        .executableTarget(name: "mutation-report", dependencies: [
            "ReportSupport", .product(name: "SleepCycleAudio", package: "sleepcycle"),
        ], path: "Reports/mutation-report"),
        .executableTarget(name: "rawpcm-live-report", dependencies: [
            "ReportSupport", .product(name: "SleepCycleAudio", package: "sleepcycle"),
        ], path: "Reports/rawpcm-live-report"),
        .executableTarget(name: "formats-check", dependencies: [
            "ReportSupport",
            .product(name: "SleepCycle", package: "sleepcycle"),
            .product(name: "SleepCycleAudio", package: "sleepcycle"),
            .product(name: "SleepCycleDSP", package: "sleepcycle"),
        ], path: "Reports/formats-check"),
    ]
)
