import DequeModule
import SleepCycleBus
import SleepCycleDSP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two-sleeper attributor: `.eventCandidate`s from each channel's detector in, each sound once out, as
/// `.eventStarted` + `.eventEnded` with the sleeper's channel and an `attributionConfidence`
/// (docs/0009-two-sleepers.md).
///
/// It keeps, bounded, what the decision needs from the audio: the last `ringSeconds` of both channels (16-bit, for
/// the time difference of arrival) and, for `historySeconds`, the energy of every 32-ms hop of each channel (about
/// its mean), with each channel's noise floor (for the level difference). A candidate's cues are measured
/// when it arrives, while its audio is still in the ring (events are decided at most ~18 s after they end, talking
/// ~90 s later: the ring holds both). Candidates wait `decisionDelaySeconds` after their end for the other
/// channel's detection of the same sound; overlapping candidates of both channels are then decided together:
/// * a candidate whose cues point to its own channel's sleeper is kept;
/// * one whose cues point to the other sleeper is cross-talk when that sleeper's channel has a kept candidate
///   overlapping it (dropped), and otherwise a sound of that sleeper heard only on the far microphone (kept,
///   attributed to them);
/// * two kept events of one sleeper that overlap by half the shorter are one sound (the own channel's is kept),
///   and so is a late candidate against one published before.
/// Decisions less sure than the threshold fall back to detection strength: the whole group goes to the channel
/// whose detector found it with the higher probability, so an ambiguous sound is never reported twice.
///
/// Cost: the cues are computed over the candidate's hops only (at most `maxFramesPerEvent` GCC-PHAT frames, spread
/// over the event), so a quiet night costs the energy sums alone.
public struct ChannelAttributor: AnalysisConsumer {
    /// The hop of the energy history (samples at 16 kHz: 32 ms).
    public static let frameLength = 512
    /// The GCC-PHAT frame (32 ms, one hop; 64-ms frames measured no better on the simulated rooms).
    public static let gccFrameLength = 512
    public let config: ChannelSeparationConfig
    /// Seconds of stereo audio kept for the time cue, and of hop energies kept for the level cue.
    public let ringSeconds: Double
    public let historySeconds: Double
    /// The most hops of an event that GCC-PHAT reads (bounds the cost of long events).
    public let maxFramesPerEvent: Int

    /// One candidate, with its cues.
    struct Candidate {
        var event: SoundEvent
        var channel: AudioChannel
        /// Level difference primary − secondary (dB), and the noise-compensated energies.
        var levelDifferenceDB: Double
        var energy: (primary: Double, secondary: Double)
        /// Delay (samples; positive: the primary microphone heard it first) and the PHAT peak height; nil when the
        /// time cue is off or the audio has left the ring.
        var delay: (lag: Double, height: Float)?
        var decided: (side: AudioChannel, confidence: Double)?
        /// The level and time cues alone (−1…1), shared with neighbouring snores.
        var cueZ = 0.0

        func record(held: Bool) -> AttributionCandidate {
            AttributionCandidate(event: event, levelDifferenceDB: levelDifferenceDB, energyPrimary: energy.primary,
                                 energySecondary: energy.secondary, delayLag: delay?.lag, delayHeight: delay?.height,
                                 cueZ: cueZ, held: held)
        }

        init(event: SoundEvent, channel: AudioChannel, levelDifferenceDB: Double,
             energy: (primary: Double, secondary: Double), delay: (lag: Double, height: Float)?) {
            self.event = event; self.channel = channel; self.levelDifferenceDB = levelDifferenceDB
            self.energy = energy; self.delay = delay
        }

        init(_ r: AttributionCandidate, channel: AudioChannel) {
            self.init(event: r.event, channel: channel, levelDifferenceDB: r.levelDifferenceDB,
                      energy: (r.energyPrimary, r.energySecondary),
                      delay: r.delayLag.flatMap { lag in r.delayHeight.map { (lag, $0) } })
            cueZ = r.cueZ
        }
    }

    /// Recently decided snores: their start, signature and cues, for the snores after them.
    private var snoreMemory: Deque<(start: SampleTime, signature: [Float], z: Double)> = []

    private var pending: [Candidate] = []
    /// Published events of the last `historySeconds`, for late candidates of the same sound.
    private var published: Deque<SoundEvent> = []
    private var ending = false
    private var position: SampleTime = 0

