import Foundation
import SleepCycleAudio
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// CPU cost of live capture and of injected buffers for 10 minutes of 16 kHz mono audio, with a ring that
/// holds all of it (the file plugin and the pushing thread run far faster than real time, and the point is
/// to time every frame through ring and reader, not to provoke overflow). Off by default
/// (it writes a 19 MB file and is only meaningful in release builds); run with
/// `SLEEPCYCLE_MEASURE=1 swift test -c release -Xswiftc -enable-testing --filter ALSACaptureCostTests`.
/// Results are printed as `MEASURE …` lines and recorded in docs/0003-live-capture-and-injected-sources.md.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["SLEEPCYCLE_MEASURE"] != nil))
struct ALSACaptureCostTests {
    static let minutes = 10
    static let frames = minutes * 60 * 16_000

    private func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) * 1e-6
    }

    @Test func captureThreadCostForTenMinutesThroughTheFilePlugin() throws {
        let path = try FilePluginPCM.writeRaw(FilePluginPCM.samples(count: Self.frames, seed: 11))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let cpu0 = processCPUSeconds(), wall0 = Date()
        let source = try ALSACaptureSource(device: FilePluginPCM.name, periodFrames: 1024, ringSeconds: 600,
                                           configText: FilePluginPCM.config(infile: path),
                                           maxFrames: Int64(Self.frames), clock: ManualLiveClock())
        defer { source.close() }
        var audio: Int64 = 0, reads = 0
        while true {
            let r = try source.read()
            if case .end = r { break }
            if case .audio(_, let c) = r { audio += Int64(c[0].count) }
            reads += 1
        }
        let wall = Date().timeIntervalSince(wall0), cpu = processCPUSeconds() - cpu0
        let s = source.statistics
        let perMinute = s.captureThreadCPUSeconds / Double(Self.minutes)
        print("MEASURE capture: \(Self.minutes) min of 16 kHz mono, period 1024: capture thread CPU "
              + String(format: "%.3f s (%.1f ms per minute of audio, %.4f%% of real time)", s.captureThreadCPUSeconds,
                       perMinute * 1000, perMinute / 60 * 100)
              + String(format: "; process CPU %.3f s, wall %.3f s", cpu, wall)
              + "; \(reads) reads, \(s.ringOverflows) ring overflows, \(s.ringFramesDropped) frames dropped")
        #expect(s.framesCaptured == Int64(Self.frames))
        #expect(audio == Int64(Self.frames) && s.samplesLost == 0)   // a 10-min ring: nothing dropped
        #expect(perMinute < 0.6, "capture should cost < 1% of one core")
    }

    @Test func injectedBufferCostForTenMinutes() throws {
        let source = try InjectedAudioSource(sampleRate: 16_000, channels: 1, bufferSeconds: 600)
        let buffer = (0..<1024).map { Float($0) / 1024 }
        let buffers = Self.frames / 1024
        let cpu0 = processCPUSeconds(), wall0 = Date()
        let host = Thread {
            for k in 0..<buffers { try? source.push([buffer], at: Int64(k * 1024)) }
            source.finish()
        }
        host.start()
        var audio: Int64 = 0
        while true {
            let r = try source.read()
            if case .end = r { break }
            if case .audio(_, let c) = r { audio += Int64(c[0].count) }
        }
        let wall = Date().timeIntervalSince(wall0), cpu = processCPUSeconds() - cpu0
        let s = source.statistics
        print("MEASURE injected: \(buffers) pushes of 1024 frames (\(Self.minutes) min) pushed and read: "
              + String(format: "process CPU %.3f s (%.1f µs per buffer), wall %.3f s", cpu,
                       cpu / Double(buffers) * 1e6, wall)
              + "; \(s.ringOverflows) ring overflows")
        #expect(audio == Int64(buffers * 1024) && s.ringOverflows == 0)
        #expect(cpu / Double(buffers) < 0.001, "a push + read should cost well under 1 ms per 64 ms buffer")
    }
}
