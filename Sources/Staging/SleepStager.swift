import Foundation
import SleepCycleBus

/// Sleep staging as a bus consumer: 30-s epochs, `awake / light / deep / rem`.
///
/// Two outputs, documented in docs/0007-staging-statistics-alarm.md:
/// * **online** — when the stream clock passes the end of an epoch (plus `decisionLagSeconds`), the epoch is
///   decided causally (model inputs from the epochs so far, context windows truncated at the present, HMM forward
///   filter) and published as `.sleepStage(StageEpoch)`; also kept in `onlineEpochs`.
/// * **final** — at `.sessionEnding` the whole night is re-staged with full context and a Viterbi pass
///   (`StagingModel.stages(for:)`), kept in `finalEpochs` / `finalIntervals` for the result's
///   `sleepStageIntervals`, and published as `.sleepStageRevised` epochs, which replace the online decisions in the
///   result while `sleepStageStream` (fed by `.sleepStage`) stays causal.
///
/// Model inputs from the bus (see `WalchProxies`): `count` from accelerometer `.motion` samples when any arrive,
/// otherwise the seconds of movement, talking and coughing events per epoch; `hr` from the heart session's `.heartFrame`s;
/// `time_hours` and `cosine` from the epoch's time since the session started. Snoring is not a model input (no
/// training data has it); an epoch with at least `snoreSleepSeconds` of snoring that the model calls awake is
/// scored light (a rule, not learned). `.breathingRate` estimates are averaged per epoch (`EpochInputs`) but
/// not used by the model, which was trained without them.
///
/// Epochs without usable audio — at least half of the epoch flatline or missing on every channel, from
/// `.healthChanged` — and without a wearable sample are not scored at all (no `StageEpoch`): a dead or muted
/// microphone says nothing about sleep, and a digitally silent night must not come out as a night of sleep.
/// Heart-rate and motion samples before the session start are ignored.
public struct SleepStager: AnalysisConsumer, Sendable {
    public struct Configuration: Sendable {
        public var epochSeconds: Double = 30
        /// Extra stream time waited after an epoch ends before deciding it, so late event detections count. The
        /// event detector publishes an event up to ~18 s after it ends (a segment of up to 5 s, its context stage's
        /// 10-s look-ahead, the 1.5-s merge gap): 20 s.
        public var decisionLagSeconds: Double = 20
        /// Snoring seconds in an epoch that rule out `awake` (0 disables the rule).
        public var snoreSleepSeconds: Double = 10
        /// Online only: pseudo-epochs of zero activity added to the `count` z-score statistics, so that a
        /// restless start of the night stands out before quiet epochs have been seen (60 = 30 min).
        public var onlineQuietPriorEpochs: Int = 60
        public init() {}
    }

    /// What the stager knew about one epoch (per-epoch summaries only: memory grows with epochs, not samples).
    public struct EpochInputs: Sendable {
        public var activitySeconds = 0.0
        public var snoreSeconds = 0.0
        /// Mean accelerometer activity of the epoch's `.motion` samples.
        public var motion: Double?
        /// Mean heart rate (bpm) of the epoch, from the heart session's frames (`.heartFrame`).
        public var heartRate: Double?
        /// Mean breathing rate (breaths/min) of the epoch's `.breathingRate` estimates (not a model input).
        public var breathingRate: Double?
        /// Seconds of the epoch during which no channel had usable audio (flatline or missing input).
        public var unusableAudioSeconds = 0.0
        /// Seconds of the epoch analysed so far (30 except for the last, partial epoch).
        public var length = 0.0
        /// Whether the epoch is scored: it has usable audio for at least half its length, or a wearable sample.
        public var isScored: Bool { unusableAudioSeconds < length / 2 || heartRate != nil || motion != nil }
    }

    /// idle → running (after `.sessionStarted` or the first timed event) → finished (after `.sessionEnding`).
    public enum State: Sendable { case idle, running, finished }

    public let model: StagingModel
    public let configuration: Configuration
    public private(set) var state: State = .idle
    public private(set) var onlineEpochs: [StageEpoch] = []
    public private(set) var finalEpochs: [StageEpoch] = []
    public private(set) var epochInputs: [EpochInputs] = []

