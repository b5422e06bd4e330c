import Foundation
import SleepCycleFormats
import Testing

/// Headless Chromium, as installed by scripts/install-deps.sh (Debian's `chromium`), run on a file path with the
/// browser's own background traffic turned off as far as flags allow.
enum Chromium {
    static let path: String? = {
        let env = ProcessInfo.processInfo.environment
        if let given = env["SLEEPCYCLE_CHROMIUM"] { return given }
        let dirs = (env["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for name in ["chromium", "chromium-browser"] {
            for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/" + name) { return dir + "/" + name }
        }
        return nil
    }()

    static let flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
                        "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0"]

    typealias Run = BuiltBinary.Run

    /// Runs Chromium with `arguments` after the common flags, in its own profile folder under `home`.
    static func run(_ arguments: [String], home: String) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try #require(path))
        p.arguments = flags + ["--user-data-dir=\(home)/profile"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        p.environment = environment
        return try BuiltBinary.capture(p)
    }

    /// The page's console messages (Chromium logs them as `INFO:CONSOLE` lines with --enable-logging).
    static func consoleMessages(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") }.map(String.init)
    }

    /// The URLs of a net log (`--log-net-log`) that are not the browser's own services (its clock, update and
    /// account checks, which flags do not all turn off): what the page itself asked the network for.
    static func pageRequests(netLog: String) -> [String] {
        let own = ["google.com", "googleapis.com", "gvt1.com", "gstatic.com", "chromium.org"]
        guard let regex = try? NSRegularExpression(pattern: "\"url\":\"([a-z]+://[^\"]*)\"") else { return [] }
        let range = NSRange(netLog.startIndex..., in: netLog)
        let urls = regex.matches(in: netLog, range: range).compactMap { m in
            Range(m.range(at: 1), in: netLog).map { String(netLog[$0]) }
        }.filter { url in
            guard let host = URL(string: url)?.host else { return !url.hasPrefix("file:") && !url.hasPrefix("data:") }
            return !own.contains { host == $0 || host.hasSuffix("." + $0) }
        }
        return Array(Set(urls)).sorted()
    }
}

/// The HTML report in a real browser (headless Chromium): the page's own self-check passes, the hypnogram's steps
/// are the JSON's `sleepStageIntervals` at the x their times map to, every event is on the timeline, nothing is
/// asked of the network, nothing is logged to the console, and it fits a narrow window. The screenshot of the
/// example night is docs/report-example-night.png.
@Suite(.serialized, .enabled(if: Chromium.path != nil,
                             "chromium is not installed (scripts/install-deps.sh installs it; CI runs these tests)"))
final class HTMLReportBrowserTests {
    let temp: TemporaryDirectory
    init() throws { temp = try TemporaryDirectory("sleepcycle-browser") }

    static let repo = DocumentationExamplesTests.repo
    static func isoDate(_ s: String) -> Date? { ISO8601Time(s)?.date }

    /// Attributes of the elements whose start tag contains `marker`, from a serialised DOM.
    static func elements(_ html: String, _ marker: String) -> [[String: String]] {
        var out: [[String: String]] = []
        var rest = html[...]
        while let r = rest.range(of: marker) {
            let tagStart = marker.hasPrefix("<") ? r.lowerBound : rest[..<r.lowerBound].lastIndex(of: "<") ?? r.lowerBound
            guard let end = rest[r.upperBound...].firstIndex(of: ">") else { break }
            let tag = String(rest[tagStart..<end])
            var attributes: [String: String] = [:]
            let regex = try! NSRegularExpression(pattern: "([a-zA-Z0-9-]+)=\"([^\"]*)\"")
            for m in regex.matches(in: tag, range: NSRange(tag.startIndex..., in: tag)) {
                attributes[String(tag[Range(m.range(at: 1), in: tag)!])] = String(tag[Range(m.range(at: 2), in: tag)!])
            }
            out.append(attributes)
            rest = rest[end...]
        }
        return out
    }


