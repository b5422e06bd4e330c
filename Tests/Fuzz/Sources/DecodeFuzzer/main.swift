// libFuzzer target: arbitrary bytes as an audio file, read to the end through AudioFileSource.
//
// Each input is written to one scratch file in /dev/shm (tmpfs: no disk I/O) and read through
// `AudioFileSource(fileDescriptor:name:)`, so every decoder (libsndfile, libFLAC, libvorbisfile), the sniffing,
// the sanitiser, the resampler and the gap placement run on it. What must hold for any input: no crash, no hang
// (libFuzzer's -timeout), either a thrown AudioError with a one-line description or reads that tile the timeline —
// each `.audio`/`.gap` starts where the previous read ended, audio blocks are non-empty, at most `blockFrames`
// long and equal across channels, gaps have positive length — and finite samples.
import CFuzzerDriver
import Foundation
import SleepCycleAudio


private let blockFrames = 4_096
private let scratch: Int32 = {
    let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let path = "\(directory)/sleepcycle-fuzz-\(getpid())"
    let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { fatalError("DecodeFuzzer: cannot create a scratch file in \(directory)") }
    unlink(path)   // the descriptor keeps it; nothing is left behind
    return fd
}()

func decodeFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard ftruncate(scratch, 0) == 0, size == 0 || pwrite(scratch, data, size, 0) == size,
          lseek(scratch, 0, SEEK_SET) == 0 else {
        fatalError("DecodeFuzzer: cannot write the scratch file: \(String(cString: strerror(errno)))")
    }
    let source: AudioFileSource
    do {
        source = try AudioFileSource(fileDescriptor: scratch, name: "fuzz", blockFrames: blockFrames)
    } catch {
        check(error)
        return 0
    }
    var expected: Int64 = 0
    var reads = 0
    do {
        loop: while true {
            reads += 1
            switch try source.read() {
            case .audio(let start, let channels):
                let n = channels.first?.count ?? 0
                guard start == expected, n > 0, n <= blockFrames, channels.count == source.format.analysisChannelCount,
                      channels.allSatisfy({ $0.count == n }) else {
                    fatalError("DecodeFuzzer: audio read at \(start) (\(n) frames, \(channels.count) channels) "
                        + "does not continue the timeline at \(expected)")
                }
                for channel in channels where !channel.allSatisfy({ $0.isFinite }) {
                    fatalError("DecodeFuzzer: non-finite sample in the output")
                }
                expected += Int64(n)
            case .gap(let start, let length, _):
                guard start == expected, length > 0 else {
                    fatalError("DecodeFuzzer: gap at \(start) of \(length) does not continue the timeline at \(expected)")
                }
                expected += length
            case .end:
                break loop
            }
        }
    } catch {
        check(error)
    }
    for warning in source.warnings { check(warning) }
    // Reads after the end stay ended.
    if case .end = (try? source.read()) ?? .end {} else { fatalError("DecodeFuzzer: a read after .end was not .end") }
    return 0
}

/// An error must be one line naming the input.
private func check(_ error: AudioError) {
    let line = error.description
    guard line.hasPrefix("fuzz: "), !line.contains("\n") else { fatalError("DecodeFuzzer: bad error line: \(line)") }
}

// SwiftPM links an executable's main under its own name, so libFuzzer's main is not used: this top-level code hands
// argc/argv (libFuzzer's flags, corpus directories) to libFuzzer's driver. It comes last because main.swift's globals
// (`scratch`) are initialised in order as top-level code runs.
var arguments = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&arguments, &argv) { data, size in
    guard let data else { return 0 }
    return decodeFuzzerTestOneInput(data, size)
})
