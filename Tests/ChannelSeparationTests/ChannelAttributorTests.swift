import Foundation
import Testing
import SleepCycleBus
@testable import ChannelSeparation

/// Crafted stereo scenes: a noise burst placed on each microphone with its own gain and delay, over independent
/// background noise, with the candidates each channel's detector would have published.
@Suite("Channel attribution")
struct ChannelAttributorTests {
    static let rate = AnalysisClock.sampleRate

    /// Deterministic noise in −1…1 (xorshift).
    static func noise(_ count: Int, seed: UInt64) -> [Float] {
        var state = seed | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Float(Double(state % 2_000_001) / 1_000_000 - 1)
        }
    }

    struct Sound {
        var start: Double, length: Double
        /// Linear gains and integer delays (samples) at the primary (left) and secondary (right) microphones.
        var gain: (Float, Float), delay: (Int, Int)
        var seed: UInt64 = 5
    }

    /// `seconds` of stereo audio: background at about −60 dBFS on each channel (independent), plus the sounds.
    static func scene(seconds: Double, sounds: [Sound]) -> [[Float]] {
        let n = Int(seconds * Double(rate))
        var left = noise(n, seed: 101).map { $0 * 0.001 }, right = noise(n, seed: 202).map { $0 * 0.001 }
        for s in sounds {
            let burst = noise(Int(s.length * Double(rate)), seed: s.seed).map { $0 * 0.2 }
            let at = Int(s.start * Double(rate))
            for (i, v) in burst.enumerated() {
                if at + i + s.delay.0 < n { left[at + i + s.delay.0] += v * s.gain.0 }
                if at + i + s.delay.1 < n { right[at + i + s.delay.1] += v * s.gain.1 }
            }
        }
        return [left, right]
    }

    static func candidate(_ id: Int, _ channel: AudioChannel, start: Double, length: Double,
                          probability: Double = 0.9, type: EventType = .snoring) -> SoundEvent {
        SoundEvent(id: id, type: type, start: AnalysisClock.samples(seconds: start),
                   end: AnalysisClock.samples(seconds: start + length), probability: probability, channel: channel)
    }

    /// Runs the attributor over `audio` in 0.1-s blocks; each candidate is published once the audio has passed
    /// `arrival` seconds (or `arrivals[id]`) after its end, as a detector publishes events seconds after they end.
    static func run(_ config: ChannelSeparationConfig, audio: [[Float]], candidates: [SoundEvent],
                    arrival: Double = 3, arrivals: [Int: Double] = [:]) throws -> [SoundEvent] {
        var attributor = try ChannelAttributor(config: config)
        var published: [SoundEvent] = []
        func take(_ events: [AnalysisEvent]) {
            for e in events { if case .eventEnded(let ev) = e { published.append(ev) } }
        }
        let info = SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                               sourceSampleRate: rate, channelCount: 2)
        take(attributor.handle(.sessionStarted(info)))
        func due(_ c: SoundEvent) -> SampleTime { c.end + AnalysisClock.samples(seconds: arrivals[c.id] ?? arrival) }
        var waiting = candidates.sorted { due($0) < due($1) }
        let block = rate / 10
        var t = 0
        while t < audio[0].count {
            let end = min(t + block, audio[0].count)
            take(attributor.handle(.audio(AudioBlock(start: SampleTime(t),
                                                     channels: [Array(audio[0][t..<end]), Array(audio[1][t..<end])]))))
            t = end
            while let next = waiting.first, SampleTime(t) >= due(next) {
                take(attributor.handle(.eventCandidate(next)))
                waiting.removeFirst()
            }
        }
        for c in waiting { take(attributor.handle(.eventCandidate(c))) }
        take(attributor.handle(.sessionEnding(at: SampleTime(audio[0].count))))
        return published
    }

    @Test("a sound on the left microphone only is the primary sleeper's", arguments: [
        ChannelSeparationConfig.bedSideMics, .centeredMicArray, .detectionStrengthOnly()])
    func leftOnly(_ config: ChannelSeparationConfig) throws {
        let audio = Self.scene(seconds: 20, sounds: [Sound(start: 5, length: 1, gain: (1, 0), delay: (0, 0))])
        let out = try Self.run(config, audio: audio, candidates: [Self.candidate(0, .primary, start: 5, length: 1)])
        #expect(out.count == 1)
        #expect(out.first?.channel == .primary)
        #expect((out.first?.attributionConfidence ?? 0) > 0.9)
    }

    @Test("a sound on the right microphone only is the secondary sleeper's", arguments: [
        ChannelSeparationConfig.bedSideMics, .centeredMicArray, .detectionStrengthOnly()])
    func rightOnly(_ config: ChannelSeparationConfig) throws {
        let audio = Self.scene(seconds: 20, sounds: [Sound(start: 5, length: 1, gain: (0, 1), delay: (0, 0))])
        let out = try Self.run(config, audio: audio, candidates: [Self.candidate(0, .secondary, start: 5, length: 1)])
        #expect(out.map(\.channel) == [.secondary])
    }

    @Test("bedside: a sound louder and earlier on the left, detected on both channels, is reported once, primary")
    func bedsideCrossTalk() throws {
        // 0.5 m from the left microphone, 1.6 m from the right: −10 dB and 51 samples (1.1 m) later on the right.
        let audio = Self.scene(seconds: 20, sounds: [Sound(start: 5, length: 1.2, gain: (1, 0.32), delay: (0, 51))])
        let out = try Self.run(.bedSideMics, audio: audio, candidates: [
            Self.candidate(0, .primary, start: 5, length: 1.2),
            Self.candidate(1, .secondary, start: 5.05, length: 1.1, probability: 0.7)])
        #expect(out.count == 1)
        #expect(out.first?.channel == .primary)
        #expect(out.first?.id == 0)   // the primary channel's own detection
        #expect((out.first?.attributionConfidence ?? 0) > 0.95)
    }

    @Test("centered: equal levels, the time of arrival decides", arguments: [(4, AudioChannel.primary), (-4, .secondary)])
    func centeredDelay(_ lag: Int, _ expected: AudioChannel) throws {
        // A 20-cm pair: the far microphone hears the sound 4 samples (8.6 cm of path) later, at the same level.
        let delay = lag > 0 ? (0, lag) : (-lag, 0)
        let audio = Self.scene(seconds: 20, sounds: [Sound(start: 5, length: 1, gain: (1, 1), delay: delay)])
        let out = try Self.run(.centeredMicArray, audio: audio, candidates: [
            Self.candidate(0, .primary, start: 5, length: 1, probability: 0.85),
            Self.candidate(1, .secondary, start: 5, length: 1, probability: 0.85)])
        #expect(out.count == 1)
        #expect(out.first?.channel == expected)
        #expect((out.first?.attributionConfidence ?? 0) > 0.8)
    }

    @Test("a sound from the middle (equal, simultaneous) is reported once, with low confidence", arguments: [
        ChannelSeparationConfig.bedSideMics, .centeredMicArray])
    func middle(_ config: ChannelSeparationConfig) throws {
        let audio = Self.scene(seconds: 20, sounds: [Sound(start: 5, length: 1, gain: (1, 1), delay: (0, 0))])
        let out = try Self.run(config, audio: audio, candidates: [
            Self.candidate(0, .primary, start: 5, length: 1, probability: 0.8),
            Self.candidate(1, .secondary, start: 5, length: 1, probability: 0.9)])
        #expect(out.count == 1)
        #expect((out.first?.attributionConfidence ?? 1) < 0.75)
        // Ambiguous: detection strength decides (the secondary channel's detector was surer).
        #expect(out.first?.channel == .secondary)
    }

    @Test("a sound detected only on the far microphone goes to the sleeper whose microphone hears it loudest")
    func farDetection() throws {
        let audio = Self.scene(seconds: 20, sounds: [Sound(start: 5, length: 1, gain: (1, 0.3), delay: (0, 40))])
        let out = try Self.run(.bedSideMics, audio: audio, candidates: [Self.candidate(0, .secondary, start: 5, length: 1)])
        #expect(out.map(\.channel) == [.primary])
    }

    @Test("two sleepers at once: each keeps their own sound when their sounds overlap by less than half")
    func simultaneous() throws {
        let audio = Self.scene(seconds: 20, sounds: [
            Sound(start: 5, length: 2, gain: (1, 0.1), delay: (0, 50), seed: 7),
            Sound(start: 6.2, length: 2, gain: (0.1, 1), delay: (50, 0), seed: 8)])
        let out = try Self.run(.bedSideMics, audio: audio, candidates: [
            Self.candidate(0, .primary, start: 5, length: 2),
            Self.candidate(1, .secondary, start: 6.2, length: 2)])
        #expect(Set(out.compactMap(\.channel)) == [.primary, .secondary])
        #expect(out.count == 2)
    }

    @Test("detections of both channels sharing more than half are one sound, reported once")
    func oneSoundOnce() throws {
        let audio = Self.scene(seconds: 20, sounds: [Sound(start: 5, length: 2, gain: (1, 0.5), delay: (0, 30))])
        let out = try Self.run(.centeredMicArray, audio: audio, candidates: [
            Self.candidate(0, .primary, start: 5, length: 2, probability: 0.6),
            Self.candidate(1, .secondary, start: 5.3, length: 1.5, probability: 0.95)])
        #expect(out.count == 1)
        #expect(out.first?.channel == .primary)
    }

    @Test("the same sound's late detection on the other channel is not reported again")
    func lateDuplicate() throws {
        let audio = Self.scene(seconds: 40, sounds: [Sound(start: 5, length: 1, gain: (1, 0.3), delay: (0, 40))])
        var late = Self.candidate(1, .secondary, start: 5, length: 1, probability: 0.6, type: .talking)
        late.end = AnalysisClock.samples(seconds: 6)
        // The primary's candidate arrives 3 s after the sound; the secondary's 25 s after (a talking event held).
        var attributorOut = try Self.run(.bedSideMics, audio: audio,
                                         candidates: [Self.candidate(0, .primary, start: 5, length: 1)])
        #expect(attributorOut.count == 1)
        attributorOut = try Self.run(.bedSideMics, audio: audio,
                                     candidates: [Self.candidate(0, .primary, start: 5, length: 1), late],
                                     arrivals: [late.id: 25])
        #expect(attributorOut.map(\.id) == [0])
    }

    @Test("mono candidates (no channel) pass through unchanged")
    func monoPassThrough() throws {
        var attributor = try ChannelAttributor(config: .bedSideMics)
        let e = SoundEvent(id: 3, type: .coughing, start: 0, end: 100, probability: 0.9)
        let out = attributor.handle(.eventCandidate(e))
        #expect(out.count == 2)
    }

    @Test("invalid settings are refused with a message naming the setting")
    func validation() {
        var c = ChannelSeparationConfig.bedSideMics
        c.microphoneDistance = 50
        #expect(throws: ChannelSeparationError.self) { try c.validate() }
        c = .centeredMicArray
        c.confidenceThreshold = 1.5
        #expect(throws: ChannelSeparationError.self) { try c.validate() }
        c = .bedSideMics
        c.levelWeight = 0; c.timeWeight = 0; c.strengthWeight = 0; c.perEventType = [:]
        #expect(throws: ChannelSeparationError.self) { try c.validate() }
        #expect(throws: Never.self) { try ChannelSeparationConfig.detectionStrengthOnly().validate() }
    }

    @Test("memory is bounded: a long scene keeps a fixed history")
    func bounded() throws {
        var attributor = try ChannelAttributor(config: .bedSideMics, ringSeconds: 2, historySeconds: 5)
        let info = SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                               sourceSampleRate: Self.rate, channelCount: 2)
        _ = attributor.handle(.sessionStarted(info))
        let block = [[Float](repeating: 0.01, count: 1600), [Float](repeating: 0.02, count: 1600)]
        for k in 0..<600 {   // 60 s
            _ = attributor.handle(.audio(AudioBlock(start: SampleTime(k * 1600), channels: block)))
        }
        #expect(attributor.historyCount <= Int(5.0 * Double(Self.rate)) / ChannelAttributor.frameLength)
    }
}