    /// Analyses `arguments` to JSON and HTML, loads the HTML in Chromium, and checks the page against the JSON.
    func check(_ arguments: [String], sessions: (Any) -> [[String: Any]], name: String) throws {
        let htmlPath = temp.path("\(name).html")
        let json = try BuiltBinary.run(arguments + ["--format", "json", "--no-progress"], directory: Self.repo)
        let html = try BuiltBinary.run(arguments + ["--format", "html", "--output", htmlPath, "--no-progress"], directory: Self.repo)
        #expect(json.status == 0 && html.status == 0, "\(json.stderr)\(html.stderr)")
        let result = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let url = URL(fileURLWithPath: htmlPath).absoluteString
        let netLog = temp.path("\(name).netlog.json")
        let dom = try Chromium.run(["--window-size=1100,2000", "--log-net-log=\(netLog)", "--dump-dom", url], home: temp.path("home"))
        #expect(dom.status == 0, "chromium: \(dom.stderr.suffix(2000))")

        // The page checked itself in the browser.
        let check = try #require(Self.elements(dom.stdout, "id=\"self-check\"").first, "no #self-check in the DOM")
        #expect(check["data-status"] == "ok", "self-check: \(dom.stdout.components(separatedBy: "id=\"self-check\"").last?.prefix(800) ?? "")")

        // The hypnogram's steps and the events' marks, parsed from the DOM, are the JSON's.
        let steps = Self.elements(dom.stdout, "class=\"step stage-")
        let marks = Self.elements(dom.stdout, "class=\"ev ev-")
        let all = sessions(result)
        let intervals = all.flatMap { $0["sleepStageIntervals"] as? [[String: Any]] ?? [] }
        let events = all.flatMap { $0["events"] as? [[String: Any]] ?? [] }
        #expect(!intervals.isEmpty && !events.isEmpty)
        #expect(steps.map { [$0["data-stage"]!, $0["data-start"]!, $0["data-end"]!] }
                == intervals.map { [$0["stage"] as! String, $0["start"] as! String, $0["end"] as! String] })
        #expect(marks.map { [$0["data-type"]!, $0["data-start"]!, $0["data-end"]!] }
                == events.map { [$0["type"] as! String, $0["start"] as! String, $0["end"] as! String] })
        #expect(Int(check["data-steps"] ?? "") == intervals.count && Int(check["data-events"] ?? "") == events.count)
        // Each step lies where its times map on the chart's axis (its svg's data-t0/t1/x0/x1), and at its stage's row.
        let charts = Self.elements(dom.stdout, "class=\"chart hypnogram\"")
        #expect(charts.count == all.count)
        if let chart = charts.first, all.count == 1 {
            let t0 = Self.isoDate(chart["data-t0"]!)!, t1 = Self.isoDate(chart["data-t1"]!)!
            let x0 = Double(chart["data-x0"]!)!, x1 = Double(chart["data-x1"]!)!
            func x(_ s: String) -> Double { x0 + Self.isoDate(s)!.timeIntervalSince(t0) / t1.timeIntervalSince(t0) * (x1 - x0) }
            var rows: [String: String] = [:]
            for s in steps {
                #expect(abs(Double(s["x1"]!)! - x(s["data-start"]!)) <= 0.051 && abs(Double(s["x2"]!)! - x(s["data-end"]!)) <= 0.051)
                #expect(s["y1"] == s["y2"])
                #expect(rows[s["data-stage"]!, default: s["y1"]!] == s["y1"], "one row per stage")
                rows[s["data-stage"]!] = s["y1"]!
            }
            // YASA's order from the top: awake above REM above light above deep.
            let order = ["awake", "rem", "light", "deep"].compactMap { rows[$0].flatMap(Double.init) }
            #expect(order == order.sorted())
        }

        // No console message (a script error, a blocked request) and no request to the network.
        #expect(Chromium.consoleMessages(dom.stderr).isEmpty, "console: \(Chromium.consoleMessages(dom.stderr))")
        let log = try String(contentsOfFile: netLog, encoding: .utf8)
        #expect(Chromium.pageRequests(netLog: log).isEmpty, "network: \(Chromium.pageRequests(netLog: log))")
        let page = try String(contentsOfFile: htmlPath, encoding: .utf8)
        #expect(!page.contains("http://") && !page.contains("https://"))

        // Narrow (headless Chromium's narrowest window is 500 px): nothing wider than the window.
        let narrow = try Chromium.run(["--window-size=390,900", "--dump-dom", url], home: temp.path("home"))
        let narrowCheck = try #require(Self.elements(narrow.stdout, "id=\"self-check\"").first)
        #expect(narrowCheck["data-status"] == "ok")
        #expect(Int(narrowCheck["data-scroll-width"] ?? "") ?? .max <= Int(narrowCheck["data-viewport-width"] ?? "") ?? 0,
                "the page scrolls sideways at \(narrowCheck["data-viewport-width"] ?? "?") px")

        // A screenshot is drawn (a PNG of the window's size).
        let shot = temp.path("\(name).png")
        let s = try Chromium.run(["--window-size=1000,1800", "--screenshot=\(shot)", "--hide-scrollbars", url], home: temp.path("home"))
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(s.status == 0 && png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 20_000)
        let width = png.count > 24 ? png[16..<20].reduce(0) { $0 << 8 | Int($1) } : 0
        #expect(width == 1000)
    }

    @Test func exampleNight() throws {
        let clips = temp.path("clips")
        try check(["analyze", "Fixtures/example-night.flac", "--start", "2026-03-14T23:10:00+01:00", "--clips", clips],
                  sessions: { [$0 as! [String: Any]] }, name: "example-night")
        let page = try String(contentsOfFile: temp.path("example-night.html"), encoding: .utf8)
        #expect(page.contains("Recording 23:10:00 → 23:13:00 UTC+01:00"))
        // The clips play inline from their files, linked relative to the report: Chromium reads each one's
        // duration from the link the report gives (a page beside it that loads the first few players' metadata).
        let sources = Self.elements(page, "<audio controls").compactMap { $0["src"] }
        #expect(!sources.isEmpty && sources.allSatisfy { $0.hasPrefix("clips/") })
        let probe = sources.prefix(4).enumerated().map { i, src in
            "<audio id=\"a\(i)\" preload=\"metadata\" src=\"\(src)\"></audio><output id=\"r\(i)\"></output>"
                + "<script>(function(){var a=document.getElementById('a\(i)'),r=document.getElementById('r\(i)');"
                + "a.addEventListener('loadedmetadata',function(){r.dataset.duration=a.duration});"
                + "a.addEventListener('error',function(){r.dataset.error=a.error.code})})();</script>"
        }.joined()
        let probePath = temp.path("probe.html")
        try ("<!DOCTYPE html><html><body>" + probe + "</body></html>").write(toFile: probePath, atomically: true, encoding: .utf8)
        let loaded = try Chromium.run(["--virtual-time-budget=10000", "--dump-dom", URL(fileURLWithPath: probePath).absoluteString],
                                      home: temp.path("home"))
        let durations = Self.elements(loaded.stdout, "<output id=\"r").map { Double($0["data-duration"] ?? "") ?? 0 }
        #expect(durations.count == min(4, sources.count) && durations.allSatisfy { $0 >= 1 }, "clip durations \(durations)")
    }

    @Test func twoSleepers() throws {
        try check(["analyze", "Fixtures/two-sleepers.flac", "--channel-separation", "bedside"],
                  sessions: { ($0 as! [String: Any])["sessions"] as! [[String: Any]] }, name: "two-sleepers")
    }

    /// The trends page of stored nights loads cleanly: laid out, no console message, no request.
    @Test func trendsPage() throws {
        let store = temp.path("nights.sqlite")
        for day in 1...2 {
            let r = try BuiltBinary.run(["record"] + RecordCommandTests.rawArgs
                                            + ["--store", store, "--start", "2026-01-0\(day)T23:00:00+01:00", "--duration", "60s"],
                                        stdin: try RecordCommandTests.rawNight())
            #expect(r.status == 0, "\(r.stderr)")
        }
        let page = temp.path("trends.html")
        #expect(try BuiltBinary.run(["sessions", "report", "--store", store, "--output", page]).status == 0)
        let netLog = temp.path("trends.netlog.json")
        let dom = try Chromium.run(["--log-net-log=\(netLog)", "--dump-dom", URL(fileURLWithPath: page).absoluteString],
                                   home: temp.path("home"))
        #expect(Self.elements(dom.stdout, "id=\"self-check\"").first?["data-status"] == "ok")
        #expect(Self.elements(dom.stdout, "class=\"bar\"").count == 2 * 7)   // a bar per night and measure
        #expect(Chromium.consoleMessages(dom.stderr).isEmpty, "console: \(Chromium.consoleMessages(dom.stderr))")
        #expect(Chromium.pageRequests(netLog: try String(contentsOfFile: netLog, encoding: .utf8)).isEmpty)
    }

    /// The check fails when the page is broken: a step moved off its time, a request to the network.
    @Test func theChecksCatchABrokenPage() throws {
        let htmlPath = temp.path("night.html")
        let r = try BuiltBinary.run(["analyze", "Fixtures/example-night.flac", "--format", "html", "--output", htmlPath,
                                     "--no-progress"], directory: Self.repo)
        #expect(r.status == 0)
        var page = try String(contentsOfFile: htmlPath, encoding: .utf8)
        // The first hypnogram step, whatever its stage, moved off its time: its x1 gains a leading 1.
        let stepStart = try #require(page.range(of: "<line class=\"step stage-"))
        let x1 = try #require(page.range(of: "x1=\"", range: stepStart.upperBound..<page.endIndex))
        page.replaceSubrange(x1, with: "x1=\"1")
        page = page.replacingOccurrences(of: "<main>", with: "<main><img src=\"http://report.invalid/x.png\" alt=\"\">")
        let broken = temp.path("broken.html")
        try page.write(toFile: broken, atomically: true, encoding: .utf8)
        let netLog = temp.path("broken.netlog.json")
        let dom = try Chromium.run(["--log-net-log=\(netLog)", "--dump-dom", URL(fileURLWithPath: broken).absoluteString],
                                   home: temp.path("home"))
        #expect(Self.elements(dom.stdout, "id=\"self-check\"").first?["data-status"] == "failed")
        #expect(!Chromium.consoleMessages(dom.stderr).isEmpty, "the blocked request is reported on the console")
        // Without the page's Content Security Policy the request reaches the network layer, and the net log shows it.
        try page.replacingOccurrences(of: "http-equiv=\"Content-Security-Policy\"", with: "name=\"x-csp-off\"")
            .write(toFile: broken, atomically: true, encoding: .utf8)
        let open = try Chromium.run(["--log-net-log=\(netLog)", "--dump-dom", URL(fileURLWithPath: broken).absoluteString],
                                    home: temp.path("home"))
        #expect(open.status == 0)
        #expect(Chromium.pageRequests(netLog: try String(contentsOfFile: netLog, encoding: .utf8)) == ["http://report.invalid/x.png"])
    }
}
