import Crypto
import Foundation
import AudioClips
import SleepCycleBus
import ChannelSeparation
import EventDetection
import SleepCycleFormats

/// One entry of a night's journal: what the whole-night consumers (staging, the smart alarm, the result) saw, in
/// the order they saw it, so that a resumed night rebuilds their state exactly (docs/0008).
///
/// Journaled: the end of each audio block (the clock the stager and the alarm follow), gaps, events started and
/// ended, talking events the detector holds back, two sleepers' candidates with their cues, breathing rates, health
/// changes, sound levels, heart-rate and motion samples, the alarm and audio clips. Not journaled: audio and
/// features (the producers start afresh after a resume), the breathing trace, and the stager's online epochs, which
/// the stager publishes again, identically, when the journal is replayed into it.
public enum JournalRecord: Codable, Sendable {
    case position(SampleTime)
    case gap(AudioGap)
    case eventStarted(SoundEvent)
    case eventEnded(SoundEvent)
    /// A talking event held back by the detector (`.eventHeld`): not replayed; a resume decides the held events
    /// the journal does not publish (`NightReplay.undecidedEvents`).
    case eventHeld(SoundEvent)
    /// Two sleepers: a candidate and its attribution cues (`.candidateMeasured`): not replayed; a resume decides the
    /// candidates the attributor had not decided (`NightReplay.undecidedEvents`).
    case candidate(AttributionCandidate)
    case breathingRate(BreathingEstimate)
    case healthChanged(AudioHealthChange)
    /// The sound level of a second (a night's loudness and its events' levels survive a resume).
    case level(LevelReading)
    case heartRate(HeartRateSample)
    case motion(MotionSample)
    case alarm(AlarmFired)
    /// An audio clip written or given up (the result's `"clip"` keys, and the clips index of the store).
    case clip(AudioClipReady)
    /// A wearable reading (`.heartRate`, `.motion`) encrypted at rest with the night's wearable key
    /// (`WearableSealing`); opened before it is replayed.
    case sealed(Data)

    /// The record of a bus event, or nil for events the journal leaves out.
    init?(_ event: AnalysisEvent) {
        switch event {
        case .audio(let block): self = .position(block.end)
        case .gap(let g): self = .gap(g)
        case .eventStarted(let e): self = .eventStarted(e)
        case .eventEnded(let e): self = .eventEnded(e)
        case .eventHeld(let e): self = .eventHeld(e)
        case .candidateMeasured(let c): self = .candidate(c)
        case .breathingRate(let b): self = .breathingRate(b)
        case .healthChanged(let h): self = .healthChanged(h)
        case .level(let l): self = .level(l)
        case .heartRate(let h): self = .heartRate(h)
        case .motion(let m): self = .motion(m)
        case .alarm(let a): self = .alarm(a)
        case .clip(let c): self = .clip(c)
        default: return nil
        }
    }

    /// The event to replay: a position becomes an empty audio block ending there (the whole-night consumers only
    /// read where a block ends). The alarm is not replayed: the smart alarm decides it again from the replay.
    var replayedEvent: AnalysisEvent? {
        switch self {
        case .position(let t): .audio(AudioBlock(start: t, channels: []))
        case .gap(let g): .gap(g)
        case .eventStarted(let e): .eventStarted(e)
        case .eventEnded(let e): .eventEnded(e)
        case .breathingRate(let b): .breathingRate(b)
        case .healthChanged(let h): .healthChanged(h)
        case .level(let l): .level(l)
        case .heartRate(let h): .heartRate(h)
        case .motion(let m): .motion(m)
        case .clip(let c): .clip(c)
        case .alarm, .sealed, .eventHeld, .candidate: nil
        }
    }
}

/// Wearable readings encrypted at rest in a night's journal: each `.heartRate` / `.motion` record becomes `.sealed`,
/// its JSON encrypted with AES-256-GCM (12-byte random nonce, ciphertext, 16-byte tag; the 8 bytes `SCWEARv1` are
/// authenticated as additional data). The key is the same kind of file as the clips key (`ClipKey`: 32 raw bytes or
/// 64 hexadecimal digits); without it a resumed night cannot rebuild its heart session, so resuming asks for it.
public enum WearableSealing {
    static let header = Data("SCWEARv1".utf8)