    private var intervals: [(type: EventType, start: SampleTime, end: SampleTime)] = []
    private var open: [Int: SoundEvent] = [:]
    /// Running sums per epoch index (samples may arrive before their epoch is decided).
    private var hrSums: [Int: Sum] = [:]
    private var motionSums: [Int: Sum] = [:]
    private var breathingSums: [Int: Sum] = [:]
    struct Sum: Sendable {
        var total = 0.0, count = 0
        var mean: Double? { count > 0 ? total / Double(count) : nil }
        /// `v` as the mean of `weight` values (a grouped motion sample is several readings).
        mutating func add(_ v: Double, weight: Int = 1) { total += v * Double(weight); count += weight }
    }
    private var filter = StageDecoder.ForwardFilter()
    private var clock: SampleTime = 0
    /// Analysed channels (from `.sessionStarted`) and the latest health status of each that reported one.
    private var channelCount = 1
    private var channelHealth: [AudioChannel?: AudioHealthStatus] = [:]
    /// Closed stretches with no usable audio on any channel, and the start of the open one.
    private var unusable: [(start: SampleTime, end: SampleTime)] = []
    private var unusableSince: SampleTime?

    public init(model: StagingModel, configuration: Configuration = Configuration()) {
        self.model = model
        self.configuration = configuration
    }

    /// A stager with the committed model.
    public init(configuration: Configuration = Configuration()) throws {
        self.init(model: try StagingModel.bundled(), configuration: configuration)
    }

    var epochLength: SampleTime { AnalysisClock.samples(seconds: configuration.epochSeconds) }

    /// Consecutive epochs of the same stage merged (the result's `sleepStageIntervals`).
    public var finalIntervals: [StageEpoch] { Self.merge(finalEpochs) }

    public static func merge(_ epochs: [StageEpoch]) -> [StageEpoch] {
        var out: [StageEpoch] = []
        for e in epochs {
            if let last = out.last, last.stage == e.stage, last.end == e.start { out[out.count - 1].end = e.end }
            else { out.append(e) }
        }
        return out
    }

    public mutating func handle(_ event: AnalysisEvent) -> [AnalysisEvent] {
        guard state != .finished else { return [] }
        switch event {
        case .sessionStarted(let info):
            self = SleepStager(model: model, configuration: configuration)
            channelCount = max(1, info.channelCount >= 2 ? 2 : 1)
            state = .running
            return []
        case .healthChanged(let h):
            recordHealth(h)
            return []
        case .audio(let block): return advance(to: block.end)
        case .gap(let gap):
            // No audio at all: unusable from its start, known now. Audio health reports the same hole as missing
            // input only after the stager has seen the gap (its outputs follow the event on the bus), too late for
            // the epochs the gap closes: a resume three hours after a crash had those three hours scored as sleep.
            if gap.length > 0 { unusable.append((gap.start, gap.start + gap.length)) }
            return advance(to: gap.start + gap.length)
        case .features(let f):
            return advance(to: f.start + SampleTime(max(f.count - 1, 0) * f.hopLength))
        case .eventStarted(let e):
            open[e.id] = e
            return []
        case .eventEnded(let e):
            open[e.id] = nil
            intervals.append((e.type, e.start, e.end))
            return []
        case .heartFrame(let f):
            // The heart session's per-epoch heart rate (after its artefact correction), not the raw readings.
            guard f.intervalStart >= 0, let bpm = f.intervalHrMeanBpm else { return [] }
            hrSums[epochIndex(f.intervalStart), default: Sum()].add(bpm)
            return []
        case .motion(let m):
            guard m.time >= 0 else { return [] }
            motionSums[epochIndex(m.time), default: Sum()].add(m.activity, weight: m.count)
            return []
        case .breathingRate(let b):
            breathingSums[epochIndex(b.time), default: Sum()].add(b.bpm)
            return []
        case .sessionEnding(let end):
            var out = advance(to: end, final: true)
            for e in open.values { intervals.append((e.type, e.start, end)) }
            open = [:]
            state = .finished
            if !epochInputs.isEmpty {
                // Re-collect inputs with everything known, then the whole-night Viterbi pass.
                let n = epochInputs.count
                epochInputs = (0..<n).map { _ in EpochInputs() }
                for k in 0..<n { collect(epoch: k, until: end) }
                if let whole = try? model.stages(for: table(epochs: n)), whole.count == n {
                    finalEpochs = (0..<n).compactMap { k in
                        guard epochInputs[k].isScored else { return nil }
                        return StageEpoch(start: SampleTime(k) * epochLength,
                                          end: min(SampleTime(k + 1) * epochLength, end),
                                          stage: applyRules(whole[k], epochInputs[k]))
                    }
                } else {
                    finalEpochs = onlineEpochs
                }
                out += finalEpochs.map { .sleepStageRevised($0) }
            }
            return out
        default:
            return []
        }
    }

