import Foundation
import Testing
import SleepCycleBus
@testable import SleepCycle

/// The reports of a night: the per-epoch CSV and the HTML page (its size on a long, busy night; what it holds).
/// The page in a real browser is checked by CLITests/HTMLReportBrowserTests.
@Suite struct ReportTests {
    static let start = Date(timeIntervalSince1970: 946_764_000)   // 2000-01-01T22:00:00Z

    /// An 8-hour night with `eventCount` events, a stage change every 10 minutes, a breathing rate and a level per
    /// 30-s epoch.
    static func longNight(eventCount: Int = 2000) -> AnalysisResult {
        let hours = 8.0, span = hours * 3600
        let id = UUID(uuidString: "00000000-0000-0000-0000-000000000030")!
        let stages: [SleepStage] = [.awake, .light, .deep, .light, .rem]
        let intervals = (0..<Int(span / 600)).map { i in
            SleepStageInterval(stage: stages[i % stages.count], start: start.addingTimeInterval(Double(i) * 600),
                               end: start.addingTimeInterval(Double(i + 1) * 600))
        }
        let types = EventType.allCases
        let events = (0..<eventCount).map { i -> SleepEvent in
            let type = types[i % 7 == 0 ? 1 + i % 3 : 0]
            let t = Double(i) * span / Double(eventCount)
            var e = SleepEvent(SoundEvent(id: i, type: type, start: 0, end: 0, probability: 0.9,
                                          signature: type == .snoring ? [Float](repeating: 0.25, count: 16) : nil),
                               clock: AnalysisClock(start: start), sessionId: id)
            e.start = start.addingTimeInterval(t)
            e.end = start.addingTimeInterval(t + 1.5 + Double(i % 5) * 0.3)
            e.levelDb = -40 + Double(i % 20)
            return e
        }
        let epochs = Int(span / 30)
        var statistics = SleepSessionStatistics()
        statistics.totalSleepDuration = span * 0.8
        statistics.finalWakeTime = start.addingTimeInterval(span)
        var audio = AudioStatistics()
        audio.healthIntervals = [AudioHealthUpdate(status: .healthy, start: start, end: start.addingTimeInterval(span))]
        var result = AnalysisResult(
            sessionId: id, startTime: start, endTime: start.addingTimeInterval(span),
            source: SourceSummary(path: "night.flac", sampleRate: 16_000, channels: 1, durationSec: span),
            events: events,
            breathingRates: (0..<epochs).map {
                BreathingRate(timestamp: start.addingTimeInterval(Double($0) * 30 + 15), bpm: 14 + Double($0 % 7) * 0.1,
                              confidence: 0.8, sessionId: id)
            },
            sleepStageIntervals: intervals, statistics: statistics, audioStatistics: audio,
            analysedSamples: AnalysisClock.samples(seconds: span), droppedObserverItems: 0)
        result.loudness = (0..<epochs).map {
            LoudnessEpoch(start: start.addingTimeInterval(Double($0) * 30), end: start.addingTimeInterval(Double($0 + 1) * 30),
                          levelDb: -50 + Double($0 % 13))
        }
        return result
    }

    static func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// The target: an 8-hour night with 2,000 events is under 1.5 MB of HTML, every event and step drawn.
    @Test func longNightHTMLIsSmall() {
        let night = Self.longNight()
        let html = night.htmlReport()
        #expect(html.utf8.count < 1_500_000, "HTML of an 8-h night with 2,000 events: \(html.utf8.count) bytes")
        #expect(Self.count("<rect class=\"ev ", in: html) == 2000)
        #expect(Self.count("<line class=\"step ", in: html) == night.sleepStageIntervals.count)
        #expect(!html.contains("http://") && !html.contains("https://"))
    }

