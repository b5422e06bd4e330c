import Foundation
import SleepCycleBus
import SleepCycleDSP

/// Where clips go: files under `directory` (optionally encrypted), and/or a receiver of their samples.
public struct ClipOutput: Sendable {
    /// The clips folder; nil: no files, clips only reach the receiver.
    public var directory: String?
    /// With a key, each file is encrypted (AES-256-GCM, `.flac.enc`) before it is written.
    public var key: ClipKey?
    /// The folder under `directory` for an event of `channel` (the session id; a sleeper's id with two sleepers).
    public var folderName: @Sendable (AudioChannel?) -> String
    /// Called on the analysing thread with each clip's outcome as it is published, with the clip's samples.
    public var receiver: (@Sendable (ClipDelivery) -> Void)?
    /// Flush each file to the disk before it takes its name (`fsync`): a live night's clips survive a power cut.
    /// Off for a file's analysis, where hundreds of clips are written in seconds and the recording itself remains.
    public var durable: Bool

    public init(directory: String?, key: ClipKey? = nil, folderName: @escaping @Sendable (AudioChannel?) -> String,
                receiver: (@Sendable (ClipDelivery) -> Void)? = nil, durable: Bool = false) {
        self.directory = directory; self.key = key; self.folderName = folderName; self.receiver = receiver
        self.durable = durable
    }
}

/// A clip as handed to a receiver: its outcome, the event and (when written) its mono samples at the source rate.
public struct ClipDelivery: Sendable {
    public var clip: AudioClipReady
    public var event: SoundEvent
    /// The clip's samples (empty when dropped): mono, at the source's rate; for a source of ≤ 16-bit integers, its
    /// 16-bit values.
    public var samples: PlanarSamples
    /// The samples as floats (16-bit values scaled by 1/32768).
    public var floatSamples: [Float] { samples.channelCount == 0 ? [] : samples.floats(channel: 0) }
}

/// A clip written before a resumed night's interruption, with what the limits weigh it by.
public struct EarlierClip: Sendable, Equatable {
    public var clip: AudioClipReady
    public var probability: Double
    public var channel: AudioChannel?
    public init(clip: AudioClipReady, probability: Double, channel: AudioChannel?) {
        self.clip = clip; self.probability = probability; self.channel = channel
    }
}

/// The audio-clip consumer: `.sourceAudio` and `.eventEnded` in, `.clip` out.
///
/// * Holds the last `preRollSeconds` of every analysed channel at the source's rate (`ClipRing`: fixed memory,
///   however many events a night has), because an event is decided seconds after it ends.
/// * For each decided event of a chosen type (and long enough), cuts the clip from the event's channel (the
///   sleeper's with two sleepers; channel 0 for mono): `clipLength` centred on a shorter event, a longer event from
///   its start, at most `maxClipLength`; clamped to the start and end of the audio. A clip whose end is not yet
///   heard waits for the audio; at the end of the session it is cut from what there is.
/// * The samples are the source's own (16-bit sources exactly; see `FLACMemoryEncoder`); a hole in the input
///   (overrun, missing input) is silence in the clip.
/// * Encoding, encryption and writing run on a `ClipWriter` thread; their outcomes are published as `.clip` at the
///   consumer's next step and all of them by `.sessionEnded`.
public struct AudioClips: AnalysisConsumer {
    public let config: AudioClipsConfig
    let writer: ClipWriter
    let receiver: (@Sendable (ClipDelivery) -> Void)?
    private var ring: ClipRing?
    private var rate = 0
    private var integerBits: Int?
    private var channelCount = 1
    private var sessionId = ""
    private var pending: [Pending] = []
    private var ending = false
    /// The longest a decided event's clip reached back before the newest audio (seconds): how much pre-roll the
    /// night needed.
    public private(set) var longestReach = 0.0

    struct Pending {
        var event: SoundEvent
        var channel: Int
        var from: Int64
        var to: Int64
        var shortEvent: Bool
    }

