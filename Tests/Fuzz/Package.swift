// swift-tools-version:6.1
// libFuzzer targets for sleepcycle's input parsing. Built and run by scripts/fuzz.sh (which passes
// -sanitize=fuzzer,address); kept out of the main package so that `swift build` / `swift test` there never need
// libFuzzer. Depends on the main package by path.
import PackageDescription

let package = Package(
    name: "sleepcycle-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "sleepcycle", path: "../..")],
    targets: [
        // libFuzzer's LLVMFuzzerRunDriver, declared for Swift.
        .target(name: "CFuzzerDriver"),
        // One executable per fuzz target: its main hands its test function to libFuzzer's driver.
        .executableTarget(name: "DecodeFuzzer", dependencies: [
            "CFuzzerDriver", .product(name: "SleepCycleAudio", package: "sleepcycle"),
        ]),
        .executableTarget(name: "CSVFuzzer", dependencies: [
            "CFuzzerDriver", .product(name: "SleepCycle", package: "sleepcycle"),
        ]),
        // Writes the seed corpus of DecodeFuzzer (tiny files made with AudioFileWriter). A plain executable.
        .executableTarget(name: "FuzzCorpusGenerator",
                          dependencies: [.product(name: "SleepCycleAudio", package: "sleepcycle")]),
    ]
)
