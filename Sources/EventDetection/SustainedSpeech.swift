import SleepCycleBus

/// Sustained speech is not sleep talk: a TV, a radio or people talking in the room fill minutes with speech, sleep
/// talk comes in utterances of seconds. The gate holds one channel's talking events until `window` after their end
/// and drops an event when talking events (its own included) cover at least `share` of the span from `window`
/// before its start to its end AND of the span from its start to `window` after its end: speech on both sides
/// (`DetectorConfiguration.sustainedSpeechWindowSec` / `…Share`). An utterance next to where the TV starts or
/// stops has speech on one side only and is kept: so are the programme's first and last utterances.
///
/// `enum State`: held events (finished, not yet decided; at most those of one window) and the recent talking
/// events that a held or later event's span can still reach (those ending within about three windows of the
/// clock): bounded by the night's speech per window, not by its length.
struct SustainedSpeechGate: Sendable {
    let window: SampleTime
    let share: Double
    private var held: [ClassifiedSegment] = []
    private var recent: [(start: SampleTime, end: SampleTime)] = []

    init(windowSec: Double, share: Double) {
        window = AnalysisClock.samples(seconds: windowSec)
        self.share = share
    }

    /// A finished talking event: held until its span is known.
    mutating func hold(_ event: ClassifiedSegment) {
        held.append(event)
        recent.append((event.start, event.end))
    }

    /// A talking event already decided (a resume's journal): it counts towards the speech around held events.
    mutating func know(_ event: ClassifiedSegment) {
        recent.append((event.start, event.end))
    }

    /// The held events whose span ended by `now`, without those inside sustained speech.
    mutating func release(upTo now: SampleTime) -> [ClassifiedSegment] {
        var ready = 0
        while ready < held.count, now - held[ready].end >= window { ready += 1 }
        let out = held.prefix(ready).filter(isReported)
        held.removeFirst(ready)
        // An event still to come may have started before `now` (the assembler may hold one open), but not more than
        // two windows before it unless it is itself longer than that: such an event covers at least two thirds of
        // both its spans by itself, so the talk forgotten here cannot change its fate at shares up to 2/3.
        let horizon = min(held.first?.start ?? now, now - 2 * window) - window
        recent.removeAll { $0.end < horizon }
        return out
    }

    /// Every held event, decided on what is known (end of the audio, or a gap in it).
    mutating func flush() -> [ClassifiedSegment] {
        let out = held.filter(isReported)
        held.removeAll()
        recent.removeAll()
        return out
    }

    private func isReported(_ event: ClassifiedSegment) -> Bool {
        func covered(_ a: SampleTime, _ b: SampleTime) -> Bool {
            var sum: SampleTime = 0
            for r in recent { sum += max(0, min(b, r.end) - max(a, r.start)) }
            return Double(sum) >= share * Double(b - a)
        }
        return !(covered(event.start - window, event.end) && covered(event.start, event.end + window))
    }
}