    /// - Parameters:
    ///   - earlier: a resumed night's clips written before the interruption: the per-type limit and the size cap
    ///     count them (they restarted from nothing after a resume), and they may be given up for more probable ones.
    ///   - unclipped: a resumed night's events with no clip record: their clips are given up (by the pipeline), so
    ///     a file one of them had written in the instant before the crash is removed, with any temporary file the
    ///     crash left in the night's folders.
    public init(config: AudioClipsConfig, output: ClipOutput, earlier: [EarlierClip] = [],
                unclipped: [SoundEvent] = []) throws(ClipError) {
        if let problem = config.problem { throw ClipError(.setting, path: "clips", message: problem) }
        self.config = config
        writer = try ClipWriter(config: config, output: output)
        writer.seed(earlier)
        writer.removeLeftovers(of: unclipped)
        receiver = output.receiver
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .sessionStarted(let info):
            channelCount = max(1, info.channelCount)
            sessionId = info.id.uuidString
            return []
        case .sourceAudio(let block):
            take(block)
            return cutReady() + completed()
        case .eventEnded(let e):
            guard config.wantsClip(e) else { return [] }
            schedule(e)
            return cutReady() + completed()
        case .sessionEnding:
            ending = true
            return cutReady() + completed()
        case .sessionEnded:
            ending = true
            let out = cutReady()
            writer.finish()
            return out + completed()
        case .audio:
            return completed()
        default:
            return []
        }
    }

    // MARK: - Audio

    private mutating func take(_ block: SourceAudioBlock) {
        if ring == nil {
            rate = block.sampleRate
            integerBits = block.integerBits
            let frames = Int((config.effectivePreRoll * Double(rate)).rounded(.up))
            channelCount = block.samples.channelCount
            ring = ClipRing(capacity: frames, channelCount: channelCount)
        }
        guard block.sampleRate == rate else { return }
        let first = frame(ofAnalysis: block.origin) + block.start
        ring?.append(first: first, samples: block.samples)
    }

    /// The nearest frame at or before `frame` whose time is a whole number of milliseconds: a multiple of
    /// rate / gcd(rate, 1000) (441 at 44.1 kHz, 48 at 48 kHz, 16 at 16 kHz).
    private func alignedDown(_ frame: Int64) -> Int64 {
        var a = rate, b = 1000
        while b != 0 { (a, b) = (b, a % b) }
        let step = Int64(rate / a)
        return frame - ((frame % step) + step) % step
    }

    /// The frame (at the source rate) nearest analysis sample `t`.
    private func frame(ofAnalysis t: SampleTime) -> Int64 {
        (2 * t * Int64(rate) + Int64(AnalysisClock.sampleRate)) / (2 * Int64(AnalysisClock.sampleRate))
    }

    // MARK: - Clips

    /// Works out the clip's frames for `e` and queues it.
    private mutating func schedule(_ e: SoundEvent) {
        guard rate > 0 else { return }   // no audio yet: nothing to cut
        let sr = Int64(AnalysisClock.sampleRate), r = Int64(rate)
        let first = (e.start * r) / sr                      // floor
        let last = (e.end * r + sr - 1) / sr                // ceil
        let length = Int64((config.clipLength * Double(rate)).rounded())
        let cap = Int64((config.maxClipLength * Double(rate)).rounded())
        var from: Int64, to: Int64
        let short = last - first <= length
        if short {
            from = (first + last) / 2 - length / 2
            to = from + length
        } else {
            from = first
            to = first + min(last - first, cap)
        }
        if from < 0 { to -= from; from = 0 }
        // Start on a whole millisecond (so `clipStart`, written to the millisecond, is exact), keeping the end.
        let aligned = alignedDown(from)
        if !short { to = min(to, aligned + cap) }
        from = aligned
        let channel = min(e.channel?.rawValue ?? 0, channelCount - 1)
        pending.append(Pending(event: e, channel: channel, from: from, to: to, shortEvent: short))
    }

    /// Cuts every pending clip whose audio is all there (every one once the session is ending).
    private mutating func cutReady() -> [AnalysisEvent] {
        guard let ring, !pending.isEmpty else { return [] }
        var out: [AnalysisEvent] = []
        var waiting: [Pending] = []
        for var p in pending {
            if p.to > ring.end {
                guard ending else { waiting.append(p); continue }
                // The audio ended: a short event's clip moves back to keep its length, a long one is cut at the end.
                let over = p.to - ring.end
                p.to = ring.end
                if p.shortEvent { p.from = alignedDown(max(0, p.from - over)) }
            }
            longestReach = max(longestReach, Double(ring.end - p.from) / Double(rate))
            let audio = ring.window(from: p.from, to: p.to)
            let eventEnd = (p.event.end * Int64(rate) + Int64(AnalysisClock.sampleRate) - 1) / Int64(AnalysisClock.sampleRate)
            if audio.frameCount == 0 || audio.from >= eventEnd {
                out.append(.clip(dropped(p.event, reason: "the audio was no longer held when the event was decided "
                    + "(raise the pre-roll)")))
                continue
            }
            writer.submit(ClipWriter.Job(event: p.event, channel: p.channel, audio: audio, sampleRate: rate,
                                         integerBits: integerBits, sessionId: sessionId))
        }
        pending = waiting
        return out
    }

    private func dropped(_ e: SoundEvent, reason: String) -> AudioClipReady {
        .dropped(e, sampleRate: rate, reason: reason)
    }

    /// The writer's finished clips, as `.clip` events (and to the receiver).
    private func completed() -> [AnalysisEvent] {
        let done = writer.takeCompleted()
        guard !done.isEmpty else { return [] }
        if let receiver { for d in done { receiver(d) } }
        return done.map { .clip($0.clip) }
    }
}
