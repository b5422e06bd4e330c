// Damaged FLAC frames and Ogg Vorbis pages: decoding resynchronises, the damage is a gap on the timeline, and the
// audio after it stays at its true time.
import Foundation
import Testing
@testable import SleepCycleAudio

@Suite("Damaged FLAC and Ogg Vorbis input")
struct DamagedInputTests {
    static let rate = 44_100
    static let seconds = 6

    /// Writes the burst signal as `format`, returns the clean path and the bytes.
    func writeClean(_ dir: FileFixture.TemporaryDirectory, _ name: String, _ format: AudioFileFormat) throws
        -> (path: String, bytes: [UInt8]) {
        let x = FileFixture.burstSignal(rate: Self.rate, seconds: Self.seconds)
        let path = try FileFixture.writeFile(dir.path(name), format, rate: Self.rate, channels: [x],
                                             vorbisQuality: format == .oggVorbis ? 0.5 : nil)
        return (path, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    func write(_ bytes: [UInt8], _ path: String) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Checks a damaged decode against the clean one: the reads tile the whole timeline, there is exactly one gap,
    /// every burst onset outside the gap is where it is in the clean decode (±1 sample), and the samples from a
    /// little after the gap on are those of the clean decode.
    func expectTrueTime(_ damaged: FileFixture.Timeline, _ clean: FileFixture.Timeline, margin: Int,
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let total = Int((Double(Self.rate * Self.seconds) * 16_000 / Double(Self.rate)).rounded())
        #expect(damaged.tiles && clean.tiles, sourceLocation: sourceLocation)
        #expect(damaged.samples.count == total && clean.samples.count == total, sourceLocation: sourceLocation)
        #expect(clean.gaps.isEmpty, sourceLocation: sourceLocation)
        #expect(damaged.gaps.count == 1, "gaps \(damaged.gaps)", sourceLocation: sourceLocation)
        let gap = try #require(damaged.gaps.first, sourceLocation: sourceLocation)
        #expect(gap.reason == .missingInput, sourceLocation: sourceLocation)
        let gapRange = Int(gap.start)..<Int(gap.start + gap.length)
        var checked = 0
        for k in 0..<Self.seconds {
            let expected = Int((Double(k) + 0.5) * 16_000)
            let window = (expected - 200)..<(expected + 400)
            guard !window.overlaps(gapRange.lowerBound - margin..<gapRange.upperBound + margin) else { continue }
            let a = FileFixture.onset(damaged.samples, in: window, threshold: 0.25)
            let b = FileFixture.onset(clean.samples, in: window, threshold: 0.25)
            let onsets = "burst \(k): \(String(describing: a)) vs \(String(describing: b))"
            #expect(a != nil && b != nil && abs((a ?? 0) - (b ?? 0)) <= 1, "\(onsets)", sourceLocation: sourceLocation)
            #expect(b.map { abs($0 - expected) <= 8 } == true, "burst \(k) at \(String(describing: b))",
                    sourceLocation: sourceLocation)
            checked += 1
        }
        #expect(checked >= Self.seconds - 2, sourceLocation: sourceLocation)
        // After the gap (and the resampler's restart, plus a Vorbis packet's overlap) the audio is the clean audio.
        let after = min(total, gapRange.upperBound + margin)..<total
        let worst = after.map { abs(damaged.samples[$0] - clean.samples[$0]) }.max() ?? 0
        #expect(after.count > 16_000 && worst < 1e-3, "worst difference after the gap \(worst)",
                sourceLocation: sourceLocation)
    }

