#!/usr/bin/env bash
# Instructions executed (valgrind callgrind: exact and repeatable, whatever the load on the machine) by
# `sleepcycle analyze --format json` and `sleepcycle features` on the example night and the 1-h test nights.
#   Benchmarks/Scripts/instructions.sh            SLEEPCYCLE=path/to/sleepcycle to measure another build
#   OUT=dir keeps the callgrind files there (per function: callgrind_annotate OUT/analyze.night16k_1h.wav.out)
# valgrind 3.19 (Debian 12) cannot read the DWARF 5 that Swift 6.3 writes, so the binary is measured from a copy
# without debug info (function symbols kept), and it crashes once the CLI's async main has left the main thread
# through dispatch_main(): callgrind/main_queue_shim.c (LD_PRELOAD) drains the main queue on the main thread.
# Large copies count one instruction per byte (memcpy's `rep movsb`). Runs two commands at a time (about 3 min on
# 2 cores).
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
out=${OUT:-$(mktemp -d)}; [ -n "${OUT:-}" ] || trap 'rm -rf "$out"; rm -f "$tmp"' EXIT
mkdir -p "$out"
swiftlib=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux
cc -O2 -shared -fPIC "$here/callgrind/main_queue_shim.c" -o "$out/main_queue_shim.so" \
    -L"$swiftlib" -Wl,-rpath,"$swiftlib" -ldispatch
# The copy finds its resources (the models) through the bundle path of the build directory recorded in it.
objcopy --strip-debug "$sc" "$out/sleepcycle"
run() { # name command...
    LD_PRELOAD="$out/main_queue_shim.so" valgrind --tool=callgrind --callgrind-out-file="$out/$1.out" "${@:2}" \
        >/dev/null 2>"$out/$1.log"
    printf "  %-34s %'17d instructions\n" "$1" "$(sed -n 's/^summary: //p' "$out/$1.out")"
}
echo "sleepcycle: $sc"
for f in "$repo/Fixtures/example-night.flac" "$dir/night16k_1h.wav" "$dir/night44k_st_1h.wav"; do
    run "analyze.$(basename "$f")" "$out/sleepcycle" analyze "$f" --format json --no-progress &
    run "features.$(basename "$f")" "$out/sleepcycle" features "$f" &
    wait
done
