import Foundation
import SleepCycleBus
import SleepCycleDSP
import SleepCycleStore
import SleepCycleFormats
import AudioClips

extension NightStore {
    /// A stored night's result: the stored one for a complete night; for a night being recorded or interrupted,
    /// the result of its journal so far (replayed into a pipeline that then ends where the journal ends: the
    /// whole-night staging pass and the statistics over the audio analysed until then). `wearableKey` opens the
    /// journal's encrypted wearable readings; without it they are left out, with a warning.
    ///
    /// - Throws: `StoreError` `.damaged` (naming the store and the night) when its stored result, header or journal
    ///   cannot be read, or gives a night that ends before it starts or lasts longer than `StoredNight.longestSpan`.
    public func analysisResult(of night: StoredNight, wearableKey: ClipKey? = nil) throws -> AnalysisResult {
        if night.state == .complete, let data = try result(of: night.id) {
            let result = try decoded(night, "its result") { try JSONDecoder().decode(AnalysisResult.self, from: data) }
            try checkSpan(of: result, night: night)
            return result
        }
        return try replayed(night, wearableKey: wearableKey).result
    }

    /// A stored night's result as `sessions show` prints it: one session, or for a two-sleeper night a session per
    /// sleeper (`SeparatedAnalysisResult`).
    ///
    /// - Throws: as `analysisResult(of:wearableKey:)`.
    public func nightResult(of night: StoredNight, wearableKey: ClipKey? = nil) throws -> NightResult {
        let header = try header(of: night)
        guard let separation = header.channelSeparation else {
            return .one(try analysisResult(of: night, wearableKey: wearableKey))
        }
        if night.state == .complete, let data = try result(of: night.id) {
            let two = try decoded(night, "its result") { try SeparatedAnalysisResult(json: data, config: separation) }
            for session in two.sessions { try checkSpan(of: session, night: night) }
            return .two(two)
        }
        let (result, pipeline) = try replayed(night, wearableKey: wearableKey)
        return .two(pipeline.separatedResult(from: result)!)
    }

    /// A night's resume header (what `record --resume` and the replay of its journal build the pipeline from).
    ///
    /// - Throws: `.damaged` when it cannot be read, its start is out of `StoredNight.timeRange`, or its framing is
    ///   one no pipeline is built with (the error would otherwise read as a bug).
    public func header(of night: StoredNight) throws(StoreError) -> NightHeader {
        let header = try decoded(night, "its resume header") { try JSONDecoder().decode(NightHeader.self, from: night.header) }
        guard StoredNight.timeRange.contains(header.start.timeIntervalSince1970) else {
            throw damaged(night, "its resume header's start is out of range")
        }
        do {
            try FeatureAnalyzer.validate(frameLength: header.frameLength, hopLength: header.hopLength,
                                         sampleRate: AnalysisClock.sampleRate)
        } catch {
            throw damaged(night, "its resume header's settings are invalid: \(error)")
        }
        return header
    }

    /// A night's journal as records to replay, with the encrypted wearable readings opened by `key` (those it
    /// cannot open without a key are counted in `unread`), the position the journal reached and its last chunk's
    /// sequence number.
    ///
    /// - Throws: `.damaged` when a chunk cannot be read, or its position is negative or further than
    ///   `StoredNight.longestSpan` into the night (the replay sizes the night's epochs by it); a wrong key's error.
    func journalReplay(of night: StoredNight, key: ClipKey?) throws
        -> (replay: NightReplay, unread: Int, lastSequence: Int64?) {
        let chunks = try journal(of: night.id)
        let decoder = JSONDecoder()
        let records = try decoded(night, "its journal") {
            try chunks.flatMap { try decoder.decode([JournalRecord].self, from: $0.records) }
        }
        let position = chunks.last?.position ?? 0
        guard chunks.allSatisfy({ $0.position >= 0 }),
              Double(position) <= StoredNight.longestSpan * Double(AnalysisClock.sampleRate) else {
            throw damaged(night, "its journal's position is out of range")
        }
        do {
            let (opened, unread) = try WearableSealing.open(records, key: key)
            let replay = NightReplay(records: opened, position: position,
                                     separation: try header(of: night).channelSeparation)
            return (replay, unread, chunks.last?.sequence)
        } catch SleepAnalysisEngineError.unsupportedConfiguration(let why) {
            throw SleepAnalysisEngineError.unsupportedConfiguration("\(MessageText.path(path)): night "
                + "\(night.id.uuidString): \(why)")
        }
    }

