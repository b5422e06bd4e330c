#!/usr/bin/env python3
"""What detection adds to `sleepcycle analyze`: CPU time, wall time and peak memory with and without the detector.

    python3 Benchmarks/Scripts/detection/cost.py [--runs 7] [--binary PATH ...] [--folds 0] [--minutes 30] [--rate 48000]

The nights are the standard evaluation nights of `evaluate_nights.py` (fold k, set 0: two mixed nights, the
no-snore night and the quiet night, 30 min each; built once and cached in $DETECT_WORK, written as 16-bit WAV under
$DETECT_WORK/cost/), and one long night: the 12 nights of sets 0-2 of the first fold end to end (6 h), on which
fixed costs (loading the model, ~15 ms) weigh as they do on a real night. They matter: a night of audible breathing is cut into a segment per breath, so the detector's
per-segment work dominates there, while a synthetic benchmark night of noise and a tone hardly exercises it.

For every binary (default: the release build the other scripts use) and night, `analyze --format json` and
`analyze --format json --no-detection` (the same pipeline without the event detector) run `--runs` times each,
interleaved (A B A B ...), so both see the same machine load; the table gives the median CPU time (user + sys, from
/usr/bin/time), median wall time and peak RSS of each, and detection's share = with / without - 1 (the issue's
budget is 25 %). With several `--binary`, the binaries are interleaved too: compare them within one run, never
across sessions (absolute times on shared machines are noisy).
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
import argparse
import math
import subprocess

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

import common as C
import dataset as D
import evaluate_nights as E


def run_once(cmd):
    """(cpu seconds, wall seconds, peak RSS MB) of one run, as /usr/bin/time reports them (run from this process,
    the child's own rusage would start from the RSS of the Python process it was forked from)."""
    with open(os.path.join(C.WORK, "cost", "time.txt"), "w+") as t:
        p = subprocess.run(["/usr/bin/time", "-o", t.name, "-f", "%U %S %e %M"] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise SystemExit("cost.py: %s failed: %s" % (" ".join(cmd), p.stderr.strip()))
        u, s, e, m = (float(v) for v in t.read().split()[-4:])
    return u + s, e, m / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--binary", action="append", default=[],
                    help="sleepcycle binary to measure (repeatable; default: the scripts' release build)")
    ap.add_argument("--folds", type=int, nargs="+", default=[0])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--long-night-sets", type=int, default=3,
                    help="also measure one long night: every night of sets 0..N-1 of the first fold, end to end "
                         "(3 sets: 6 h, a night's length, where the model's ~15-ms load is paid once); 0 = none")
    ap.add_argument("--long-only", action="store_true", help="only the long night")
    ap.add_argument("--rate", type=int, default=C.SR,
                    help="write the nights at this sample rate (e.g. 48000, as phones and USB microphones record: "
                         "analyze then resamples to 16 kHz as it does for a real recording); default 16000")
    args = ap.parse_args()
    binaries = args.binary or [C.default_binary()[0]]
    its = D.items()
    out_dir = os.path.join(C.WORK, "cost")
    os.makedirs(out_dir, exist_ok=True)
    rate = args.rate
    suffix = "" if rate == C.SR else "-%dhz" % rate

    def write(path, parts):
        """16-bit WAV of the 16-kHz pieces `parts`, end to end, resampled to `rate` piece by piece (the 6-h night
        at 48 kHz does not fit in memory as floats)."""
        def body(tmp):
            with sf.SoundFile(tmp, "w", samplerate=rate, channels=1, subtype="PCM_16", format="WAV") as f:
                for x in parts:
                    if rate != C.SR:
                        g = math.gcd(rate, C.SR)
                        x = resample_poly(x, rate // g, C.SR // g).astype(np.float32)
                    f.write(np.clip(x, -1, 1))
        C.write_atomically(path, body)

    nights = []
    for k in args.folds:
        for j, (kind, x, _) in enumerate(E.fold_nights(its, k, args.minutes)):
            path = os.path.join(out_dir, "fold%d-%d-%s-%gmin%s.wav" % (k, j, kind, args.minutes, suffix))
            if not os.path.exists(path):
                write(path, [x])
            if not args.long_only:
                nights.append((path, kind))
    if args.long_night_sets > 0:
        k = args.folds[0]
        path = os.path.join(out_dir, "fold%d-sets0-%d-%gmin-end-to-end%s.wav" % (k, args.long_night_sets - 1,
                                                                               args.minutes, suffix))
        if not os.path.exists(path):
            write(path, (n[1] for s in range(args.long_night_sets) for n in E.fold_nights(its, k, args.minutes, s)))
        nights.append((path, "long"))
    print("machine: %d cores, load %s; %d runs each, interleaved" % (
        os.cpu_count(), " ".join(open("/proc/loadavg").read().split()[:3]), args.runs))
    header = "%-40s %-9s %24s %24s %8s %8s" % ("night", "binary", "cpu s: with / without", "wall s: with / without",
                                               "cpu +%", "wall +%")
    print(header)
    totals = {b: np.zeros(4) for b in range(len(binaries))}
    for path, kind in nights:
        samples = {(b, d): [] for b in range(len(binaries)) for d in (True, False)}
        for _ in range(args.runs):
            for b, binary in enumerate(binaries):
                for detect in (True, False):
                    cmd = [binary, "analyze", path, "--format", "json", "--no-progress", "--output", os.devnull]
                    samples[(b, detect)].append(run_once(cmd + ([] if detect else ["--no-detection"])))
        for b in range(len(binaries)):
            w = np.median(np.array(samples[(b, True)]), axis=0)
            wo = np.median(np.array(samples[(b, False)]), axis=0)
            totals[b] += [w[0], wo[0], w[1], wo[1]]
            lo, low = np.min(np.array(samples[(b, True)]), axis=0), np.min(np.array(samples[(b, False)]), axis=0)
            print("%-40s %-9s %11.3f / %-10.3f %11.3f / %-10.3f %7.1f%% %7.1f%%   fastest runs: cpu %+.1f%%   "
                  "peak RSS %.1f / %.1f MB" % (
                      os.path.basename(path), "#%d" % b, w[0], wo[0], w[1], wo[1], 100 * (w[0] / wo[0] - 1),
                      100 * (w[1] / wo[1] - 1), 100 * (lo[0] / low[0] - 1), w[2], wo[2]))
    for b, binary in enumerate(binaries):
        t = totals[b]
        print("all nights, binary #%d (%s): detection adds %.1f %% CPU, %.1f %% wall" % (
            b, binary, 100 * (t[0] / t[1] - 1), 100 * (t[2] / t[3] - 1)))


if __name__ == "__main__":
    main()
