#!/usr/bin/env bash
# The HTML report's size and render time (docs/0012-reports.md, "Figures"): an 8-hour night with 2,000 events
# (report/long_night.py, rendered by the hidden `sleepcycle report-dev`), the bundled example night, and a reference
# page (an empty document with the same Content Security Policy: Chromium's own fixed cost), each loaded RUNS times
# in headless Chromium in the same session.
#   Benchmarks/Scripts/bench_report.sh      RUNS=N (default 5); SLEEPCYCLE=path to the binary (default: the
#                                           release build if there is one, else the debug build)
# Prints per page: the HTML size; the median wall time of `chromium --headless=new --dump-dom` (start, load,
# scripts, serialise, exit) and that minus the reference page's; the median time from navigation start to the end
# of the page's self-check script (parse + style + layout of every chart, read back by getBoundingClientRect).
# Needs: chromium, python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${RUNS:-5}
sc=${SLEEPCYCLE:-}
if [ -z "$sc" ]; then
    if [ -x .build/release/sleepcycle ]; then sc=.build/release/sleepcycle; else swift build --product sleepcycle >/dev/null; sc=.build/debug/sleepcycle; fi
fi
chrome=$(command -v chromium || command -v chromium-browser) || { echo "bench_report: chromium is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $("$chrome" --version 2>/dev/null)"

python3 Benchmarks/Scripts/report/long_night.py 8 2000 > "$work/long.json"
"$sc" report-dev "$work/long.json" --output "$work/long.html"
"$sc" analyze Fixtures/example-night.flac --format html --output "$work/example.html" --no-progress
printf '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src '"'none'"'; script-src '"'unsafe-inline'"'"><title>reference</title></head><body><output id="self-check"></output><script>document.getElementById("self-check").dataset.loadMs=Math.round(performance.now())</script></body></html>\n' > "$work/reference.html"

flags=(--headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions --disable-background-networking
       --disable-component-update --disable-sync --disable-default-apps "--host-resolver-rules=MAP * ~NOTFOUND"
       --window-size=1100,2000 "--user-data-dir=$work/profile")
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
measure() { # page → "wall_s in_page_ms status"
    local walls=() pages=() status=""
    "$chrome" "${flags[@]}" --dump-dom "file://$work/$1" >/dev/null 2>&1   # warm the disk cache and the profile
    for _ in $(seq "$runs"); do
        local t0 t1 dom
        t0=$(date +%s.%N)
        dom=$("$chrome" "${flags[@]}" --dump-dom "file://$work/$1" 2>/dev/null)
        t1=$(date +%s.%N)
        walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
        pages+=("$(grep -o 'data-load-ms="[0-9]*"' <<<"$dom" | grep -o '[0-9]*')")
        status=$(grep -o 'data-status="[a-z]*"' <<<"$dom" | cut -d'"' -f2 || true)
    done
    echo "$(printf '%s\n' "${walls[@]}" | median) $(printf '%s\n' "${pages[@]}" | median) ${status:-none}"
}
read -r ref_wall ref_page _ < <(measure reference.html)
printf '  %-34s %9s  wall %5.2f s              in page %4d ms\n' "reference (empty page)" "$(stat -c %s "$work/reference.html") B" "$ref_wall" "$ref_page"
for page in example.html long.html; do
    read -r wall in_page status < <(measure "$page")
    label=$([ "$page" = long.html ] && echo "8-h night, 2,000 events" || echo "example night (3 min, 22 events)")
    size=$(stat -c %s "$work/$page")
    awk -v l="$label" -v s="$size" -v w="$wall" -v r="$ref_wall" -v p="$in_page" -v st="$status" \
        'BEGIN { printf "  %-34s %7.1f kB  wall %5.2f s (%+.2f s)   in page %4d ms   self-check %s\n", l, s / 1000, w, w - r, p, st }'
done
