// Writes audio files with libsndfile (test fixtures, audio clips).
import CSndFile

/// A container + encoding libsndfile can write.
public struct AudioFileFormat: Sendable, Hashable, CustomStringConvertible {
    let sfFormat: Int32
    public let description: String

    init(_ major: Int, _ sub: Int, _ description: String) {
        sfFormat = Int32(major | sub); self.description = description
    }

    public static let wavPCMU8 = AudioFileFormat(SF_FORMAT_WAV, SF_FORMAT_PCM_U8, "WAV PCM unsigned 8-bit")
    public static let wavPCM16 = AudioFileFormat(SF_FORMAT_WAV, SF_FORMAT_PCM_16, "WAV PCM 16-bit")
    public static let wavPCM24 = AudioFileFormat(SF_FORMAT_WAV, SF_FORMAT_PCM_24, "WAV PCM 24-bit")
    public static let wavPCM32 = AudioFileFormat(SF_FORMAT_WAV, SF_FORMAT_PCM_32, "WAV PCM 32-bit")
    public static let wavFloat = AudioFileFormat(SF_FORMAT_WAV, SF_FORMAT_FLOAT, "WAV 32-bit float")
    public static let flac16 = AudioFileFormat(SF_FORMAT_FLAC, SF_FORMAT_PCM_16, "FLAC 16-bit")
    public static let flac24 = AudioFileFormat(SF_FORMAT_FLAC, SF_FORMAT_PCM_24, "FLAC 24-bit")
    public static let oggVorbis = AudioFileFormat(SF_FORMAT_OGG, SF_FORMAT_VORBIS, "Ogg Vorbis")
    public static let aiff16 = AudioFileFormat(SF_FORMAT_AIFF, SF_FORMAT_PCM_16, "AIFF PCM 16-bit")
    public static let aiff24 = AudioFileFormat(SF_FORMAT_AIFF, SF_FORMAT_PCM_24, "AIFF PCM 24-bit")
    public static let caf16 = AudioFileFormat(SF_FORMAT_CAF, SF_FORMAT_PCM_16, "CAF PCM 16-bit")
    public static let w64PCM16 = AudioFileFormat(SF_FORMAT_W64, SF_FORMAT_PCM_16, "W64 PCM 16-bit")
    public static let nistPCM16 = AudioFileFormat(SF_FORMAT_NIST, SF_FORMAT_PCM_16, "NIST SPHERE PCM 16-bit")
    public static let rf64PCM16 = AudioFileFormat(SF_FORMAT_RF64, SF_FORMAT_PCM_16, "RF64 PCM 16-bit")
    public static let rf64PCM24 = AudioFileFormat(SF_FORMAT_RF64, SF_FORMAT_PCM_24, "RF64 PCM 24-bit")
    public static let rf64Float = AudioFileFormat(SF_FORMAT_RF64, SF_FORMAT_FLOAT, "RF64 32-bit float")
    public static let wavGSM = AudioFileFormat(SF_FORMAT_WAV, SF_FORMAT_GSM610, "WAV GSM 6.10")
}

/// Writes interleaved float frames to a new file (values in [−1, 1]; libsndfile converts to the encoding).
public final class AudioFileWriter {
    public let path: String
    public let sampleRate: Int
    public let channelCount: Int
    private var file: SndFile?

    /// Creates or replaces `path`. `vorbisQuality` (0…1) applies to Ogg Vorbis only.
    public init(path: String, format: AudioFileFormat, sampleRate: Int, channelCount: Int,
                vorbisQuality: Double? = nil) throws(AudioError) {
        guard sampleRate > 0, channelCount > 0 else {
            throw AudioError(.invalidParameter, path: path,
                             message: "cannot write \(sampleRate) Hz with \(channelCount) channel(s)")
        }
        self.path = path; self.sampleRate = sampleRate; self.channelCount = channelCount
        let file = try SndFile(writingPath: path, format: format.sfFormat, sampleRate: sampleRate, channels: channelCount)
        if let vorbisQuality { file.setDouble(Int32(SFC_SET_VBR_ENCODING_QUALITY), vorbisQuality) }
        self.file = file
    }

    deinit { close() }

    /// Channel positions for the file's channel map (before writing any audio; CAF and WAVEX store it).
    public enum ChannelPosition: Sendable { case left, right, center, frontLeft, frontRight, frontCenter, lfe,
                                             rearLeft, rearRight }

    /// Stores a channel map (call before the first write).
    public func setChannelMap(_ positions: [ChannelPosition]) throws(AudioError) {
        guard let file else { throw AudioError(.writeFailed, path: path, message: "channel map after close") }
        let codes: [Int32] = positions.map {
            switch $0 {
            case .left: Int32(SF_CHANNEL_MAP_LEFT)
            case .right: Int32(SF_CHANNEL_MAP_RIGHT)
            case .center: Int32(SF_CHANNEL_MAP_CENTER)
            case .frontLeft: Int32(SF_CHANNEL_MAP_FRONT_LEFT)
            case .frontRight: Int32(SF_CHANNEL_MAP_FRONT_RIGHT)
            case .frontCenter: Int32(SF_CHANNEL_MAP_FRONT_CENTER)
            case .lfe: Int32(SF_CHANNEL_MAP_LFE)
            case .rearLeft: Int32(SF_CHANNEL_MAP_REAR_LEFT)
            case .rearRight: Int32(SF_CHANNEL_MAP_REAR_RIGHT)
            }
        }
        try file.setChannelMap(codes)
    }

    /// Appends interleaved frames (`samples.count` must be a multiple of `channelCount`).
    public func write(interleaved samples: [Float]) throws(AudioError) {
        guard let file else { throw AudioError(.writeFailed, path: path, message: "write after close") }
        guard samples.count % channelCount == 0 else {
            throw AudioError(.invalidParameter, path: path, message: "\(samples.count) samples is not a whole number "
                + "of \(channelCount)-channel frames")
        }
        let frames = samples.count / channelCount
        try samples.withUnsafeBufferPointer { (p) throws(AudioError) in
            guard let base = p.baseAddress, frames > 0 else { return }
            try file.writeFloat(base, frames: frames)
        }
    }

    /// Appends planar channels (all the same length), interleaving them.
    public func write(channels: [[Float]]) throws(AudioError) {
        guard channels.count == channelCount else {
            throw AudioError(.invalidParameter, path: path,
                             message: "expected \(channelCount) channel(s), got \(channels.count)")
        }
        let n = channels.map(\.count).min() ?? 0
        var interleaved = [Float](repeating: 0, count: n * channelCount)
        for (c, channel) in channels.enumerated() {
            for i in 0..<n { interleaved[i * channelCount + c] = channel[i] }
        }
        try write(interleaved: interleaved)
    }

    /// Flushes and closes the file. Idempotent.
    public func close() {
        file?.close()
        file = nil
    }
}
