// Optional report: how many randomly mutated FLAC / Ogg Vorbis files are analysed to their end.
// Run: SLEEPCYCLE_MUTATION_REPORT=1 swift test --filter MutationReport
import Foundation
import Testing
@testable import SleepCycleAudio

@Suite("Mutation report", .enabled(if: ProcessInfo.processInfo.environment["SLEEPCYCLE_MUTATION_REPORT"] != nil))
struct MutationReport {
    /// libsndfile alone (the decoding before libFLAC / libvorbisfile were used): frames read before the end or an
    /// error.
    func sndfileFrames(_ path: String) -> Int64 {
        guard let input = try? InputFile(path: path), let file = try? SndFile(reading: input) else { return -1 }
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * max(1, file.channels))
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let n = (try? file.readFloat(into: buffer, frames: 4096)) ?? file.lastReadCount
            total += Int64(n)
            if n < 4096 { return total }
        }
    }

    @Test("1,500 single-byte mutations of the audio data of a FLAC and an Ogg Vorbis file", arguments: ["flac", "ogg"])
    func mutations(kind: String) throws {
        let dir = try FileFixture.TemporaryDirectory()
        let rate = 44_100, seconds = 10
        let x = FileFixture.burstSignal(rate: rate, seconds: seconds)
        let format: AudioFileFormat = kind == "flac" ? .flac16 : .oggVorbis
        let clean = try FileFixture.writeFile(dir.path("clean.\(kind)"), format, rate: rate, channels: [x])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clean)))
        let audioStart = kind == "flac" ? (FileFixture.firstFLACFrame(bytes) ?? 0)
            : (FileFixture.oggPages(bytes).dropFirst(3).first?.offset ?? 0)
        let total = Int64(rate * seconds), analysisTotal = Int64(16_000 * seconds)
        #expect(sndfileFrames(clean) == total)
        var generator = SystemRandomNumberGenerator()
        var shown = 0
        var oldPrefixOnly = 0, newComplete = 0, newWithGaps = 0, newOpenErrors = 0, newPrefixOnly = 0
        let path = dir.path("m.\(kind)")
        for _ in 0..<(ProcessInfo.processInfo.environment["SLEEPCYCLE_MUTATION_REPORT"] == "verbose" ? 200 : 1_500) {
            var m = bytes
            let at = Int.random(in: audioStart..<m.count, using: &generator)
            m[at] ^= UInt8.random(in: 1...255, using: &generator)
            try Data(m).write(to: URL(fileURLWithPath: path))
            if sndfileFrames(path) < total { oldPrefixOnly += 1 }
            do {
                let source = try AudioFileSource(path: path)
                let timeline = try FileFixture.readTimeline(source)
                #expect(timeline.tiles)
                if Int64(timeline.samples.count) == analysisTotal { newComplete += 1 } else {
                    newPrefixOnly += 1
                    if shown < 5 && ProcessInfo.processInfo.environment["SLEEPCYCLE_MUTATION_REPORT"] == "verbose" {
                        shown += 1
                        print("early end: byte \(at) of \(m.count): \(timeline.samples.count) samples, gaps "
                              + "\(timeline.gaps.map { ($0.start, $0.length) }), \(source.warnings)")
                    }
                }
                if !timeline.gaps.isEmpty { newWithGaps += 1 }
            } catch {
                newOpenErrors += 1
            }
        }
        print("mutation report \(kind): libsndfile alone read only a prefix of \(oldPrefixOnly) of 1500; now "
              + "\(newComplete) reach their true end (\(newWithGaps) with gaps), \(newPrefixOnly) end early, "
              + "\(newOpenErrors) cannot be opened")
    }
}
