// Where the audio data of a FLAC or Ogg file starts, and the Ogg pages: which bytes the report mutates.

enum FileStructure {
    /// Byte offset of the first FLAC frame (after "fLaC" and the metadata blocks, FLAC format spec "STREAM").
    static func firstFLACFrame(_ bytes: [UInt8]) -> Int? {
        var offset = 4
        while offset + 4 <= bytes.count {
            let last = bytes[offset] & 0x80 != 0
            let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            offset += 4 + length
            if last { return offset }
        }
        return nil
    }

    /// Byte offsets and lengths of the Ogg pages of a stream (RFC 3533 §6: 27-byte header, segment table, body).
    static func oggPages(_ bytes: [UInt8]) -> [(offset: Int, length: Int)] {
        var pages: [(Int, Int)] = []
        var offset = 0
        while offset + 27 <= bytes.count, bytes[offset..<(offset + 4)].elementsEqual("OggS".utf8) {
            let segments = Int(bytes[offset + 26])
            guard offset + 27 + segments <= bytes.count else { break }
            let body = bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
            pages.append((offset, 27 + segments + body))
            offset += 27 + segments + body
        }
        return pages
    }
}
