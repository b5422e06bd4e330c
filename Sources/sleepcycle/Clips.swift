import ArgumentParser
import AudioClips
import Foundation
import SleepCycle
import SleepCycleBus
import SleepCycleFormats

/// `--clips DIR` and its settings, shared by `analyze` and `record`.
struct ClipOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Write a FLAC clip of every event of the chosen types to DIR/<sessionId>/ (created if "
                               + "needed); the event's JSON gets \"clip\". Off unless given: bedroom audio is private.",
                               valueName: "dir"), completion: .directory)
    var clips: String?

    @Option(help: ArgumentHelp("Event types that get a clip (default snoring,talking,coughing; movement too if named).",
                               valueName: "types"), transform: ClipOptions.types)
    var clipTypes: Set<EventType>?

    @Option(help: ArgumentHelp("Encrypt every clip with AES-256-GCM (.flac.enc) using this key: 32 raw bytes or 64 hex "
                               + "digits. Nothing unencrypted is written.", valueName: "file"), completion: .file())
    var clipsKey: String?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("A clip's length around a shorter event (default 10s; a longer event's clip is the "
                               + "event, at most 60 s).", valueName: "duration"),
            transform: { try DurationText.parse($0, bareUnit: .seconds, range: 1...600).seconds })
    var clipLength: Double?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Only events at least this long get a clip, e.g. 2s (default: any).", valueName: "duration"),
            transform: { try DurationText.parse($0, bareUnit: .seconds, range: 0...600).seconds })
    var clipMinDuration: Double?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Per-night size cap of the clips, e.g. 200MB, 1GB (default 1GB); beyond it the most "
                               + "probable events keep theirs.", valueName: "size"), transform: ClipOptions.size)
    var clipsMaxSize: Int64?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("At most this many clips per event type (per sleeper with --channel-separation), "
                               + "the most probable (default: no limit).",
                               valueName: "n"))
    var clipsPerType: Int?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Source audio held for events decided after they end (default 150s with talking, else "
                               + "60s, more for clips over 42s): memory is this × rate × channels × 2 bytes.",
                               valueName: "duration"),
            transform: { try DurationText.parse($0, bareUnit: .seconds, range: 1...3600).seconds })
    var clipPreRoll: Double?

    func validate() throws {
        if clips == nil, clipTypes != nil || clipsKey != nil || clipLength != nil || clipMinDuration != nil
            || clipsMaxSize != nil || clipsPerType != nil || clipPreRoll != nil {
            throw ValidationError("the --clip… options need --clips DIR")
        }
        if let n = clipsPerType, n < 1 { throw ValidationError("--clips-per-type must be at least 1") }
        let length = clipLength ?? AudioClipsConfig().clipLength
        if let preRoll = clipPreRoll, preRoll < length {
            throw ValidationError("--clip-pre-roll \(String(format: "%g", preRoll)) s must be at least the clip length "
                + "(\(String(format: "%g", length)) s)")
        }
    }

    /// The pipeline's clip settings; the key file is read and the folder checked here, before any input is read (the
    /// folder itself is made when the analysis starts).
    func option() throws -> PipelineOptions.ClipsOption? {
        guard let clips else { return nil }
        var config = AudioClipsConfig()
        if let clipTypes { config.eventTypes = clipTypes }
        if let clipLength { config.clipLength = clipLength; config.maxClipLength = max(config.maxClipLength, clipLength) }
        if let clipMinDuration { for t in EventType.allCases { config.minimumDuration[t] = clipMinDuration } }
        if let clipsMaxSize { config.maxBytesPerNight = clipsMaxSize }
        config.maxClipsPerType = clipsPerType
        config.preRollSeconds = clipPreRoll
        if let problem = config.problem { throw CLIError(.usage, "--clips: \(problem)") }
        let key = try clipsKey.map { path throws(ClipError) in try ClipKey.load(path: path) }
        try AudioClipsFolder.check(clips)
        return .init(config: config, directory: clips, key: key)
    }

    /// The settings kept with a live night (its recorder settings), so that `record --resume` goes on making the same
    /// clips.
    static func recorded(_ option: PipelineOptions.ClipsOption?, keyPath: String?) -> [String: String] {
        guard let option, let directory = option.directory,
              let config = try? JSONEncoder().encode(option.config) else { return [:] }
        func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
        var settings = ["clips": absolute(directory), "clipsConfig": String(decoding: config, as: UTF8.self)]
        if let keyPath { settings["clipsKey"] = absolute(keyPath) }
        return settings
    }

    /// The clip settings a resumed night was recorded with, if it made clips.
    static func option(recorded settings: [String: String]) throws -> PipelineOptions.ClipsOption? {
        guard let directory = settings["clips"], let text = settings["clipsConfig"],
              let config = try? JSONDecoder().decode(AudioClipsConfig.self, from: Data(text.utf8)) else { return nil }
        let key = try settings["clipsKey"].map { path throws(ClipError) in try ClipKey.load(path: path) }
        try AudioClipsFolder.check(directory)
        return .init(config: config, directory: directory, key: key)
    }

    static func types(_ text: String) throws -> Set<EventType> {
        var set = Set<EventType>()
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            guard let t = EventType(rawValue: name) else {
                throw OptionValue.Problem("unknown event type '\(name)' (expected snoring, talking, coughing, movement)")
            }
            set.insert(t)
        }
        guard !set.isEmpty else { throw OptionValue.Problem("name at least one event type") }
        return set
    }

    /// `200MB`, `1GB`, `512KB`, `1000000` (bytes); decimal units.
    static func size(_ text: String) throws -> Int64 {
        let t = text.trimmingCharacters(in: .whitespaces).uppercased()
        let units: [(String, Double)] = [("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("G", 1e9), ("M", 1e6), ("K", 1e3), ("B", 1)]
        for (suffix, factor) in units where t.hasSuffix(suffix) {
            if let v = Double(t.dropLast(suffix.count)), v.isFinite, v > 0, v * factor >= 1, v * factor < 1e15 {
                return Int64(v * factor)
            }
            break
        }
        if let v = Int64(t), v > 0 { return v }
        throw OptionValue.Problem("expected a size such as 200MB or 1GB")
    }
}

/// `sleepcycle clips decrypt FILE --key FILE --output PATH`.
struct Clips: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with the audio clips of events (--clips DIR).",
        subcommands: [Decrypt.self])

    struct Decrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decrypt an encrypted clip (.flac.enc) back to its FLAC.",
            discussion: "A wrong key, or a file that was altered or cut short, is refused with one line and nothing "
                + "is written (docs/0010-audio-clips.md describes the container).")

        @Argument(help: "The encrypted clip ('-': standard input).", completion: .file())
        var file: String

        @Option(help: ArgumentHelp("The key the clips were encrypted with: 32 raw bytes or 64 hex digits.",
                                   valueName: "file"), completion: .file())
        var key: String

        @Option(help: ArgumentHelp("Where to write the FLAC ('-': standard output). A regular file is replaced "
                                   + "atomically, a device or FIFO written through.", valueName: "path"),
                completion: .file())
        var output: String

        func run() throws {
            let destination = try OutputTarget.resolve(output, inputs: [file, key])
            let clipKey = try ClipKey.load(path: key)
            // Standard input or a file, whatever it is (a directory, a closed descriptor): one line on failure.
            let data = try InputFile.read(file, limit: 1 << 30, text: false)
            let plain = try ClipContainer.open(data, key: clipKey, name: file == "-" ? "standard input" : file)
            try destination.write(plain)
        }
    }
}
