import SleepCycleBus

/// One stretch of constant audio-input health (`[start, end)` on the analysis timeline).
public struct AudioHealthInterval: Sendable, Hashable {
    public var status: AudioHealthStatus
    public var start: SampleTime
    public var end: SampleTime
    /// nil for mono input.
    public var channel: AudioChannel?
    public init(status: AudioHealthStatus, start: SampleTime, end: SampleTime, channel: AudioChannel? = nil) {
        self.status = status; self.start = start; self.end = end; self.channel = channel
    }
}

/// Turns the `.healthChanged` events of a session into contiguous intervals covering `[0, end)`, per channel,
/// `healthy` stretches included (the `audioStatistics.healthIntervals` of the JSON contract).
public struct AudioHealthTimeline: Sendable {
    private var changes: [AudioChannel?: [AudioHealthChange]] = [:]
    private var order: [AudioChannel?] = []

    public init() {}

    public mutating func record(_ change: AudioHealthChange) {
        if changes[change.channel] == nil { order.append(change.channel) }
        changes[change.channel, default: []].append(change)
    }

    /// Intervals covering `[0, end)`, for each channel seen (primary first); adjacent equal statuses are merged and
    /// empty intervals dropped. Before the first change of a channel the status is `healthy`.
    public func intervals(end: SampleTime) -> [AudioHealthInterval] {
        guard end > 0 else { return [] }
        let channels = order.isEmpty ? [nil] : order.sorted { ($0?.rawValue ?? -1) < ($1?.rawValue ?? -1) }
        var result: [AudioHealthInterval] = []
        for channel in channels {
            // Stable sort by time keeps the publication order of changes dated at the same sample.
            let list = (changes[channel] ?? []).enumerated()
                .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
            var current = AudioHealthInterval(status: .healthy, start: 0, end: 0, channel: channel)
            var mine: [AudioHealthInterval] = []
            for change in list {
                let t = min(max(change.time, 0), end)
                if t > current.start {
                    current.end = t
                    mine.append(current)
                    current = AudioHealthInterval(status: change.status, start: t, end: t, channel: channel)
                } else {
                    current.status = change.status     // a later decision for the same instant wins
                }
            }
            if current.start < end { current.end = end; mine.append(current) }
            // Merge neighbours with the same status.
            for interval in mine {
                if let last = result.last, last.channel == channel, last.status == interval.status,
                   last.end == interval.start {
                    result[result.count - 1].end = interval.end
                } else {
                    result.append(interval)
                }
            }
        }
        return result
    }
}