    // Audio ring (both channels, 16-bit) on the timeline: sample t is at t mod capacity while t ≥ ringEnd − capacity.
    private var ring: [[Int16]]
    private let ringCapacity: Int
    private var ringEnd: SampleTime = 0
    // Hop energies: hop k covers [k·frameLength, (k+1)·frameLength).
    private var hops: Deque<HopEnergy> = []
    private var firstHop: Int64 = 0
    private var partial = (primary: 0.0, secondary: 0.0)
    private var partialHop: Int64 = 0
    private var floor = (primary: 0.0, secondary: 0.0)
    private let historyHops: Int
    private let gcc: GCCPHAT?
    private var frameL: [Float], frameR: [Float]

    /// Hops of energy history held (bounded by `historySeconds`).
    var historyCount: Int { hops.count }

    struct HopEnergy {
        var primary: Float, secondary: Float
        var floorPrimary: Float, floorSecondary: Float
    }

    public init(config: ChannelSeparationConfig, ringSeconds: Double = 120, historySeconds: Double = 300,
                maxFramesPerEvent: Int = 12) throws {
        try config.validate()
        self.config = config
        self.ringSeconds = ringSeconds
        self.historySeconds = historySeconds
        self.maxFramesPerEvent = maxFramesPerEvent
        let maxLag = config.maxLagSamples
        gcc = maxLag > 0 ? try GCCPHAT(frameLength: Self.gccFrameLength, maxLag: maxLag) : nil
        ringCapacity = gcc == nil ? 0 : Int(ringSeconds * Double(AnalysisClock.sampleRate))
        ring = [[Int16](repeating: 0, count: ringCapacity), [Int16](repeating: 0, count: ringCapacity)]
        historyHops = Int(historySeconds * Double(AnalysisClock.sampleRate)) / Self.frameLength
        frameL = [Float](repeating: 0, count: Self.gccFrameLength)
        frameR = frameL
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        switch event {
        case .sessionStarted(let info):
            position = info.timelineStart
            ringEnd = info.timelineStart
            firstHop = info.timelineStart / SampleTime(Self.frameLength)
            partialHop = firstHop
            return []
        case .audio(let block):
            guard block.channels.count >= 2 else { return [] }
            append(block)
            position = max(position, block.end)
            return decide(all: false)
        case .gap(let gap):
            position = max(position, gap.start + gap.length)
            return decide(all: false)
        case .eventCandidate(let e):
            guard let channel = e.channel else { return [.eventStarted(e), .eventEnded(e)] }
            let c = measure(e, channel: channel)
            pending.append(c)
            return [.candidateMeasured(c.record(held: false))] + (ending ? decide(all: true) : [])
        case .eventHeld(let e):
            // Measured now, while its audio is in the ring, for the journal only: a crash during the detector's hold
            // leaves a resume its cues (`resume`).
            guard let channel = e.channel else { return [] }
            return [.candidateMeasured(measure(e, channel: channel).record(held: true))]
        case .sessionEnding:
            ending = true
            return decide(all: true)
        default:
            return []
        }
    }

    // MARK: - Resume