    /// Closes every epoch whose end (plus the decision lag) the clock has passed; at the end, the partial last one.
    private mutating func advance(to time: SampleTime, final: Bool = false) -> [AnalysisEvent] {
        if state == .idle { state = .running }
        clock = max(clock, time)
        var out: [AnalysisEvent] = []
        let lag = AnalysisClock.samples(seconds: configuration.decisionLagSeconds)
        while true {
            let k = epochInputs.count
            let start = SampleTime(k) * epochLength, end = start + epochLength
            let ready = clock >= end + lag || (final && clock > start)
            guard ready else { break }
            epochInputs.append(EpochInputs())
            collect(epoch: k, until: clock)
            guard epochInputs[k].isScored else { continue }
            let n = k + 1
            let stage: SleepStage
            // The sub-model is chosen by the columns the table actually has (heart rate only once an epoch so far
            // has a sample), so every feature it asks for is there.
            let inputs = table(epochs: n)
            if let sub = model.subModel(for: inputs.inputs) {
                let row = EpochDesign.rows(inputs, features: sub.features, available: n, rows: k..<n,
                                           quietCountPrior: configuration.onlineQuietPriorEpochs)[0]
                stage = SleepStage.modelOrder[filter.step(sub, posterior: sub.posterior(row))]
            } else {
                stage = .light
            }
            let epoch = StageEpoch(start: start, end: min(end, clock), stage: applyRules(stage, epochInputs[k]))
            onlineEpochs.append(epoch)
            out.append(.sleepStage(epoch))
        }
        return out
    }

    private func applyRules(_ stage: SleepStage, _ inputs: EpochInputs) -> SleepStage {
        if stage == .awake, configuration.snoreSleepSeconds > 0, inputs.snoreSeconds >= configuration.snoreSleepSeconds {
            return .light
        }
        return stage
    }

    /// Fills `epochInputs[k]` from the events and samples known now (open events counted up to `now`).
    private mutating func collect(epoch k: Int, until now: SampleTime) {
        let start = SampleTime(k) * epochLength, end = start + epochLength
        func overlap(_ a: SampleTime, _ b: SampleTime) -> Double {
            AnalysisClock.seconds(max(0, min(b, end) - max(a, start)))
        }
        var inputs = EpochInputs()
        let all = intervals + open.values.map { ($0.type, $0.start, now) }
        for (type, a, b) in all {
            switch type {
            case .snoring: inputs.snoreSeconds += overlap(a, b)
            case .movement, .talking, .coughing: inputs.activitySeconds += overlap(a, b)
            }
        }
        inputs.heartRate = hrSums[k]?.mean
        inputs.motion = motionSums[k]?.mean
        inputs.breathingRate = breathingSums[k]?.mean
        let epochEnd = min(end, now)
        inputs.length = AnalysisClock.seconds(max(0, epochEnd - start))
        // The union of the stretches within the epoch (a gap and the health report of the same hole overlap).
        let stretches = (unusable + (unusableSince.map { [($0, now)] } ?? []))
            .map { (max($0.start, start), min($0.end, epochEnd)) }.filter { $0.0 < $0.1 }.sorted { $0.0 < $1.0 }
        var covered: SampleTime = 0, reach = start
        for (a, b) in stretches where b > max(a, reach) {
            covered += b - max(a, reach)
            reach = b
        }
        inputs.unusableAudioSeconds = AnalysisClock.seconds(covered)
        epochInputs[k] = inputs
    }

    /// Follows each channel's health; a stretch is unusable while every channel is flatline or missing input.
    private mutating func recordHealth(_ change: AudioHealthChange) {
        channelHealth[change.channel] = change.status
        let reported = channelHealth.filter { $0.value != .healthy }.count
        let allUnusable = reported >= channelCount
        if allUnusable, unusableSince == nil {
            unusableSince = change.time
        } else if !allUnusable, let since = unusableSince {
            if change.time > since { unusable.append((since, change.time)) }
            unusableSince = nil
        }
    }

    private func epochIndex(_ t: SampleTime) -> Int { Int(max(0, t) / epochLength) }

    /// Model inputs for the first `n` epochs.
    func table(epochs n: Int) -> EpochTable {
        let inputs = epochInputs.prefix(n)
        let useMotion = !motionSums.isEmpty
        let activity = inputs.map { e in useMotion ? e.motion ?? 0 : e.activitySeconds }
        let hours = (0..<n).map { Double($0) * configuration.epochSeconds / 3600 }
        var columns: [StagingInput: [Double]] = [
            .timeHours: hours,
            .count: WalchProxies.smoothedCount(activity, epochSeconds: configuration.epochSeconds),
            .cosine: hours.map { WalchProxies.cosine(hoursSinceStart: $0) },
        ]
        if let hr = WalchProxies.heartRateFeature(inputs.map(\.heartRate), epochSeconds: configuration.epochSeconds) { columns[.hr] = hr }
        return EpochTable(columns: columns)
    }
}
