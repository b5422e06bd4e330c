import Dispatch
import Foundation
import SleepCycle
import SleepCycleAudio
import SleepCycleDSP

/// Streams a source through one `FeatureAnalyzer` per channel and writes the feature table (CSV or JSON).
enum FeatureTableWriter {
    /// The fixed column prefix (the contract: docs/cli.md, docs/0001-dsp-features.md).
    static let prefix = ["time", "rms", "spectral_centroid", "spectral_bandwidth", "spectral_rolloff",
                         "spectral_flatness", "zero_crossing_rate"] + (0..<13).map { "mfcc_\($0)" }
    /// Feature columns after `time`, in output order (FeatureLayout indices).
    static let featureColumns = [FeatureLayout.rms, FeatureLayout.spectralCentroid, FeatureLayout.spectralBandwidth,
                                 FeatureLayout.spectralRolloff, FeatureLayout.spectralFlatness,
                                 FeatureLayout.zeroCrossingRate] + (0..<13).map { FeatureLayout.mfcc + $0 }

    static func columns(stereo: Bool) -> [String] {
        prefix + (stereo ? ["channel"] : []) + ["spectral_flux"]
    }

    static func write(source: AudioSource, frameLength: Int, hopLength: Int, json: Bool, fileName: String,
                      to out: OutputByteWriter) throws {
        let channels = source.format.analysisChannelCount
        let stereo = channels > 1
        let analyzers = try (0..<channels).map {
            try FeatureAnalyzer(frameLength: frameLength, hopLength: hopLength,
                                sampleRate: AudioFileSource.analysisRate, channel: $0)
        }
        let cols = columns(stereo: stereo)
        if json {
            try out.append("{\"file\":\(jsonString(fileName)),\"sampleRate\":\(AudioFileSource.analysisRate),"
                + "\"frameLength\":\(frameLength),\"hopLength\":\(hopLength),\"channels\":\(channels),\"columns\":["
                + cols.map(jsonString).joined(separator: ",") + "],\"frames\":[")
        } else {
            try out.append(cols.joined(separator: ",") + "\n")
        }
        var rows = RowWriter(json: json, stereo: stereo, out: out)
        // Features are computed on a producer thread while this thread formats and writes (2 cores).
        let queue = OutputBlockQueue<[[FeatureBlock]]>(capacity: 4)
        let producer = FeatureProducer(source: source, analyzers: analyzers, queue: queue)
        let thread = Thread { producer.run() }
        thread.stackSize = 1 << 20
        thread.start()
        defer { queue.cancel(); producer.finished.wait() }
        while let batch = queue.take() {
            for blocks in batch {
                for i in 0..<(blocks.first?.count ?? 0) {
                    for c in 0..<channels { try rows.write(blocks[c], frame: i) }
                }
            }
        }
        if let error = producer.error { throw error }
        if json { try out.append("\n]}\n") }
        try out.flush()
    }

    static func jsonString(_ s: String) -> String { JSONEscaping.quoted(s) }

    /// Formats one row per (frame, channel).
    struct RowWriter {
        let json: Bool
        let stereo: Bool
        let out: OutputByteWriter
        var rowsWritten = 0

        mutating func write(_ block: FeatureBlock, frame i: Int) throws {
            let maxRow = (FeatureTableWriter.featureColumns.count + 4) * (DecimalFormat.maxBytes + 1) + 8
            try out.ensure(maxRow)
            var p = out.cursor
            let comma = UInt8(ascii: ",")
            if json {
                if rowsWritten > 0 { p[0] = comma; p += 1 }
                p[0] = UInt8(ascii: "\n"); p[1] = UInt8(ascii: "["); p += 2
            }
            let centre = block.start + Int64(i * block.hopLength)
            p += DecimalFormat.writeSeconds(samples: centre, sampleRate: AudioFileSource.analysisRate, to: p)
            block.values.withUnsafeBufferPointer { v in
                let row = v.baseAddress! + i * FeatureLayout.stride
                for c in FeatureTableWriter.featureColumns {
                    p[0] = comma; p += 1
                    p += DecimalFormat.write(row[c], json: json, to: p)
                }
                if stereo { p[0] = comma; p[1] = UInt8(ascii: "0") + UInt8(block.channel); p += 2 }
                p[0] = comma; p += 1
                p += DecimalFormat.write(row[FeatureLayout.spectralFlux], json: json, to: p)
            }
            if json { p[0] = UInt8(ascii: "]"); p += 1 } else { p[0] = UInt8(ascii: "\n"); p += 1 }
            out.count = p - out.buffer
            rowsWritten += 1
        }
    }
}

/// Reads the source and runs every channel's analyzer, handing blocks (one per channel, same frames) to the
/// output thread. Gaps finish the current stretch and restart framing after the gap.
final class FeatureProducer: @unchecked Sendable {
    let source: AudioSource
    let analyzers: [FeatureAnalyzer]
    let queue: OutputBlockQueue<[[FeatureBlock]]>
    /// Blocks are handed over in batches of at least this many frames (few thread wake-ups).
    let batchFrames = 1024
    private var batch: [[FeatureBlock]] = []
    private var batched = 0
    /// Signalled when `run` returns.
    let finished = DispatchSemaphore(value: 0)
    private(set) var error: Error?

    init(source: AudioSource, analyzers: [FeatureAnalyzer], queue: OutputBlockQueue<[[FeatureBlock]]>) {
        self.source = source; self.analyzers = analyzers; self.queue = queue
    }

    func run() {
        defer { finished.signal() }
        do {
            loop: while !queue.isCancelled {
                switch try source.read() {
                case .audio(_, let data):
                    guard send(analyzers.indices.map { c in data[c].withUnsafeBufferPointer { analyzers[c].process($0) } })
                    else { return }
                case .gap(let start, let length, _):
                    guard send(analyzers.map { $0.finish() }) else { return }
                    for a in analyzers { a.reset(startSample: start + length) }
                case .end:
                    break loop
                }
            }
            if send(analyzers.map { $0.finish() }), !batch.isEmpty { queue.put(batch) }
        } catch {
            self.error = error
        }
        queue.put(nil)
    }

    /// Batches one block per channel (all channels produce the same frames); false if the consumer stopped.
    private func send(_ blocks: [FeatureBlock?]) -> Bool {
        let present = blocks.compactMap { $0 }
        guard present.count == blocks.count, !present.isEmpty else { return !queue.isCancelled }
        batch.append(present)
        batched += present[0].count
        guard batched >= batchFrames else { return true }
        defer { batch = []; batched = 0 }
        return queue.put(batch)
    }
}