    /// The sleepers' events a crash left undecided, decided on the cues the journal kept (`.candidateMeasured`), as the
    /// attributor decides at the end of a session.
    ///
    /// - Parameters:
    ///   - candidates: the journal's measured candidates (not `held`), in journal order; a group of them (overlapping
    ///     within `fragmentGapSeconds`) is undecided when none of its ids was published and the journal ends less
    ///     than `decisionDelaySeconds` (and 2 s) after its end.
    ///   - held: talking events the detector held that the sustained-speech rule reports, with new ids: candidates too.
    ///   - published: the events the journal published (a late candidate of the same sound is not reported again).
    ///   - position: where the journal ends.
    /// - Returns: the decided events, with their sleeper's channel.
    public static func resume(config: ChannelSeparationConfig, candidates: [AttributionCandidate],
                              held: [AttributionCandidate], published: [SoundEvent],
                              position: SampleTime) throws -> [SoundEvent] {
        var attributor = try ChannelAttributor(config: config, ringSeconds: 0)
        attributor.position = position
        let delay = AnalysisClock.samples(seconds: config.decisionDelaySeconds)
        let publishedIds = Set(published.map(\.id))
        let sorted = candidates.sorted { ($0.event.start, $0.event.id) < ($1.event.start, $1.event.id) }
        for group in groups(sorted, event: \.event) {
            let end = group.map(\.event.end).max()!
            // Two seconds' margin: the decisions an audio block brings are published after it, so the journal can end
            // on a block whose decisions went with the crash (snores 20.0–20.6 s before a crash were lost).
            let decided = group.contains { publishedIds.contains($0.event.id) }
                || position >= end + delay + AnalysisClock.samples(seconds: 2)
            for r in group {
                guard let channel = r.event.channel else { continue }
                if !decided {
                    attributor.pending.append(Candidate(r, channel: channel))
                } else if r.event.type == .snoring, let signature = r.event.signature {
                    attributor.snoreMemory.append((r.event.start, signature, r.cueZ))
                }
            }
        }
        for r in held { if let channel = r.event.channel { attributor.pending.append(Candidate(r, channel: channel)) } }
        attributor.published = Deque(published.filter { $0.channel != nil }.sorted { $0.end < $1.end })
        return attributor.decide(all: true).compactMap { if case .eventStarted(let e) = $0 { e } else { nil } }
    }

    // MARK: - Audio

    private mutating func append(_ block: AudioBlock) {
        let n = min(block.channels[0].count, block.channels[1].count)
        guard n > 0 else { return }
        // A block after a hole: the hops in between are silent, the ring's old samples there are stale.
        if block.start > ringEnd { skip(to: block.start) }
        let hop = SampleTime(Self.frameLength)
        block.channels[0].withUnsafeBufferPointer { left in
            block.channels[1].withUnsafeBufferPointer { right in
                var i = 0
                while i < n {
                    let k = (block.start + SampleTime(i)) / hop
                    if k != partialHop { closeHops(upTo: k) }
                    let end = min(n, Int((k + 1) * hop - block.start))
                    // Each piece's energy about its own mean (a DC offset is no cue; rumble is left to the floor).
                    partial.primary += Double(VectorKernels.centredEnergy(left.baseAddress! + i, count: end - i))
                    partial.secondary += Double(VectorKernels.centredEnergy(right.baseAddress! + i, count: end - i))
                    i = end
                }
                if ringCapacity > 0 { write(left, right, count: n, at: block.start) }
            }
        }
        ringEnd = max(ringEnd, block.start + SampleTime(n))
    }

    /// Copies `count` samples of each channel into the ring at timeline position `start`, in at most two runs.
    private mutating func write(_ left: UnsafeBufferPointer<Float>, _ right: UnsafeBufferPointer<Float>, count: Int,
                                at start: SampleTime) {
        let capacity = ringCapacity
        var done = max(0, count - capacity)   // a block longer than the ring: only its last samples stay
        while done < count {
            let slot = Int((start + SampleTime(done)) % SampleTime(capacity))
            let run = min(count - done, capacity - slot)
            ring[0].withUnsafeMutableBufferPointer { r in
                VectorKernels.toInt16(left.baseAddress! + done, r.baseAddress! + slot, count: run)
            }
            ring[1].withUnsafeMutableBufferPointer { r in
                VectorKernels.toInt16(right.baseAddress! + done, r.baseAddress! + slot, count: run)
            }
            done += run
        }
    }

    private mutating func skip(to t: SampleTime) {
        if ringCapacity > 0 {
            let stale = min(SampleTime(ringCapacity), t - ringEnd)
            for s in 0..<stale {
                let slot = Int((ringEnd + s) % SampleTime(ringCapacity))
                ring[0][slot] = 0; ring[1][slot] = 0
            }
        }
        ringEnd = t
        closeHops(upTo: t / SampleTime(Self.frameLength))
    }

    /// Closes the hop being summed and any empty hops before `k`.
    private mutating func closeHops(upTo k: Int64) {
        while partialHop < k {
            let e = partial
            // The noise floor follows a quieter hop at once (a fifth of the way) and rises 3 dB per 10 s otherwise.
            floor.primary = Self.track(floor.primary, e.primary)
            floor.secondary = Self.track(floor.secondary, e.secondary)
            hops.append(HopEnergy(primary: Float(e.primary), secondary: Float(e.secondary),
                                  floorPrimary: Float(floor.primary), floorSecondary: Float(floor.secondary)))
            if hops.count > historyHops { hops.removeFirst(); firstHop += 1 }
            partial = (0, 0)
            partialHop += 1
        }
    }

