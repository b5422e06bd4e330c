/// Ends another source after exactly `limit` samples of the analysis timeline (`record --duration`).
///
/// Audio and gaps both count, so a live night stops when the limit's worth of time has passed on the source's
/// clock even if an overrun lost some of it. The read that crosses the limit is cut at it, the inner source is
/// closed (a capture device is released at once) and every later read returns `.end`. Stopping here, on the
/// reading thread, rather than from a watcher of the engine's progress, makes the night exactly as long as asked
/// however loaded the machine is.
public final class LimitedSource: AudioSource, @unchecked Sendable {
    public let inner: any AudioSource
    /// Analysis-rate samples (16 kHz) after which the source ends.
    public let limit: Int64
    /// True once the limit, rather than the inner source, has ended the audio.
    public private(set) var reachedLimit = false
    private var finished = false

    public init(_ inner: any AudioSource, limit: Int64) {
        self.inner = inner
        self.limit = max(0, limit)
    }

    public var format: SourceFormat { inner.format }
    public var name: String { inner.name }
    public var warnings: [AudioError] { inner.warnings }

    @discardableResult
    public func setSourceRateTap(_ tap: SourceRateTap?) -> Bool { inner.setSourceRateTap(tap) }

    public func read() throws -> SourceRead {
        if finished { return .end }
        let read = try inner.read()
        switch read {
        case .end:
            finished = true
            return .end
        case .audio(let start, let channels):
            let count = Int64(channels.first?.count ?? 0)
            guard start + count >= limit else { return read }
            finish()
            let kept = Int(max(0, limit - start))
            guard kept > 0 else { return .end }
            return .audio(start: start, channels: kept == Int(count) ? channels : channels.map { Array($0.prefix(kept)) })
        case .gap(let start, let length, let reason):
            guard start + length >= limit else { return read }
            finish()
            let kept = max(0, limit - start)
            return kept > 0 ? .gap(start: start, length: kept, reason: reason) : .end
        }
    }

    /// The limit is reached: the inner source is closed and read once more, which returns `.end` at once for a
    /// closed source and completes its `warnings` (replaced samples, a damaged input) as an input's own end would.
    private func finish() {
        finished = true
        reachedLimit = true
        inner.close()
        _ = try? inner.read()
    }

    public func close() { inner.close() }
}
