import ArgumentParser
import Foundation
import SleepCycle
import SleepCycleFormats

/// `sleepcycle sessions list|show|export|delete|prune`: the nights in the store.
struct Sessions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The nights in the store: list them, show or export one, report trends, delete or prune them.",
        discussion: "The store is --store PATH, else $SLEEPCYCLE_STORE, else $XDG_DATA_HOME/sleepcycle/nights.sqlite "
            + "(~/.local/share/sleepcycle/nights.sqlite). A night is named by its session id or a unique prefix of it.",
        subcommands: [List.self, Show.self, Export.self, Report.self, Delete.self, Prune.self])
}

/// `--store PATH` and the night store it opens.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The night store (an SQLite database; default: $SLEEPCYCLE_STORE, else "
                               + "$XDG_DATA_HOME/sleepcycle/nights.sqlite).", valueName: "path"), completion: .file())
    var store: String?

    var path: String { store ?? NightStore.defaultPath() }

    /// Opens (or creates) the store; `$SLEEPCYCLE_STORE_MAX_BYTES` caps its size (a full store then fails its writes
    /// as a full disk does — for small partitions, and for testing that path).
    func open() throws -> NightStore {
        return try NightStore(path: path, maximumBytes: try Self.sizeCap())
    }

    /// `$SLEEPCYCLE_STORE_MAX_BYTES`: a whole number of bytes, 1 or more; unset or empty is no cap. Anything else
    /// is a usage error rather than silently no cap (or, for a negative number, a cap of nothing).
    static func sizeCap(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(CLIError) -> Int64? {
        guard let text = environment["SLEEPCYCLE_STORE_MAX_BYTES"], !text.isEmpty else { return nil }
        guard let bytes = Int64(text), bytes >= 1 else {
            throw CLIError(.usage, "SLEEPCYCLE_STORE_MAX_BYTES='\(MessageText.field(text))' is not a size (expected a whole "
                + "number of bytes, e.g. 1000000000)")
        }
        return bytes
    }

    /// The store, or nil when there is none yet (nothing has been recorded): a missing file, an empty one or a
    /// database with no tables, all left as they are. Another program's database is refused unchanged. With
    /// `toWrite` false (the commands that only read) the store is opened read-only: nothing in it changes, and a
    /// store the user may only read can be read.
    func existing(toWrite: Bool) throws -> NightStore? {
        // Only a path that does not exist is no store: one that cannot be looked at (a folder the user may not
        // enter) is an error, not an empty list of nights.
        var st = stat()
        guard PathEncoding.withCString(path, { stat($0, &st) }) == 0 else {
            if errno == ENOENT { return nil }
            throw CLIError(.noInput, "\(MessageText.path(path)): \(InputFile.describe(errno: errno))")
        }
        guard (st.st_mode & S_IFMT) != S_IFDIR else {
            throw CLIError(.noInput, "\(MessageText.path(path)): is a directory (expected a sleepcycle store)")
        }
        guard toWrite else { return try NightStore.existingForReading(path: path) }
        return try NightStore.existing(path: path, maximumBytes: try Self.sizeCap())
    }

    /// A night a command names: one that can be read, or a damaged one (`sessions delete` can remove it).
    enum NamedNight {
        case night(StoredNight)
        case damaged(DamagedNight)
    }

    /// The night `id` names (a session id or a unique prefix of one), damaged or not.
    func named(_ id: String, toWrite: Bool) throws -> (NightStore, NamedNight) {
        guard let store = try existing(toWrite: toWrite) else {
            throw CLIError(.noInput, "\(MessageText.path(path)): no store here yet (nothing has been recorded)")
        }
        let wanted = id.uppercased()
        guard !wanted.isEmpty else { throw CLIError(.usage, "'' (an empty session id) names no night; give a session id") }
        guard wanted.allSatisfy({ $0 == "-" || $0.isHexDigit }) else {
            throw CLIError(.usage, "'\(MessageText.field(id))' is not a session id (hex digits and dashes)")
        }
        let listing = try store.listing()
        var matches = listing.nights.filter { $0.id.uuidString.hasPrefix(wanted) }.map(NamedNight.night)
            + listing.damaged.filter { $0.id.uppercased().hasPrefix(wanted) }.map(NamedNight.damaged)
        if matches.isEmpty {
            // A two-sleeper night's secondary session id (the one `show` prints for the second sleeper) names the
            // night too; it is derived from the primary's, the night's own id.
            matches = listing.nights.filter {
                SessionIdentifier.uuidV5(namespace: $0.id, name: "secondary").uuidString.hasPrefix(wanted)
            }.map(NamedNight.night)
        }
        guard matches.count == 1, let night = matches.first else {
            if matches.isEmpty {
                throw CLIError(.noInput, "no night '\(MessageText.field(id))' in \(MessageText.path(path))")
            }
            throw CLIError(.usage, "'\(MessageText.field(id))' names \(matches.count) nights; give more of the id")
        }
        return (store, night)
    }

    /// The night `id` names (a session id or a unique prefix of one); a damaged one is a one-line error (exit 65).
    func night(_ id: String) throws -> (NightStore, StoredNight) {
        switch try named(id, toWrite: false) {
        case (let store, .night(let night)): return (store, night)
        case (let store, .damaged(let damaged)): throw StoreError(damaged: damaged, path: store.path)
        }
    }
}