    /// The record as it is journaled: wearable readings sealed, everything else as it is.
    static func seal(_ record: JournalRecord, key: ClipKey, encoder: JSONEncoder) -> JournalRecord {
        switch record {
        case .heartRate, .motion:
            guard let plain = try? encoder.encode(record),
                  let box = try? AES.GCM.seal(plain, using: key.symmetricKey, authenticating: header),
                  let combined = box.combined else { return record }
            return .sealed(combined)
        default:
            return record
        }
    }

    /// A journal's records with the sealed ones opened. Without a key they are left out and counted; with a key that
    /// does not open them, an error (a wrong key must not pass for a night without readings).
    public static func open(_ records: [JournalRecord], key: ClipKey?) throws -> (records: [JournalRecord], unread: Int) {
        guard records.contains(where: { if case .sealed = $0 { true } else { false } }) else { return (records, 0) }
        var out: [JournalRecord] = [], unread = 0
        out.reserveCapacity(records.count)
        let decoder = JSONDecoder()
        for record in records {
            guard case .sealed(let data) = record else { out.append(record); continue }
            guard let key else { unread += 1; continue }
            do {
                let plain = try AES.GCM.open(AES.GCM.SealedBox(combined: data), using: key.symmetricKey, authenticating: header)
                out.append(try decoder.decode(JournalRecord.self, from: plain))
            } catch {
                throw SleepAnalysisEngineError.unsupportedConfiguration("the wearable key \(MessageText.path(key.source)) "
                    + "does not open this night's readings (wrong key, or the journal was altered)")
            }
        }
        return (out, unread)
    }
}

/// What the engine needs to take up an interrupted night again: the session and the pipeline it ran.
public struct NightHeader: Codable, Sendable, Hashable {
    public var sessionId: UUID
    public var start: Date
    public var utcOffsetSeconds: Int
    /// The source as it was when the night began (name, rate and channels of the input, analysed channels).
    public var sourceName: String
    public var sourceSampleRate: Int
    public var sourceChannels: Int
    public var analysisChannels: Int
    /// The pipeline's settings that shape the result.
    public var frameLength: Int
    public var hopLength: Int
    public var eventDetection: Bool
    public var alarm: PipelineOptions.AlarmOption?
    public var useAccelerometer: Bool
    /// Free-form settings of the program that records (e.g. the command line's input options), kept for its resume.
    public var recorderSettings: [String: String]
    /// Two sleepers: how the channels were separated (nil: one session).
    public var channelSeparation: ChannelSeparationConfig? = nil
    /// Whether the journal's wearable readings are encrypted (`WearableSealing`); nil in nights recorded before.
    public var wearableEncrypted: Bool? = nil
}

/// An interrupted night's journal, ready to replay: its records in order and where its timeline had got to.
public struct NightReplay: Sendable {
    public var records: [JournalRecord]
    /// The analysis-timeline position of the journal's last chunk.
    public var position: SampleTime
    /// Two sleepers: how the night's channels were separated (the attributor's settings decide its waiting
    /// candidates).
    public var separation: ChannelSeparationConfig?

    public init(records: [JournalRecord], position: SampleTime, separation: ChannelSeparationConfig? = nil) {
        self.records = records
        self.position = position
        self.separation = separation
    }

    /// What the journal says of the night's clips, for `AudioClips` on resume:
    /// * `earlier`: the clips it records as written and not given up since, with their events' probability and
    ///   sleeper (the limits count them);
    /// * `unclipped`: the events it has no clip record for (ended, or cut off by the interruption), whose clips the
    ///   resume gives up, removing a file one of them had written in the instant before the crash.
    var clipRecords: (earlier: [EarlierClip], unclipped: [SoundEvent]) {
        var events: [Int: SoundEvent] = [:], clips: [Int: AudioClipReady] = [:]
        for record in records {
            switch record {
            case .eventStarted(let e), .eventEnded(let e): events[e.id] = e
            case .clip(let c): clips[c.eventId] = c
            default: break
            }
        }
        let earlier = clips.values.filter { $0.status == .written }.sorted { $0.eventId < $1.eventId }.map { c in
            EarlierClip(clip: c, probability: events[c.eventId]?.probability ?? 0, channel: events[c.eventId]?.channel)
        }
        return (earlier, events.values.filter { clips[$0.id] == nil }.sorted { $0.id < $1.id })
    }

