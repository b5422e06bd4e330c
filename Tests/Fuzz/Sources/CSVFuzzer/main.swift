// libFuzzer target: arbitrary bytes as the text inputs of sleepcycle — the one delimited-text reader (`CSVTable`)
// and the wearable readers built on it (`HeartRateFile`, `MotionFile`), every wearable format (`WearableFile`: JSON
// lines, Fitbit JSON, Apple Health XML, RR lists) and the live line reader, plus the ISO 8601 and duration parsers on
// the first line. What must hold for any input: no crash and no hang; an error is one line naming the input and
// never echoes more than a short, escaped piece of it; parsed records come in line order; parsed samples are in
// time order with their documented ranges.
import CFuzzerDriver
import Foundation
import SleepCycle

private let start = ISO8601Time(date: Date(timeIntervalSince1970: 1_767_304_800), utcOffsetSeconds: 3600)

func csvFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let table = try CSVTable.parse(bytes, path: "fuzz")
        var last = 0
        for record in table.records {
            guard record.line > last, !record.fields.isEmpty else { fatalError("CSVFuzzer: records out of line order") }
            last = record.line
        }
    } catch {
        check(error.description)
    }
    do {
        let samples = try HeartRateFile.parse(bytes, path: "fuzz", start: start)
        for (a, b) in zip(samples, samples.dropFirst()) where b.time < a.time { fatalError("CSVFuzzer: hr time order") }
        for s in samples {
            if let bpm = s.bpm, !(20...250).contains(bpm) { fatalError("CSVFuzzer: bpm \(bpm)") }
            if let rr = s.rrMs, !(200...3000).contains(rr) { fatalError("CSVFuzzer: rr \(rr)") }
        }
    } catch {
        check(error.description)
    }
    do {
        let samples = try MotionFile.parse(bytes, path: "fuzz", start: start)
        for s in samples where !(s.activity.isFinite && s.activity >= 0) { fatalError("CSVFuzzer: activity \(s.activity)") }
    } catch {
        check(error.description)
    }
    do {
        let contents = try WearableFile.parse(bytes, path: "fuzz", origin: start)
        for r in contents.readings {
            if let hr = r.hr, !(20...250).contains(hr) { fatalError("CSVFuzzer: wearable hr \(hr)") }
            if r.rrIntervals.contains(where: { !(200...3000).contains($0) }) { fatalError("CSVFuzzer: wearable rr") }
        }
        // Both timelines the readings go to (a session's ms, the night's samples) hold them without overflow.
        _ = WearMetrics.biosignalSamples(contents.readings)
        _ = WearMetrics.heartRateSamples(contents.readings, start: start.date)
        for (a, b) in zip(contents.readings, contents.readings.dropFirst())
            where contents.format != .appleHealth && b.timestamp < a.timestamp { fatalError("CSVFuzzer: wearable time order") }
    } catch {
        check(error.description)
    }
    var reader = WearableLineReader(origin: start)
    for line in String(decoding: bytes.prefix(4096), as: UTF8.self).split(separator: "\n").prefix(20) {
        do { _ = try reader.read(line: String(line), path: "fuzz") } catch { check(error.description) }
    }
    let firstLine = String(decoding: bytes.prefix { $0 != 0x0A }.prefix(200), as: UTF8.self)
    do { _ = try ISO8601Time.parse(firstLine) } catch { check(error.description, named: false) }
    do { _ = try DurationText.parse(firstLine, bareUnit: .minutes) } catch { check(error.description, named: false) }
    return 0
}

/// One line, naming the input (unless it is an option value's error), and short whatever the input's size.
private func check(_ line: String, named: Bool = true) {
    guard !line.contains("\n"), !line.contains("\r"), !line.contains("\u{1B}"), line.count < 1_000,
          !named || line.hasPrefix("fuzz") else {
        fatalError("CSVFuzzer: bad error line (\(line.count) characters): \(line.prefix(300))")
    }
}

var arguments = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&arguments, &argv) { data, size in
    guard let data else { return 0 }
    return csvFuzzerTestOneInput(data, size)
})
