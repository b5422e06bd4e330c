import Foundation
import SleepCycleBus
import ChannelSeparation

/// The outcome of a two-sleeper analysis (channel separation): one session per sleeper, each with its own events,
/// breathing rates, hypnogram, statistics and audio health (`analyze --channel-separation`, docs/json.md).
public struct SeparatedAnalysisResult: Sendable, Hashable {
    public var source: SourceSummary
    public var config: ChannelSeparationConfig
    /// The primary (left channel) sleeper's session, then the secondary's.
    public var sessions: [AnalysisResult]
    /// Problems that did not stop the analysis.
    public var warnings: [AnalysisWarning]

    public init(source: SourceSummary, config: ChannelSeparationConfig, sessions: [AnalysisResult],
                warnings: [AnalysisWarning]) {
        self.source = source; self.config = config; self.sessions = sessions; self.warnings = warnings
    }

    /// Reads back the JSON `jsonString()` wrote (a stored two-sleeper night), with `config` for the settings the
    /// JSON does not hold.
    public init(json data: Data, config: ChannelSeparationConfig) throws {
        guard var top = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let source = top["source"], let sessions = top["sessions"] as? [[String: Any]] else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a two-sleeper result"))
        }
        let warnings = top["warnings"]
        top = [:]
        var results: [AnalysisResult] = []
        for var session in sessions {
            session["source"] = source
            session["channel"] = nil
            if let warnings { session["warnings"] = warnings }
            results.append(try JSONDecoder().decode(AnalysisResult.self,
                                                    from: JSONSerialization.data(withJSONObject: session)))
        }
        guard results.count == 2 else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a two-sleeper result needs two sessions"))
        }
        self.init(source: results[0].source, config: config, sessions: results, warnings: results[0].warnings)
    }

    /// The result under another primary session id (the secondary's follows from it, as
    /// `AnalysisPipeline.sessionIds(for:)` derives it): for a stream whose id is known only once read to its end.
    public func withSessionId(_ id: UUID) -> SeparatedAnalysisResult {
        var copy = self
        let ids = AnalysisPipeline.sessionIds(for: id)
        for i in copy.sessions.indices {
            copy.sessions[i] = copy.sessions[i].withSessionId(ids[AudioChannel(rawValue: i)!]!)
        }
        return copy
    }

    /// Each session with its snores grouped by snorer (`AnalysisResult.labellingSnorers()`).
    public func labellingSnorers() -> SeparatedAnalysisResult {
        var copy = self
        copy.sessions = sessions.map { $0.labellingSnorers() }
        return copy
    }

    /// The session of `channel`'s sleeper.
    public func session(_ channel: AudioChannel) -> AnalysisResult { sessions[channel.rawValue] }

    /// The contract's JSON: `{"source", "channelSeparation", "sessions": [primary, secondary], "warnings"?}`, each
    /// session keyed like `analyze`'s result (without `source` and `warnings`) after its `channel`. Deterministic.
    public func jsonString() -> String {
        var w = JSONText(expectedBytes: 1_000 + sessions.map(\.expectedJSONBytes).reduce(0, +))
        w.object { w in
            w.key("source"); source.write(to: &w)
            w.key("channelSeparation"); w.object { w in
                w.key("preset"); w.string(config.preset.rawValue)
                w.key("microphoneDistance"); w.number(config.microphoneDistance, 3)
                w.key("ambiguousZone"); w.number(config.ambiguousZone, 3)
                w.key("confidenceThreshold"); w.number(config.confidenceThreshold, 3)
            }
            w.key("sessions"); w.array(Array(sessions.enumerated())) { w, item in
                item.element.write(to: &w, channel: AudioChannel(rawValue: item.offset))
            }
            AnalysisResult.write(warnings: warnings, to: &w)
        }
        return w.text + "\n"
    }
}
