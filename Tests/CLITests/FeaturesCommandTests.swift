import Foundation
import Testing

/// Runs the built `sleepcycle` binary (`features` subcommand) on the committed fixtures in Fixtures/golden.
@Suite("features: command line")
struct FeaturesCommandTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let signals = packageRoot.appendingPathComponent("Fixtures/golden/signals")

    static let header = "time,rms,spectral_centroid,spectral_bandwidth,spectral_rolloff,spectral_flatness,"
        + "zero_crossing_rate,mfcc_0,mfcc_1,mfcc_2,mfcc_3,mfcc_4,mfcc_5,mfcc_6,mfcc_7,mfcc_8,mfcc_9,mfcc_10,"
        + "mfcc_11,mfcc_12"

    static func run(_ args: [String]) throws -> BuiltBinary.Run {
        try BuiltBinary.run(["features"] + args)
    }

    static func lines(_ s: String) -> [Substring] { s.split(separator: "\n", omittingEmptySubsequences: true) }

    @Test func monoCSVHasExactHeaderAndOneRowPerFrame() throws {
        let r = try Self.run([Self.signals.appendingPathComponent("noise.wav").path])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = Self.lines(r.stdout)
        #expect(rows.first?.hasPrefix(Self.header + ",") == true)
        #expect(rows.first?.contains("channel") == false)
        #expect(rows.count == 1 + (1 + 8000 / 512))
        let cols = rows[0].split(separator: ",").count
        for row in rows.dropFirst() { #expect(row.split(separator: ",").count == cols) }
        #expect(rows[1].hasPrefix("0,"))
        #expect(rows[2].hasPrefix("0.032,"))
    }

    @Test func standardInputGivesTheSameTable() throws {
        let path = Self.signals.appendingPathComponent("stereo.wav").path
        let fromPath = try Self.run([path])
        let fromPipe = try BuiltBinary.run(["features", "-"], stdin: try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(fromPipe.status == 0 && fromPipe.stdout == fromPath.stdout, "\(fromPipe.stderr)")
    }

    @Test func frameAndHopOptionsChangeTheFrameCount() throws {
        let r = try Self.run([Self.signals.appendingPathComponent("tones_silence.wav").path,
                              "--frame-length", "512", "--hop-length", "256"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.lines(r.stdout).count == 1 + (1 + 20000 / 256))
        #expect(Self.lines(r.stdout)[2].hasPrefix("0.016,"))
    }

    @Test func stereoRowsCarryTheChannelChannelZeroFirst() throws {
        let r = try Self.run([Self.signals.appendingPathComponent("stereo.wav").path])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = Self.lines(r.stdout)
        let names = rows[0].split(separator: ",").map(String.init)
        #expect(rows[0].hasPrefix(Self.header + ","))
        let channel = try #require(names.firstIndex(of: "channel"))
        #expect(channel == 20, "channel follows the fixed prefix")
        let frames = 1 + 8000 / 512
        #expect(rows.count == 1 + 2 * frames)
        for f in 0..<frames {
            let a = rows[1 + 2 * f].split(separator: ","), b = rows[2 + 2 * f].split(separator: ",")
            #expect(a[channel] == "0" && b[channel] == "1")
            #expect(a[0] == b[0], "both channels' rows of a frame share its time")
        }
        // Channel 1 of stereo.wav is noise.wav: same features as the mono file.
        let mono = Self.lines(try Self.run([Self.signals.appendingPathComponent("noise.wav").path]).stdout)
        let right = rows[2].split(separator: ",").enumerated().filter { $0.offset != channel }.map(\.element)
        #expect(right.prefix(20) == mono[1].split(separator: ",").prefix(20))
    }

    @Test func jsonHasColumnsAndFrames() throws {
        let r = try Self.run([Self.signals.appendingPathComponent("chirp.wav").path, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let columns = try #require(obj["columns"] as? [String])
        #expect(columns.joined(separator: ",").hasPrefix(Self.header))
        let frames = try #require(obj["frames"] as? [[Any]])
        #expect(frames.count == 1 + 16000 / 512)
        #expect(frames.allSatisfy { $0.count == columns.count })
        #expect(obj["frameLength"] as? Int == 1024 && obj["hopLength"] as? Int == 512)
    }

    /// End to end: the CLI's CSV agrees with librosa's golden values (formatter precision 5e-6 relative on top
    /// of the DSP tolerances).
    @Test func csvValuesMatchLibrosaGolden() throws {
        let golden = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.packageRoot
            .appendingPathComponent("Fixtures/golden/features_16000_1024_512.json"))) as! [String: Any]
        let noise = (golden["signals"] as! [String: Any])["noise"] as! [String: Any]
        let rms = (noise["rms"] as! [NSNumber]).map(\.doubleValue)
        let centroid = (noise["spectral_centroid"] as! [NSNumber]).map(\.doubleValue)
        let mfcc = (noise["mfcc"] as! [[NSNumber]]).map { $0.map(\.doubleValue) }
        let rows = Self.lines(try Self.run([Self.signals.appendingPathComponent("noise.wav").path]).stdout).dropFirst()
        #expect(rows.count == rms.count)
        for (i, row) in rows.enumerated() {
            let v = row.split(separator: ",").map { Double($0)! }
            #expect(abs(v[1] - rms[i]) <= 1e-4 * rms[i] + 1e-7)
            #expect(abs(v[2] - centroid[i]) <= 1e-4 * centroid[i] + 1e-3)
            for k in 0..<13 { #expect(abs(v[7 + k] - mfcc[i][k]) <= 1e-2) }
        }
    }


    @Test(arguments: ["missing", "empty", "text"])
    func badInputGivesOneLineNamingTheFile(kind: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sleepcycle-features-\(getpid())-\(kind)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path: String
        switch kind {
        case "empty":
            path = dir.appendingPathComponent("empty.wav").path
            _ = FileManager.default.createFile(atPath: path, contents: Data())
        case "text":
            path = dir.appendingPathComponent("notes.wav").path
            try "this is not audio\n".write(toFile: path, atomically: true, encoding: .utf8)
        default:
            path = "/nonexistent/dir/night.wav"
        }
        let r = try Self.run([path])
        #expect(r.status != 0)
        #expect(r.stdout.isEmpty)
        let errLines = Self.lines(r.stderr)
        #expect(errLines.count == 1, "stderr: \(r.stderr)")
        #expect(errLines.first?.contains(path) == true)
    }

    @Test(arguments: [["--frame-length", "1023"], ["--frame-length", "32"], ["--hop-length", "0"],
                      ["--frame-length", "256", "--hop-length", "512"], ["--format", "xml"]])
    func invalidOptionsAreRejected(args: [String]) throws {
        let r = try Self.run([Self.signals.appendingPathComponent("noise.wav").path] + args)
        #expect(r.status != 0)
        #expect(r.stdout.isEmpty)
        #expect(!r.stderr.isEmpty)
    }
}
