import Foundation
import SleepCycleFormats

/// The frame every HTML report shares: one self-contained document (inline CSS, SVG and script; a Content Security
/// Policy that forbids any network request), readable without a server and at phone width. The script only checks
/// the page (`selfCheckScript`); everything is drawn in SVG by the writer, so the page reads the same with scripts
/// off.
enum HTMLPage {
    static func document(title: String, body: String) -> String {
        var out = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; media-src file: data:">
            <meta name="generator" content="sleepcycle \(SleepCycleVersion.current)">
            <title>\(escape(title))</title>
            <style>\(css)</style>
            </head>
            <body>

            """
        out += body
        out += "\n<output id=\"self-check\" hidden></output>\n<script>\(selfCheckScript)</script>\n</body>\n</html>\n"
        return out
    }

    /// Text for HTML content and attribute values.
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A coordinate with one decimal.
    static func n(_ x: Double) -> String {
        guard x.isFinite else { return "0" }
        let v = (x * 10).rounded() / 10
        return v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v)
    }

    static let css = """
        :root{--fg:#1b1f24;--muted:#5b6470;--bg:#fff;--grid:#d9dee5;--awake:#8a94a6;--light:#5b8def;--deep:#1f3f99;\
        --rem:#d6336c;--snoring:#e8590c;--talking:#2b8a3e;--coughing:#7048e8;--movement:#868e96;--healthy:#94d3a2;\
        --flatline:#ffc078;--missingInput:#ff8787;--accent:#1c7ed6}
        @media (prefers-color-scheme:dark){:root{--fg:#e9ecef;--muted:#adb5bd;--bg:#15171a;--grid:#343a40;--deep:#91a7ff}}
        *{box-sizing:border-box}
        body{margin:0 auto;max-width:70rem;padding:1rem;font:16px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
        h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.2rem;margin:1.6rem 0 .4rem}h3{font-size:1rem;margin:1rem 0 .3rem}
        .meta{color:var(--muted);margin:.2rem 0}
        h1{overflow-wrap:anywhere}
        figure{margin:0;overflow-x:auto}
        svg.chart{display:block;width:100%;min-width:600px;height:auto}
        svg text{fill:var(--muted);font-size:12px}
        .grid{stroke:var(--grid);stroke-width:1}
        .step{stroke-width:4;stroke-linecap:butt}.connector{stroke:var(--muted);stroke-width:1;fill:none}
        .stage-awake{stroke:var(--awake)}.stage-light{stroke:var(--light)}.stage-deep{stroke:var(--deep)}.stage-rem{stroke:var(--rem)}
        .ev-snoring{fill:var(--snoring)}.ev-talking{fill:var(--talking)}.ev-coughing{fill:var(--coughing)}.ev-movement{fill:var(--movement)}
        .h-healthy{fill:var(--healthy)}.h-flatline{fill:var(--flatline)}.h-missingInput{fill:var(--missingInput)}
        .series{fill:none;stroke:var(--accent);stroke-width:1.5}
        a:focus-visible,summary:focus-visible,audio:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
        a.clip-link:focus-visible rect{stroke:var(--fg);stroke-width:2}
        .scroll{overflow-x:auto}
        table{border-collapse:collapse;margin:.3rem 0;font-variant-numeric:tabular-nums}
        th,td{padding:.2rem .6rem;border-bottom:1px solid var(--grid);text-align:left;vertical-align:top}
        td.num,th.num{text-align:right}
        caption{text-align:left;color:var(--muted);padding:.2rem 0}
        details{margin:.4rem 0}summary{cursor:pointer;color:var(--accent)}
        .clips{list-style:none;padding:0}.clips li{margin:.4rem 0}.clips audio{width:100%;max-width:28rem;display:block}
        .legend{display:flex;flex-wrap:wrap;gap:.3rem 1rem;padding:0;margin:.2rem 0;list-style:none;color:var(--muted);font-size:.9rem}
        .legend span{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:-.1rem;border-radius:2px}
        section.sleeper{border-top:2px solid var(--grid);margin-top:1.5rem}
        @media (max-width:40rem){body{padding:.6rem;font-size:15px}th,td{padding:.15rem .35rem}}
        """

    /// Checks the drawn page against its own data and writes the result into `#self-check` (read by the tests
    /// through the browser's DOM): every chart laid out at a non-zero size; every hypnogram step and event mark at
    /// the x its `data-start`/`data-end` times map to on its chart's axis (`data-t0`, `data-t1`, `data-x0`,
    /// `data-x1`); as many steps and marks as the writer counted (`data-count`).
    static let selfCheckScript = """
        (function(){
        var problems=[],steps=0,events=0;
        document.querySelectorAll('svg.chart').forEach(function(svg){
          var r=svg.getBoundingClientRect();if(!(r.width>0&&r.height>0))problems.push(svg.id+': not laid out');
          if(!svg.dataset.t0)return;
          var t0=Date.parse(svg.dataset.t0),t1=Date.parse(svg.dataset.t1),x0=+svg.dataset.x0,x1=+svg.dataset.x1;
          function x(t){return x0+(Date.parse(t)-t0)/(t1-t0)*(x1-x0);}
          var marks=svg.querySelectorAll('[data-start]');
          if(svg.dataset.count!==undefined&&marks.length!==+svg.dataset.count)problems.push(svg.id+': '+marks.length+' marks, expected '+svg.dataset.count);
          marks.forEach(function(el){
            var a,b;
            if(el.tagName==='line'){a=+el.getAttribute('x1');b=+el.getAttribute('x2');steps++;}
            else{a=+el.getAttribute('x');b=a+(+el.getAttribute('width'));if(el.dataset.type)events++;}
            var xa=x(el.dataset.start),xb=x(el.dataset.end);
            if(Math.abs(a-xa)>0.11||b<xb-0.11||(el.tagName==='line'&&Math.abs(b-xb)>0.11))
              problems.push(svg.id+': mark '+el.dataset.start+' at '+a+'-'+b+', expected '+xa.toFixed(1)+'-'+xb.toFixed(1));
          });
        });
        var out=document.getElementById('self-check');
        out.dataset.status=problems.length?'failed':'ok';
        out.dataset.steps=steps;out.dataset.events=events;
        out.dataset.loadMs=Math.round(performance.now());
        out.dataset.viewportWidth=window.innerWidth;out.dataset.scrollWidth=document.documentElement.scrollWidth;
        out.textContent=problems.slice(0,20).join('\\n');
        })();
        """
}
