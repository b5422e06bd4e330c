import ArgumentParser
import Foundation
import SleepCycle
import SleepCycleAudio
import SleepCycleFormats

/// `sleepcycle record`: a night analysed live from an ALSA device or raw PCM on standard input, journaled into the
/// store so that a crash or a power cut loses at most seconds of it (`record --resume`).
struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record and analyse a night live, from an ALSA device or raw PCM on standard input.",
        discussion: """
            Stops on Ctrl-C (SIGINT), SIGTERM or SIGHUP, at --duration, or at the end of the input; then stores \
            the night's result and prints it like analyze. The night is journaled into the store every half \
            second of audio: after a crash or a power cut, 'sleepcycle record --resume' continues it (same session \
            id; the time in between is missing input; the night's --duration end and --alarm-command are kept). \
            docs/0008-live-nights.md describes the store and the journal.
            """)

    @Option(help: ArgumentHelp("ALSA capture device (default: default; e.g. hw:1,0, plughw:1, pulse).",
                               valueName: "name"))
    var device: String?

    @Option(help: ArgumentHelp("Read raw interleaved PCM from standard input ('-') or from a file or FIFO "
                               + "instead of a device.", valueName: "-|path"), completion: .file())
    var input: String?

    @Option(help: "Sample format of --input: s16le or f32le (default s16le).")
    var inputFormat: RawPCMEncoding?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Sample rate of the input in Hz, 8000–192000 (default 16000).", valueName: "Hz"))
    var rate: Int?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Channels of the input: 1, or 2 for two microphones (default 1).", valueName: "1|2"))
    var channels: Int?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Stop after this much audio, e.g. 8h, 7h30m (default: until stopped).",
                               valueName: "duration"),
            transform: { try DurationText.parse($0, range: 1...(48 * 3600)).seconds })
    var duration: Double?

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: ArgumentHelp("Wall-clock time of the first sample, ISO 8601 with its offset (default: now, in "
                               + "this machine's UTC offset). With --resume: the time of the new input's first sample.",
                               valueName: "ISO8601"), transform: OptionValue.startTime)
    var start: ISO8601Time?

    @Option(help: ArgumentHelp("Smart alarm time HH:MM, local time (in the offset of --start if given): wakes the "
                               + "sleeper in light sleep within the window before it.", valueName: "HH:MM"),
            transform: OptionValue.clockTime)
    var alarm: ClockTime?

    @Option(parsing: .unconditional,
            help: ArgumentHelp("Smart-alarm window before the alarm time (default 30m).", valueName: "duration"),
            transform: OptionValue.alarmWindow)
    var alarmWindow: Double?

    @Option(help: ArgumentHelp("Run this with /bin/sh -c once when the smart alarm fires; SLEEPCYCLE_ALARM_RULE and "
                               + "SLEEPCYCLE_ALARM_TIME are in its environment.", valueName: "command"))
    var alarmCommand: String?

    @Option(name: .customLong("channel-separation"), help: ArgumentHelp(
        "Two sleepers, one per channel of a stereo input (--channels 2): bedside, centered or strength, as for "
        + "analyze. A resumed night keeps its setting.", valueName: "bedside|centered|strength"))
    var channelSeparation: ChannelSeparationConfig.Preset?

    @Option(help: "Output format of the final result: text, json, csv (a row per 30-s epoch) or html (a report).")
    var format: Analyze.Format = .text

    @Option(help: ArgumentHelp("Write the final result to this file ('-': standard output).", valueName: "path"),
            completion: .file())
    var output: String?

    @Flag(help: "Continue an interrupted night (the most recent one, or ID) instead of starting a new one.")
    var resume = false

    @Argument(help: "With --resume: the interrupted night's session id (or a unique prefix).")
    var night: String?

    @Flag(help: "Do not show the one-line status (it is only shown when standard error is a terminal).")
    var noStatus = false

    @Option(help: ArgumentHelp("Follow a wearable's readings while recording: a file another program appends to, "
                               + "or a FIFO; JSON lines of the wearable schema or CSV (docs/cli.md). Heart frames, "
                               + "the night's HR and HRV, and staging with heart rate.", valueName: "path"),
            completion: .file())
    var hr: String?

    @Option(help: ArgumentHelp("Encrypt the wearable readings journaled into the store with this AES-256 key file "
                               + "(32 bytes or 64 hex digits, as --clips-key); resuming the night needs it again.",
                               valueName: "path"), completion: .file())
    var wearableKey: String?

    @OptionGroup var clipOptions: ClipOptions

    @OptionGroup var diagnostics: DiagnosticOptions

    func validate() throws {
        if night != nil && !resume { throw ValidationError("a night id is only taken with --resume") }
        if input != nil && device != nil { throw ValidationError("--input and --device cannot be used together") }
        if input == nil && (inputFormat != nil) { throw ValidationError("--input-format needs --input") }
        if let channels, !(1...2).contains(channels) { throw ValidationError("--channels must be 1 or 2 (got \(channels))") }
        if let rate, !(8_000...192_000).contains(rate) { throw ValidationError("--rate must be 8000–192000 Hz (got \(rate))") }
        if alarmWindow != nil && alarm == nil { throw ValidationError("--alarm-window needs --alarm") }
        if alarmCommand != nil && alarm == nil && !resume { throw ValidationError("--alarm-command needs --alarm") }
        if resume && alarm != nil { throw ValidationError("--alarm cannot change on --resume: the night keeps its alarm") }
        if resume && channelSeparation != nil {
            throw ValidationError("--channel-separation cannot change on --resume: the night keeps its setting")
        }
    }

    func run() async throws {
        diagnostics.bootstrap()
        let destination = try OutputTarget.resolve(output, inputs: [input, hr, wearableKey, clipOptions.clipsKey]
            .compactMap { $0 }.filter { $0 != "-" } + OutputTarget.databaseFiles(storeOptions.path),
            made: [clipOptions.clips, PathEncoding.folder(of: storeOptions.path)].compactMap { $0 }.filter { !$0.isEmpty })
        try refuseAnAudioFileInput()
        let store = try storeOptions.open()
        let resuming = try resume ? interruptedNight(in: store) : nil
        let settings = inputSettings(resuming: resuming)
        let startTime = start ?? Self.now()
        var options = PipelineOptions()
        if let alarm {
            // Without --start the night is the machine's: its zone's rules place the alarm (a daylight-saving change
            // in the night moves it by the hour); --start gives a fixed offset.
            let time = start == nil ? alarm.nextOccurrence(after: startTime.date, utcOffset: Self.localOffset)
                : alarm.nextOccurrence(after: startTime.date, utcOffsetSeconds: startTime.utcOffsetSeconds)
            options.alarm = .init(time: time, windowSeconds: alarmWindow ?? 1800)
        }
        if let preset = channelSeparation {
            guard settings.channels == 2 else {
                throw CLIError(.usage, "--channel-separation needs a stereo input (--channels 2, one channel per sleeper); "
                               + "the input has \(settings.channels) channel(s)")
            }
            options.channelSeparation = .preset(preset)
        }
        let resumedHeader = resuming.flatMap { try? JSONDecoder().decode(NightHeader.self, from: $0.header) }
        let recorded = resumedHeader?.recorderSettings ?? [:]
        // A resumed night keeps its alarm command and the end its --duration set (both were lost with the process:
        // the alarm rang without a sound, and the recorder ran on into the next day).
        let alarmCommand = self.alarmCommand ?? recorded[Self.alarmCommandKey]
        if let resuming, self.alarmCommand != nil, resumedHeader?.alarm == nil {
            throw CLIError(.usage, "--alarm-command: night \(resuming.id.uuidString) has no alarm (--alarm is set when a "
                + "night starts)")
        }
        var duration = self.duration
        var resumeAt = startTime.date
        if let resuming, duration == nil, let end = recorded[Self.durationEndKey].flatMap(Double.init) {
            let remaining = end - startTime.date.timeIntervalSince1970
            if remaining >= 1 {
                duration = remaining
            } else {
                // Its --duration ended while it was interrupted: the night is completed as the journal left it.
                duration = 0
                resumeAt = resuming.endTime
                let endText = ISO8601Time(date: Date(timeIntervalSince1970: end), utcOffsetSeconds: startTime.utcOffsetSeconds)
                Diagnostics.log.info("night \(resuming.id.uuidString) reached its --duration end \(endText.description) while interrupted: storing it as it was")
            }
        }
        options.clips = try clipOptions.option() ?? (resuming != nil ? ClipOptions.option(recorded: recorded) : nil)
        options.clips?.durable = true
        options.wearableKey = try wearableKey.map { path throws(ClipError) in try ClipKey.load(path: path) }
        let engine = SleepAnalysisEngine(options: options)
        try await engine.initialize(options: options, channelCount: settings.channels, store: store)
        let status = LiveStatus(enabled: !noStatus && !diagnostics.quiet && isatty(STDERR_FILENO) == 1)
        let stop = StopSignal()
        stop.watchSignals()
        let alarmTask = alarmCommand.map { command in
            let stream = engine.alarmStream
            return Task { for await ringing in stream { AlarmCommand.run(command, ringing: ringing) } }
        }
        // The wearable's file is opened before the night starts: a path that cannot be read leaves no night behind.
        let wearable = try hr.map { path in
            let (stream, continuation) = AsyncStream.makeStream(of: [WearMetrics].self)
            let follower = try WearableFollower(path: path, origin: startTime) { continuation.yield($0) }
            follower.onStop = { continuation.finish() }
            return (follower: follower, stream: stream)
        }
        // --duration ends the source itself after exactly that much audio (gaps included), so that the night is as
        // long as asked however far the engine runs behind the input.
        let opened = try settings.openSource(stop: stop)
        let limited = duration.map { LimitedSource(opened, limit: AnalysisClock.samples(seconds: $0)) }
        let source: any AudioSource = limited ?? opened
        let id: UUID
        if let resuming {
            id = try await engine.resumeAnalysis(night: resuming.id, at: resumeAt, using: source,
                                                 eventListeners: [status.listener])
            Diagnostics.log.info("resumed night \(id.uuidString)")
            if resumeAt == startTime.date { Self.warnIfBefore(startTime, night: resuming) }
        } else {
            id = try await engine.startAnalysis(
                config: SleepAnalysisConfig(sessionId: nil, utcOffsetSeconds: startTime.utcOffsetSeconds,
                                            recorderSettings: settings.recorded.merging(
                                                ClipOptions.recorded(options.clips, keyPath: clipOptions.clipsKey)
                                                    .merging(nightSettings(start: startTime.date)) { a, _ in a }) { a, _ in a }),
                at: startTime.date, using: source, eventListeners: [status.listener])
            Diagnostics.log.info("recording night \(id.uuidString) into \(MessageText.path(store.path))")
        }
        // The wearable's readings, pushed in the order they were read (one task: the engine is an actor), once the
        // night runs; what arrived before waits in the stream.
        let pushing = wearable.map { w in Task { for await readings in w.stream { try? await engine.push(readings) } } }
        let nightOffset = resuming.flatMap { try? JSONDecoder().decode(NightHeader.self, from: $0.header).utcOffsetSeconds }
            ?? startTime.utcOffsetSeconds
        let watchers = status.watch(engine: engine, offsetSeconds: nightOffset)
        let ended = Task {
            try? await engine.waitForSourceEnd()
            stop.request(limited?.reachedLimit == true ? "--duration reached" : "the input ended")
        }
        let reason = await stop.wait()
        Diagnostics.log.info("stopping: \(reason)")
        if let follower = wearable?.follower, let hr {
            let (readings, bad) = follower.stop()
            await pushing?.value
            Diagnostics.log.info("\(MessageText.path(hr)): \(readings) wearable readings")
            if bad > 0 { Diagnostics.log.warning("\(MessageText.path(hr)): \(bad) lines could not be read and were skipped") }
        }
        let result: AnalysisResult
        do {
            result = try await engine.stopAnalysis()
        } catch {
            // The input failed before any audio (standard input closed, `<&-`): no night to keep, as for an input
            // that ended at once — an empty "interrupted" night would be what `--resume` picks next.
            if resuming == nil, let night = try? store.night(id), night.endTime <= night.startTime {
                _ = try? store.delete(id)
            }
            throw error
        }
        status.finish()
        ended.cancel()
        watchers.forEach { $0.cancel() }
        alarmTask?.cancel()
        for w in result.warnings { Diagnostics.log.warning("\(w.message)") }
        if resuming == nil, result.analysedSamples == 0 {
            // Nothing was heard (an input that ended at once, a stop before the first block): no night to keep.
            _ = try? store.delete(id)
            throw CLIError(.noInput, "\(settings.input.map { MessageText.path($0) } ?? settings.device ?? "default"): "
                + "no audio was recorded (\(reason)); nothing was stored")
        }
        let clipLinks = ReportFormat.clipLinks(clipsDirectory: options.clips?.directory, output: destination)
        // The text, CSV and HTML are made from the night as stored (its JSON read back), so that `sessions show`
        // prints the same: the JSON rounds, and a probability of 0.8549 showed as 0.86 here and 0.85 from the store.
        let asStored = format != .json
        if let separated = await engine.separatedResult {
            let shown = asStored ? (try? SeparatedAnalysisResult(json: Data(separated.jsonString().utf8),
                                                                 config: separated.config)) ?? separated : separated
            try destination.write(ReportFormat.render(shown, format: format, clips: clipLinks))
        } else {
            let shown = asStored ? (try? JSONDecoder().decode(AnalysisResult.self, from: Data(result.jsonString().utf8)))
                ?? result : result
            try destination.write(ReportFormat.render(shown, format: format, clips: clipLinks))
        }
        if result.warnings.contains(where: { $0.code == .notStored }) { throw ExitCode(CLIError.Status.ioError.rawValue) }
    }

    /// An audio file given as `--input` (a regular file, or standard input redirected from one) is refused before
    /// the store, its folder or the clips folder is made; from a pipe the source refuses it at its first bytes.
    private func refuseAnAudioFileInput() throws {
        guard let input else { return }
        let encoding = inputFormat ?? .s16le
        if input == "-" {
            if let refusal = RawPCMSource.refusal(fileDescriptor: STDIN_FILENO, name: "-", encoding: encoding) { throw refusal }
            return
        }
        // Only a regular file is opened here: opening a FIFO would let its writer start, and closing it again
        // would kill that writer (SIGPIPE) before the recorder opened it for real.
        var st = stat()
        guard PathEncoding.withCString(input, { stat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return }
        let fd = PathEncoding.withCString(input) { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { return }       // the source's own open names the problem
        defer { close(fd) }
        if let refusal = RawPCMSource.refusal(fileDescriptor: fd, name: input, encoding: encoding) { throw refusal }
    }

    static let alarmCommandKey = "alarmCommand", durationEndKey = "durationEnd"

    /// What a resume keeps of this night's options: the alarm command and where --duration ends (seconds since 1970).
    private func nightSettings(start: Date) -> [String: String] {
        var out: [String: String] = [:]
        if let alarmCommand { out[Self.alarmCommandKey] = alarmCommand }
        if let duration { out[Self.durationEndKey] = String(start.timeIntervalSince1970 + duration) }
        return out
    }

    /// Now, in the machine's UTC offset as the C library reads `TZ` (`localtime_r`'s `tm_gmtoff`): Foundation's
    /// `TimeZone.current` misreads POSIX zone strings (`TZ=UTC+14` is 14 h *behind* UTC, `CET-1CEST,…` is not UTC).
    static func now() -> ISO8601Time {
        let date = Date()
        return ISO8601Time(date: date, utcOffsetSeconds: localOffset(at: date))
    }

    /// The machine's UTC offset at `date` as the C library reads `TZ` (POSIX zone strings too).
    static func localOffset(at date: Date) -> Int {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        return localtime_r(&seconds, &parts) != nil ? Int(parts.tm_gmtoff) : TimeZone.current.secondsFromGMT(for: date)
    }

    /// Warns when --start lies before the resumed night's last audio: the new audio continues at the journal's end,
    /// not at --start. (A --start more than 48 h after it is refused by the engine.)
    static func warnIfBefore(_ start: ISO8601Time, night: StoredNight) {
        guard start.date.timeIntervalSince(night.endTime) < -0.5 else { return }
        let end = ISO8601Time(date: night.endTime, utcOffsetSeconds: start.utcOffsetSeconds).description
        let id = night.id.uuidString
        Diagnostics.log.warning("--start \(start.description) is before night \(id)'s last audio (\(end)): the new audio continues from there")
    }

    /// A night another recorder holds cannot be resumed: the store is busy (75).
    private static func beingRecorded(_ night: StoredNight, store: NightStore) -> CLIError {
        CLIError(.busy, "\(MessageText.path(store.path)): night \(night.id.uuidString) is being recorded by another "
            + "recorder: nothing to resume")
    }

    /// The night --resume continues: the one named, else the most recent interrupted one.
    private func interruptedNight(in store: NightStore) throws -> StoredNight {
        if let night {
            let (_, found) = try storeOptions.night(night)
            if found.state == .recording { throw Self.beingRecorded(found, store: store) }
            guard found.state == .interrupted else {
                throw CLIError(.usage, "night \(found.id.uuidString) is \(found.state.rawValue), not interrupted: nothing to resume")
            }
            return found
        }
        guard let latest = try store.latestInterrupted() else {
            // The night a running recorder holds is not interrupted: the store is busy, not empty of nights.
            if let recording = try store.nights().first(where: { $0.state == .recording }) {
                throw Self.beingRecorded(recording, store: store)
            }
            throw CLIError(.noInput, "\(MessageText.path(store.path)): no interrupted night to resume")
        }
        return latest
    }

    /// The input to record from: the options given, else (on --resume) those the night was recorded with.
    private func inputSettings(resuming: StoredNight?) -> LiveInput {
        let recorded = resuming.flatMap { try? JSONDecoder().decode(NightHeader.self, from: $0.header).recorderSettings } ?? [:]
        let given = input != nil || device != nil
        return LiveInput(
            input: given ? input : recorded["input"],
            device: given ? device : recorded["device"],
            encoding: inputFormat ?? recorded["inputFormat"].flatMap(RawPCMEncoding.init(rawValue:)) ?? .s16le,
            rate: rate ?? recorded["rate"].flatMap(Int.init) ?? 16_000,
            channels: channels ?? recorded["channels"].flatMap(Int.init) ?? 1)
    }
}

/// Where a live night's audio comes from.
struct LiveInput {
    var input: String?
    var device: String?
    var encoding: RawPCMEncoding
    var rate: Int
    var channels: Int

    /// Kept with the night, so that `--resume` without input options reads the same input again.
    var recorded: [String: String] {
        var s = ["inputFormat": encoding.rawValue, "rate": "\(rate)", "channels": "\(channels)"]
        if let input { s["input"] = input } else { s["device"] = device ?? "default" }
        return s
    }

    /// The night's audio source. A FIFO given as `--input` is waited on (until a writer writes) without blocking
    /// in `open`, so that SIGINT / SIGTERM (`stop`) still end the command while no writer has come.
    func openSource(stop: StopSignal) throws -> any AudioSource {
        guard let input else {
            return try ALSACaptureSource(device: device ?? "default", sampleRate: rate, channels: channels)
        }
        if input == "-" {
            guard isatty(STDIN_FILENO) == 0 else {
                throw CLIError(.usage, "-: standard input is a terminal; pipe raw PCM into it (e.g. arecord -t raw -f S16_LE -r 16000 | …)")
            }
            return try RawPCMSource(fileDescriptor: STDIN_FILENO, name: "-", encoding: encoding, sampleRate: rate,
                                    channels: channels, blockFrames: 8_000)
        }
        let fd = PathEncoding.withCString(input) { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw CLIError(.noInput, "\(MessageText.path(input)): \(InputFile.describe(errno: errno))") }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFIFO {
            // Readable once a writer writes (or has come and gone: then the input is empty). Linux reports no hang-up
            // on a FIFO no writer has opened yet, so this waits for the first writer.
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            while stop.reason == nil {
                let ready = poll(&waiting, 1, 200)
                if ready > 0 || (ready < 0 && errno != EINTR) { break }
            }
            if let reason = stop.reason {
                close(fd)
                throw CLIError(.noInput, "\(MessageText.path(input)): no audio was recorded (\(reason) before anything "
                    + "was written to the FIFO); nothing was stored")
            }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return try RawPCMSource(fileDescriptor: fd, name: input, encoding: encoding, sampleRate: rate, channels: channels,
                                blockFrames: 8_000)
    }
}

extension RawPCMEncoding: ExpressibleByArgument {}
