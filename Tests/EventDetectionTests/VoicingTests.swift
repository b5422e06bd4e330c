import Foundation
import Testing
import SleepCycleBus
import SleepCycleDSP
@testable import EventDetection

/// Synthetic raw audio for the voicing analysis (16 kHz).
enum VoicingSignals {
    /// A harmonic tone: `harmonics` partials of amplitude 1/k at k·f0 (k·f0 < 1.8 kHz), starting phase k.
    static func tone(f0: Double, seconds: Double, amplitude: Float = 0.1, harmonics: Int = 6) -> [Float] {
        let n = Int(seconds * 16000)
        return (0..<n).map { i in
            let t = Double(i) / 16000
            var v = 0.0
            for k in 1...harmonics where Double(k) * f0 < 1800 { v += sin(2 * .pi * Double(k) * f0 * t + Double(k)) / Double(k) }
            return amplitude * Float(v)
        }
    }

    /// White noise, uniform in ±`amplitude`·√3 (standard deviation `amplitude`).
    static func noise(seconds: Double, amplitude: Float, seed: UInt64 = 7) -> [Float] {
        var rng = TestSignals.LCG(state: seed)
        return (0..<Int(seconds * 16000)).map { _ in amplitude * 3.0.squareRoot().float * (2 * rng.next() - 1) }
    }

    static func rms(_ x: [Float]) -> Float { (x.reduce(0) { $0 + $1 * $1 } / Float(x.count)).squareRoot() }

    static func frame(_ x: [Float], at offset: Int = 4000) -> [Float] {
        Array(x[offset..<(offset + VoicingAnalyzer.frameSpan)])
    }
}

private extension Double { var float: Float { Float(self) } }

@Suite struct VoicingTests {
    let analyzer = VoicingAnalyzer()

    func analyse(_ x: [Float]) -> PitchFrame { x.withUnsafeBufferPointer { analyzer.analyze($0) } }

    @Test(arguments: [100.0, 220.0, 440.0])
    func harmonicToneF0WithinOnePercent(f0: Double) {
        let p = analyse(VoicingSignals.frame(VoicingSignals.tone(f0: f0, seconds: 0.5)))
        #expect(p.r > 0.9)
        #expect(abs(Double(p.f0Hz) - f0) / f0 < 0.01, "f0 \(p.f0Hz) for \(f0)")
        #expect(p.hnrDb > 9)
    }

    @Test func whiteNoiseIsUnvoiced() {
        let x = VoicingSignals.noise(seconds: 1.2, amplitude: 0.05)
        for offset in stride(from: 0, to: 16000, by: 2000) {
            #expect(analyse(VoicingSignals.frame(x, at: offset)).r < VoicingAnalyzer.voicingThreshold)
        }
    }

    @Test func toneInNoiseAtTenDbSNRIsStillVoiced() {
        let tone = VoicingSignals.tone(f0: 150, seconds: 0.5)
        let noise = VoicingSignals.noise(seconds: 0.5, amplitude: VoicingSignals.rms(tone) / 10.0.squareRoot().float)
        let p = analyse(VoicingSignals.frame(zip(tone, noise).map { $0 + $1 }))
        #expect(p.r >= VoicingAnalyzer.voicingThreshold)
        #expect(abs(p.f0Hz - 150) / 150 < 0.02)
    }

    @Test func levelInvariant() {
        let x = VoicingSignals.frame(zip(VoicingSignals.tone(f0: 180, seconds: 0.5),
                                         VoicingSignals.noise(seconds: 0.5, amplitude: 0.03)).map { $0 + $1 })
        let base = analyse(x)
        for scale: Float in [1e-3, 1e3] {
            let p = analyse(x.map { $0 * scale })
            #expect(abs(p.r - base.r) < 1e-4)
            #expect(abs(p.f0Hz - base.f0Hz) < 1e-3 * base.f0Hz)
        }
    }

    @Test func summaryDefinitions() {
        let v = SegmentVoicing.summary([PitchFrame(r: 0.9, f0Hz: 200), PitchFrame(r: 0.8, f0Hz: 200), nil,
                                        PitchFrame(r: 0.2, f0Hz: 90)], durationSec: 1.0)
        #expect(v.count == SegmentVoicing.names.count)
        #expect(v[0] == 0.5)                              // 2 of 4 voiced
        #expect(abs(v[1] - 0.85) < 1e-6)                  // best half: 0.9, 0.8
        #expect(abs(v[2] - 1) < 1e-6)                     // log2(200 / 100)
        #expect(v[3] == 0)                                // constant f0
        #expect(abs(v[4] - 0.5) < 1e-6)                   // 2 frames × 0.25 s
        let none = SegmentVoicing.summary([nil, nil], durationSec: 0.5)
        #expect(none[0] == 0 && none[2] == SegmentVoicing.unvoicedLog2F0 && none[4] == 0)
    }

