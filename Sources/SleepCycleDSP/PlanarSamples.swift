/// Planar audio at a source's own rate, as audio clips keep it: the 16-bit PCM values of a source of ≤ 16 bits
/// (exactly: its samples are k / 32768), else floats. Half the memory of floats for the common case.
public enum PlanarSamples: Sendable {
    case int16([[Int16]])
    case float([[Float]])

    public var channelCount: Int {
        switch self {
        case .int16(let c): c.count
        case .float(let c): c.count
        }
    }

    public var frameCount: Int {
        switch self {
        case .int16(let c): c.first?.count ?? 0
        case .float(let c): c.first?.count ?? 0
        }
    }

    /// A copy of `frames` frames of each buffer: as 16-bit values when `integerBits` ≤ 16, else as floats.
    public static func copying(_ buffers: [UnsafePointer<Float>], frames: Int, integerBits: Int?) -> PlanarSamples {
        holdsInt16(integerBits) ? .int16(buffers.map { pcm16($0, frames) })
            : .float(buffers.map { Array(UnsafeBufferPointer(start: $0, count: frames)) })
    }

    /// `channels` as 16-bit values when `integerBits` ≤ 16, else as they are (no copy).
    public static func converting(_ channels: [[Float]], integerBits: Int?) -> PlanarSamples {
        holdsInt16(integerBits)
            ? .int16(channels.map { c in c.withUnsafeBufferPointer { pcm16($0.baseAddress, c.count) } }) : .float(channels)
    }

    private static func holdsInt16(_ integerBits: Int?) -> Bool { (integerBits ?? 32) <= 16 }

    /// `count` samples as their 16-bit PCM values (`VectorKernels.pcm16`).
    private static func pcm16(_ src: UnsafePointer<Float>?, _ count: Int) -> [Int16] {
        [Int16](unsafeUninitializedCapacity: count) { out, n in
            if let src, count > 0 { VectorKernels.pcm16(src, out.baseAddress!, count: count) }
            n = count
        }
    }

    /// Channel `channel` as floats (16-bit values scaled by 1/32768).
    public func floats(channel: Int) -> [Float] {
        switch self {
        case .int16(let c): c[channel].map { Float($0) * (1 / 32768) }
        case .float(let c): c[channel]
        }
    }
}
