// Which channels of an input reach analysis, and the mono down-mix.

/// The channel rule of audio input (docs/0002-audio-input-resampling.md, "Channels"):
///
/// * 1 channel → analysed as mono (one analysis channel).
/// * 2 channels → analysed as stereo: channel 0 (left, "primary") and channel 1 (right, "secondary") stay separate,
///   never mixed, so a different sound in each channel stays in its channel.
/// * 3 … `maxChannels` channels → two analysis channels: the front-left and front-right channels when the file
///   carries a channel map naming them (CAF, WAVE_FORMAT_EXTENSIBLE, …); for Ogg Vorbis / Opus without one, the
///   Vorbis order (Vorbis I spec §4.3.9, RFC 7845 §5.1.1.2: 3 ch L C R, 4 ch FL FR RL RR, 5–8 ch FL C FR …), i.e.
///   channels 0 and 2 (0 and 1 for four); otherwise the first two channels (the left/right pair in the WAV/SMPTE,
///   AIFF and FLAC default orders). The other channels are ignored, not mixed in: a surround or array recording's
///   centre/LFE/rear feeds would blur the two-sleeper separation.
/// * more than `maxChannels` → `AudioError.tooManyChannels` (bounds the decode buffer).
public enum ChannelRule {
    /// Most channels an input may have.
    public static let maxChannels = 64

    /// Front left/right indices of the Vorbis channel order (also Opus's mapping family 1) for `channelCount` ≥ 3.
    public static func vorbisFrontPair(channelCount: Int) -> (left: Int, right: Int)? {
        switch channelCount {
        case 3, 5...8: return (0, 2)
        case 4: return (0, 1)
        default: return nil
        }
    }

    /// Source channel indices feeding analysis channels 0, 1 for an input with `channelCount` channels.
    /// `frontLeft` / `frontRight` are the indices a channel map names as such, if any.
    public static func analysisChannels(channelCount: Int, frontLeft: Int? = nil, frontRight: Int? = nil) -> [Int] {
        switch channelCount {
        case ...0: return []
        case 1: return [0]
        case 2: return [0, 1]
        default:
            if let frontLeft, let frontRight, frontLeft != frontRight,
               (0..<channelCount).contains(frontLeft), (0..<channelCount).contains(frontRight) {
                return [frontLeft, frontRight]
            }
            return [0, 1]
        }
    }

    /// Mono down-mix: the per-sample mean of the channels, (c₀ + c₁ + …) / C (the ITU-R BS.775 / SoX `-c 1`
    /// convention of an equal-gain average, so a signal present identically in every channel keeps its level).
    /// Channels of different lengths are mixed over the shortest. A single channel is returned unchanged.
    public static func downmixToMono(_ channels: [[Float]]) -> [Float] {
        guard let first = channels.first else { return [] }
        if channels.count == 1 { return first }
        let n = channels.map(\.count).min() ?? 0
        var mono = [Float](repeating: 0, count: n)
        let scale = 1 / Float(channels.count)
        mono.withUnsafeMutableBufferPointer { out in
            for channel in channels {
                channel.withUnsafeBufferPointer { c in
                    for i in 0..<n { out[i] += c[i] }
                }
            }
            for i in 0..<n { out[i] *= scale }
        }
        return mono
    }
}