    static let floorRise = pow(10, 0.3 / (10 * Double(AnalysisClock.sampleRate) / Double(frameLength)))
    static func track(_ floor: Double, _ e: Double) -> Double {
        if floor <= 0 { return e }
        if e < floor { return floor + 0.2 * (e - floor) }
        return min(e, floor * floorRise)
    }

    // MARK: - Cues

    private mutating func measure(_ e: SoundEvent, channel: AudioChannel) -> Candidate {
        let hop = SampleTime(Self.frameLength)
        let first = max(e.start / hop, firstHop)
        let last = min((max(e.end, e.start + 1) + hop - 1) / hop, firstHop + Int64(hops.count))
        var sP = 0.0, sS = 0.0, rawP = 0.0, rawS = 0.0
        var ranked: [(k: Int64, excess: Double)] = []
        if first < last {
            for k in first..<last {
                let h = hops[Int(k - firstHop)]
                let eP = Double(h.primary), eS = Double(h.secondary)
                let xP = max(0, eP - Double(h.floorPrimary)), xS = max(0, eS - Double(h.floorSecondary))
                sP += xP; sS += xS; rawP += eP; rawS += eS
                ranked.append((k, xP + xS))
            }
        }
        // Noise-compensated energies when the event stands above the floor; the raw ones otherwise.
        let useRaw = sP + sS <= 1e-12
        let energy = useRaw ? (rawP, rawS) : (sP, sS)
        let ld = 10 * log10((energy.0 + 1e-12) / (energy.1 + 1e-12))
        var candidate = Candidate(event: e, channel: channel, levelDifferenceDB: max(-60, min(60, ld)),
                                  energy: (energy.0, energy.1), delay: nil)
        if let gcc, ringCapacity > 0 {
            let oldest = ringEnd - SampleTime(ringCapacity)
            // The hops above the noise floor and within 12 dB of the event's loudest (quieter ones carry the room's
            // noise more than the event), spread evenly over the event rather than only its loudest part: where two
            // sleepers overlap, the stretches where one sounds alone carry the decisive delay.
            let inRing = ranked.filter { $0.k * hop >= oldest && $0.k * hop + SampleTime(Self.gccFrameLength) <= ringEnd }
            let loudest = inRing.map(\.excess).max() ?? 0
            let audible = inRing.filter { $0.excess > 0 && $0.excess >= loudest / 16 }
            let step = max(1, (audible.count + maxFramesPerEvent - 1) / maxFramesPerEvent)
            let frames = stride(from: 0, to: audible.count, by: step).map { audible[$0] }
            gcc.reset()
            gcc.resetNoise()
            // The background just before the event (its quietest hops in the preceding 5 s): the frequencies where
            // it is as loud as the event do not vote (another sleeper's breathing, a fan).
            let before = SampleTime(5 * AnalysisClock.sampleRate)
            let quietFirst = max(firstHop, (e.start - before) / hop), quietLast = e.start / hop - 1
            if config.snrWeighting, quietFirst < quietLast {
                let quiet = (quietFirst..<quietLast).filter {
                    $0 * hop >= oldest && $0 * hop + SampleTime(Self.gccFrameLength) <= min(ringEnd, e.start)
                }.sorted { a, b in
                    let ha = hops[Int(a - firstHop)], hb = hops[Int(b - firstHop)]
                    return (ha.primary + ha.secondary, a) < (hb.primary + hb.secondary, b)
                }.prefix(Self.noiseFrames)
                for k in quiet { withFrame(at: k * hop) { gcc.accumulateNoise(left: $0, right: $1) } }
            }
            for f in frames {
                // Louder hops weigh more (amplitude over the loudest's), each still whitened.
                withFrame(at: f.k * hop) {
                    gcc.accumulate(left: $0, right: $1, weight: Float((f.excess / loudest).squareRoot()))
                }
            }
            if gcc.totalWeight > 0 { candidate.delay = Self.peak(gcc.correlation(), maxLag: gcc.maxLag) }
        }
        candidate.cueZ = score(candidate, strength: (0, 0), cuesOnly: true).z
        return candidate
    }