    /// The journal of a night being recorded or interrupted, replayed into the pipeline it ran, which then ends where
    /// the journal ends.
    private func replayed(_ night: StoredNight, wearableKey: ClipKey?) throws
        -> (result: AnalysisResult, pipeline: AnalysisPipeline) {
        let header = try header(of: night)
        let (replay, unread, _) = try journalReplay(of: night, key: wearableKey)
        var options = PipelineOptions()
        options.frameLength = header.frameLength
        options.hopLength = header.hopLength
        options.eventDetection = header.eventDetection
        options.alarm = header.alarm
        options.channelSeparation = header.channelSeparation
        let format = SourceFormat(sampleRate: header.sourceSampleRate, channelCount: header.sourceChannels,
                                  analysisChannelCount: header.analysisChannels, frameCount: nil)
        let info = SessionInfo(id: header.sessionId, clock: AnalysisClock(start: header.start),
                               sourceSampleRate: header.sourceSampleRate, channelCount: header.sourceChannels)
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: header.sourceName, options: options,
                                            resuming: replay)
        var result = pipeline.finish()
        result.utcOffsetSeconds = header.utcOffsetSeconds
        if unread > 0 {
            result.warnings.append(AnalysisWarning(.wearableEncrypted, "\(unread) wearable readings of this night are "
                + "encrypted and were left out (give their key: --wearable-key)"))
        }
        return (result, pipeline)
    }

    /// `decode()`'s value; any error it throws means the stored bytes are not what sleepcycle wrote: `.damaged`.
    private func decoded<T>(_ night: StoredNight, _ what: String, _ decode: () throws -> T) throws(StoreError) -> T {
        do { return try decode() } catch {
            throw damaged(night, "\(what) cannot be read: \(Self.reason(error))")
        }
    }

    /// A stored result's times as the reports assume them: an end not before the start, within
    /// `StoredNight.longestSpan` of it (the per-epoch table and the charts are sized by the span).
    private func checkSpan(of result: AnalysisResult, night: StoredNight) throws(StoreError) {
        let span = result.endTime.timeIntervalSince(result.startTime)
        guard span >= 0 else { throw damaged(night, "its result ends before it starts") }
        guard span <= StoredNight.longestSpan else {
            throw damaged(night, "its result lasts more than \(Int(StoredNight.longestSpan / 86_400)) days")
        }
    }

    private func damaged(_ night: StoredNight, _ problem: String) -> StoreError {
        StoreError(damaged: DamagedNight(id: night.id.uuidString, problem: problem), path: path)
    }

    /// A decoding error in a few words (its key path and what was wrong), on one line.
    static func reason(_ error: any Error) -> String {
        func at(_ context: DecodingError.Context) -> String {
            context.codingPath.isEmpty ? "" : " at " + context.codingPath.map {
                $0.intValue.map { "[\($0)]" } ?? $0.stringValue
            }.joined(separator: ".")
        }
        let text: String
        switch error {
        case DecodingError.keyNotFound(let key, let context): text = "'\(key.stringValue)' is missing" + at(context)
        case DecodingError.valueNotFound(_, let context): text = "a value is missing" + at(context)
        case DecodingError.typeMismatch(_, let context): text = "a value is of the wrong type" + at(context)
        case DecodingError.dataCorrupted(let context): text = context.debugDescription + at(context)
        default: text = "not valid JSON"
        }
        return String(text.split(whereSeparator: \.isNewline).joined(separator: " ").prefix(200))
    }
}

/// A stored night's result: one session, or one per sleeper.
public enum NightResult: Sendable {
    case one(AnalysisResult)
    case two(SeparatedAnalysisResult)

    public func jsonString() -> String {
        switch self { case .one(let r): r.jsonString(); case .two(let r): r.jsonString() }
    }

    public func textSummary() -> String {
        switch self { case .one(let r): r.textSummary(); case .two(let r): r.textSummary() }
    }
}