    @Test func csvHasTheContractsHeaderAndARowPerEpoch() {
        let night = Self.longNight()
        let lines = night.epochCSV().split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "epoch_start,stage,snoring_s,talking_s,coughing_s,movement_s,breathing_bpm,audio_health,level_db")
        #expect(lines.count == 1 + 960 + 1)   // header, 960 epochs, the final newline
        // Epoch 0: talking 0–1.5 s, snoring 14.4–16.2 s and 28.8–30.9 s (1.2 s of it in this epoch).
        #expect(lines[1] == "2000-01-01T22:00:00.000Z,awake,3.0,1.5,0.0,0.0,14.0,healthy,-50.0")
    }

    /// Times in the recording's own offset; text escaped; the heart-rate place left empty until `heart` exists.
    @Test func htmlUsesTheRecordingsOffsetAndEscapes() {
        var night = Self.longNight(eventCount: 10)
        night.utcOffsetSeconds = 3600
        night.source.path = "<b>&night.flac"
        let html = night.htmlReport()
        #expect(html.contains("Recording 23:00:00 → 07:00:00 UTC+01:00"))
        #expect(html.contains("&lt;b&gt;&amp;night.flac") && !html.contains("<b>&night"))
        let csv = night.epochCSV()
        #expect(csv.split(separator: "\n")[1].hasPrefix("2000-01-01T23:00:00.000+01:00,"))
    }

    /// Every chart has its data as a table (docs/0012): the breathing and loudness charts had none, so their values
    /// were nowhere on the page. The gridlines are labelled with their own values.
    @Test func everyChartsDataIsATable() {
        let night = Self.longNight(eventCount: 10)
        let html = night.htmlReport()
        for (summary, count) in [("Breaths per minute as a table", night.breathingRates.count),
                                 ("Level, dBFS (30 s) as a table", night.loudness.count)] {
            #expect(html.contains("<summary>\(summary) (\(count) values)</summary>"), "\(summary)")
        }
        let rows = html.components(separatedBy: "Breaths per minute as a table").last ?? ""
        #expect(rows.contains("<td class=\"num\">14.60</td>") && rows.contains("<td class=\"num\">-38.00</td>"))
        // Loudness from -50 to -38 dBFS: gridlines at -50, -44 and -38, each labelled with its value.
        #expect(html.contains(">-50 dB</text>") && html.contains(">-44 dB</text>") && html.contains(">-38 dB</text>"))
    }

    /// The page shows what the text summary shows: the warnings (first) and the smart alarm. They were left out, so
    /// a damaged or truncated file read as a clean night there.
    @Test func warningsAndTheAlarmAreOnThePage() {
        var night = Self.longNight(eventCount: 10)
        night.warnings = [AnalysisWarning(.truncated, "night.flac: <ends> before its header says")]
        night.smartAlarm = SmartAlarmResult(alarmTime: night.endTime, windowStart: night.endTime.addingTimeInterval(-1800),
                                            firedAt: night.endTime.addingTimeInterval(-600), rule: "lightSleep")
        let html = night.htmlReport()
        #expect(html.contains("<li><code>truncated</code> night.flac: &lt;ends&gt; before its header says</li>"))
        #expect(html.range(of: "Warnings")!.lowerBound < html.range(of: "Hypnogram")!.lowerBound)
        #expect(html.contains("Smart alarm") && html.contains("fired at 05:50:00"))
        night.warnings = []
        night.smartAlarm = nil
        #expect(!night.htmlReport().contains("Warnings") && !night.htmlReport().contains("Smart alarm"))
    }

    /// Clips get a player when their URL is known, and encrypted ones a note instead.
    @Test func clipsArePlayableInline() {
        var night = Self.longNight(eventCount: 3)
        night.events[0].clip = EventClip(path: "S/0-snoring.flac", start: night.startTime, end: night.startTime, startFrame: 0)
        night.events[1].clip = EventClip(path: "S/1-snoring.flac.enc", start: night.startTime, end: night.startTime, startFrame: 0)
        let html = night.htmlReport(options: HTMLReportOptions(clipURL: { $0.path.hasSuffix(".enc") ? nil : "clips/" + $0.path }))
        #expect(html.contains("<audio controls preload=\"none\" src=\"clips/S/0-snoring.flac\""))
        #expect(html.contains("(encrypted: sleepcycle clips decrypt)"))
        #expect(Self.count("<audio ", in: html) == 1)
    }

    /// With a heart session the report has its Heart section: a point per 5-minute frame on the shared axis and the
    /// summary's values; without one, none.
    @Test func heartSectionWhenTheResultHasHeartData() {
        var night = Self.longNight(eventCount: 10)
        #expect(!night.htmlReport().contains("id=\"\(night.sessionId.uuidString)-heart\"") && !night.htmlReport().contains("heart-rate-chart"))
        let frames = (1...96).map { k in
            HeartReport.Frame(start: night.startTime.addingTimeInterval(Double(k - 1) * 300),
                              end: night.startTime.addingTimeInterval(Double(k) * 300),
                              metrics: HeartMetrics(sampleCount: 300, hrMeanBpm: 55 + Double(k % 10), rmssdMs: 40))
        }
        night.heart = HeartReport(start: night.startTime, end: night.endTime,
                                  summary: HeartMetrics(sampleCount: 28_800, hrMeanBpm: 59.5, hrSdnnMs: 51.25, rmssdMs: 42.5,
                                                        pnn50: 18.75, lfHf: 1.5, artifactCount: 12),
                                  frames: frames)
        let html = night.htmlReport()
        #expect(html.contains("heart-rate-chart"))
        #expect(html.contains("96 five-minute means, median 59.0 bpm, from 55.0 to 64.0 bpm."))
        #expect(html.contains("<td class=\"num\">42.5 ms</td>") && html.contains("<td class=\"num\">28800 (12 corrected)</td>"))
        // One path through the 96 points, none broken (they are 5 minutes apart).
        let chart = html[html.range(of: "heart-rate-chart")!.lowerBound...]
        let path = chart.components(separatedBy: "<path class=\"series\" d=\"")
        #expect(path.count > 1 && Self.count("L", in: path[1].components(separatedBy: "\"")[0]) == 95)
    }
}