    /// The same for samples copied in (pointer form), arrays the ring copies into its own chunks (shorter than
    /// `AudioRing.shortBlock`: 5 and 777 samples) and arrays it holds (4500, the engine's blocks): reads span
    /// blocks, and a block larger than the ring is held only for its newest `capacity` samples.
    @Test(arguments: [(false, 777), (true, 5), (true, 777), (true, 4500)])
    func ringHoldsOnlyWhatItWasGivenAndNeverJoinsAcrossAHole(arrays: Bool, blockSize: Int) {
        var ring = AudioRing(capacity: 4000)
        let x = (0..<10_000).map { Float($0) }
        x.withUnsafeBufferPointer { all in
            for s in stride(from: 0, to: 10_000, by: blockSize) {
                let block = all[s..<min(s + blockSize, 10_000)]
                if arrays { ring.append(Array(block), at: SampleTime(s)) } else {
                    ring.append(UnsafeBufferPointer(rebasing: block), at: SampleTime(s))
                }
            }
        }
        #expect(ring.start == 6000 && ring.end == 10_000)
        var span = [Float](repeating: -1, count: 3999)   // the window less one sample, across six blocks
        #expect(span.withUnsafeMutableBufferPointer { ring.copy(from: 6001, into: $0) })
        #expect(span == (6001..<10_000).map { Float($0) })
        var out = [Float](repeating: -1, count: 1000)
        #expect(!out.withUnsafeMutableBufferPointer { ring.copy(from: 5500, into: $0) })   // start has left
        #expect(out.allSatisfy { $0 == -1 })
        #expect(!out.withUnsafeMutableBufferPointer { ring.copy(from: 9500, into: $0) })   // beyond the end
        #expect(out.withUnsafeMutableBufferPointer { ring.copy(from: 7123, into: $0) })
        #expect(out == (7123..<8123).map { Float($0) })
        // A hole: audio resumes at 12 000; nothing before it is held any more.
        [Float](repeating: 5, count: 500).withUnsafeBufferPointer { ring.append($0, at: 12_000) }
        #expect(ring.start == 12_000)
        #expect(!out.withUnsafeMutableBufferPointer { ring.copy(from: 11_800, into: $0) })
        // One block longer than the ring: its newest 4000 samples.
        let long = (0..<5000).map { Float(20_000 + $0) }
        if arrays { ring.append(long, at: 20_000) } else { long.withUnsafeBufferPointer { ring.append($0, at: 20_000) } }
        #expect(ring.start == 21_000 && ring.end == 25_000)
        #expect(out.withUnsafeMutableBufferPointer { ring.copy(from: 21_000, into: $0) })
        #expect(out == (21_000..<22_000).map { Float($0) })
        #expect(!out.withUnsafeMutableBufferPointer { ring.copy(from: 20_999, into: $0) })
    }

    @Test func segmentWhoseStartLeftTheRingIsAnalysedFromWhatRemains() {
        let x = VoicingSignals.tone(f0: 200, seconds: 3)
        var ring = AudioRing(capacity: 24_000)          // 1.5 s
        x.withUnsafeBufferPointer { ring.append($0, at: 0) }
        let frames = SegmentVoicing.frames(analyzer, ring: ring, start: 0, end: SampleTime(x.count))
        #expect(frames.count == SegmentVoicing.maxFrames)
        let held = frames.compactMap { $0 }
        #expect(held.count >= 3 && held.count < frames.count)
        #expect(frames.prefix(3).allSatisfy { $0 == nil })
        #expect(held.allSatisfy { abs($0.f0Hz - 200) < 2 })
        let v = SegmentVoicing.summary(frames, durationSec: 3)
        #expect(v[0] == Float(held.count) / Float(frames.count))
    }

    /// Feeds audio (in blocks of `audioBlock` samples) and synthetic mel frames in the engine's order:
    /// every sample a feature frame needs (its centre + 512) arrives before that frame's feature block.
    func segments(audio: [Float], rows: [[Float]], audioBlock: Int, held: Bool = false) throws -> [CandidateSegment] {
        var x = try SegmentExtractor()
        var out: [CandidateSegment] = []
        var fed = 0
        audio.withUnsafeBufferPointer { all in
            for b in TestSignals.blocks(rows) {
                let needed = min(all.count, Int(b.start) + b.count * b.hopLength + 512)
                while fed < needed {
                    let n = min(audioBlock, all.count - fed)
                    if held {
                        x.append(audio: Array(all[fed..<(fed + n)]), start: SampleTime(fed))
                    } else {
                        x.append(audio: UnsafeBufferPointer(rebasing: all[fed..<(fed + n)]), start: SampleTime(fed))
                    }
                    fed += n
                }
                out += x.process(b)
            }
        }
        return out + x.flush()
    }

