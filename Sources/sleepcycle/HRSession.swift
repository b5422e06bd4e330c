import ArgumentParser
import Foundation
import HeartSession
import SleepCycle
import SleepCycleFormats

/// `sleepcycle hr-session FILE`: a heart session over a wearable's recording, as JSON lines (docs/0011).
struct HRSession: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr-session",
        abstract: "A heart session over a wearable's heart rate: HR and HRV frames over a sliding window (JSON lines).",
        discussion: """
            FILE is CSV (time in seconds or ISO 8601, and rr_ms and/or bpm; docs/cli.md), JSON lines of the \
            wearable schema ({"timestamp", "metrics": {"hr"}, "rrIntervals": [ms]}), or a plain RR list (one \
            interval in ms per line, as Polar's RR export). Prints session_started, a \
            session_frame every emit interval, biosignal_frame with --include-raw, and session_summary.
            """)

    @Argument(help: "The wearable's recording: CSV or JSON lines.", completion: .file())
    var file: String

    @Option(help: "Session mode: focus (default) or breathing.")
    var mode: SessionMode = .focus

    @Option(help: ArgumentHelp("The sliding window of each frame (default 60s).", valueName: "duration"),
            transform: { try DurationText.parse($0, bareUnit: .seconds, range: 5...3600).seconds })
    var window: Double = 60

    @Option(help: ArgumentHelp("A frame every this often (default 5s).", valueName: "duration"),
            transform: { try DurationText.parse($0, bareUnit: .seconds, range: 0.5...3600).seconds })
    var emitInterval: Double = 5

    @Flag(help: "Also print the raw readings (biosignal_frame), every second.")
    var includeRaw = false

    func validate() throws {
        if emitInterval > window { throw ValidationError("--emit-interval must not be longer than --window") }
    }

    func run() throws {
        let samples = try Self.read(file)
        let engine = SessionEngine()
        var lines: [String] = []
        let config = SessionConfig(mode: mode, profile: ComputeProfile(windowSec: window, emitIntervalSec: emitInterval),
                                   includeRaw: includeRaw)
        let id = try engine.start(config: config) { lines.append($0.jsonLine) }
        for s in samples { try engine.push(s) }
        try engine.stop(sessionId: id)
        try OutputTarget.standardOutput.write(lines.joined(separator: "\n") + "\n")
    }

    /// The RR intervals of a plain list — one interval in ms per line, after an optional header line without digits
    /// (Polar's RR export: "RR-interval [ms]"; Kubios' text) — or nil when the text is not such a list.
    static func rrList(_ text: String, path: String) throws -> [Double]? {
        var values: [Double] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\u{FEFF}")))
            if line.isEmpty { continue }
            if values.isEmpty && index == 0 && !line.contains(where: \.isNumber) { continue }
            guard let x = Double(line) else {
                // A line with more than one field: not an RR list (a CSV), unless it already was one.
                if values.isEmpty { return nil }
                throw InputFileError(path: path, line: index + 1, message: "'\(line.prefix(40))' is not an RR interval in ms")
            }
            guard x.isFinite, (200...3000).contains(x) else {
                throw InputFileError(path: path, line: index + 1, message: "RR interval \(line.prefix(20)) ms is out of range (200–3000)")
            }
            values.append(x)
        }
        return values.isEmpty ? nil : values
    }

    /// The readings of a CSV or JSON-lines file, in time order, timed in ms from the first.
    static func read(_ path: String) throws -> [BiosignalSample] {
        let bytes = try InputFile.read(path)
        let text = String(decoding: bytes, as: UTF8.self)
        let first = text.first { !$0.isWhitespace && $0 != "\u{FEFF}" }
        var samples: [BiosignalSample] = []
        if first == "{" {
            var origin: Double?
            for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                if line.isEmpty { continue }
                func bad(_ why: String) -> InputFileError { InputFileError(path: path, line: index + 1, message: why) }
                guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                    throw bad("not a JSON object")
                }
                let seconds: Double
                if let t = object["timestamp"] as? String, let time = ISO8601Time(t) {
                    seconds = time.date.timeIntervalSince1970
                } else if let t = (object["timestamp"] as? NSNumber)?.doubleValue, t.isFinite {
                    seconds = t
                } else {
                    throw bad("\"timestamp\" must be an ISO 8601 time or seconds")
                }
                let metrics = object["metrics"] as? [String: Any] ?? [:]
                let hr = (metrics["hr"] as? NSNumber)?.doubleValue
                let rr = (object["rrIntervals"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.doubleValue }
                if let hr, !(20...250).contains(hr) { throw bad("heart rate \(hr) bpm is out of range (20–250)") }
                if rr.contains(where: { !(200...3000).contains($0) }) { throw bad("an RR interval is out of range (200–3000 ms)") }
                guard hr != nil || !rr.isEmpty else { continue }
                let t0 = origin ?? seconds
                origin = t0
                samples.append(BiosignalSample(timestampMs: Int64(((seconds - t0) * 1000).rounded()), hrBpm: hr, rrMs: rr))
            }
        } else if let rr = try rrList(text, path: path) {
            // An RR list (Polar's RR export, Kubios text): the readings are the beats, timed by their sum.
            var t = 0.0
            for x in rr {
                t += x
                samples.append(BiosignalSample(timestampMs: Int64(t.rounded()), rrMs: [x]))
            }
        } else {
            for s in try HeartRateFile.parse(bytes, path: path) {
                samples.append(BiosignalSample(timestampMs: s.time * 1000 / Int64(AnalysisClock.sampleRate), hrBpm: s.bpm,
                                               rrMs: s.rrMs.map { [$0] } ?? []))
            }
            if let t0 = samples.first?.timestampMs { for i in samples.indices { samples[i].timestampMs -= t0 } }
        }
        guard !samples.isEmpty else { throw InputFileError(path: path, message: "no heart-rate readings") }
        for i in 1..<max(1, samples.count) where samples[i].timestampMs < samples[i - 1].timestampMs {
            throw InputFileError(path: path, message: "readings go back in time at reading \(i + 1)")
        }
        return samples
    }
}

extension SessionMode: ExpressibleByArgument {}
