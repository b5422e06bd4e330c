import DequeModule
import SleepCycleDSP

/// Turns a tiled timeline of reads at `inputRate` (what a `TimelineBuffer` hands out) into a tiled timeline
/// at the 16 kHz analysis rate, for live and injected sources whose audio is not 16 kHz.
///
/// Positions map by t ↦ round(t · 16000 / inputRate) (half up), so a run of audio [a, b) becomes
/// [map(a), map(b)) and a gap [b, c) becomes [map(b), map(c)): the output tiles exactly when the input
/// does. Each contiguous audio run goes through one streaming `Resampler` per channel (the polyphase
/// Kaiser-sinc converter of SleepCycleDSP, zero-phase, so no delay to compensate); at a gap or the end the
/// run is flushed (`Resampler.finish`, which pads with silence as if the run were followed by silence),
/// trimmed or zero-padded by at most a sample to its mapped length, and the resamplers restart. Consumer
/// side only (the capture thread never resamples).
final class TimelineResampler {
    let inputRate: Int
    let outputRate: Int
    let channels: Int
    private var resamplers: [Resampler]
    private var runStart: Int64?
    private var runEnd: Int64 = 0
    private var emitted: Int64 = 0
    private var scratch: [[Float]]

    init(inputRate: Int, channels: Int, outputRate: Int = 16_000) throws(ResamplerError) {
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        resamplers = try (0..<channels).map { _ throws(ResamplerError) in
            try Resampler(inputRate: inputRate, outputRate: outputRate)
        }
        scratch = Array(repeating: [], count: channels)
    }

    /// Output position of input position `t`.
    func map(_ t: Int64) -> Int64 {
        let up = Int64(outputRate), down = Int64(inputRate)
        return (2 * t * up + down) / (2 * down)
    }

    /// Feeds one input read and returns the output reads it completes (possibly none).
    func convert(_ read: SourceRead) -> [SourceRead] {
        switch read {
        case .audio(let start, let input):
            var out: [SourceRead] = []
            if runStart != nil && start != runEnd { out += flush() }   // not contiguous: cannot happen when tiled
            if runStart == nil { runStart = start; runEnd = start; emitted = 0 }
            for c in 0..<channels {
                scratch[c].removeAll(keepingCapacity: true)
                resamplers[c].process(input[c], into: &scratch[c])
            }
            runEnd = start + Int64(input[0].count)
            out += emitScratch(limit: nil)
            return out
        case .gap(let start, let length, let reason):
            var out = flush()
            let a = map(start), b = map(start + length)
            if b > a { out.append(.gap(start: a, length: b - a, reason: reason)) }
            return out
        case .end:
            return flush() + [.end]
        }
    }

    /// Ends the current audio run: flushes the resamplers and fixes the run's length to its mapped length.
    private func flush() -> [SourceRead] {
        guard let s = runStart else { return [] }
        for c in 0..<channels {
            scratch[c].removeAll(keepingCapacity: true)
            resamplers[c].finish(into: &scratch[c])
        }
        let target = map(runEnd) - map(s)
        let missing = Int(max(0, target - emitted - Int64(scratch[0].count)))
        if missing > 0 { for c in 0..<channels { scratch[c] += [Float](repeating: 0, count: missing) } }
        let out = emitScratch(limit: target)
        for r in resamplers { r.reset() }
        runStart = nil
        emitted = 0
        return out
    }

    /// Emits what the resamplers produced as one `.audio` read (at most `limit` frames in the run).
    private func emitScratch(limit: Int64?) -> [SourceRead] {
        guard let s = runStart else { return [] }
        var n = Int64(scratch[0].count)
        if let limit { n = min(n, limit - emitted) }
        guard n > 0 else { return [] }
        let block = scratch.map { Array($0.prefix(Int(n))) }
        let read = SourceRead.audio(start: map(s) + emitted, channels: block)
        emitted += n
        return [read]
    }
}

/// The consumer side of a live or injected source: reads its `TimelineBuffer` and, when the source rate is
/// not 16 kHz, converts through a `TimelineResampler`. Used by one analysis thread at a time.
final class AnalysisRateReader: @unchecked Sendable {
    private let timeline: TimelineBuffer
    private let resampler: TimelineResampler?
    private var pending = Deque<SourceRead>()
    /// Receives each timeline read's audio at the input rate (`AudioSource.setSourceRateTap`), as 16-bit values when
    /// `integerBits` ≤ 16.
    var tap: SourceRateTap?
    var integerBits: Int?

    /// - Throws: `ResamplerError` when `inputRate` is outside the resampler's range.
    init(timeline: TimelineBuffer, inputRate: Int, channels: Int) throws(ResamplerError) {
        self.timeline = timeline
        resampler = inputRate == 16_000 ? nil : try TimelineResampler(inputRate: inputRate, channels: channels)
    }

    /// The next 16 kHz read, waiting for the timeline as needed.
    func next() -> SourceRead {
        guard let resampler else { return tapped(timeline.next()) }
        if timeline.isClosed { return .end }
        while pending.isEmpty {
            let input = tapped(timeline.next())
            pending.append(contentsOf: resampler.convert(input))
            if case .end = input, pending.isEmpty { return .end }
        }
        let out = pending.removeFirst()
        if case .end = out { pending.append(.end) }   // stay ended
        return out
    }

    /// Hands `read`'s audio to the tap and returns it.
    private func tapped(_ read: SourceRead) -> SourceRead {
        if let tap, case .audio(let start, let channels) = read {
            let samples = PlanarSamples.converting(channels, integerBits: integerBits)
            tap(SourceRateAudio(start: start, samples: samples))
        }
        return read
    }
}