    @Test func segmentFeaturesDoNotDependOnTheAudioBlockSize() throws {
        let bg = TestSignals.background(1e-4)
        let rows = TestSignals.frames(seconds: 10, background: bg,
                                      events: [(4.0, 4.8, TestSignals.snorerShape(peaks: [5, 12], level: 1e-2))])
        var audio = VoicingSignals.noise(seconds: 10, amplitude: 0.002)
        let tone = VoicingSignals.tone(f0: 130, seconds: 0.8)
        for i in tone.indices { audio[64_000 + i] += tone[i] }
        let reference = try segments(audio: audio, rows: rows, audioBlock: 16_384)
        #expect(reference.count == 1)
        let voicedShare = reference[0].features.values[SegmentFeatures.names.firstIndex(of: "voiced_share")!]
        #expect(voicedShare > 0.5)
        for size in [1, 777] {
            let other = try segments(audio: audio, rows: rows, audioBlock: size)
            #expect(other.map(\.features) == reference.map(\.features), "block size \(size)")
        }
    }

    /// Audio handed over as arrays is copied into the ring only where a segment can read it (quiet stretches are
    /// not copied); the features must be exactly those of the copy-everything form — also for segments that open
    /// at the first frame of a feature block (3.2 s, 6.4 s: blocks of 100 frames) and for every audio block size.
    @Test func heldAudioGivesTheSameFeaturesAsCopiedAudio() throws {
        let bg = TestSignals.background(1e-4)
        let shape = TestSignals.snorerShape(peaks: [5, 12], level: 1e-2)
        let spans: [(Double, Double)] = [(1.0, 1.6), (3.2, 3.45), (6.4, 7.2), (8.1, 8.4), (12.8, 13.5)]
        let rows = TestSignals.frames(seconds: 15, background: bg, events: spans.map { ($0.0, $0.1, shape) })
        var audio = VoicingSignals.noise(seconds: 15, amplitude: 0.002)
        for (k, (a, b)) in spans.enumerated() {
            let tone = VoicingSignals.tone(f0: 110 + 20 * Double(k), seconds: b - a + 0.1)
            let from = Int((a - 0.05) * 16_000)
            for i in tone.indices { audio[from + i] += tone[i] }
        }
        let reference = try segments(audio: audio, rows: rows, audioBlock: 16_384)
        #expect(reference.count == spans.count)
        let voiced = SegmentFeatures.names.firstIndex(of: "voiced_share")!
        #expect(reference.allSatisfy { $0.features.values[voiced] > 0.5 })
        for size in [16_384, 4_000, 777, 50] {
            let held = try segments(audio: audio, rows: rows, audioBlock: size, held: true)
            let differing = zip(held, reference).filter { $0.features != $1.features }.map { String(describing: $0.1.start) }
            #expect(held.count == reference.count && differing.isEmpty,
                    "block size \(size): \(held.count) segments, different features at \(differing)")
        }
    }

    @Test func stereoChannelsAreAnalysedIndependently() throws {
        // Both channels show the same burst in their features; only channel 0 carries a voiced tone.
        let voiced = SegmentFeatures.names.firstIndex(of: "voiced_share")!
        let classifier = FixedClassifier { f in
            ClassProbabilities(values: f.values[voiced] > 0.5 ? [0, 0, 1, 0, 0] : [1, 0, 0, 0, 0])
        }
        var detector = try EventDetector(classifier: classifier)
        let rows = TestSignals.frames(seconds: 10, background: TestSignals.background(1e-4),
                                      events: [(4.0, 4.8, TestSignals.snorerShape(peaks: [5, 12], level: 1e-2))])
        var left = VoicingSignals.noise(seconds: 10, amplitude: 0.002, seed: 3)
        let right = VoicingSignals.noise(seconds: 10, amplitude: 0.05, seed: 4)
        let tone = VoicingSignals.tone(f0: 130, seconds: 0.8)
        for i in tone.indices { left[64_000 + i] += tone[i] }
        var events: [SoundEvent] = []
        func take(_ produced: [AnalysisEvent]) {
            for e in produced { if case .eventEnded(let s) = e { events.append(s) } }
        }
        _ = detector.handle(.sessionStarted(SessionInfo(id: UUID(), clock: AnalysisClock(start: Date(timeIntervalSince1970: 0)),
                                                        sourceSampleRate: 16_000, channelCount: 2)))
        let blocks0 = TestSignals.blocks(rows, channel: 0), blocks1 = TestSignals.blocks(rows, channel: 1)
        var fed = 0
        for (b0, b1) in zip(blocks0, blocks1) {
            let needed = min(left.count, Int(b0.start) + b0.count * b0.hopLength + 512)
            if needed > fed {
                take(detector.handle(.audio(AudioBlock(start: SampleTime(fed),
                                                       channels: [Array(left[fed..<needed]), Array(right[fed..<needed])]))))
                fed = needed
            }
            take(detector.handle(.features(b0)))
            take(detector.handle(.features(b1)))
        }
        take(detector.handle(.sessionEnding(at: SampleTime(left.count))))
        #expect(events.count == 1)
        #expect(events.first?.channel == .primary)
        #expect(events.first?.type == .talking)
    }
}
