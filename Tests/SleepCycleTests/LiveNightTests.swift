import Foundation
import Testing
import SleepCycleDSP
@testable import SleepCycle

/// A live night through ALSA's `file` plugin (real alsa-lib capture, no sound card) into the engine and the store,
/// and samples pushed while it runs.
@Suite(.serialized) final class LiveNightTests {
    let dir: URL
    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: dir) }

    @Test func anALSACaptureIsJournaledAndStored() async throws {
        let night = Array(try ResumeTests.exampleNight().prefix(16_000 * 60))
        let raw = dir.appendingPathComponent("night.raw").path
        let pcm = night.map { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
        try pcm.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: raw))
        // The plugin is not paced: the ring holds the whole file, and capture stops at its exact length.
        let source = try ALSACaptureSource(device: "sctest", sampleRate: 16_000, channels: 1, ringSeconds: 90,
                                           configText: ALSACaptureSource.filePluginConfig(infile: raw),
                                           maxFrames: Int64(night.count))
        let store = try NightStore(path: dir.appendingPathComponent("nights.sqlite").path)
        let engine = SleepAnalysisEngine()
        try await engine.initialize(store: store)
        let start = Date(timeIntervalSince1970: 1_767_304_800)
        let id = try await engine.startAnalysis(config: SleepAnalysisConfig(utcOffsetSeconds: 3600), at: start, using: source)
        try await engine.push(heartRate: 58, at: start.addingTimeInterval(10))
        try await engine.waitForSourceEnd()
        let live = try await engine.stopAnalysis()
        #expect(live.sessionId == id && live.endTime == start.addingTimeInterval(60))
        #expect(live.audioStatistics.gapCount == 0, "\(live.audioStatistics)")
        #expect(try store.night(id)?.state == .complete)
        // The same samples from a file give the same analysis.
        let file = ScriptedSource(steps: ResumeTests.blocks(night[...].map { Float(Int16(max(-32768, min(32767, ($0 * 32768).rounded())))) / 32768 }[...]))
        let info = SessionInfo(id: id, clock: AnalysisClock(start: start), sourceSampleRate: 16_000, channelCount: 1)
        let reference = try AnalysisPipeline(info: info, format: file.format, sourcePath: "sctest").run(source: file)
        #expect(live.events.map { "\($0.type) \($0.start)" } == reference.events.map { "\($0.type) \($0.start)" })
        #expect(live.events.count >= 5)
        let stored = try JSONDecoder().decode(AnalysisResult.self, from: try #require(try store.result(of: id)))
        #expect(stored.jsonString() == live.jsonString())
    }

    /// The SDK's clips producer on a live ALSA capture at 44.1 kHz: each clip arrives on the stream with the captured
    /// samples at its frame, and the result's events name the same frames.
    @Test func anALSACaptureGivesClipsOfItsOwnSamples() async throws {
        let night = Array(try ResumeTests.exampleNight().prefix(16_000 * 70))
        let resampler = try Resampler(inputRate: 16_000, outputRate: 44_100)
        var up: [Float] = []
        resampler.process(night, into: &up)
        resampler.finish(into: &up)
        let pcm = up.map { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
        let raw = dir.appendingPathComponent("night44.raw").path
        try pcm.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: raw))
        let source = try ALSACaptureSource(device: "sctest", sampleRate: 44_100, channels: 1, ringSeconds: 120,
                                           configText: ALSACaptureSource.filePluginConfig(infile: raw),
                                           maxFrames: Int64(pcm.count))
        let engine = SleepAnalysisEngine()
        try await engine.initialize()
        let producer = try await engine.createAudioClipsProducer(config: AudioClipsConfig(eventTypes: [.snoring]))
        #expect(await engine.isFeatureEnabled(.audioClips))
        _ = try await engine.startAnalysis(at: FileAnalysis.defaultStart, using: source)
        try await engine.waitForSourceEnd()
        let result = try await engine.stopAnalysis()
        producer.finish()
        var clips: [AudioClip] = []
        for await clip in producer.clips { clips.append(clip) }
        let snores = result.events.filter { $0.type == .snoring }
        #expect(snores.count >= 5 && clips.count == snores.count)
        for clip in clips {
            // 10 s, or up to the end of the 70 s of audio for a snore in its last seconds.
            let lengthOK = (441_000..<441_441).contains(clip.samples.count) || Int(clip.startFrame) + clip.samples.count == pcm.count
            #expect(clip.sampleRate == 44_100 && clip.file == nil && lengthOK, "\(clip.startFrame) \(clip.samples.count) of \(pcm.count)")
            let first = Int(clip.startFrame)
            let expected = pcm[first..<min(pcm.count, first + clip.samples.count)].map { Float($0) / 32768 }
            #expect(clip.samples == expected)
            #expect(clip.start <= clip.event.start && clip.end >= clip.event.end)
        }
    }
}
