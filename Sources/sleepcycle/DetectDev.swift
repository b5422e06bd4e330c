import ArgumentParser
import EventDetection
import Foundation
import SleepCycleBus
import SleepCycleDSP
import SleepCycleFormats

/// Hidden developer commands of the event detector, used by Benchmarks/Scripts/detection/*.py so that training
/// and evaluation run exactly the Swift code that runs inside `sleepcycle analyze`.
///
/// Input (`--input`, default stdin): a stream of scenes, each `Int64 n` (little-endian) followed by `n` Float32
/// samples (little-endian, 16 kHz mono). Each scene is analysed from a fresh state (features 1024/512 through
/// `FeatureAnalyzer`, fed in 16384-sample blocks as the engine does).
struct DetectDev: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect-dev",
        abstract: "Developer tools of the event detector (training / evaluation scripts).",
        shouldDisplay: false,
        subcommands: [SegmentFeaturesCommand.self, DetectEventsCommand.self])
}

struct SceneOptions: ParsableArguments {
    @Option(help: "Scene stream (Int64 n + n Float32 per scene, little-endian); '-' = stdin.")
    var input: String = "-"
    @Option(help: "Output file (JSON lines); '-' = stdout.")
    var output: String = "-"
}

/// A one-line error naming the file and the problem.
struct DetectDevError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads scenes one at a time (bounded memory per scene).
struct SceneReader {
    let handle: FileHandle
    let path: String
    init(path: String) throws {
        self.path = path
        if path == "-" { handle = .standardInput } else {
            guard let h = FileHandle(forReadingAtPath: path) else {
                throw DetectDevError("\(path): cannot open the scene stream")
            }
            handle = h
        }
    }
    func next() throws -> [Float]? {
        guard let header = try handle.read(upToCount: 8), header.count == 8 else { return nil }
        let n = header.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
        guard n >= 0, n < 1 << 34 else { throw DetectDevError("\(path): bad scene length \(n)") }
        var samples = [Float](repeating: 0, count: Int(n))
        var got = 0
        try samples.withUnsafeMutableBytes { raw in
            while got < raw.count {
                guard let d = try handle.read(upToCount: min(raw.count - got, 1 << 24)), !d.isEmpty else {
                    throw DetectDevError("\(path): scene truncated (\(got) of \(raw.count) bytes)")
                }
                d.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: raw[got..<(got + d.count)]))
                got += d.count
            }
        }
        return samples
    }
}

/// Lines (or raw bytes) to a file or standard output, in large writes; a failed write is an `OutputError`.
final class LineWriter {
    private let out: OutputByteWriter
    init(path: String) throws {
        if path == "-" {
            out = OutputByteWriter(fd: STDOUT_FILENO)
        } else {
            let fd = PathEncoding.withCString(path) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
            guard fd >= 0 else {
                throw DetectDevError("\(MessageText.path(path)): cannot create the output file (\(InputFile.describe(errno: errno)))")
            }
            out = OutputByteWriter(fd: fd, destination: MessageText.path(path))
        }
    }
    func write(_ line: String) throws { try out.append(line + "\n") }
    func write(bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            try out.ensure(min(rest.count, out.capacity))
            let n = min(rest.count, out.capacity - out.count)
            out.cursor.update(from: rest.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n)
            out.count += n
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        }
    }
    func flush() throws { try out.flush() }
}

/// Feeds one scene to `publish` as the engine does (`AnalysisFeeder`: 16384-sample blocks, `.audio` before the
/// `.features` of the same samples, FeatureAnalyzer 1024/512, then the end of the session), so the detector's
/// features are the same here as in `analyze`.
func feedScene(_ samples: [Float], publish: @escaping (AnalysisEvent) -> Void) throws {
    let analyzer = try FeatureAnalyzer(frameLength: 1024, hopLength: 512, sampleRate: 16000, channel: 0)
    let feeder = AnalysisFeeder(extractors: [analyzer], publish: publish)
    var i = 0
    while i < samples.count {
        let n = min(16384, samples.count - i)
        feeder.audio(AudioBlock(start: SampleTime(i), channels: [Array(samples[i..<(i + n)])]))
        i += n
    }
    feeder.end()
}

func jsonNumbers(_ v: [Float]) -> String { "[" + v.map { "\($0)" }.joined(separator: ",") + "]" }

