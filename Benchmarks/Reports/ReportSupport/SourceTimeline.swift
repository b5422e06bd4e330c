// A whole audio source read as one timeline: what the report executables compare.
import SleepCycleAudio

/// Every read of an `AudioSource` until `.end`, laid out on the analysis timeline.
public struct SourceTimeline {
    /// Planar analysis-rate channels, gaps filled with zeros.
    public var channels: [[Float]]
    /// The gaps, in analysis samples.
    public var gaps: [(start: Int64, length: Int64, reason: SourceGapReason)] = []
    /// Whether the reads tiled the timeline: each starts where the previous ended, from 0, none empty.
    public var tiles = true

    /// Reads `source` to its end.
    public init(reading source: any AudioSource) throws {
        channels = Array(repeating: [], count: source.format.analysisChannelCount)
        var expected: Int64 = 0
        loop: while true {
            switch try source.read() {
            case .audio(let start, let block):
                if start != expected || block.count != channels.count || block[0].isEmpty { tiles = false }
                for c in channels.indices where c < block.count { channels[c].append(contentsOf: block[c]) }
                expected = start + Int64(block.first?.count ?? 0)
            case .gap(let start, let length, let reason):
                if start != expected || length <= 0 { tiles = false }
                gaps.append((start, length, reason))
                for c in channels.indices { channels[c].append(contentsOf: repeatElement(0, count: Int(max(0, length)))) }
                expected = start + length
            case .end:
                break loop
            }
        }
    }

    /// Analysis samples per channel, gaps included.
    public var length: Int { channels.first?.count ?? 0 }
}