    /// Copies the GCC frame starting at `start` out of the ring and hands both channels to `body`.
    private mutating func withFrame(at start: SampleTime,
                                    _ body: (UnsafePointer<Float>, UnsafePointer<Float>) -> Void) {
        for i in 0..<Self.gccFrameLength {
            let slot = Int((start + SampleTime(i)) % SampleTime(ringCapacity))
            frameL[i] = Float(ring[0][slot]) / 32767
            frameR[i] = Float(ring[1][slot]) / 32767
        }
        frameL.withUnsafeBufferPointer { l in frameR.withUnsafeBufferPointer { r in body(l.baseAddress!, r.baseAddress!) } }
    }

    /// Background frames read before each event (for the SNR weighting of its GCC-PHAT).
    static let noiseFrames = 12

    /// The correlation's highest peak, refined by a parabola through it and its neighbours.
    static func peak(_ r: [Float], maxLag: Int) -> (lag: Double, height: Float) {
        var best = 0
        for i in r.indices where r[i] > r[best] { best = i }
        var offset = 0.0
        if best > 0, best < r.count - 1 {
            let a = Double(r[best - 1]), b = Double(r[best]), c = Double(r[best + 1])
            let d = a - 2 * b + c
            if d < 0 { offset = max(-0.5, min(0.5, 0.5 * (a - c) / d)) }
        }
        return (Double(best - maxLag) + offset, r[best])
    }

    // MARK: - Decisions

    /// Decides the groups of overlapping candidates whose last end is `decisionDelaySeconds` behind the audio (with
    /// `all`, every group).
    private mutating func decide(all: Bool) -> [AnalysisEvent] {
        guard !pending.isEmpty else { return [] }
        pending.sort { ($0.event.start, $0.event.id) < ($1.event.start, $1.event.id) }
        let delay = AnalysisClock.samples(seconds: config.decisionDelaySeconds)
        let groups = Self.groups(pending) { $0.event }
        var out: [AnalysisEvent] = []
        var remaining: [Candidate] = []
        let context = pending
        for group in groups {
            let end = group.map(\.event.end).max()!
            if all || position >= end + delay {
                out += resolve(group, context: context)
                for c in group where c.event.type == .snoring {
                    if let signature = c.event.signature { snoreMemory.append((c.event.start, signature, c.cueZ)) }
                }
            } else {
                remaining += group
            }
        }
        pending = remaining
        let span = AnalysisClock.samples(seconds: config.signatureSeconds)
        while let first = snoreMemory.first, first.start < position - 2 * span - delay { snoreMemory.removeFirst() }
        let horizon = position - AnalysisClock.samples(seconds: historySeconds)
        while let first = published.first, first.end < horizon { published.removeFirst() }
        return out
    }

    /// `items` (sorted by start) in groups of overlapping events: each starts at most `fragmentGapSeconds` after the
    /// latest end of its group so far.
    static func groups<T>(_ items: [T], event: (T) -> SoundEvent) -> [[T]] {
        let tolerance = AnalysisClock.samples(seconds: fragmentGapSeconds)
        var groups: [[T]] = []
        var groupEnd: SampleTime = .min
        for item in items {
            let e = event(item)
            if !groups.isEmpty, e.start <= groupEnd + tolerance {
                groups[groups.count - 1].append(item)
                groupEnd = max(groupEnd, e.end)
            } else {
                groups.append([item])
                groupEnd = e.end
            }
        }
        return groups
    }

    /// The strongest detection of each channel among `group`'s candidates overlapping `c` (0: none).
    private static func strength(of c: Candidate, in group: [Candidate]) -> (primary: Double, secondary: Double) {
        var p = 0.0, s = 0.0
        for o in group where overlap(o.event, c.event) > 0 || o.event.id == c.event.id {
            if o.channel == .primary { p = max(p, o.event.probability) } else { s = max(s, o.event.probability) }
        }
        return (p, s)
    }

    /// How close another channel's detection must be to a sleeper's own to be taken as a fragment of it.
    static let fragmentGapSeconds = 1.0

    /// Whether `a` and `b` overlap or are less than `gap` apart.
    static func near(_ a: SoundEvent, _ b: SoundEvent, within gap: SampleTime) -> Bool {
        a.start < b.end + gap && b.start < a.end + gap
    }

