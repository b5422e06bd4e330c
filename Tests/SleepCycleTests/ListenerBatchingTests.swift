import Foundation
import Testing
import SleepCycleBus
@testable import SleepCycle

@Suite struct ListenerBatchingTests {
    /// Property: for random block sizes and random gaps, batches tile the analysed audio exactly — every sample
    /// once, in order, no batch spanning a gap, every batch full except before a gap and at the end.
    @Test func batchesCoverTheAnalysedAudioExactlyWhateverTheBlockSizes() throws {
        var rng = SeededRNG(seed: 20_261_121)
        for trial in 0..<200 {
            let batchLength = [1, 160, 1000, 16_000][trial % 4]
            var steps: [ScriptedSource.Step] = []
            var analysed: [(start: Int64, samples: [Float])] = []
            var t: Int64 = 0
            let segments = Int(rng.next() % 4) + 1
            for s in 0..<segments {
                if s > 0 && rng.next() % 2 == 0 {
                    let g = Int64(rng.next() % 5000) + 1
                    steps.append(.gap(g)); t += g
                }
                let length = Int(rng.next() % 20_000) + 1
                let signal = testNoise(count: length, level: 0.5, seed: rng.next())
                var i = 0
                while i < length {
                    let n = min(Int(rng.next() % 7000) + 1, length - i)
                    steps.append(.audio([Array(signal[i..<(i + n)])]))
                    i += n
                }
                // Without a gap in between, audio continues the previous stretch.
                if let last = analysed.last, last.start + Int64(last.samples.count) == t {
                    analysed[analysed.count - 1].samples += signal
                } else {
                    analysed.append((t, signal))
                }
                t += Int64(length)
            }
            var batches: [AudioBatch] = []
            var batcher = ListenerBatcher(batchLength: batchLength) { batches.append($0) }
            // Drive it through a real pipeline bus so `.audio`/`.gap` come as the engine publishes them.
            let source = ScriptedSource(steps: steps)
            let pipeline = try AnalysisPipeline(info: testSessionInfo(), format: source.format,
                                                sourcePath: "x", options: .testing)
            pipeline.bus.subscribe { batcher.handle($0) }
            _ = try pipeline.run(source: source)

            // Reassemble: contiguous within segments, exact samples, nothing extra.
            var expectedSamples: [Float] = [], expectedStarts: [Int64] = []
            for seg in analysed {
                var i = 0
                while i < seg.samples.count {
                    expectedStarts.append(seg.start + Int64(i)); i += batchLength
                }
                expectedSamples += seg.samples
            }
            #expect(batches.map(\.start) == expectedStarts, "trial \(trial)")
            #expect(batches.flatMap(\.samples) == expectedSamples, "trial \(trial)")
            for (a, b) in zip(batches, batches.dropFirst()) {
                #expect(a.end <= b.start, "trial \(trial): overlap")
                // A short batch only right before a gap (or at the end).
                if a.samples.count < batchLength { #expect(a.end < b.start, "trial \(trial): short batch mid-stretch") }
            }
            for b in batches { #expect(b.samples.count <= batchLength && !b.samples.isEmpty) }
        }
    }

    @Test func listenersGetOneSecondBatchesWithWallClockSpansAndRMS() throws {
        var rng = SeededRNG(seed: 7)
        let signal = [Float](repeating: 0.5, count: 16_000 * 3 + 123)
        let source = ScriptedSource(signal: [signal], maxBlock: 5000, rng: &rng)
        let listener = RecordingListener()
        let pipeline = try AnalysisPipeline(info: testSessionInfo(), format: source.format, sourcePath: "x",
                                            options: .testing, listeners: [listener])
        _ = try pipeline.run(source: source)
        let batches = listener.batches
        #expect(batches.map(\.samples.count) == [16_000, 16_000, 16_000, 123])
        #expect(batches.allSatisfy { $0.rate == 16_000 && abs($0.rms - 0.5) < 1e-6 })
        let start = FileAnalysis.defaultStart
        #expect(batches[0].start == start)
        #expect(batches[1].start == start.addingTimeInterval(1))
        for (a, b) in zip(batches, batches.dropFirst()) { #expect(a.end == b.start) }
        #expect(abs(batches[3].end.timeIntervalSince(start) - (3 + 123.0 / 16_000)) < 1e-6)
    }

    @Test func stereoBatchesCarryTheMeanOfTheChannels() throws {
        var rng = SeededRNG(seed: 3)
        let left = [Float](repeating: 0.2, count: 20_000), right = [Float](repeating: 0.6, count: 20_000)
        let source = ScriptedSource(signal: [left, right], maxBlock: 3000, rng: &rng)
        let listener = RecordingListener()
        let pipeline = try AnalysisPipeline(info: testSessionInfo(channels: 2), format: source.format,
                                            sourcePath: "x", options: .testing, listeners: [listener])
        _ = try pipeline.run(source: source)
        #expect(listener.batches.flatMap(\.samples).allSatisfy { abs($0 - 0.4) < 1e-6 })
        #expect(listener.batches.reduce(0) { $0 + $1.samples.count } == 20_000)
    }
}
