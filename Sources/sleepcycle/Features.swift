import ArgumentParser
import SleepCycleAudio
import SleepCycleDSP
import Foundation

/// `sleepcycle features FILE`: per-frame DSP features on the 16 kHz analysis timeline (docs/0001-dsp-features.md).
struct Features: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print per-frame audio features (RMS, spectral shape, zero-crossing rate, MFCCs) as CSV or JSON.",
        discussion: """
            One row per frame on the 16 kHz analysis timeline; `time` is the frame centre in seconds. Frames are \
            centred (librosa center=True, zero padding) with a periodic Hann window. Stereo files give a \
            `channel` column (0 then 1 for each frame). Values have 6 significant digits. \
            JSON: {"file", "sampleRate", "frameLength", "hopLength", "channels", "columns": [...], \
            "frames": [[...], ...]} with one array per row in `columns` order; NaN/inf become null.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable { case csv, json }

    @Argument(help: "The audio file (any format libsndfile reads; resampled to 16 kHz); '-': standard input.",
              completion: .file())
    var file: String

    @Option(help: "Output format: csv or json.")
    var format: Format = .csv

    @Option(parsing: .unconditional,
            help: "Frame (FFT) length in samples at 16 kHz: even, 64…65536.")
    var frameLength: Int = 1024

    @Option(parsing: .unconditional,
            help: "Hop between frame centres in samples at 16 kHz: 1…frame length.")
    var hopLength: Int = 512

    enum Planning: String, ExpressibleByArgument, CaseIterable { case estimate, measure }

    @Option(help: ArgumentHelp("FFTW planner rigor (benchmarking only).", visibility: .hidden))
    var fftPlanning: Planning = .estimate

    func validate() throws {
        do {
            try FeatureAnalyzer.validate(frameLength: frameLength, hopLength: hopLength,
                                         sampleRate: AudioFileSource.analysisRate)
        } catch let error as DSPError {
            throw ValidationError("--frame-length \(frameLength) / --hop-length \(hopLength): \(error.message)")
        }
    }

    @OptionGroup var diagnostics: DiagnosticOptions

    func run() throws {
        diagnostics.bootstrap()
        FFTPlanCache.shared.rigor = fftPlanning == .measure ? .measure : .estimate
        // Blocks of 4096 keep every per-block buffer below glibc's mmap threshold (128 KB): with the default
        // 16384 each read mmaps and page-faults fresh memory (~0.15 s of system time per hour of audio).
        let source = file == "-" ? try AudioFileSource(fileDescriptor: STDIN_FILENO, name: "-", blockFrames: 4096)
            : try AudioFileSource(path: file, blockFrames: 4096)
        defer { source.close() }
        let out = OutputByteWriter(fd: STDOUT_FILENO)
        do {
            try FeatureTableWriter.write(source: source, frameLength: frameLength, hopLength: hopLength,
                                         json: format == .json, fileName: file, to: out)
        } catch let error as OutputError {
            throw error.brokenPipe ? CLIError(.brokenPipe, "") : CLIError(.ioError, error.message)
        }
        // Problems that did not stop the run (e.g. a truncated file: the frames present were written).
        for warning in source.warnings { Diagnostics.log.warning("\(warning.description)") }
    }
}