/// The warning for a night a command leaves out because it is damaged: `<store>: night <id> is damaged (…); skipped`.
private func warnSkipped(_ error: StoreError) {
    Diagnostics.log.warning("\(error.description); skipped")
}

extension Sessions {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the stored nights, oldest first.")
        enum Format: String, ExpressibleByArgument, CaseIterable { case text, json, csv }
        @Option(help: "Output format: text, json or csv.") var format: Format = .text
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var diagnostics: DiagnosticOptions

        func run() throws {
            diagnostics.bootstrap()
            var nights: [StoredNight] = []
            if let store = try storeOptions.existing(toWrite: false) {
                let listing = try store.listing()
                for damaged in listing.damaged { warnSkipped(StoreError(damaged: damaged, path: store.path)) }
                nights = listing.nights
            }
            let text: String
            switch format {
            case .json: text = SessionsFormat.json(nights)
            case .csv: text = SessionsFormat.csv(nights)
            case .text: text = SessionsFormat.text(nights)
            }
            try OutputTarget.standardOutput.write(text)
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a stored night's result, as analyze prints it (a night still recording or interrupted: "
                + "the result of its journal so far).")
        @Argument(help: "The night's session id (or a unique prefix).") var id: String
        @Option(help: ArgumentHelp("Output format: text, json (the JSON of docs/json.md), csv (a row per 30-s epoch) or "
                                   + "html (a report to open in a browser).")) var format: Analyze.Format = .text
        @Option(help: ArgumentHelp("Write the output to this file ('-': standard output).", valueName: "path"),
                completion: .file())
        var output: String?
        @Option(help: ArgumentHelp("The key of a night whose wearable readings were encrypted (record "
                                   + "--wearable-key); needed only for a night being recorded or interrupted.",
                                   valueName: "path"), completion: .file())
        var wearableKey: String?
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var diagnostics: DiagnosticOptions

        func run() throws {
            diagnostics.bootstrap()
            try Self.print(id: id, format: format, output: output, store: storeOptions, wearableKey: wearableKey)
        }

        static func print(id: String, format: Analyze.Format, output: String?, store: StoreOptions,
                          wearableKey: String? = nil) throws {
            let destination = try OutputTarget.resolve(output, inputs: OutputTarget.databaseFiles(store.path) + [wearableKey].compactMap { $0 })
            let key = try wearableKey.map { path throws(ClipError) in try ClipKey.load(path: path) }
            let (nights, night) = try store.night(id)
            let result = try nights.nightResult(of: night, wearableKey: key)
            let clipLinks = ReportFormat.clipLinks(clipsDirectory: nil, clipFiles: try nights.clipFiles(of: night.id),
                                                   output: destination)
            switch result {
            case .one(let r): try destination.write(ReportFormat.render(r, format: format, clips: clipLinks))
            case .two(let r): try destination.write(ReportFormat.render(r, format: format, clips: clipLinks))
            }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a stored night's result to a file (as show; "
            + "JSON by default).")
        @Argument(help: "The night's session id (or a unique prefix).") var id: String
        @Option(help: "Output format: json (default), text, csv or html.") var format: Analyze.Format = .json
        @Option(help: ArgumentHelp("Write the output to this file ('-': standard output).", valueName: "path"),
                completion: .file())
        var output: String?
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var diagnostics: DiagnosticOptions

