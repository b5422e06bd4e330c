// swift-tools-version:6.1
// sleepcycle: an audio-first sleep analysis engine for Linux. See docs/ and README.md.
import PackageDescription

let package = Package(
    name: "sleepcycle",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "SleepCycle", targets: ["SleepCycle"]),
        .library(name: "SleepCycleDSP", targets: ["SleepCycleDSP"]),
        .library(name: "SleepCycleAudio", targets: ["SleepCycleAudio"]),
        .executable(name: "sleepcycle", targets: ["sleepcycle"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        // SHA-1 for name-based session ids; AES-256-GCM for encrypted clips.
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        // The night store: SQLite through GRDB (needs libsqlite3-dev).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        // `swift package generate-documentation --target SleepCycle` (the DocC catalog in Sources/SleepCycle).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // System libraries (thin wrappers; apt providers name the Debian packages).
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f", providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        // FLAC and Ogg Vorbis are decoded directly (frame-level resynchronisation, true positions after damage).
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        .systemLibrary(name: "CVorbisFile", pkgConfig: "vorbisfile", providers: [.apt(["libvorbis-dev"])]),
        // Only what Swift cannot import from ALSA (macros, the variadic error handler).
        .target(name: "CALSAShim", linkerSettings: [.linkedLibrary("asound")]),
        // Linux tee(2) (needs _GNU_SOURCE): peeking at a pipe's first bytes without consuming them.
        .target(name: "CPipePeek"),

        // Text formats and file access every layer shares: ISO 8601 times, CSV, durations, raw file names.
        .target(name: "SleepCycleFormats"),

        // Pure computation: FFT plans, framing, features, resampling, envelopes, signatures.
        // No `unsafeFlags` anywhere: SwiftPM refuses them in a versioned dependency. The hot loops are written to
        // be as fast without -Ounchecked (Benchmarks/README.md, "Safe release build").
        .target(name: "SleepCycleDSP", dependencies: ["CFFTW"]),
        // Audio sources: files (libsndfile, libFLAC, libvorbisfile), ALSA capture, injected buffers; resampling to 16 kHz.
        .target(name: "SleepCycleAudio", dependencies: [
            "SleepCycleDSP", "SleepCycleFormats", "CSndFile", "CFLAC", "CVorbisFile", "CPipePeek", "CALSA", "CALSAShim",
            .product(name: "DequeModule", package: "swift-collections"),
        ]),
        // One event type for everything that happens, and the ordered synchronous bus.
        .target(name: "SleepCycleBus", dependencies: [
            "SleepCycleDSP",
            .product(name: "DequeModule", package: "swift-collections"),
        ]),

        // Consumers: each reads the bus and may publish onto it; they never import each other.
        .target(name: "AudioHealth", dependencies: ["SleepCycleBus", "SleepCycleDSP"]),
        .target(name: "EventDetection", dependencies: ["SleepCycleBus", "SleepCycleDSP", "SleepCycleFormats",
                                                      .product(name: "DequeModule", package: "swift-collections")],
                resources: [.copy("Resources")]),
        .target(name: "Breathing", dependencies: ["SleepCycleBus", "SleepCycleDSP"]),
        .target(name: "Staging", dependencies: ["SleepCycleBus", "SleepCycleFormats"], resources: [.copy("Resources")]),
        .target(name: "SleepStatistics", dependencies: ["SleepCycleBus"]),
        .target(name: "SmartAlarm", dependencies: ["SleepCycleBus"]),
        // Two sleepers, one stereo microphone: each channel's events attributed to one sleeper.
        .target(name: "ChannelSeparation", dependencies: [
            "SleepCycleBus", "SleepCycleDSP", "SleepCycleFormats", .product(name: "DequeModule", package: "swift-collections"),
        ]),

        // Audio clips of events: the source's own samples, as FLAC files, optionally AES-256-GCM encrypted.
        .target(name: "AudioClips", dependencies: [
            "SleepCycleBus", "SleepCycleAudio", "SleepCycleFormats", .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "DequeModule", package: "swift-collections"),
        ]),

        // Heart sessions: HRV of RR intervals (Task Force 1996), the session engine of Synheart's API, wearable
        // files in one schema, and the bus consumer that puts heart frames on a night's bus.
        .target(name: "HeartSession", dependencies: ["SleepCycleBus", "SleepCycleFormats"]),

        // Nights, their results and the journal of a night in progress, in one SQLite database (WAL).
        .target(name: "SleepCycleStore", dependencies: [
            "SleepCycleFormats", .product(name: "GRDB", package: "GRDB.swift"),
        ]),

        // The engine: sessions, data-source lifecycle, results.
        .target(name: "SleepCycle", dependencies: [
            "SleepCycleBus", "SleepCycleAudio", "SleepCycleDSP", "SleepCycleFormats",
            "AudioHealth", "EventDetection", "Breathing", "Staging", "SleepStatistics", "SmartAlarm", "SleepCycleStore",
            "ChannelSeparation", "AudioClips", "HeartSession",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .executableTarget(name: "sleepcycle", dependencies: [
            "SleepCycle", "SleepCycleAudio", "SleepCycleBus", "SleepCycleDSP", "SleepCycleFormats", "SleepCycleStore",
            "EventDetection", "Breathing", "Staging", "SmartAlarm", "AudioClips", "HeartSession",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        .testTarget(name: "SleepCycleDSPTests", dependencies: ["SleepCycleDSP"]),
        .testTarget(name: "SleepCycleAudioTests", dependencies: ["SleepCycleAudio", "SleepCycleDSP"]),
        .testTarget(name: "SleepCycleBusTests", dependencies: ["SleepCycleBus", "SleepCycleDSP"]),
        .testTarget(name: "SleepCycleFormatsTests", dependencies: ["SleepCycleFormats"]),
        .testTarget(name: "SleepCycleStoreTests", dependencies: [
            "SleepCycleStore", .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "AudioHealthTests", dependencies: ["AudioHealth", "SleepCycleBus", "SleepCycleDSP"]),
        .testTarget(name: "EventDetectionTests", dependencies: ["EventDetection", "SleepCycleBus", "SleepCycleDSP"]),
        .testTarget(name: "BreathingTests", dependencies: ["Breathing", "SleepCycleBus", "SleepCycleDSP"]),
        .testTarget(name: "StagingTests", dependencies: [
            "Staging", "SleepStatistics", "SmartAlarm", "SleepCycleBus", "SleepCycleFormats",
        ]),
        .testTarget(name: "HeartSessionTests", dependencies: ["HeartSession", "SleepCycleBus", "SleepCycleFormats"]),
        .testTarget(name: "AudioClipsTests", dependencies: ["AudioClips", "SleepCycleBus", "SleepCycleAudio"]),
        .testTarget(name: "ChannelSeparationTests", dependencies: ["ChannelSeparation", "SleepCycleBus", "SleepCycleDSP"]),
        .testTarget(name: "SleepCycleTests", dependencies: [
            "SleepCycle", "SleepCycleAudio", "SleepCycleBus", "SleepCycleDSP", "SleepCycleFormats",
        ]),
        .testTarget(name: "CLITests", dependencies: [
            "sleepcycle", "SleepCycleAudio", "SleepCycleDSP", "SleepCycleFormats", "SleepCycleStore",
            // Databases that are not stores, and stores damaged on purpose, for the `sessions` commands.
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
    ]
)
