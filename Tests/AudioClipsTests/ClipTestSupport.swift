import Foundation
@testable import AudioClips
@testable import SleepCycleAudio
import SleepCycleBus
import Testing

/// A folder removed with the test.
final class ClipFolder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sleepcycle-clips-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    var path: String { url.path }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    /// Every file under the folder (relative paths), hidden ones included.
    var files: [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter {
            var d: ObjCBool = false
            return FileManager.default.fileExists(atPath: self.path($0), isDirectory: &d) && !d.boolValue
        }.sorted()
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Deterministic 16-bit test audio: noise whose level changes every second, so a clip cut one frame off would not
/// match.
func testSignal(frames: Int, seed: UInt64) -> [Int16] {
    var s = seed | 1
    return (0..<frames).map { i in
        s ^= s << 13; s ^= s >> 7; s ^= s << 17
        let level = Int64(2000 + (i / 997) % 9 * 3000)
        return Int16(Int64(s % UInt64(2 * level + 1)) - level)
    }
}

/// A 16-bit PCM WAV of `channels` (exact integers).
func writeWAV(_ path: String, rate: Int, channels: [[Int16]]) throws {
    let frames = channels[0].count, nc = channels.count
    var d = Data()
    func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
    func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { d.append(contentsOf: $0) } }
    let bytes = frames * nc * 2
    d.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes); d.append(contentsOf: Array("WAVE".utf8))
    d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(nc); u32(rate)
    u32(rate * nc * 2); u16(nc * 2); u16(16)
    d.append(contentsOf: Array("data".utf8)); u32(bytes)
    var pcm = [Int16](repeating: 0, count: frames * nc)
    for i in 0..<frames { for c in 0..<nc { pcm[i * nc + c] = channels[c][i] } }
    pcm.withUnsafeBytes { d.append(contentsOf: $0) }
    try d.write(to: URL(fileURLWithPath: path))
}

/// A clip file's samples as 16-bit integers (libsndfile reads FLAC as k / 32768 for 16-bit).
func readClip(_ path: String) throws -> (rate: Int, samples: [Int16]) {
    let file = try SndFile(reading: InputFile(path: path))
    var out: [Int16] = []
    let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 4096 * max(1, file.channels))
    defer { buffer.deallocate() }
    while true {
        let n = try file.readFloat(into: buffer, frames: 4096)
        for i in 0..<n { out.append(Int16((buffer[i * file.channels] * 32768).rounded())) }
        if n < 4096 { break }
    }
    return (file.sampleRate, out)
}

/// An event to decide while a file plays: published as `.eventEnded` once the audio passes `decideAt` seconds (or at
/// the end of the session when that is later).
struct ScriptedEvent {
    var event: SoundEvent
    var decideAt: Double

    init(id: Int, _ type: EventType = .snoring, from: Double, to: Double, probability: Double = 0.9,
         channel: AudioChannel? = nil, decideAt: Double? = nil) {
        event = SoundEvent(id: id, type: type, start: AnalysisClock.samples(seconds: from),
                           end: AnalysisClock.samples(seconds: to), probability: probability, channel: channel)
        self.decideAt = decideAt ?? to + 12
    }
}

/// Plays `path` through an `AudioFileSource` (with its source-rate tap, as the pipeline does) into a bus holding the
/// `AudioClips` consumer, deciding `events` on the way; returns every `.clip` outcome.
func playClips(path: String, blockFrames: Int, events: [ScriptedEvent], config: AudioClipsConfig = .default,
               directory: String?, key: ClipKey? = nil) throws -> [AudioClipReady] {
    let source = try AudioFileSource(path: path, blockFrames: blockFrames)
    let bus = EventBus()
    bus.subscribe(try AudioClips(config: config, output: ClipOutput(directory: directory, key: key,
                                                                     folderName: { _ in "night" })))
    var outcomes: [AudioClipReady] = []
    bus.observe { if case .clip(let c) = $0 { outcomes.append(c) } }
    var tapped: [SourceRateAudio] = []
    #expect(source.setSourceRateTap { tapped.append($0) })
    let info = SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                           sourceSampleRate: source.format.sampleRate, channelCount: source.format.channelCount)
    bus.publish(.sessionStarted(info))
    var waiting = events.sorted { $0.decideAt < $1.decideAt }
    var end: SampleTime = 0
    while true {
        let read = try source.read()
        for t in tapped {
            bus.publish(.sourceAudio(SourceAudioBlock(sampleRate: source.format.sampleRate, origin: t.origin,
                                                      start: t.start, samples: t.samples,
                                                      integerBits: source.format.integerBits)))
        }
        tapped.removeAll()
        guard case .audio(let start, let channels) = read else { break }
        let block = AudioBlock(start: start, channels: channels)
        bus.publish(.audio(block))
        end = block.end
        while let next = waiting.first, AnalysisClock.samples(seconds: next.decideAt) <= end {
            bus.publish(.eventEnded(next.event))
            waiting.removeFirst()
        }
    }
    bus.publish(.sessionEnding(at: end))
    for e in waiting { bus.publish(.eventEnded(e.event)) }
    bus.publish(.sessionEnded(at: end))
    return outcomes
}