        func run() throws {
            diagnostics.bootstrap()
            try Show.print(id: id, format: format, output: output, store: storeOptions)
        }
    }

    struct Report: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trends across the stored nights: duration, sleep, efficiency, snoring, breathing rate, "
                + "awakenings (a row or a bar per night, oldest first).")
        enum Format: String, ExpressibleByArgument, CaseIterable { case html, csv }
        @Option(help: "Output format: html (a report to open in a browser; default) or csv (a row per night).")
        var format: Format = .html
        @Option(parsing: .unconditional,
                help: ArgumentHelp("Only the most recent N nights (default: all).", valueName: "N"))
        var last: Int?
        @Option(help: ArgumentHelp("Write the output to this file ('-': standard output).", valueName: "path"),
                completion: .file())
        var output: String?
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var diagnostics: DiagnosticOptions

        func validate() throws {
            if let last, last < 1 { throw ValidationError("--last must be at least 1 (got \(last))") }
        }

        func run() throws {
            diagnostics.bootstrap()
            let destination = try OutputTarget.resolve(output, inputs: OutputTarget.databaseFiles(storeOptions.path))
            var trends: [NightTrend] = []
            if let store = try storeOptions.existing(toWrite: false) {
                let listing = try store.listing()
                for damaged in listing.damaged { warnSkipped(StoreError(damaged: damaged, path: store.path)) }
                var nights = listing.nights.sorted { $0.startTime < $1.startTime }
                if let last { nights = Array(nights.suffix(last)) }
                // A night whose result cannot be read is left out; the others are reported.
                trends = try nights.compactMap { night -> NightTrend? in
                    do {
                        switch try store.nightResult(of: night) {
                        case .one(let r): return NightTrend(night: night, result: r)
                        case .two(let r): return NightTrend(night: night, result: r.session(.primary))
                        }
                    } catch let error as StoreError where error.kind == .damaged {
                        warnSkipped(error)
                        return nil
                    }
                }
            }
            try destination.write(format == .html ? TrendReport.html(trends) : TrendReport.csv(trends))
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a stored night (its result and journal).")
        @Argument(help: "The night's session id (or a unique prefix).") var id: String
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var diagnostics: DiagnosticOptions

        func run() throws {
            diagnostics.bootstrap()
            let (store, named) = try storeOptions.named(id, toWrite: true)
            let night: UUID
            switch named {
            case .night(let stored): night = stored.id
            case .damaged(let damaged):
                // A damaged night goes too, unless its id itself is damaged (no night can be named by it).
                guard let id = UUID(uuidString: damaged.id) else { throw StoreError(damaged: damaged, path: store.path) }
                night = id
            }
            try store.delete(night, kept: warnKept)
            Diagnostics.log.info("deleted night \(night.uuidString)")
        }
    }

    struct Prune: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete the nights that started longer ago than "
            + "--older-than (a night being recorded is kept).")
        @Option(parsing: .unconditional,
                help: ArgumentHelp("Age, e.g. 30d, 12h, 2d12h.", valueName: "duration"),
                transform: { try DurationText.parse($0, range: 0...(100 * 366 * 86_400)).seconds })
        var olderThan: Double
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var diagnostics: DiagnosticOptions

        func run() throws {
            diagnostics.bootstrap()
            guard let store = try storeOptions.existing(toWrite: true) else { return }
            let removed = try store.prune(startedBefore: Date().addingTimeInterval(-olderThan), kept: warnKept)
            Diagnostics.log.info("pruned \(removed.count) night(s)")
            try OutputTarget.standardOutput.write(removed.map { $0.uuidString + "\n" }.joined())
        }
    }
}

/// The warning for clips `delete` and `prune` leave in place because another store indexed them.
private func warnKept(_ kept: NightStore.KeptClips) {
    let files = AnalysisResult.counted(kept.files, "clip file")
    let why = switch kept.reason {
    case .listedThere: "still lists them (this store is a copy of it)"
    case .unchecked: "cannot be read to tell whether it still lists them"
    }
    Diagnostics.log.warning("night \(kept.night.uuidString): its \(files) kept: \(MessageText.path(kept.store)) indexed them and \(why)")
}

