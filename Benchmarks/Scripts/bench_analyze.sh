#!/usr/bin/env bash
# Times `sleepcycle analyze` next to the C feature floor (../shared/reference) on 1-h and 8-h 16 kHz mono nights,
# and measures the CPU cost of a paced (real-time) replay, as in docs/0004-bus-and-engine.md.
#   Benchmarks/Scripts/bench_analyze.sh           RUNS=N (default 3) runs per row, median wall, max RSS
#   PACED_SECONDS=600 (default) length of the paced replay; SKIP_PACED=1 to skip it
#   SCRATCH=.build (default) the swift build scratch path; SLEEPCYCLE=path to use an already built binary
# Needs: sox, /usr/bin/time, gcc + libfftw3-dev + libsndfile1-dev (for the floor).
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

row() { # label floor-wall floor-cpu wall cpu rss
    awk -v l="$1" -v fw="$2" -v fc="$3" -v w="$4" -v c="$5" -v r="$6" \
        'BEGIN { printf "  %-32s wall %6.2f s (%5.2fx floor)   cpu %6.2f s (%5.2fx floor)   %4d MB\n", l, w, w / fw, c, c / fc, r }'
}
for spec in night16k_1h.wav night16k_8h.wav; do
    f="$dir/$spec"
    echo "$spec"
    read -r fw fc fr < <(measure "$floor" "$f" 1)
    row "feature_floor (C, 1 thread)" "$fw" "$fc" "$fw" "$fc" "$fr"
    read -r f2 c2 r2 < <(measure "$floor" "$f" 2)
    row "feature_floor (C, 2 threads)" "$fw" "$fc" "$f2" "$c2" "$r2"
    read -r w c r < <(measure "$sc" analyze "$f" --format json --no-progress)
    row "sleepcycle analyze (default, 1 thr)" "$fw" "$fc" "$w" "$c" "$r"
    read -r w c r < <(measure "$sc" analyze "$f" --format json --no-progress --decode-thread)
    row "sleepcycle analyze (2 threads)" "$fw" "$fc" "$w" "$c" "$r"
    awk -v w="$w" -v f2="$f2" 'BEGIN { printf "  %-32s wall %5.2fx the 2-thread floor\n", "", w / f2 }'
done

if [ -z "${SKIP_PACED:-}" ]; then
    secs=${PACED_SECONDS:-600}
    paced="$dir/night16k_paced_${secs}s.wav"
    [ -s "$paced" ] || sox "$dir/night16k_1h.wav" "$paced" trim 0 "$secs"
    echo "paced replay: ${secs} s of 16 kHz mono at real time (--pace realtime)"
    /usr/bin/time -o "$tmp" -f "%e %U %S %M" "$sc" analyze "$paced" --pace realtime --format json --no-progress \
        >/dev/null 2>/dev/null
    out=$(tail -1 "$tmp")
    read -r w u s r <<<"$out"
    awk -v w="$w" -v u="$u" -v s="$s" -v r="$r" \
        'BEGIN { printf "  wall %.1f s, cpu %.2f s (user %.2f + sys %.2f) = %.3f %% of one core, peak RSS %d MB\n", w, u + s, u, s, 100 * (u + s) / w, r / 1024 }'
fi
