import Foundation
import SleepCycleBus
import SleepCycleFormats

/// `AnalysisResult` reads back the JSON it writes (`jsonString()`, the `analyze --format json` contract), and
/// encodes to the same keys and values with any `JSONEncoder`: timestamps as the contract's UTC strings, numbers
/// rounded as `jsonString()` rounds them. What the JSON does not hold comes back as: event ids numbered in order,
/// `analysedSamples` from the start and end times, `droppedObserverItems` 0.
extension AnalysisResult: Codable {
    public init(from decoder: any Decoder) throws {
        let dto = try ResultJSON(from: decoder)
        func date(_ text: String, _ key: String) throws -> Date {
            guard let t = ISO8601Time(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(key): '\(text)' is not an ISO 8601 time"))
            }
            return t.date
        }
        guard let id = UUID(uuidString: dto.sessionId) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "sessionId is not a UUID"))
        }
        sessionId = id
        startTime = try date(dto.startTime, "startTime")
        endTime = try date(dto.endTime, "endTime")
        utcOffsetSeconds = try dto.utcOffset.map { text in
            guard let t = ISO8601Time("2000-01-01T00:00:00" + (text == "Z" ? "+00:00" : text)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "utcOffset '\(text)' is not ±HH:MM"))
            }
            return t.utcOffsetSeconds
        } ?? 0
        source = SourceSummary(path: dto.source.path, sampleRate: dto.source.sampleRate, channels: dto.source.channels,
                               durationSec: dto.source.durationSec)
        events = try dto.events.enumerated().map { index, e in
            guard let type = EventType(rawValue: e.type), let origin = EventSource(rawValue: e.source) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "event \(index): unknown type or source"))
            }
            var event = SleepEvent(SoundEvent(id: index, type: type, start: 0, end: 0, probability: e.probability,
                                              source: origin, channel: try e.channel.map(Self.channel),
                                              signature: e.signature),
                                   clock: AnalysisClock(start: .distantPast), sessionId: id)
            event.start = try date(e.start, "events[\(index)].start")
            event.end = try date(e.end, "events[\(index)].end")
            event.snorer = e.snorer
            event.attributionConfidence = e.attributionConfidence
            event.levelDb = e.levelDb
            if let path = e.clip {
                event.clip = EventClip(path: path, start: try date(e.clipStart ?? e.start, "events[\(index)].clipStart"),
                                       end: try date(e.clipEnd ?? e.end, "events[\(index)].clipEnd"),
                                       startFrame: e.clipStartFrame ?? 0)
            }
            return event
        }
        breathingRates = try dto.breathingRates.map { b in
            BreathingRate(timestamp: try date(b.timestamp, "breathingRates.timestamp"), bpm: b.bpm,
                          confidence: b.confidence, sessionId: id, channel: try b.channel.map(Self.channel))
        }
        sleepStageIntervals = try dto.sleepStageIntervals.map { s in
            guard let stage = SleepStage(rawValue: s.stage) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "unknown stage '\(s.stage)'"))
            }
            return SleepStageInterval(stage: stage, start: try date(s.start, "stage start"), end: try date(s.end, "stage end"))
        }
        var stats = SleepSessionStatistics()
        let st = dto.statistics
        stats.totalSleepDuration = st.totalSleepDuration
        stats.sleepOnsetLatency = st.sleepOnsetLatency
        stats.sleepEfficiency = st.sleepEfficiency
        stats.finalWakeTime = try st.finalWakeTime.map { try date($0, "finalWakeTime") }
        stats.numberOfAwakenings = st.numberOfAwakenings
        stats.snoreTime = st.snoreTime
        stats.snoreSessions = try st.snoreSessions.map {
            DateInterval(start: try date($0.start, "snoreSessions.start"), end: try date($0.end, "snoreSessions.end"))
        }
        for (key, value) in st.sleepStageDurations {
            if let stage = SleepStage(rawValue: key) { stats.sleepStageDurations[stage] = value }
        }
        stats.timeInBed = st.timeInBed ?? 0
        stats.sleepPeriodTime = st.sleepPeriodTime ?? 0
        stats.wakeAfterSleepOnset = st.wakeAfterSleepOnset ?? 0
        stats.remLatency = st.remLatency
        for (key, value) in st.sleepStagePercentages ?? [:] {
            if let stage = SleepStage(rawValue: key) { stats.sleepStagePercentages[stage] = value }
        }
        stats.snoreScore = st.snoreScore ?? 0
        statistics = stats
        var audio = AudioStatistics()
        audio.healthIntervals = try dto.audioStatistics.healthIntervals.map { h in
            guard let status = AudioHealthStatus(rawValue: h.status) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "unknown health status '\(h.status)'"))
            }
            return AudioHealthUpdate(status: status, start: try date(h.start, "health start"),
                                     end: try date(h.end, "health end"), channel: try h.channel.map(Self.channel))
        }
        audio.gapCount = dto.audioStatistics.gapCount
        audio.gapDuration = dto.audioStatistics.gapDuration
        audio.overrunCount = dto.audioStatistics.overrunCount
        audioStatistics = audio
        loudness = try (dto.loudness ?? []).map {
            LoudnessEpoch(start: try date($0.start, "loudness.start"), end: try date($0.end, "loudness.end"),
                          levelDb: $0.levelDb)
        }
        analysedSamples = AnalysisClock.samples(seconds: endTime.timeIntervalSince(startTime))
        droppedObserverItems = 0
        smartAlarm = try dto.smartAlarm.map { a in
            SmartAlarmResult(alarmTime: try date(a.alarmTime, "alarmTime"), windowStart: try date(a.windowStart, "windowStart"),
                             firedAt: try a.firedAt.map { try date($0, "firedAt") }, rule: a.rule)
        }
        heart = try dto.heart.map { h in
            let summary = h.summary
            let start = startTime.addingTimeInterval(Double(summary.start_ms ?? 0) / 1000)
            let end = startTime.addingTimeInterval(Double(summary.end_ms ?? 0) / 1000)
            return HeartReport(start: start, end: end, summary: summary.metrics, frames: try h.frames.map {
                HeartReport.Frame(start: try date($0.start, "heart frame start"), end: try date($0.end, "heart frame end"),
                                  metrics: $0.metrics.metrics)
            })
        }
        warnings = (dto.warnings ?? []).map { AnalysisWarning(AnalysisWarning.Code($0.code), $0.message) }
    }

    public func encode(to encoder: any Encoder) throws {
        func t(_ d: Date) -> String { ISO8601Time.utcString(from: d) }
        func r(_ x: Double, _ decimals: Int) -> Double {
            Double(AnalysisResult.fixed(x, decimals)) ?? 0
        }
        let stereo = source.channels > 1
        let dto = ResultJSON(
            sessionId: sessionId.uuidString, startTime: t(startTime), endTime: t(endTime),
            utcOffset: Self.offsetText(utcOffsetSeconds),
            source: .init(path: source.path, sampleRate: source.sampleRate, channels: source.channels,
                          durationSec: r(source.durationSec, 3)),
            events: events.map { e in
                .init(type: e.type.rawValue, start: t(e.start), end: t(e.end), probability: r(e.probability, 3),
                      source: e.source.rawValue,
                      channel: stereo || e.channel != nil ? (e.channel ?? .primary).name : nil,
                      signature: e.type == .snoring ? e.signature?.map { Float(r(Double($0), 5)) } : nil,
                      snorer: e.snorer, attributionConfidence: e.attributionConfidence.map { r($0, 3) },
                      levelDb: e.levelDb.map { r($0, 2) },
                      clip: e.clip?.path, clipStart: e.clip.map { t($0.start) }, clipEnd: e.clip.map { t($0.end) },
                      clipStartFrame: e.clip?.startFrame)
            },
            breathingRates: breathingRates.map { b in
                .init(timestamp: t(b.timestamp), bpm: r(b.bpm, 2), confidence: r(b.confidence, 3),
                      channel: stereo || b.channel != nil ? (b.channel ?? .primary).name : nil)
            },
            sleepStageIntervals: sleepStageIntervals.map { .init(stage: $0.stage.rawValue, start: t($0.start), end: t($0.end)) },
            statistics: .init(
                totalSleepDuration: r(statistics.totalSleepDuration, 3), sleepOnsetLatency: r(statistics.sleepOnsetLatency, 3),
                sleepEfficiency: r(statistics.sleepEfficiency, 4), finalWakeTime: statistics.finalWakeTime.map(t),
                numberOfAwakenings: statistics.numberOfAwakenings, snoreTime: r(statistics.snoreTime, 3),
                snoreSessions: statistics.snoreSessions.map { .init(start: t($0.start), end: t($0.end)) },
                sleepStageDurations: Dictionary(uniqueKeysWithValues: SleepStage.allCases.map {
                    ($0.rawValue, r(statistics.sleepStageDurations[$0] ?? 0, 3))
                }),
                timeInBed: r(statistics.timeInBed, 3), sleepPeriodTime: r(statistics.sleepPeriodTime, 3),
                wakeAfterSleepOnset: r(statistics.wakeAfterSleepOnset, 3), remLatency: statistics.remLatency.map { r($0, 3) },
                sleepStagePercentages: Dictionary(uniqueKeysWithValues: SleepStage.allCases.filter { $0 != .awake }.map {
                    ($0.rawValue, r(statistics.sleepStagePercentages[$0] ?? 0, 2))
                }),
                snoreScore: r(statistics.snoreScore, 2)),
            snorers: events.contains { $0.snorer != nil }
                ? snorers.map { .init(snorer: $0.snorer, snoreCount: $0.snoreCount, snoreTime: r($0.snoreTime, 3)) } : nil,
            smartAlarm: smartAlarm.map { .init(alarmTime: t($0.alarmTime), windowStart: t($0.windowStart),
                                               firedAt: $0.firedAt.map(t), rule: $0.rule) },
            audioStatistics: .init(
                healthIntervals: audioStatistics.healthIntervals.map {
                    .init(status: $0.status.rawValue, start: t($0.start), end: t($0.end ?? endTime), channel: $0.channel?.name)
                },
                gapCount: audioStatistics.gapCount, gapDuration: r(audioStatistics.gapDuration, 3),
                overrunCount: audioStatistics.overrunCount),
            loudness: loudness.map { .init(start: t($0.start), end: t($0.end), levelDb: r($0.levelDb, 2)) },
            heart: heart.map { h in
                func ms(_ d: Date) -> Int { Int((d.timeIntervalSince(startTime) * 1000).rounded()) }
                return HeartJSON(summary: .init(h.summary, span: (ms(h.start), ms(h.end))),
                                 frames: h.frames.map { .init(start: t($0.start), end: t($0.end), metrics: .init($0.metrics, span: nil)) })
            },
            warnings: warnings.isEmpty ? nil : warnings.map { .init(code: $0.code.rawValue, message: $0.message) })
        try dto.encode(to: encoder)
    }

    private static func channel(_ name: String) throws -> AudioChannel {
        guard let c = AudioChannel.allCases.first(where: { $0.name == name }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "unknown channel '\(name)'"))
        }
        return c
    }
}

