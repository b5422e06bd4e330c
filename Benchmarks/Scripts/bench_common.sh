# Shared set-up of the comparison scripts (sourced by bench_features.sh and bench_analyze.sh):
# makes the test nights, builds the C feature floor and a release `sleepcycle`, and defines `measure`.
#   RUNS=N (default 3) runs per row; SHARED=path to shared/ (default ../shared beside the repository);
#   SCRATCH=.build (default) the swift build scratch path; SLEEPCYCLE=path to use an already built binary.
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=${SHARED:-$repo/../shared}
runs=${RUNS:-3}
dir=$("$here/make_test_nights.sh")
floor="$dir/feature_floor"
[ -x "$floor" ] || "$shared/reference/build.sh" "$floor" >/dev/null
if [ -z "${SLEEPCYCLE:-}" ]; then
    scratch=${SCRATCH:-.build}
    (cd "$repo" && swift build -c release --scratch-path "$scratch" --product sleepcycle >/dev/null)
    SLEEPCYCLE="$repo/$scratch/release/sleepcycle"
fi
sc=$SLEEPCYCLE
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT

# median wall (s), median CPU (user+sys, s) and max peak RSS (MB) of RUNS runs of a command
measure() {
    local walls=() cpus=() rss=0 w u s r
    for _ in $(seq "$runs"); do
        /usr/bin/time -o "$tmp" -f "%e %U %S %M" "$@" >/dev/null 2>/dev/null
        read -r w u s r < <(tail -1 "$tmp")
        walls+=("$w"); cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
        ((r > rss)) && rss=$r
    done
    local mid=$(( (runs + 1) / 2 ))
    echo "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "${mid}p") $(printf '%s\n' "${cpus[@]}" | sort -n | sed -n "${mid}p") $((rss / 1024))"
}