    static func overlap(_ a: SoundEvent, _ b: SoundEvent) -> SampleTime {
        max(0, min(a.end, b.end) - max(a.start, b.start))
    }

    /// Whether `a` and `b` share at least half of the shorter one.
    static func sameSound(_ a: SoundEvent, _ b: SoundEvent) -> Bool {
        let shorter = max(1, min(a.end - a.start, b.end - b.start))
        return overlap(a, b) * 2 >= shorter
    }

    /// The side and confidence of one candidate from its cues.
    func score(_ c: Candidate, strength: (primary: Double, secondary: Double), cuesOnly: Bool = false)
        -> (z: Double, confidence: Double) {
        let w = config.settings(for: c.event.type)
        let ws = cuesOnly ? 0 : w.strength
        var sum = w.level * tanh(c.levelDifferenceDB / config.levelScaleDB) + ws * (strength.primary - strength.secondary)
        var weights = w.level + ws
        if w.time > 0, let d = c.delay {
            // A sound one microphone barely hears (15–30 dB quieter there, e.g. right at the other microphone) has
            // no delay to measure: its correlation peak is the background's. The time cue fades out over that range.
            let heard = max(0, min(1, (30 - abs(c.levelDifferenceDB)) / 15))
            weights += w.time * heard
            let path = abs(d.lag) / Double(AnalysisClock.sampleRate) * config.speedOfSound
            if path >= config.ambiguousZone {
                sum += w.time * heard * (d.lag > 0 ? 1 : -1) * min(1, Double(d.height) / config.coherenceScale)
            }
        }
        let z = weights > 0 ? sum / weights : 0
        return (z, 1 / (1 + exp(-config.confidenceSlope * abs(z))))
    }

    /// What the snores around `c` (within `signatureSeconds`: decided ones, and those still waiting) say: their
    /// level-and-time cues, each weighted by its signature's similarity to `c`'s (when positive), summed up to the
    /// weight of `pooledSnores` snores and averaged beyond, times `signatureWeight`. Bounded, so that a snore whose
    /// own cues are clear keeps its side however many similar snores of the other sleeper surround it.
    private func pooled(_ c: Candidate, context: [Candidate]) -> Double {
        guard config.signatureWeight > 0, c.event.type == .snoring, let signature = c.event.signature else { return 0 }
        let span = AnalysisClock.samples(seconds: config.signatureSeconds)
        var sum = 0.0, weights = 0.0
        for o in context where o.event.id != c.event.id && o.event.type == .snoring
            && abs(o.event.start - c.event.start) <= span {
            if let other = o.event.signature {
                let w = max(0, Self.cosine(signature, other))
                sum += w * o.cueZ; weights += w
            }
        }
        for m in snoreMemory where abs(m.start - c.event.start) <= span {
            let w = max(0, Self.cosine(signature, m.signature))
            sum += w * m.z; weights += w
        }
        return config.signatureWeight * sum / max(1, weights / Self.pooledSnores)
    }

    /// Up to this many (fully similar) neighbouring snores add their cues; beyond it their mean counts this much.
    static let pooledSnores = 4.0

    static func cosine(_ a: [Float], _ b: [Float]) -> Double {
        var dot = 0.0, na = 0.0, nb = 0.0
        for i in 0..<min(a.count, b.count) {
            dot += Double(a[i]) * Double(b[i]); na += Double(a[i] * a[i]); nb += Double(b[i] * b[i])
        }
        return na > 0 && nb > 0 ? dot / (na * nb).squareRoot() : 0
    }

