#!/usr/bin/env bash
# Builds and runs a libFuzzer target of sleepcycle (Tests/Fuzz, its own package depending on this one by path).
#
#   scripts/fuzz.sh [seconds] [target]      seconds: total fuzzing time (default 60, what CI runs)
#                                           target:  decode (default): arbitrary bytes read through AudioFileSource
#                                                    csv: the delimited-text reader, the --hr / --motion readers,
#                                                    the ISO 8601 and duration parsers
#
# Longer runs: `scripts/fuzz.sh 3600` (an hour), or run the binary directly with any libFuzzer flags, e.g.
#   Tests/Fuzz/.build-fuzz/release/DecodeFuzzer -jobs=2 -max_total_time=28800 <work dir> Tests/Fuzz/corpus/decode
# Reproduce a crash: Tests/Fuzz/.build-fuzz/release/DecodeFuzzer <crash file>.
# New inputs found go to a temporary work directory (printed), not into the committed seed corpus; crashes, leaks and
# timeouts are written to Tests/Fuzz/artifacts/ and the script exits non-zero.
#
# Adding a target: add an executable target `<Name>Fuzzer` to Tests/Fuzz/Package.swift whose
# main.swift hands its test function to LLVMFuzzerRunDriver (copy Sources/DecodeFuzzer/main.swift), put seeds in
# Tests/Fuzz/corpus/<target>/, and add a line to the `case` below.
#
# Memory: one input may allocate at most 1 GB at once, the process 4 GB. The fuzzer invents many odd sample rates;
# SleepCycleDSP's cache of their polyphase filter banks (16 MB each) is bounded at 48 MB.
#
# Needs only the Swift toolchain: libFuzzer (libclang_rt.fuzzer) and lld ship with it. The link uses lld because
# GNU gold fails on the sanitizer runtime (internal error in dwarf_reader.cc).
set -euo pipefail
seconds=${1:-60}
target=${2:-decode}
case "$target" in
    decode) product=DecodeFuzzer ;;
    csv) product=CSVFuzzer ;;
    *) echo "fuzz.sh: unknown target '$target' (expected: decode or csv)" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")/../Tests/Fuzz" && pwd)"
corpus="$here/corpus/$target"
cd "$here"
swift build -c release --product "$product" --scratch-path .build-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld
work=$(mktemp -d "${TMPDIR:-/tmp}/sleepcycle-fuzz-$target.XXXXXX")
mkdir -p "$here/artifacts"
echo "fuzz.sh: $product for $seconds s; new inputs in $work" >&2
# The Swift runtime's backtracer would race libFuzzer's own crash handling. Leak reports need whole stacks (slow
# unwinding) so that lsan.supp can name the one known leak outside this project (libsndfile's, see there).
SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0" \
    "./.build-fuzz/release/$product" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$here/artifacts/" "$work" "$corpus"
