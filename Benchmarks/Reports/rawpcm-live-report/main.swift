// RawPCMSource fed in real time, as the table in docs/0003-live-capture-and-injected-sources.md ("Measurements").
//   swift run -c release --package-path Benchmarks rawpcm-live-report [--seconds 20]
// A writer thread paced by the monotonic clock writes S16_LE periods into a pipe, as arecord or pw-record do; the
// calling thread reads a RawPCMSource to the end. Per configuration: the reading thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID) scaled to an hour of audio, and the same for a bare blocking read(2) loop on the same
// paced pipe (the floor: what waking up for each period costs the operating system). Then the time from close() on
// another thread to a read() blocked on an idle pipe returning `.end`, over 20 trials.
import Foundation
import SleepCycleAudio
import ReportSupport

let arguments = ReportArguments(usage: "usage: rawpcm-live-report [--seconds N]   (real-time RawPCMSource cost, "
                                + "docs/0003; takes about 8 × N seconds)", optionNames: ["seconds"])
let seconds = arguments.integer("seconds", default: 20, in: 1...3_600)

func monotonic() -> Double {
    var ts = timespec(); clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func threadCPU() -> Double {
    var ts = timespec(); clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A new pipe whose write end a thread fills with `seconds` of audio in periods of `periodFrames`, each written when
/// its last frame is due in real time; returns the read end.
func pacedPipe(rate: Int, channels: Int, periodFrames: Int) -> Int32 {
    var fds: [Int32] = [0, 0]
    precondition(pipe(&fds) == 0)
    let writeEnd = fds[1]
    let period = (0..<(periodFrames * channels)).map { Int16(truncatingIfNeeded: $0 &* 7_919) }
    let periods = seconds * rate / periodFrames
    Thread {
        let start = monotonic()
        period.withUnsafeBytes { raw in
            for k in 1...periods {
                let wait = start + Double(k * periodFrames) / Double(rate) - monotonic()
                if wait > 0 { usleep(useconds_t(wait * 1e6)) }
                var offset = 0
                while offset < raw.count {
                    let n = write(writeEnd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return }
                    offset += n
                }
            }
        }
        close(writeEnd)
    }.start()
    return fds[0]
}

/// Reading-thread CPU seconds and read(2) calls for the whole paced feed, through RawPCMSource or a bare read loop.
func measure(rate: Int, channels: Int, periodFrames: Int, bare: Bool) throws -> (cpu: Double, reads: Int64) {
    let fd = pacedPipe(rate: rate, channels: channels, periodFrames: periodFrames)
    defer { close(fd) }
    let cpu0 = threadCPU()
    if bare {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var reads: Int64 = 0
        while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 { reads += 1 }
        return (threadCPU() - cpu0, reads)
    }
    let source = try RawPCMSource(fileDescriptor: fd, name: "-", encoding: .s16le, sampleRate: rate, channels: channels)
    while true { if case .end = try source.read() { break } }
    return (threadCPU() - cpu0, source.statistics.reads)
}

print("| input | period (frames, ms) | reads/s | RawPCMSource reader CPU per hour | % of a core "
      + "| bare read(2) loop per hour |")
print("|---|---:|---:|---:|---:|---:|")
for (rate, channels, periodFrames) in [(16_000, 1, 1_024), (16_000, 1, 160), (44_100, 2, 1_024), (48_000, 2, 1_024)] {
    let source = try measure(rate: rate, channels: channels, periodFrames: periodFrames, bare: false)
    let floor = try measure(rate: rate, channels: channels, periodFrames: periodFrames, bare: true)
    let perHour = 3_600 / Double(seconds)
    print("| \(rate) Hz \(channels == 1 ? "mono" : "stereo") | \(periodFrames), "
          + String(format: "%.0f", 1_000 * Double(periodFrames) / Double(rate)) + " | "
          + String(format: "%.1f", Double(source.reads) / Double(seconds)) + " | "
          + String(format: "%.2f s", source.cpu * perHour) + " | "
          + String(format: "%.3f %%", 100 * source.cpu / Double(seconds)) + " | "
          + String(format: "%.2f s", floor.cpu * perHour) + " |")
}

var latencies: [Double] = []
for _ in 0..<20 {
    var fds: [Int32] = [0, 0]
    precondition(pipe(&fds) == 0)
    let source = try RawPCMSource(fileDescriptor: fds[0], name: "-", encoding: .s16le, sampleRate: 16_000, channels: 1)
    let returned = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var returnedAt = 0.0
    Thread { _ = try? source.read(); returnedAt = monotonic(); returned.signal() }.start()
    usleep(20_000)
    let closedAt = monotonic()
    source.close()
    returned.wait()
    latencies.append((returnedAt - closedAt) * 1e6)
    close(fds[0]); close(fds[1])
}
latencies.sort()
print(String(format: "\nclose() to .end of a read() waiting on an idle pipe: median %.0f µs, max %.0f µs (20 trials)",
             latencies[10], latencies[19]))