    /// The first id free after the journal's events (and candidates).
    var journalNextEventId: Int {
        records.reduce(0) { next, record in
            switch record {
            case .eventStarted(let e), .eventEnded(let e): max(next, e.id + 1)
            case .candidate(let c) where !c.held: max(next, c.event.id + 1)
            default: next
            }
        }
    }

    /// The events a crash left undecided, decided from what the journal knows; their new ids start at
    /// `journalNextEventId`, and `newIds` of them are taken.
    ///
    /// * Talking events the detector held (`.eventHeld`, or a held `.candidate`) and had not decided when the
    ///   journal ends — not published, and ended less than the sustained-speech window before its last position
    ///   (one held longer was decided, and dropped) — are decided as the detector decides them at a gap, on the
    ///   talking events the journal knows. Without this a crash lost every talking event of the last minute and a
    ///   half (the rule holds them that long).
    /// * Two sleepers: those and the candidates the attributor was still waiting on are attributed on their
    ///   journaled cues (`ChannelAttributor.resume`); without this a crash lost every event of the last ~20 s.
    func undecidedEvents() throws -> (events: [SoundEvent], newIds: Int) {
        let window = AnalysisClock.samples(seconds: DetectorConfiguration.default.sustainedSpeechWindowSec)
        func same(_ a: SoundEvent, _ b: SoundEvent) -> Bool {
            a.start == b.start && a.end == b.end && a.channel == b.channel
        }
        /// The held talk the rule reports, among `held`; `published` is what the detector let through (`matches` says
        /// which held event one of them is).
        func decided(_ held: [SoundEvent], published: [SoundEvent],
                     matches: (SoundEvent, SoundEvent) -> Bool = same) -> [SoundEvent] {
            let undecided = held.filter { e in position - e.end < window && !published.contains { matches($0, e) } }
            let talk = held.filter { e in !undecided.contains { same($0, e) } }
            return EventDetector.sustainedSpeechDecision(held: undecided, talk: talk)
        }
        let first = journalNextEventId
        guard let separation else {
            var held: [SoundEvent] = [], published: [SoundEvent] = []
            for record in records {
                switch record {
                case .eventHeld(let e): held.append(e)
                case .eventStarted(let e) where e.type == .talking: published.append(e)
                default: break
                }
            }
            guard !held.isEmpty else { return ([], 0) }
            let events = decided(held, published: published).enumerated().map { k, e in
                var e = e
                e.id = first + k
                return e
            }
            return (events, events.count)
        }
        var candidates: [AttributionCandidate] = [], held: [AttributionCandidate] = [], published: [SoundEvent] = []
        for record in records {
            switch record {
            case .candidate(let c) where c.held: held.append(c)
            case .candidate(let c): candidates.append(c)
            case .eventStarted(let e): published.append(e)
            default: break
            }
        }
        guard !candidates.isEmpty || !held.isEmpty else { return ([], 0) }
        // Let through: a talking candidate, or an event an earlier resume decided and published (on its sleeper's
        // channel, which need not be the one that held it).
        let talk = candidates.filter { $0.event.type == .talking }.map(\.event)
        let reported = decided(held.map(\.event), published: talk + published.filter { $0.type == .talking }) {
            $0.start == $1.start && $0.end == $1.end
        }
        var heldCandidates: [AttributionCandidate] = []
        for var c in held where reported.contains(where: { same($0, c.event) }) {
            c.event.id = first + heldCandidates.count
            c.held = false
            heldCandidates.append(c)
        }
        let events = try ChannelAttributor.resume(config: separation, candidates: candidates, held: heldCandidates,
                                                  published: published, position: position)
        return (events, heldCandidates.count)
    }
}