/// The list of nights as text, JSON (the contract's `sessions list --format json`) and CSV.
enum SessionsFormat {
    static func json(_ nights: [StoredNight]) -> String {
        let items = nights.map { n -> String in
            let source = n.state == .complete ? String(decoding: n.source, as: UTF8.self) : sourceSoFar(n)
            let statistics = n.statistics.map { String(decoding: $0, as: UTF8.self) } ?? "null"
            return "  {\"sessionId\": \"\(n.id.uuidString)\", \"startTime\": \"\(ISO8601Time.utcString(from: n.startTime))\", "
                + "\"endTime\": \"\(ISO8601Time.utcString(from: n.endTime))\", \"state\": \"\(n.state.rawValue)\", "
                + "\"source\": \(source), \"statistics\": \(statistics)}"
        }
        return items.isEmpty ? "[]\n" : "[\n" + items.joined(separator: ",\n") + "\n]\n"
    }

    /// A night not yet complete keeps the `source` written when it began (duration 0): its duration so far is the
    /// span of its journaled audio.
    private static func sourceSoFar(_ n: StoredNight) -> String {
        guard let o = try? JSONSerialization.jsonObject(with: n.source) as? [String: Any],
              let path = o["path"] as? String, let rate = o["sampleRate"] as? Int, let channels = o["channels"] as? Int
        else { return String(decoding: n.source, as: UTF8.self) }
        let span = max(0, n.endTime.timeIntervalSince(n.startTime))
        return SourceSummary(path: path, sampleRate: rate, channels: channels, durationSec: span).jsonString()
    }

    static let csvHeader = "session_id,start_time,end_time,state,duration_s,total_sleep_s,sleep_onset_latency_s,"
        + "sleep_efficiency,awakenings,snore_time_s,time_in_bed_s,sleep_period_s,wake_after_sleep_onset_s,rem_latency_s,"
        + "light_pct,deep_pct,rem_pct,snore_score"

    static func csv(_ nights: [StoredNight]) -> String {
        var out = csvHeader + "\n"
        for n in nights {
            let s = statistics(n)
            func number(_ key: String) -> String { (s[key] as? NSNumber).map { "\($0)" } ?? "" }
            let shares = s["sleepStagePercentages"] as? [String: Any] ?? [:]
            func share(_ stage: String) -> String { (shares[stage] as? NSNumber).map { "\($0)" } ?? "" }
            // Times in the night's own offset, as `list` shows them and the report's CSV writes them.
            out += [n.id.uuidString, ISO8601Time.string(from: n.startTime, utcOffsetSeconds: n.utcOffsetSeconds),
                    ISO8601Time.string(from: n.endTime, utcOffsetSeconds: n.utcOffsetSeconds),
                    n.state.rawValue, AnalysisResult.fixed(n.endTime.timeIntervalSince(n.startTime), 3),
                    number("totalSleepDuration"), number("sleepOnsetLatency"), number("sleepEfficiency"),
                    number("numberOfAwakenings"), number("snoreTime"), number("timeInBed"), number("sleepPeriodTime"),
                    number("wakeAfterSleepOnset"), number("remLatency"), share("light"), share("deep"), share("rem"),
                    number("snoreScore")].joined(separator: ",") + "\n"
        }
        return out
    }

    static func text(_ nights: [StoredNight]) -> String {
        guard !nights.isEmpty else { return "no nights stored\n" }
        var out = "session                               start (local)         length      state        asleep\n"
        for n in nights {
            let local = ISO8601Time.LocalParts(date: n.startTime, utcOffsetSeconds: n.utcOffsetSeconds)
            let length = Int(n.endTime.timeIntervalSince(n.startTime))
            // The statistics are the stored JSON: a number out of any night's range is shown as none.
            let asleep = (statistics(n)["totalSleepDuration"] as? NSNumber).map(\.doubleValue)
                .flatMap { (0...StoredNight.longestSpan).contains($0) ? hm(Int($0)) : nil } ?? "–"
            out += n.id.uuidString + "  " + local.dateString + " " + local.clock().prefix(5) + "  "
                + hm(length).padding(toLength: 10, withPad: " ", startingAt: 0) + "  "
                + n.state.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0) + "  " + asleep + "\n"
        }
        return out
    }

    private static func statistics(_ n: StoredNight) -> [String: Any] {
        n.statistics.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
    }

    private static func hm(_ seconds: Int) -> String { "\(seconds / 3600) h \(String(format: "%02d", seconds % 3600 / 60)) min" }
}
