import SleepCycleBus

/// A classified segment on its way to becoming (part of) an event.
struct ClassifiedSegment: Sendable {
    var type: EventType
    var start: SampleTime
    var end: SampleTime
    var probability: Double
    var signature: [Float]?
}

/// Turns one channel's classified segments into events: merges segments of one class separated by at most the
/// class's merge gap (a cough burst → one event, an utterance → one event; snoring's gap is 0, so only the pieces
/// of one sound cut at `maxSegmentSec` make one snore), and applies the snore-bout rule
/// (a snore counts when another snore lies within `snoreBoutWindowSec`, or when it alone reaches
/// `isolatedSnoreProbability`). Event probability = duration-weighted mean of its segments' probabilities.
///
/// `enum State` per class: no pending event, or one pending event that may still grow; plus a bounded list of
/// unconfirmed snores (at most the snores of one bout window).
struct EventAssembler: Sendable {
    struct Pending: Sendable {
        var start: SampleTime, end: SampleTime
        var weightedProbability: Double, weight: Double
        var signature: [Float]?
    }
    let configuration: DetectorConfiguration
    private var pending: [EventType: Pending] = [:]
    private var unconfirmedSnores: [ClassifiedSegment] = []
    private var lastConfirmedSnoreEnd: SampleTime? = nil

    init(configuration: DetectorConfiguration) { self.configuration = configuration }

    private func gap(_ type: EventType) -> SampleTime {
        AnalysisClock.samples(seconds: configuration.mergeGapSec[type] ?? 0)
    }

    /// Adds a classified segment; returns the finished (type, start, end, probability, signature) events.
    mutating func add(_ s: ClassifiedSegment) -> [ClassifiedSegment] {
        var out = advance(to: s.start)
        if s.type == .snoring {
            // A piece that continues the one before it (a sound cut at `maxSegmentSec`) is the same snore: it joins
            // that snore, confirmed or waiting, and is no partner of it; up to `longestSnore`, so that a bout whose
            // breathing never falls back under the off threshold is still reported snore by snore.
            if let p = pending[.snoring], s.start <= p.end, s.end - p.start <= Self.longestSnore {
                out += merge(s)
                lastConfirmedSnoreEnd = s.end
                return out
            }
            if let last = unconfirmedSnores.last, s.start <= last.end, s.end - last.start <= Self.longestSnore {
                unconfirmedSnores[unconfirmedSnores.count - 1] = Self.joined(last, s)
                return out
            }
            let window = AnalysisClock.samples(seconds: configuration.snoreBoutWindowSec)
            let partnered = unconfirmedSnores.contains { s.start - $0.end <= window }
                || (lastConfirmedSnoreEnd.map { s.start - $0 <= window } ?? false)
            if partnered || s.probability >= configuration.isolatedSnoreProbability {
                let confirmed = unconfirmedSnores.filter { s.start - $0.end <= window } + [s]
                unconfirmedSnores.removeAll()
                for c in confirmed { out += merge(c) }
                lastConfirmedSnoreEnd = s.end
            } else {
                unconfirmedSnores.append(s)
            }
        } else {
            out += merge(s)
        }
        return out
    }

    /// Emits pending events whose merge gap has passed by `now`; drops unpartnered snores whose window passed.
    mutating func advance(to now: SampleTime) -> [ClassifiedSegment] {
        let window = AnalysisClock.samples(seconds: configuration.snoreBoutWindowSec)
        unconfirmedSnores.removeAll { now - $0.end > window }
        var out: [ClassifiedSegment] = []
        for type in EventType.allCases {
            if let p = pending[type], now - p.end > gap(type) {
                out.append(finish(type, p)); pending[type] = nil
            }
        }
        return out
    }

    /// Emits everything still pending (unpartnered low-probability snores are dropped).
    mutating func flush() -> [ClassifiedSegment] {
        unconfirmedSnores.removeAll()
        var out: [ClassifiedSegment] = []
        for type in EventType.allCases { if let p = pending[type] { out.append(finish(type, p)) } }
        pending.removeAll()
        return out
    }

    private mutating func merge(_ s: ClassifiedSegment) -> [ClassifiedSegment] {
        var out: [ClassifiedSegment] = []
        let w = Double(s.end - s.start)
        if var p = pending[s.type] {
            if s.start - p.end <= gap(s.type)
                && (s.type != .snoring || s.end - p.start <= Self.longestSnore) {
                p.end = max(p.end, s.end); p.weightedProbability += s.probability * w; p.weight += w
                pending[s.type] = p
                return out
            }
            out.append(finish(s.type, p))
        }
        pending[s.type] = Pending(start: s.start, end: s.end, weightedProbability: s.probability * w, weight: w,
                                  signature: s.signature)
        return out
    }

    /// Joined pieces make one snore up to this long (seconds; the segment cut before 2-s pieces).
    static let longestSnoreSec = 5.0
    private static let longestSnore = AnalysisClock.samples(seconds: longestSnoreSec)

    /// One snore of two pieces: the first's start and signature, the duration-weighted probability.
    private static func joined(_ a: ClassifiedSegment, _ b: ClassifiedSegment) -> ClassifiedSegment {
        let wa = Double(a.end - a.start), wb = Double(b.end - b.start)
        return ClassifiedSegment(type: a.type, start: a.start, end: max(a.end, b.end),
                                 probability: wa + wb > 0 ? (a.probability * wa + b.probability * wb) / (wa + wb) : a.probability,
                                 signature: a.signature)
    }

    private func finish(_ type: EventType, _ p: Pending) -> ClassifiedSegment {
        ClassifiedSegment(type: type, start: p.start, end: p.end,
                          probability: p.weight > 0 ? p.weightedProbability / p.weight : 0, signature: p.signature)
    }
}
