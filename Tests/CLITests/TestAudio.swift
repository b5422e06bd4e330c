import Foundation

/// WAV files written by the CLI tests (minimal RIFF headers).
enum TestWAV {
    /// PCM16 WAV bytes of `channels` (interleaved), samples clipped to ±1.
    static func pcm16(rate: Int, channels: [[Float]]) -> Data {
        let frames = channels[0].count, nc = channels.count
        var d = header(rate: rate, channels: nc, bytesPerSample: 2, formatTag: 1, frames: frames)
        var pcm = [Int16](repeating: 0, count: frames * nc)
        for i in 0..<frames { for c in 0..<nc { pcm[i * nc + c] = Int16(max(-1, min(1, channels[c][i])) * 32767) } }
        pcm.withUnsafeBytes { d.append(contentsOf: $0) }
        return d
    }

    /// 32-bit IEEE float WAV bytes (samples written as given: NaN and infinities included).
    static func float32(rate: Int, channels: [[Float]]) -> Data {
        let frames = channels[0].count, nc = channels.count
        var d = header(rate: rate, channels: nc, bytesPerSample: 4, formatTag: 3, frames: frames)
        var pcm = [Float](repeating: 0, count: frames * nc)
        for i in 0..<frames { for c in 0..<nc { pcm[i * nc + c] = channels[c][i] } }
        pcm.withUnsafeBytes { d.append(contentsOf: $0) }
        return d
    }

    private static func header(rate: Int, channels nc: Int, bytesPerSample: Int, formatTag: Int, frames: Int) -> Data {
        var d = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { d.append(contentsOf: $0) } }
        let bytes = frames * nc * bytesPerSample
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes); d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(formatTag); u16(nc); u32(rate)
        u32(rate * nc * bytesPerSample); u16(nc * bytesPerSample); u16(bytesPerSample * 8)
        d.append(contentsOf: Array("data".utf8)); u32(bytes)
        return d
    }

    /// 4 s of noise, 3 s of digital silence, 3 s of noise.
    static func night(rate: Int = 16_000) -> [Float] {
        var s: UInt64 = 0x2545F4914F6CDD1D
        func noise(_ n: Int) -> [Float] {
            (0..<n).map { _ in s ^= s << 13; s ^= s >> 7; s ^= s << 17; return Float(s % 20_001) / 100_000 - 0.1 }
        }
        return noise(4 * rate) + [Float](repeating: 0, count: 3 * rate) + noise(3 * rate)
    }
}

/// A device number (`makedev`, a C macro Swift cannot import) for majors below 4096 and minors below 256.
func testDevice(_ major: UInt32, _ minor: UInt32) -> dev_t { dev_t(major) << 8 | dev_t(minor) }

/// Whether this process may make device nodes (`mknod`, root only): the device tests are skipped, visibly, when not.
let canMakeDeviceNodes: Bool = {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("mknod-\(UUID().uuidString)").path
    defer { unlink(path) }
    return mknod(path, S_IFCHR | 0o666, testDevice(1, 3)) == 0
}()

/// Runs the built binary as the unprivileged user `nobody` (`setpriv`; root only), or nil when that is not
/// possible here (not root, no `setpriv`, the binary not reachable by that user): the tests of what a user who
/// may not write a file sees are skipped, visibly, then.
func runAsNobody(_ arguments: [String], environment: [String: String] = [:]) throws -> BuiltBinary.Run? {
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), let bin = BuiltBinary.url else {
        return nil
    }
    func run(_ args: [String]) throws -> BuiltBinary.Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", bin.path] + args
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        return try BuiltBinary.capture(p)
    }
    guard try run(["--version"]).status == 0 else { return nil }
    return try run(arguments)
}
