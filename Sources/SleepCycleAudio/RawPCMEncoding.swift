// The sample encodings of headerless PCM (what `arecord -t raw`, `pw-record`, `parec` and `ffmpeg -f` write).

/// How one sample of interleaved, headerless PCM is stored. The names are ffmpeg's and PipeWire's (`-f s16le`,
/// `--format s16`), with the byte order spelled out.
public enum RawPCMEncoding: String, Sendable, CaseIterable {
    /// Signed 16-bit little-endian integers (ALSA `S16_LE`), scaled by exactly 1/32768 as libsndfile and ALSA capture
    /// scale them, so a WAV holding the same samples decodes to the same floats.
    case s16le
    /// IEEE 754 single-precision little-endian floats (ALSA `FLOAT_LE`), full scale ±1, taken as they are (invalid
    /// values are replaced by `SampleSanitizer` afterwards).
    case f32le

    /// Bytes per sample of one channel.
    public var bytesPerSample: Int {
        switch self {
        case .s16le: 2
        case .f32le: 4
        }
    }

    /// Converts `frames` interleaved frames of `channels` (1 or 2) samples at `bytes` into one float buffer per
    /// channel (`planar[c]` holds at least `frames` samples). Allocates nothing; `bytes` need not be aligned.
    func deinterleave(_ bytes: UnsafeRawPointer, frames: Int, channels: Int,
                      into planar: [UnsafeMutablePointer<Float>]) {
        let left = planar[0]
        switch (self, channels) {
        case (.s16le, 1):
            for i in 0..<frames { left[i] = Self.s16(bytes, at: 2 &* i) }
        case (.s16le, _):
            let right = planar[1]
            for i in 0..<frames {
                left[i] = Self.s16(bytes, at: 4 &* i)
                right[i] = Self.s16(bytes, at: 4 &* i &+ 2)
            }
        case (.f32le, 1):
            for i in 0..<frames { left[i] = Self.f32(bytes, at: 4 &* i) }
        case (.f32le, _):
            let right = planar[1]
            for i in 0..<frames {
                left[i] = Self.f32(bytes, at: 8 &* i)
                right[i] = Self.f32(bytes, at: 8 &* i &+ 4)
            }
        }
    }

    /// 1/32768: libsndfile's `normfact` for 16-bit PCM read as float (a power of two, so the product is exact).
    private static let s16Scale: Float = 1.0 / 32_768

    @inline(__always)
    private static func s16(_ bytes: UnsafeRawPointer, at offset: Int) -> Float {
        Float(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self))) * s16Scale
    }

    @inline(__always)
    private static func f32(_ bytes: UnsafeRawPointer, at offset: Int) -> Float {
        Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }
}