struct SegmentFeaturesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "segment-features",
        abstract: "Print every candidate segment's features and raw signature, one JSON line per segment.")
    @OptionGroup var scenes: SceneOptions
    @Option(help: "Also write every segment's noise-subtracted mel spectra (dB, frames x 40 Float32, little-endian, in segment order) to this file; each line then carries its frame count.")
    var spectra: String?

    func run() throws {
        let reader = try SceneReader(path: scenes.input)
        let out = try LineWriter(path: scenes.output)
        let spectraOut = try spectra.map { try LineWriter(path: $0) }
        try out.write("{\"features\":[" + SegmentFeatures.names.map { "\"\($0)\"" }.joined(separator: ",") + "]}")
        var index = 0
        while let samples = try reader.next() {
            var extractor = try SegmentExtractor()
            extractor.keepsSpectra = spectraOut != nil
            var segments: [CandidateSegment] = []
            try feedScene(samples) { event in
                switch event {
                case .audio(let block): extractor.append(audio: block.channels[0], start: block.start)
                case .features(let features): segments += extractor.process(features)
                case .sessionEnding: segments += extractor.flush()
                default: break
                }
            }
            for s in segments {
                try out.write("{\"scene\":\(index),\"start\":\(s.start),\"end\":\(s.end),\"features\":"
                          + jsonNumbers(s.features.values) + ",\"signature\":" + jsonNumbers(s.rawSignature)
                          + ",\"echo\":\(s.echo)" + (s.spectraDb.map { ",\"frames\":\($0.count / 40)" } ?? "") + "}")
                if let spectraOut, let db = s.spectraDb { try db.withUnsafeBytes { try spectraOut.write(bytes: $0) } }
            }
            index += 1
        }
        try out.flush()
        try spectraOut?.flush()
    }
}

/// The `TYPE=VALUE` specs of a repeatable per-class option (the last one of a type wins).
private func perClass(_ specs: [String], option: String, example: String) throws -> [EventType: Double] {
    var values: [EventType: Double] = [:]
    for spec in specs {
        let parts = spec.split(separator: "=")
        guard parts.count == 2, let type = EventType(rawValue: String(parts[0])), let v = Double(parts[1]) else {
            throw ValidationError("\(option) \(spec): expected \(example)")
        }
        values[type] = v
    }
    return values
}

