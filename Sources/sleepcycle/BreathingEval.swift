import ArgumentParser
import Breathing
import Foundation
import SleepCycleBus

/// Hidden developer command: runs the engine's `BreathingRateEstimator` over raw 16 kHz float32 files and
/// prints one JSON object per file. Used by Benchmarks/Scripts/breathing/evaluate.py (see its README).
struct BreathingEval: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "breathing-eval",
        abstract: "Breathing-rate estimates of raw 16 kHz little-endian float32 files (developer tool).",
        shouldDisplay: false)

    @Option(help: "Interleaved channels in each file (1 or 2).")
    var channels: Int = 1

    @Option(help: "Samples per .audio block fed to the estimator.")
    var blockSize: Int = 4096

    @Option(help: "Analysis window (seconds).")
    var windowSec: Double = 60

    @Option(help: "Analysis hop (seconds).")
    var hopSec: Double = 30

    @Option(help: "Envelope input: features (the engine's feature frames) or audio.")
    var envelope: String = "features"

    @Argument(help: "Raw float32 files (16 kHz, interleaved).")
    var files: [String]

    func validate() throws {
        guard channels == 1 || channels == 2 else { throw ValidationError("--channels must be 1 or 2, got \(channels)") }
        guard blockSize > 0 else { throw ValidationError("--block-size must be positive, got \(blockSize)") }
        guard windowSec > 0, hopSec > 0 else { throw ValidationError("--window-sec and --hop-sec must be positive") }
        guard BreathingRateEstimator.EnvelopeSource(rawValue: envelope) != nil else {
            throw ValidationError("--envelope must be features or audio, got \(envelope)")
        }
    }

    func run() throws {
        var config = BreathingRateEstimator.Configuration()
        config.windowSec = windowSec
        config.hopSec = hopSec
        config.envelopeSource = BreathingRateEstimator.EnvelopeSource(rawValue: envelope) ?? .features
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("\(path): cannot read file")
            }
            guard data.count % (4 * channels) == 0 else {
                throw ValidationError("\(path): size \(data.count) is not a whole number of \(channels)-channel float32 frames")
            }
            let channelCount = channels  // read the option once, not per sample
            let frames = data.count / (4 * channelCount)
            var signal = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channelCount)
            data.withUnsafeBytes { raw in
                for c in 0..<channelCount {
                    signal[c].withUnsafeMutableBufferPointer { out in
                        for i in 0..<frames {
                            let bits = raw.loadUnaligned(fromByteOffset: (i * channelCount + c) * 4, as: UInt32.self)
                            out[i] = Float(bitPattern: UInt32(littleEndian: bits))
                        }
                    }
                }
            }
            let started = clock()  // CPU time: stable on a shared machine
            let result = BreathingRateEstimator.run(signal, blockSize: blockSize, configuration: config)
            let cpuSec = Double(clock() - started) / Double(CLOCKS_PER_SEC)
            let estimates = result.estimates.map { e in
                "{\"timeSec\":\(AnalysisClock.seconds(e.time)),\"bpm\":\(e.bpm),\"confidence\":\(e.confidence)"
                    + (e.channel.map { ",\"channel\":\"\($0.name)\"" } ?? "") + "}"
            }
            let name = String(decoding: try JSONEncoder().encode(path), as: UTF8.self)
            try OutputTarget.standardOutput.write("{\"file\":\(name),\"durationSec\":\(Double(frames) / 16000),\"cpuSec\":\(cpuSec),"
                  + "\"estimatorCpuSec\":\(result.estimatorCPUSec),\"traceSamples\":\(result.trace.reduce(0) { $0 + $1.values.count }),"
                  + "\"estimates\":[\(estimates.joined(separator: ","))]}\n")
        }
    }
}
