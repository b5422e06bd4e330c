import Foundation
import SleepCycleBus
import SleepCycleStore
import AudioClips

extension NightStore {
    /// A stored night's result: the stored one for a complete night; for a night being recorded or interrupted,
    /// the result of its journal so far (replayed into a pipeline that then ends where the journal ends: the
    /// whole-night staging pass and the statistics over the audio analysed until then). `wearableKey` opens the
    /// journal's encrypted wearable readings; without it they are left out, with a warning.
    public func analysisResult(of night: StoredNight, wearableKey: ClipKey? = nil) throws -> AnalysisResult {
        if night.state == .complete, let data = try result(of: night.id) {
            return try JSONDecoder().decode(AnalysisResult.self, from: data)
        }
        return try replayed(night, wearableKey: wearableKey).result
    }

    /// A stored night's result as `sessions show` prints it: one session, or for a two-sleeper night a session per
    /// sleeper (`SeparatedAnalysisResult`).
    public func nightResult(of night: StoredNight, wearableKey: ClipKey? = nil) throws -> NightResult {
        let header = try JSONDecoder().decode(NightHeader.self, from: night.header)
        guard let separation = header.channelSeparation else {
            return .one(try analysisResult(of: night, wearableKey: wearableKey))
        }
        if night.state == .complete, let data = try result(of: night.id) {
            return .two(try SeparatedAnalysisResult(json: data, config: separation))
        }
        let (result, pipeline) = try replayed(night, wearableKey: wearableKey)
        return .two(pipeline.separatedResult(from: result)!)
    }

    /// The journal of a night being recorded or interrupted, replayed into the pipeline it ran, which then ends where
    /// the journal ends.
    private func replayed(_ night: StoredNight, wearableKey: ClipKey?) throws
        -> (result: AnalysisResult, pipeline: AnalysisPipeline) {
        let header = try JSONDecoder().decode(NightHeader.self, from: night.header)
        let chunks = try journal(of: night.id)
        let decoder = JSONDecoder()
        let (records, unread) = try WearableSealing.open(
            try chunks.flatMap { try decoder.decode([JournalRecord].self, from: $0.records) }, key: wearableKey)
        let replay = NightReplay(records: records, position: chunks.last?.position ?? 0)
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
