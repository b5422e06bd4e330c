// Speed and allocation benchmarks of the DSP core and the audio input (ordo-one/benchmark).
//   cd Benchmarks && swift package benchmark                       # run
//   swift package benchmark baseline check --check-absolute        # compare with Thresholds/
// Names say what they measure: <area>.<operation>.<size>. Test signals and files are made before
// `startMeasurement()`, so only the named operation is timed.
import Benchmark
import Foundation
import SleepCycleAudio
import SleepCycleDSP

/// Deterministic test signal: a 220 Hz tremolo tone over LCG noise, like the benchmark nights.
func testSignal(count: Int, rate: Int = 16_000, channels: Int = 1) -> [Float] {
    var state: UInt32 = 12345
    var out = [Float](repeating: 0, count: count * channels)
    for i in 0..<count {
        let t = Float(i) / Float(rate)
        let tone = 0.3 * sinf(2 * .pi * 220 * t) * (0.6 + 0.4 * sinf(2 * .pi * 0.25 * t))
        for c in 0..<channels {
            state = state &* 1_664_525 &+ 1_013_904_223
            out[i * channels + c] = tone + 0.05 * (Float(state >> 8) / Float(1 << 24) - 0.5)
        }
    }
    return out
}

/// Writes interleaved samples as a PCM16 WAV (canonical 44-byte header) and returns its path.
func writeWAV(_ interleaved: [Float], rate: Int, channels: Int, name: String) -> String {
    let path = NSTemporaryDirectory() + "sleepcycle-bench-\(name).wav"
    var data = Data()
    func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
    func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
    let bytes = interleaved.count * 2
    data.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes); data.append(contentsOf: Array("WAVEfmt ".utf8))
    u32(16); u16(1); u16(channels); u32(rate); u32(rate * channels * 2); u16(channels * 2); u16(16)
    data.append(contentsOf: Array("data".utf8)); u32(bytes)
    for x in interleaved { u16(Int(UInt16(bitPattern: Int16(max(-1, min(1, x)) * 32767)))) }
    FileManager.default.createFile(atPath: path, contents: data)
    return path
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
                                           maxDuration: .seconds(3))

    Benchmark("FFT.forward.1024", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let plan = RealFFTPlan.forward(size: 1024)
        let input = FFTBuffer.allocate(1024)
        let output = FFTBuffer.allocate(2 * 513)
        for i in 0..<1024 { input[i] = sinf(Float(i) * 0.1) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { plan.execute(input, output) }
        benchmark.stopMeasurement()
        blackHole(output[3])
        FFTBuffer.deallocate(input)
        FFTBuffer.deallocate(output)
    }

    // One hop (512 samples) in, one frame of every feature out; measures the per-frame path.
    Benchmark("Features.perFrame.1024_512", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let analyzer = try FeatureAnalyzer()
        let signal = testSignal(count: 512 * 1024)
        signal.withUnsafeBufferPointer { all in
            _ = analyzer.process(UnsafeBufferPointer(rebasing: all[0..<1024]))
            var offset = 1024
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                if offset + 512 > all.count { offset = 1024 }
                blackHole(analyzer.process(UnsafeBufferPointer(rebasing: all[offset..<(offset + 512)])))
                offset += 512
            }
            benchmark.stopMeasurement()
            blackHole(analyzer.finish())
        }
    }

    // 10 minutes of 16 kHz audio through the streaming analyzer in 16384-sample blocks.
    Benchmark("Features.wholeSignal.16k.10min") { benchmark in
        let signal = testSignal(count: 16_000 * 600)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let analyzer = try FeatureAnalyzer()
            signal.withUnsafeBufferPointer { all in
                var i = 0
                while i < all.count {
                    let n = min(16_384, all.count - i)
                    blackHole(analyzer.process(UnsafeBufferPointer(rebasing: all[i..<(i + n)])))
                    i += n
                }
            }
            blackHole(analyzer.finish())
        }
    }

    // 60 s of 44.1 kHz stereo PCM16: libsndfile decode + resampling to 16 kHz, both channels.
    Benchmark("Decode.resample.44k_stereo.60s") { benchmark in
        let path = writeWAV(testSignal(count: 44_100 * 60, rate: 44_100, channels: 2), rate: 44_100,
                            channels: 2, name: "44k-stereo-60s")
        defer { try? FileManager.default.removeItem(atPath: path) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let source = try AudioFileSource(path: path)
            var frames = 0
            loop: while true {
                switch try source.read() {
                case .audio(_, let channels): frames += channels[0].count
                case .gap: continue
                case .end: break loop
                }
            }
            source.close()
            blackHole(frames)
        }
    }

    Benchmark("Resample.44100to16000.60s") { benchmark in
        let signal = testSignal(count: 44_100 * 60, rate: 44_100)
        var out = [Float]()
        out.reserveCapacity(16_000 * 61)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let resampler = try Resampler(inputRate: 44_100)
            out.removeAll(keepingCapacity: true)
            resampler.process(signal, into: &out)
            resampler.finish(into: &out)
            blackHole(out.count)
        }
    }
}
