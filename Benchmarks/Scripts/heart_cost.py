#!/usr/bin/env python3
"""What the heart session costs a night: `sleepcycle analyze` of the same 8-hour night without `--hr`, with a
wearable's heart rate every 5 s, and with every beat's RR interval (about 29,000 beats), alternately, in one session
(absolute times on these shared machines are noisy; the ratios are what count).

    swift build -c release --product sleepcycle
    Benchmarks/Scripts/make_test_nights.sh          # /tmp/sleepcycle-bench/night16k_8h.wav (needs sox)
    python3 Benchmarks/Scripts/heart_cost.py --bin .build/release/sleepcycle [--rounds 3]

Prints the median wall time, CPU time (user + system, all threads, from wait4) and peak RSS (ru_maxrss) of each
variant, the heart summary it produced, and the ratios to the run without `--hr`. Python 3, standard library only.
"""
import argparse
import json
import math
import os
import random
import statistics
import tempfile

from clips_cost import run      # wall time, CPU time and peak RSS of one run (wait4)


def wearable_files(folder, hours):
    """A night's beats (60 bpm with a respiratory swing and noise) as an RR CSV, and its heart rate every 5 s."""
    rnd = random.Random(8)
    rr_path, hr_path = os.path.join(folder, "rr.csv"), os.path.join(folder, "hr.csv")
    t, beats = 0.0, []
    while t < hours * 3600:
        rr = 1000 + 40 * math.sin(2 * math.pi * 0.25 * t) + 30 * math.sin(2 * math.pi * t / 5400) + rnd.gauss(0, 15)
        t += rr / 1000
        beats.append((t, rr))
    with open(rr_path, "w") as f:
        f.write("time,rr_ms\n" + "".join(f"{t:.3f},{rr:.1f}\n" for t, rr in beats))
    with open(hr_path, "w") as f:
        f.write("time,bpm\n")
        k = 0
        for second in range(0, int(hours * 3600), 5):
            window = []
            while k < len(beats) and beats[k][0] < second + 5:
                window.append(beats[k][1]); k += 1
            if window:
                f.write(f"{second},{60000 * len(window) / sum(window):.1f}\n")
    return rr_path, hr_path, len(beats)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=".build/release/sleepcycle")
    p.add_argument("--night", default="/tmp/sleepcycle-bench/night16k_8h.wav")
    p.add_argument("--hours", type=float, default=8)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="sleepcycle-heart-")
    rr, hr, beats = wearable_files(work, a.hours)
    print(f"night {a.night}, {beats} beats")
    variants = {"no --hr": [], "--hr bpm/5 s": ["--hr", hr], "--hr RR": ["--hr", rr]}
    results = {name: [] for name in variants}
    out = os.path.join(work, "out.json")
    for _ in range(a.rounds):
        for name, extra in variants.items():
            results[name].append(run([a.bin, "analyze", a.night, "--format", "json", "--no-progress"] + extra, out))
            if extra:
                with open(out) as f:
                    heart = json.load(f).get("heart", {})
                results[name + " summary"] = heart.get("summary"), len(heart.get("frames", []))
    base = [statistics.median(x[i] for x in results["no --hr"]) for i in range(3)]
    print(f"{'variant':<14} {'wall s':>8} {'cpu s':>8} {'rss MB':>8} {'wall ×':>7} {'cpu ×':>7} {'rss +MB':>8}")
    for name in variants:
        m = [statistics.median(x[i] for x in results[name]) for i in range(3)]
        print(f"{name:<14} {m[0]:8.1f} {m[1]:8.1f} {m[2]:8.1f} {m[0] / base[0]:7.3f} {m[1] / base[1]:7.3f} {m[2] - base[2]:8.1f}")
    for name in ("--hr bpm/5 s", "--hr RR"):
        summary, frames = results[name + " summary"]
        print(f"{name}: {frames} frames; summary {json.dumps(summary)}")


if __name__ == "__main__":
    main()