    @Test("FLAC: bytes flipped inside a middle frame become one gap; later audio keeps its true time")
    func flacMiddleFrame() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let (cleanPath, clean) = try writeClean(dir, "clean.flac", .flac16)
        var bytes = clean
        let at = bytes.count / 2
        for i in at..<(at + 6) { bytes[i] ^= 0xA5 }
        let path = try write(bytes, dir.path("damaged.flac"))
        let source = try AudioFileSource(path: path, blockFrames: 4_096)
        let damaged = try FileFixture.readTimeline(source)
        try expectTrueTime(damaged, FileFixture.readTimeline(AudioFileSource(path: cleanPath)), margin: 600)
        #expect(source.damagedStretchCount == 1)
        #expect(source.damagedFrameCount > 0 && source.damagedFrameCount <= 2 * 4_608)
        #expect(source.warnings.map(\.code) == [.damagedData], "\(source.warnings)")
        let line = try #require(source.warnings.first).description
        #expect(line.hasPrefix("\(path): damaged audio data: 1 stretch, 0.") && line.contains(" s in all, replaced by "
            + "gaps, at 0:00:0"), "\(line)")
    }

    @Test("FLAC: a damaged first frame is a gap at the start, not an empty result")
    func flacFirstFrame() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let (cleanPath, clean) = try writeClean(dir, "clean.flac", .flac16)
        var bytes = clean
        let first = try #require(FileFixture.firstFLACFrame(bytes))
        for i in (first + 40)..<(first + 44) { bytes[i] ^= 0xFF }
        let path = try write(bytes, dir.path("damaged.flac"))
        let source = try AudioFileSource(path: path)
        let damaged = try FileFixture.readTimeline(source)
        #expect(damaged.gaps.first?.start == 0)
        try expectTrueTime(damaged, FileFixture.readTimeline(AudioFileSource(path: cleanPath)), margin: 600)
        #expect(source.warnings.map(\.code) == [.damagedData])
    }

    @Test("FLAC: three damaged frames are three gaps and one warning line")
    func flacThreeStretches() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let (_, clean) = try writeClean(dir, "clean.flac", .flac16)
        var bytes = clean
        for fraction in [0.3, 0.55, 0.8] {
            let at = Int(Double(bytes.count) * fraction)
            bytes[at] ^= 0x5A; bytes[at + 1] ^= 0x5A
        }
        let path = try write(bytes, dir.path("damaged.flac"))
        let source = try AudioFileSource(path: path)
        let damaged = try FileFixture.readTimeline(source)
        #expect(damaged.tiles && damaged.gaps.count == 3)
        #expect(damaged.samples.count == 16_000 * Self.seconds)
        #expect(source.damagedStretchCount == 3)
        #expect(source.warnings.first?.message.hasPrefix("damaged audio data: 3 stretches, ") == true)
        #expect(source.warnings.first?.message.contains(", replaced by gaps, the first at 0:00:01.") == true)
    }

    @Test("FLAC cut off in the middle is still reported as truncated, with no gap")
    func flacTruncatedHasNoGap() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let (_, clean) = try writeClean(dir, "clean.flac", .flac16)
        let path = try write(Array(clean.prefix(clean.count / 2)), dir.path("cut.flac"))
        let source = try AudioFileSource(path: path)
        let timeline = try FileFixture.readTimeline(source)
        #expect(timeline.tiles && timeline.gaps.isEmpty)
        #expect(source.warnings.map(\.code) == [.truncated])
    }

    @Test("FLAC whose STREAMINFO total is smaller than its audio: every frame is decoded, at its time")
    func flacShortStreamInfoTotal() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let (cleanPath, clean) = try writeClean(dir, "clean.flac", .flac16)
        var bytes = clean
        // STREAMINFO's body starts at byte 8; its 36-bit total_samples begins in the low nibble of body byte 13.
        bytes[21] &= 0xF0
        for i in 22...25 { bytes[i] = 0 }
        bytes[25] = 100
        let path = try write(bytes, dir.path("short-total.flac"))
        let source = try AudioFileSource(path: path)
        #expect(source.format.frameCount == 100)
        let timeline = try FileFixture.readTimeline(source)
        let reference = try FileFixture.readTimeline(AudioFileSource(path: cleanPath))
        #expect(timeline.tiles && timeline.gaps.isEmpty)
        #expect(timeline.samples == reference.samples)
        #expect(source.warnings.isEmpty, "\(source.warnings)")
    }

    @Test("Damaged headers cannot be resynchronised past: one 'notAudio' line (FLAC STREAMINFO, Vorbis setup page)")
    func damagedHeaders() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let (_, flac) = try writeClean(dir, "clean.flac", .flac16)
        var noInfo = flac
        for i in 4..<42 { noInfo[i] = 0xFF }   // the STREAMINFO block header and body
        let flacPath = try write(noInfo, dir.path("noinfo.flac"))
        let (_, ogg) = try writeClean(dir, "clean.ogg", .oggVorbis)
        var badSetup = ogg
        let setup = FileFixture.oggPages(ogg)[1]   // comment and setup headers
        badSetup[setup.offset + setup.length - 10] ^= 0xFF
        let oggPath = try write(badSetup, dir.path("badsetup.ogg"))
        for path in [flacPath, oggPath] {
            do {
                _ = try FileFixture.readTimeline(AudioFileSource(path: path))
                Issue.record("\(path) accepted")
            } catch let error as AudioError {
                #expect(error.code == .notAudio && error.description.hasPrefix("\(path): ")
                        && !error.description.contains("\n"), "\(error)")
            }
        }
    }

    @Test("Ogg Vorbis: a byte flipped in a middle page becomes one gap; later audio keeps its true time")
    func vorbisMiddlePage() throws {
        let dir = try FileFixture.TemporaryDirectory()
        let (cleanPath, clean) = try writeClean(dir, "clean.ogg", .oggVorbis)
        let pages = FileFixture.oggPages(clean)
        #expect(pages.count > 8 && pages.last.map { $0.offset + $0.length } == clean.count)
        let page = pages[pages.count / 2]
        var bytes = clean
        bytes[page.offset + page.length / 2] ^= 0x10
        let path = try write(bytes, dir.path("damaged.ogg"))
        let source = try AudioFileSource(path: path)
        let damaged = try FileFixture.readTimeline(source)
        try expectTrueTime(damaged, FileFixture.readTimeline(AudioFileSource(path: cleanPath)), margin: 1_200)
        #expect(source.damagedStretchCount == 1 && source.damagedFrameCount > 0)
        #expect(source.warnings.map(\.code) == [.damagedData], "\(source.warnings)")
    }
}