/// The JSON contract's shape (docs/json.md), key for key; optional keys are the ones the contract leaves out when
/// they do not apply.
private struct ResultJSON: Codable {
    struct Source: Codable { var path: String; var sampleRate: Int; var channels: Int; var durationSec: Double }
    struct Event: Codable {
        var type: String, start: String, end: String, probability: Double, source: String
        var channel: String?, signature: [Float]?, snorer: Int?, attributionConfidence: Double?, levelDb: Double?
        var clip: String?, clipStart: String?, clipEnd: String?, clipStartFrame: Int64?
    }
    struct Rate: Codable { var timestamp: String; var bpm: Double; var confidence: Double; var channel: String? }
    struct Interval: Codable { var stage: String; var start: String; var end: String }
    struct Span: Codable { var start: String; var end: String }
    struct Statistics: Codable {
        var totalSleepDuration: Double, sleepOnsetLatency: Double, sleepEfficiency: Double
        var finalWakeTime: String?
        var numberOfAwakenings: Int, snoreTime: Double, snoreSessions: [Span]
        var sleepStageDurations: [String: Double]
        /// Optional when read: results stored before these statistics existed lack them.
        var timeInBed: Double?, sleepPeriodTime: Double?, wakeAfterSleepOnset: Double?, remLatency: Double?
        var sleepStagePercentages: [String: Double]?
        var snoreScore: Double?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(totalSleepDuration, forKey: .totalSleepDuration)
            try c.encode(sleepOnsetLatency, forKey: .sleepOnsetLatency)
            try c.encode(sleepEfficiency, forKey: .sleepEfficiency)
            try c.encode(finalWakeTime, forKey: .finalWakeTime)     // null when there was no sleep, as the contract says
            try c.encode(numberOfAwakenings, forKey: .numberOfAwakenings)
            try c.encode(snoreTime, forKey: .snoreTime)
            try c.encode(snoreSessions, forKey: .snoreSessions)
            try c.encode(sleepStageDurations, forKey: .sleepStageDurations)
            try c.encodeIfPresent(timeInBed, forKey: .timeInBed)
            try c.encodeIfPresent(sleepPeriodTime, forKey: .sleepPeriodTime)
            try c.encodeIfPresent(wakeAfterSleepOnset, forKey: .wakeAfterSleepOnset)
            try c.encode(remLatency, forKey: .remLatency)     // null without REM, as the contract says
            try c.encodeIfPresent(sleepStagePercentages, forKey: .sleepStagePercentages)
            try c.encodeIfPresent(snoreScore, forKey: .snoreScore)
        }
    }
    struct Snorer: Codable { var snorer: Int; var snoreCount: Int; var snoreTime: Double }
    struct Alarm: Codable {
        var alarmTime: String, windowStart: String, firedAt: String?, rule: String?
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(alarmTime, forKey: .alarmTime)
            try c.encode(windowStart, forKey: .windowStart)
            try c.encode(firedAt, forKey: .firedAt)
            try c.encode(rule, forKey: .rule)
        }
    }
    struct Health: Codable { var status: String; var start: String; var end: String; var channel: String? }
    struct Audio: Codable {
        var healthIntervals: [Health]
        var gapCount: Int, gapDuration: Double, overrunCount: Int
    }
    struct Warning: Codable { var code: String; var message: String }
    struct Loudness: Codable { var start: String; var end: String; var levelDb: Double }

    var sessionId: String, startTime: String, endTime: String
    var utcOffset: String?
    var source: Source
    var events: [Event]
    var breathingRates: [Rate]
    var sleepStageIntervals: [Interval]
    var statistics: Statistics
    var snorers: [Snorer]?
    var smartAlarm: Alarm?
    var audioStatistics: Audio
    var loudness: [Loudness]?
    var heart: HeartJSON?
    var warnings: [Warning]?
}