    private mutating func resolve(_ group: [Candidate], context: [Candidate]) -> [AnalysisEvent] {
        var scored = group
        // Detection strength of the whole group, for the fallback: the higher probability, then the louder channel.
        let bestP = group.filter { $0.channel == .primary }.map(\.event.probability).max() ?? 0
        let bestS = group.filter { $0.channel == .secondary }.map(\.event.probability).max() ?? 0
        let energyP = group.map(\.energy.primary).reduce(0, +), energyS = group.map(\.energy.secondary).reduce(0, +)
        let strongest: AudioChannel = bestP != bestS ? (bestP > bestS ? .primary : .secondary)
            : (energyP >= energyS ? .primary : .secondary)
        var z = [Double](repeating: 0, count: scored.count)
        for i in scored.indices {
            z[i] = score(scored[i], strength: Self.strength(of: scored[i], in: group)).z + pooled(scored[i], context: context)
        }
        // One sound detected on both channels (candidates of the two channels sharing half the shorter, linked
        // transitively) is decided once, on the mean of its candidates' cues: its two detections never go to two
        // sleepers.
        var sound = Array(scored.indices)
        func root(_ i: Int) -> Int { var i = i; while sound[i] != i { i = sound[i] }; return i }
        for i in scored.indices {
            for j in scored.indices where j > i && scored[i].channel != scored[j].channel
                && Self.sameSound(scored[i].event, scored[j].event) {
                sound[root(j)] = root(i)
            }
        }
        var total: [Int: (z: Double, count: Int)] = [:]
        for i in scored.indices { total[root(i), default: (0, 0)].z += z[i]; total[root(i)]!.count += 1 }
        for i in scored.indices {
            let t = total[root(i)]!
            let mean = t.z / Double(t.count)
            let confidence = 1 / (1 + exp(-config.confidenceSlope * abs(mean)))
            let threshold = config.settings(for: scored[i].event.type).threshold
            let side: AudioChannel = confidence < threshold || mean == 0 ? strongest : (mean > 0 ? .primary : .secondary)
            scored[i].decided = (side, confidence)
        }
        // Own detections are kept; another channel's detection of a sound is dropped when the sleeper's own channel
        // has a detection overlapping it (cross-talk), and kept for that sleeper otherwise (heard only far away).
        // A far-microphone fragment of a sound (the far detector's segment reaching a little past the near one's)
        // counts as cross-talk too: within `fragmentGap` of the near detection.
        let own = scored.filter { $0.decided!.side == $0.channel }
        var kept: [Candidate] = own
        let gap = AnalysisClock.samples(seconds: Self.fragmentGapSeconds)
        for x in scored where x.decided!.side != x.channel {
            let side = x.decided!.side
            let crossTalk = own.contains { $0.channel == side && Self.near($0.event, x.event, within: gap) }
                || published.contains { $0.channel == side && Self.near($0, x.event, within: gap) }
            if !crossTalk { kept.append(x) }
        }
        // Own detections first, each side's most probable first: they are the ones kept when two are one sound.
        var chosen: [SoundEvent] = []
        for c in kept.sorted(by: { a, b in
            let ownA = a.decided!.side == a.channel, ownB = b.decided!.side == b.channel
            return ownA != ownB ? ownA : (a.event.probability, -a.event.id) > (b.event.probability, -b.event.id)
        }) {
            let side = c.decided!.side
            var e = c.event
            e.channel = side
            e.attributionConfidence = c.decided!.confidence
            if chosen.contains(where: { $0.channel == side && Self.sameSound($0, e) }) { continue }
            if published.contains(where: { $0.channel == side && Self.sameSound($0, e) }) { continue }
            chosen.append(e)
        }
        chosen.sort { ($0.start, $0.id) < ($1.start, $1.id) }
        for e in chosen { published.append(e) }
        if let trace = Self.trace {
            for (i, c) in scored.enumerated() {
                let kept = chosen.contains { $0.id == c.event.id }
                let line = "\(c.event.id)\t\(c.channel.rawValue)\t\(c.event.type.rawValue)\t\(c.event.start)\t\(c.event.end)\t"
                    + "\(c.event.probability)\t\(c.levelDifferenceDB)\t\(c.delay?.lag ?? .nan)\t\(c.delay?.height ?? .nan)\t"
                    + "\(z[i])\t\(c.decided!.side.rawValue)\t\(c.decided!.confidence)\t\(kept ? 1 : 0)\t"
                    + (c.event.signature ?? []).map { "\($0)" }.joined(separator: ",") + "\n"
                fputs(line, trace)
            }
            fflush(trace)
        }
        return chosen.flatMap { [AnalysisEvent.eventStarted($0), .eventEnded($0)] }
    }

    /// Development trace of every decision (tab-separated), to the file named by `SLEEPCYCLE_ATTRIBUTION_TRACE`
    /// (Benchmarks/Scripts/separation); nil when unset.
    nonisolated(unsafe) static let trace: UnsafeMutablePointer<FILE>? = getenv("SLEEPCYCLE_ATTRIBUTION_TRACE").flatMap {
        fopen(String(cString: $0), "a")
    }
}
