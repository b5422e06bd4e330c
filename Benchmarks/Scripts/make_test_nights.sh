#!/usr/bin/env bash
# Makes the benchmark nights in $BENCH_DIR (default /tmp/sleepcycle-bench), once:
#   night16k_1h.wav  1 h, 16 kHz mono, PCM16      night16k_8h.wav  8 h, 16 kHz mono, PCM16
#   night44k_st_1h.wav  1 h, 44.1 kHz stereo, PCM16
# Content: pink noise (a fan) plus a slow tremolo tone, so every frame has energy and spectral structure.
set -euo pipefail
dir=${BENCH_DIR:-/tmp/sleepcycle-bench}
mkdir -p "$dir"
make() { # out rate channels seconds
    [ -s "$1" ] && return 0
    sox -R -n -r "$2" -c "$3" -b 16 "$1" synth "$4" pinknoise vol 0.05 synth "$4" sine mix 220 tremolo 0.25 80 vol 0.8
}
make "$dir/night16k_1h.wav" 16000 1 3600
make "$dir/night44k_st_1h.wav" 44100 2 3600
if [ ! -s "$dir/night16k_8h.wav" ]; then
    sox "$dir/night16k_1h.wav" "$dir/night16k_1h.wav" "$dir/night16k_1h.wav" "$dir/night16k_1h.wav" \
        "$dir/night16k_1h.wav" "$dir/night16k_1h.wav" "$dir/night16k_1h.wav" "$dir/night16k_1h.wav" "$dir/night16k_8h.wav"
fi
echo "$dir"
