import Foundation
import SleepCycleBus
import SleepCycleStore

extension NightStore {
    /// A stored night's result: the stored one for a complete night; for a night being recorded or interrupted,
    /// the result of its journal so far (replayed into a pipeline that then ends where the journal ends: the
    /// whole-night staging pass and the statistics over the audio analysed until then).
    public func analysisResult(of night: StoredNight) throws -> AnalysisResult {
        if night.state == .complete, let data = try result(of: night.id) {
            return try JSONDecoder().decode(AnalysisResult.self, from: data)
        }
        let header = try JSONDecoder().decode(NightHeader.self, from: night.header)
        let chunks = try journal(of: night.id)
        let decoder = JSONDecoder()
        let replay = NightReplay(records: try chunks.flatMap { try decoder.decode([JournalRecord].self, from: $0.records) },
                                 position: chunks.last?.position ?? 0)
        var options = PipelineOptions()
        options.frameLength = header.frameLength
        options.hopLength = header.hopLength
        options.eventDetection = header.eventDetection
        options.alarm = header.alarm
        let format = SourceFormat(sampleRate: header.sourceSampleRate, channelCount: header.sourceChannels,
                                  analysisChannelCount: header.analysisChannels, frameCount: nil)
        let info = SessionInfo(id: header.sessionId, clock: AnalysisClock(start: header.start),
                               sourceSampleRate: header.sourceSampleRate, channelCount: header.sourceChannels)
        let pipeline = try AnalysisPipeline(info: info, format: format, sourcePath: header.sourceName, options: options,
                                            resuming: replay)
        var result = pipeline.finish()
        result.utcOffsetSeconds = header.utcOffsetSeconds
        return result
    }
}