struct DetectEventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Run the full EventDetector on each scene; one JSON line per event (times in samples).")
    @OptionGroup var scenes: SceneOptions
    @Option(help: "Model JSON to use instead of the built-in one (with its context stage and screen, if it has them).")
    var model: String?
    @Flag(help: "Compute the frame features only (no detection): the baseline for timing the detector's cost.")
    var featuresOnly = false
    @Option(help: "Per-class event threshold instead of the default, e.g. coughing=0.6 (repeatable; operating-point studies).")
    var minEventProbability: [String] = []
    @Option(help: "Per-class length in seconds from which a finished event needs only --min-long-event-probability, e.g. coughing=0.7 (repeatable).")
    var longEvent: [String] = []
    @Option(help: "Per-class threshold of events at least --long-event long, e.g. coughing=0.5 (repeatable; TYPE=1 turns the rule off).")
    var minLongEventProbability: [String] = []
    @Option(help: "Prior weight on a class's final probabilities, e.g. snoring=2 (repeatable; operating-point studies).")
    var classWeight: [String] = []
    @Option(help: "Sustained-speech window in seconds instead of the default (0 = off: talking events are reported however much talking surrounds them).")
    var sustainedSpeechWindow: Double?
    @Option(help: "Sustained-speech share instead of the default.")
    var sustainedSpeechShare: Double?
    @Option(help: "Echo strength from which a sound counts as a machine (a clock) instead of the default (above 1 = off).")
    var machineEcho: Float?
    @Option(help: "Echo strength for a sound amid a ticking machine instead of the default.")
    var machineEchoWhileTicking: Float?
    @Option(help: "Whether a segment's echo also looks at the beat periods after it (true/false) instead of the default.")
    var machineEchoAfter: Bool?
    @Option(help: "Probability from which a snore with no other snore near it is reported, instead of the default.")
    var isolatedSnoreProbability: Double?
    @Option(help: "Seconds within which another snore makes a snore part of a bout, instead of the default.")
    var snoreBoutWindow: Double?
    @Option(help: "Longest segment in seconds (longer ones are classified piecewise) instead of the default; the model was fitted with the default.")
    var maxSegment: Double?
    @Option(help: "Drop below a segment's peak SNR (dB) that ends it instead of the default; the model was fitted with the default.")
    var splitDrop: Float?
    @Option(help: "SNR (dB) at which a segment opens instead of the default; the model was fitted with the default.")
    var onThreshold: Float?
    @Option(help: "SNR (dB) under which a frame is inactive instead of the default; the model was fitted with the default.")
    var offThreshold: Float?

    func run() throws {
        let reader = try SceneReader(path: scenes.input)
        let out = try LineWriter(path: scenes.output)
        let loaded = try model.map { try SegmentModel.loadStages(contentsOf: URL(fileURLWithPath: $0)) }
        var configuration = DetectorConfiguration.default
        configuration.minEventProbability.merge(
            try perClass(minEventProbability, option: "--min-event-probability", example: "TYPE=P, e.g. coughing=0.6"),
            uniquingKeysWith: { $1 })
        configuration.longEventSec.merge(
            try perClass(longEvent, option: "--long-event", example: "TYPE=SECONDS, e.g. coughing=0.7"),
            uniquingKeysWith: { $1 })
        configuration.minLongEventProbability.merge(
            try perClass(minLongEventProbability, option: "--min-long-event-probability", example: "TYPE=P, e.g. coughing=0.5"),
            uniquingKeysWith: { $1 })
        configuration.classWeights = try perClass(classWeight, option: "--class-weight", example: "TYPE=W, e.g. snoring=2")
        if let sustainedSpeechWindow { configuration.sustainedSpeechWindowSec = sustainedSpeechWindow }
        if let sustainedSpeechShare { configuration.sustainedSpeechShare = sustainedSpeechShare }
        if let machineEcho { configuration.machineEcho = machineEcho }
        if let machineEchoWhileTicking { configuration.machineEchoWhileTicking = machineEchoWhileTicking }
        if let machineEchoAfter { configuration.machineEchoAfter = machineEchoAfter }
        if let isolatedSnoreProbability { configuration.isolatedSnoreProbability = isolatedSnoreProbability }
        if let snoreBoutWindow { configuration.snoreBoutWindowSec = snoreBoutWindow }
        if let maxSegment { configuration.maxSegmentSec = maxSegment }
        if let splitDrop { configuration.splitDropDb = splitDrop }
        if let onThreshold { configuration.onThresholdDb = onThreshold }
        if let offThreshold { configuration.offThresholdDb = offThreshold }
        // Settings from the command line: a bad one is a usage error, not an internal one.
        do { try configuration.validate() } catch { throw ValidationError("\(error)") }
        var index = 0
        while let samples = try reader.next() {
            var detector = try EventDetector(configuration: configuration, classifier: loaded?.classifier,
                                             context: loaded?.context, screen: loaded?.screen)
            var events: [SoundEvent] = []
            func take(_ produced: [AnalysisEvent]) {
                for e in produced { if case .eventEnded(let s) = e { events.append(s) } }
            }
            let clock = ContinuousClock()
            let began = clock.now
            var elapsed = Duration.zero
            try feedScene(samples) { event in
                switch event {
                case .audio, .features:
                    if !featuresOnly { take(detector.handle(event)) }
                case .sessionEnding:
                    elapsed = clock.now - began     // detection's own time, without the end-of-scene flush
                    if !featuresOnly { take(detector.handle(event)) }
                default: break
                }
            }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            let what = featuresOnly ? "features only" : "features + detection"
            StandardError.write("scene \(index): \(Double(samples.count) / 16000) s of audio in "
                + String(format: "%.3f", seconds) + " s (\(what))")
            for e in events {
                var line = "{\"scene\":\(index),\"type\":\"\(e.type.rawValue)\",\"start\":\(e.start),\"end\":\(e.end),"
                    + "\"probability\":\(e.probability)"
                if let sig = e.signature { line += ",\"signature\":" + jsonNumbers(sig) }
                try out.write(line + "}")
            }
            index += 1
        }
        try out.flush()
    }
}
