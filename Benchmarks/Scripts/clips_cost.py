#!/usr/bin/env python3
"""What audio clips cost: `sleepcycle analyze` of the same night with and without `--clips DIR`, alternately, in one
session (absolute times on these shared machines are noisy; the ratio is what counts).

    swift build -c release --product sleepcycle
    python3 Benchmarks/Scripts/clips_cost.py --bin .build/release/sleepcycle [--hours 8] [--rounds 5]

Needs sox (to make the night: a quiet room with Fixtures/example-night.flac heard 15 times, about 300 events) and
Python 3 (standard library only). The nights are 16-bit WAV: 16 kHz mono, 44.1 kHz mono, and 48 kHz stereo (the
two-sleeper fixture) analysed with `--channel-separation bedside`. For each: the median wall time, CPU time (user + system, all threads, from wait4)
and peak RSS (wait4's ru_maxrss) of the runs without and with clips (default settings: snoring, talking, coughing;
10-s clips), the events and clips written, and the ratios. With `--key`, clips are also encrypted.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "Fixtures", "example-night.flac")
TWO_SLEEPERS = os.path.join(ROOT, "Fixtures", "two-sleepers.flac")


def make_night(path, hours, rate, channels, work):
    """`hours` of a quiet room (pink noise at −45 dBFS) with the 3-minute example night (about 20 snores; for stereo
    the 2-minute two-sleeper fixture, about 25 events) heard 15 times, evenly spread: about 300 events, as a heavy
    snorer's night has."""
    fmt = ["-b", "16", "-r", str(rate), "-c", str(channels)]
    quiet, loud = os.path.join(work, "quiet.wav"), os.path.join(work, "loud.wav")
    loud_source, loud_seconds = (TWO_SLEEPERS, 120) if channels == 2 else (EXAMPLE, 180)
    gap = hours * 3600 / 15 - loud_seconds
    subprocess.run(["sox", "-n"] + fmt + [quiet, "synth", str(gap), "pinknoise", "vol", "-45dB"], check=True,
                   stderr=subprocess.DEVNULL)
    subprocess.run(["sox", loud_source] + fmt + [loud], check=True, stderr=subprocess.DEVNULL)
    subprocess.run(["sox"] + [quiet, loud] * 15 + [path], check=True, stderr=subprocess.DEVNULL)


def run(args, out_path):
    start = time.perf_counter()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(args, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed: {' '.join(args)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def count(out_path, separated):
    with open(out_path) as f:
        result = json.load(f)
    sessions = result["sessions"] if separated else [result]
    events = [e for s in sessions for e in s["events"]]
    chosen = [e for e in events if e["type"] in ("snoring", "talking", "coughing")]
    return len(events), len(chosen), sum(1 for e in chosen if "clip" in e)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "sleepcycle"))
    p.add_argument("--hours", type=float, default=8)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--key", action="store_true", help="encrypt the clips (--clips-key)")
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="sleepcycle-clips-cost-")
    try:
        key = os.path.join(work, "key")
        with open(key, "w") as f:
            f.write("ab" * 32 + "\n")
        print(f"{'night':<24} {'events':>6} {'chosen':>6} {'clips':>5}  {'wall s':>13}  {'CPU s':>13}  "
              f"{'peak RSS MB':>13}  {'wall':>6} {'CPU':>6} {'ΔRSS MB':>7}")
        for rate, channels in [(16000, 1), (44100, 1), (48000, 2)]:
            night = os.path.join(work, f"night-{rate}-{channels}.wav")
            make_night(night, a.hours, rate, channels, work)
            base = [a.bin, "analyze", night, "--format", "json", "--quiet"]
            if channels == 2:
                base += ["--channel-separation", "bedside"]
            runs = {False: [], True: []}
            out = os.path.join(work, "out.json")
            for _ in range(a.rounds):
                for clips in (False, True):
                    args = list(base)
                    if clips:
                        folder = os.path.join(work, "clips")
                        shutil.rmtree(folder, ignore_errors=True)
                        args += ["--clips", folder] + (["--clips-key", key] if a.key else [])
                    runs[clips].append(run(args, out))
                    if clips:
                        events, chosen, made = count(out, channels == 2)
            med = {k: [statistics.median(r[i] for r in v) for i in range(3)] for k, v in runs.items()}
            label = f"{rate} Hz {'stereo' if channels == 2 else 'mono'}, {a.hours:g} h"
            print(f"{label:<24} {events:>6} {chosen:>6} {made:>5}  "
                  f"{med[False][0]:>6.2f}→{med[True][0]:<6.2f}  {med[False][1]:>6.2f}→{med[True][1]:<6.2f}  "
                  f"{med[False][2]:>6.1f}→{med[True][2]:<6.1f}  {med[True][0] / med[False][0]:>6.3f} "
                  f"{med[True][1] / med[False][1]:>6.3f} {med[True][2] - med[False][2]:>7.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
