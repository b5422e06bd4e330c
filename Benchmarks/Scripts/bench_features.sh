#!/usr/bin/env bash
# Times `sleepcycle features` next to the C feature floor (../shared/reference), essentia and librosa on the same
# files, in one run, and prints wall time, x-realtime, the ratio to the floor and the peak RSS of each.
#   Benchmarks/Scripts/bench_features.sh            (SKIP_PY=1 to skip essentia/librosa; RUNS, SCRATCH, SLEEPCYCLE
#   as in bench_common.sh)
# Needs: sox, /usr/bin/time, the floor's build deps; for the Python rows: pip install essentia librosa soxr.
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"

row() { # label seconds-of-audio floor-wall wall rss
    awk -v l="$1" -v d="$2" -v f="$3" -v w="$4" -v r="$5" \
        'BEGIN { printf "  %-34s %8.2f s %9.0fx RT %7.2fx floor %7d MB\n", l, w, d / w, w / f, r }'
}
for spec in "night16k_1h.wav 3600" "night16k_8h.wav 28800" "night44k_st_1h.wav 3600"; do
    set -- $spec; f="$dir/$1"; dur=$2
    echo "$1"
    read -r fw _ fr < <(measure "$floor" "$f" 1);   row "feature_floor (C, 1 thread)" "$dur" "$fw" "$fw" "$fr"
    read -r f2 _ f2r < <(measure "$floor" "$f" 2);  row "feature_floor (C, 2 threads)" "$dur" "$fw" "$f2" "$f2r"
    read -r w _ r < <(measure "$sc" features "$f");  row "sleepcycle features (csv)" "$dur" "$fw" "$w" "$r"
    read -r w _ r < <(measure "$sc" features "$f" --format json); row "sleepcycle features (json)" "$dur" "$fw" "$w" "$r"
    if [ -z "${SKIP_PY:-}" ] && [ "$1" != night16k_8h.wav ]; then
        read -r w _ r < <(runs=1 measure python3 "$here/essentia_features.py" "$f"); row "essentia (streaming)" "$dur" "$fw" "$w" "$r"
        read -r w _ r < <(runs=1 measure python3 "$here/librosa_features.py" "$f"); row "librosa (one STFT)" "$dur" "$fw" "$w" "$r"
    fi
done
