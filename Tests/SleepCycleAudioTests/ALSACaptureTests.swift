import Foundation
import Testing
@testable import SleepCycleAudio

#if canImport(Glibc)
import Glibc
#endif

/// Live capture through real alsa-lib (the `file` plugin over a `null` slave); faults are injected only
/// where a sound card would be needed to provoke them (xrun, device loss).
@Suite(.serialized) struct ALSACaptureTests {
    /// The audio of `reads` laid out on the timeline: (start, samples of channel `c`).
    private func audioRuns(_ reads: [SourceRead], channel c: Int = 0) -> [(Int64, [Float])] {
        reads.compactMap { if case .audio(let s, let ch) = $0 { return (s, ch[c]) } else { return nil } }
    }

    @Test func capturedSamplesAreTheFileScaledExactly() throws {
        let samples = FilePluginPCM.samples(count: 24_000 + 77)   // not a whole number of periods
        let path = try FilePluginPCM.writeRaw(samples)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try ALSACaptureSource(device: FilePluginPCM.name, periodFrames: 1024,
                                           configText: FilePluginPCM.config(infile: path),
                                           maxFrames: Int64(samples.count), clock: ManualLiveClock())
        defer { source.close() }
        #expect(source.format.sampleRate == 16_000)
        #expect(source.format.channelCount == 1)
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == Int64(samples.count))
        let audio = audioRuns(reads).flatMap(\.1)
        #expect(audio == samples.map { Float($0) / 32768 })
        #expect(audio.first == -1)
        #expect(audio[1] == Float(32767) / 32768)
        let stats = source.statistics
        #expect(stats.framesCaptured == Int64(samples.count))
        #expect(stats.samplesLost == 0 && stats.overruns == 0 && stats.ringOverflows == 0)
    }

    @Test func stereoCaptureDeinterleaves() throws {
        let frames = 5000
        let interleaved = FilePluginPCM.samples(count: 2 * frames, seed: 7)
        let path = try FilePluginPCM.writeRaw(interleaved)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try ALSACaptureSource(device: FilePluginPCM.name, channels: 2, periodFrames: 256,
                                           configText: FilePluginPCM.config(infile: path),
                                           maxFrames: Int64(frames), clock: ManualLiveClock())
        defer { source.close() }
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == Int64(frames))
        let left = stride(from: 0, to: 2 * frames, by: 2).map { Float(interleaved[$0]) / 32768 }
        let right = stride(from: 1, to: 2 * frames, by: 2).map { Float(interleaved[$0]) / 32768 }
        #expect(audioRuns(reads, channel: 0).flatMap(\.1) == left)
        #expect(audioRuns(reads, channel: 1).flatMap(\.1) == right)
    }

    @Test func aSlowConsumerLosesTheOldestAudioAsCountedOverrunGaps() throws {
        let samples = FilePluginPCM.samples(count: 80_000, seed: 3)
        let expected = samples.map { Float($0) / 32768 }
        let path = try FilePluginPCM.writeRaw(samples)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // A 0.1 s ring (1600 frames) and a producer that is not paced: the consumer cannot keep up.
        let source = try ALSACaptureSource(device: FilePluginPCM.name, periodFrames: 256, ringSeconds: 0.1,
                                           configText: FilePluginPCM.config(infile: path),
                                           maxFrames: Int64(samples.count), clock: ManualLiveClock())
        defer { source.close() }
        var reads: [SourceRead] = []
        while true {
            usleep(2000)   // slow analysis
            let r = try source.read()
            if case .end = r { break }
            reads.append(r)
        }
        #expect(tiledEnd(reads) == Int64(samples.count))
        let stats = source.statistics
        #expect(stats.ringOverflows > 0)
        #expect(stats.ringFramesDropped > 0)
        #expect(gapFrames(reads, .overrun) == stats.ringFramesDropped)
        #expect(stats.samplesLost == stats.ringFramesDropped)
        // Whatever audio survived sits at its true position on the timeline.
        for (start, run) in audioRuns(reads) {
            #expect(run == Array(expected[Int(start)..<(Int(start) + run.count)]))
        }
    }

    @Test func anALSAOverrunIsRecoveredAndReportedWithTheTimeLost() throws {
        let samples = FilePluginPCM.samples(count: 10 * 512, seed: 5)
        let expected = samples.map { Float($0) / 32768 }
        let path = try FilePluginPCM.writeRaw(samples)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualLiveClock(start: 100)
        // The third snd_pcm_readi reports an xrun 0.25 s after the last good read (no XRUN status from
        // the null slave, so the estimate comes from the clock): 4000 frames lost. Right after the
        // recovery a second xrun 0.1 s later: 1600 more (counted from the restart, not the last read).
        let faults = ScriptedFaults { call, n in
            guard call == .readi else { return nil }
            if n == 2 { clock.advance(by: 0.25); return -EPIPE }
            if n == 3 { clock.advance(by: 0.1); return -EPIPE }
            return nil
        }
        let source = try ALSACaptureSource(device: FilePluginPCM.name, sampleRate: 16_000, channels: 1,
                                           periodFrames: 512, ringSeconds: 30,
                                           configText: FilePluginPCM.config(infile: path),
                                           maxFrames: Int64(samples.count), clock: clock, stallSeconds: 2,
                                           faults: faults)
        defer { source.close() }
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == Int64(samples.count) + 5600)
        let gaps = reads.compactMap { r -> (Int64, Int64, SourceGapReason)? in
            if case .gap(let s, let l, let why) = r { return (s, l, why) } else { return nil }
        }
        #expect(gaps.first?.0 == 1024)
        #expect(gaps.allSatisfy { $0.2 == .overrun })
        #expect(gapFrames(reads, .overrun) == 5600)
        // snd_pcm_recover/prepare kept the stream going: audio resumes with the file's next samples.
        let runs = audioRuns(reads)
        #expect(runs.flatMap(\.1) == expected)
        #expect(runs.first { $0.0 > 1024 }?.0 == Int64(1024 + 5600))
        let stats = source.statistics
        #expect(stats.overruns == 2 && stats.overrunFramesLost == 5600 && stats.samplesLost == 5600)
    }

    @Test func aVanishedDeviceIsAMissingInputGapAndIsReopenedWithBackoff() throws {
        let samples = FilePluginPCM.samples(count: 4096, seed: 9)
        let expected = samples.map { Float($0) / 32768 }
        let path = try FilePluginPCM.writeRaw(samples)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualLiveClock()
        // Read 2 periods, then the device vanishes (-ENODEV); the next six reopen attempts fail (-ENODEV
        // from snd_pcm_open), the seventh succeeds. Open call 0 is the initial open.
        let faults = ScriptedFaults { call, n in
            if call == .readi && n == 2 { return -ENODEV }
            if call == .open && (1...6).contains(n) { return -ENODEV }
            return nil
        }
        // The reopened file plugin starts its infile again, so capture 2 periods + the whole file.
        let source = try ALSACaptureSource(device: FilePluginPCM.name, sampleRate: 16_000, channels: 1,
                                           periodFrames: 512, ringSeconds: 30,
                                           configText: FilePluginPCM.config(infile: path),
                                           maxFrames: 1024 + Int64(samples.count), clock: clock, stallSeconds: 2,
                                           faults: faults)
        defer { source.close() }
        let reads = try readAll(source)
        // Back-off: 0.5 s doubling, capped at 8 s; 31.5 s without audio in all.
        #expect(clock.sleeps == [0.5, 1, 2, 4, 8, 8, 8])
        let missing = Int64(31.5 * 16_000)
        #expect(gapFrames(reads, .missingInput) == missing)
        #expect(tiledEnd(reads) == 1024 + missing + Int64(samples.count))
        let runs = audioRuns(reads)
        #expect(runs.filter { $0.0 < 1024 }.flatMap(\.1) == Array(expected[0..<1024]))
        #expect(runs.filter { $0.0 >= 1024 + missing }.flatMap(\.1) == expected)
        let stats = source.statistics
        #expect(stats.deviceLosses == 1)
        #expect(stats.reopenAttempts == 7)
        #expect(stats.missingInputFrames == missing)
        #expect(faults.count(.open) == 8)
    }

    @Test func closeUnblocksAReadWaitingForAudio() throws {
        let path = try FilePluginPCM.writeRaw(FilePluginPCM.samples(count: 1024))
        defer { try? FileManager.default.removeItem(atPath: path) }
        // snd_pcm_wait always times out: a device that delivers nothing (the manual clock never reaches
        // the stall limit, so no reopen either).
        let faults = ScriptedFaults { call, _ in
            if call == .wait { usleep(5000); return 0 }
            return nil
        }
        let source = try ALSACaptureSource(device: FilePluginPCM.name, sampleRate: 16_000, channels: 1,
                                           periodFrames: 512, ringSeconds: 1,
                                           configText: FilePluginPCM.config(infile: path), maxFrames: nil,
                                           clock: ManualLiveClock(), stallSeconds: 2, faults: faults)
        let closer = Thread { usleep(100_000); source.close() }
        closer.start()
        let t0 = Date()
        guard case .end = try source.read() else { Issue.record("expected .end after close()"); return }
        #expect(Date().timeIntervalSince(t0) < 2)
        #expect(source.statistics.framesCaptured == 0)
    }

    @Test func aFatalALSAErrorEndsCaptureWithAnActionableError() throws {
        let samples = FilePluginPCM.samples(count: 2048)
        let path = try FilePluginPCM.writeRaw(samples)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let faults = ScriptedFaults { call, n in call == .readi && n == 1 ? -EACCES : nil }
        let source = try ALSACaptureSource(device: FilePluginPCM.name, sampleRate: 16_000, channels: 1,
                                           periodFrames: 512, ringSeconds: 1,
                                           configText: FilePluginPCM.config(infile: path), maxFrames: 2048,
                                           clock: ManualLiveClock(), stallSeconds: 2, faults: faults)
        defer { source.close() }
        guard case .audio(0, let first) = try source.read() else { Issue.record("expected the first period"); return }
        #expect(first[0].count == 512)
        do {
            _ = try source.read()
            Issue.record("expected an error")
        } catch let error as AudioError {
            #expect(error.code == .device)
            #expect(error.description.hasPrefix("sctest: capture failed: snd_pcm_readi failed"))
            #expect(!error.description.contains("\n"))
        }
        guard case .end = try source.read() else { Issue.record("expected .end after the error"); return }
    }

    @Test func openingAMissingDeviceThrowsOneLineNamingIt() {
        do {
            _ = try ALSACaptureSource(device: "sleepcycle_no_such_pcm", clock: ManualLiveClock())
            Issue.record("expected an error")
        } catch let error as AudioError {
            #expect(error.code == .device)
            #expect(error.description.hasPrefix("sleepcycle_no_such_pcm: cannot open for capture: snd_pcm_open failed"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func invalidParametersAreRejectedBeforeOpening() {
        #expect(throws: AudioError.self) { _ = try ALSACaptureSource(device: "x", channels: 3) }
        #expect(throws: AudioError.self) { _ = try ALSACaptureSource(device: "x", sampleRate: 4000) }
        #expect(throws: AudioError.self) { _ = try ALSACaptureSource(device: "x", ringSeconds: 0) }
        #expect(throws: AudioError.self) { _ = try ALSACaptureSource(device: "x", maxFrames: 0) }
    }

    /// A device that captures at 48 kHz is delivered at 16 kHz (the file plugin accepts any rate).
    @Test func a48kHzDeviceIsResampledTo16kHz() throws {
        let frames = 48_000
        let samples = (0..<frames).map { Int16((16384 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)).rounded()) }
        let path = try FilePluginPCM.writeRaw(samples)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try ALSACaptureSource(device: FilePluginPCM.name, sampleRate: 48_000, periodFrames: 1024,
                                           configText: FilePluginPCM.config(infile: path),
                                           maxFrames: Int64(frames), clock: ManualLiveClock())
        defer { source.close() }
        #expect(source.format.sampleRate == 48_000)
        let reads = try readAll(source)
        #expect(tiledEnd(reads) == 16_000)
        let audio = audioRuns(reads).flatMap(\.1)
        #expect(audio.count == 16_000)
        var worst: Float = 0
        for n in 64..<(16_000 - 64) {
            worst = max(worst, abs(audio[n] - Float(0.5 * sin(2 * Double.pi * 1000 * Double(n) / 16_000))))
        }
        #expect(worst < 1e-3, "largest deviation from the 16 kHz tone: \(worst)")
    }

    @Test func filePluginConfigQuotesAwkwardPaths() throws {
        let samples = FilePluginPCM.samples(count: 600, seed: 13)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sleepcycle live \"q\" \\ \(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("in.raw").path
        try samples.withUnsafeBufferPointer { Data(buffer: $0) }.write(to: URL(fileURLWithPath: path))
        let config = ALSACaptureSource.filePluginConfig(name: "awkward", infile: path)
        let source = try ALSACaptureSource(device: "awkward", periodFrames: 256, configText: config,
                                           maxFrames: 600, clock: ManualLiveClock())
        defer { source.close() }
        let audio = try readAll(source).flatMap { r -> [Float] in
            if case .audio(_, let c) = r { return c[0] } else { return [] }
        }
        #expect(audio == samples.map { Float($0) / 32768 })
    }
}
