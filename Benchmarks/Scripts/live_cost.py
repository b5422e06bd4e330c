#!/usr/bin/env python3
"""What a live night costs: CPU of `sleepcycle record` fed in real time, peak memory over a long night fed as fast
as it goes, and how the store grows.

    swift build -c release --product sleepcycle
    python3 Benchmarks/Scripts/live_cost.py --bin .build/release/sleepcycle [--minutes 10] [--hours 8]

Needs sox (to make the test nights from Fixtures/example-night.flac: looped, and resampled to 44.1 kHz stereo)
and Python 3 (standard library only). Everything is written to a temporary directory.

1. CPU: a --minutes real-time feed (1 s of audio per second of wall time, in 0.1-s pieces, like arecord) at
   16 kHz mono and, at the same time, at 44.1 kHz stereo; the recorder's CPU time (user + system, all threads,
   from wait4) over the wall time. The two run side by side: each uses a small share of one core.
2. Memory: 1 hour and --hours hours fed as fast as the recorder reads (backpressure through the pipe); peak RSS of
   each (wait4's ru_maxrss), and their ratio.
3. Store: the store file (with its write-ahead log) sampled every 0.2 s during the long night (the journal), then
   after the night completed (the result only), and the stored result's size.
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "Fixtures", "example-night.flac")


def make_raw(path, seconds, rate, channels, quiet=False):
    """The example night looped to `seconds` (a snore every ~10 s: about ten times a heavy snorer's night), or with
    `quiet` a room with no events (pink noise at −45 dBFS), as raw s16le at `rate` Hz and `channels` channels."""
    raw = ["-t", "raw", "-e", "signed", "-b", "16", "-r", str(rate), "-c", str(channels), path]
    if quiet:
        subprocess.run(["sox", "-n"] + raw + ["synth", str(seconds), "pinknoise", "vol", "-45dB"], check=True,
                       stderr=subprocess.DEVNULL)
        return
    loops = int(seconds // 180) + 1
    subprocess.run(["sox"] + [EXAMPLE] * loops + raw + ["trim", "0", str(seconds)], check=True, stderr=subprocess.DEVNULL)


def record(binary, raw, rate, channels, store, pace=None, watch_store=None):
    """Runs `record --input -` on `raw`; returns (cpu seconds, wall seconds, peak RSS MB, store sizes seen)."""
    args = [binary, "record", "--input", "-", "--input-format", "s16le", "--rate", str(rate), "--channels",
            str(channels), "--store", store, "--format", "json", "--output", os.devnull, "--quiet",
            "--start", "2026-01-01T23:00:00+01:00"]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE)
    sizes = []
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            total = sum(os.path.getsize(p) for p in (store, store + "-wal") if os.path.exists(p))
            sizes.append(total)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True) if watch_store else None
    if sampler:
        sampler.start()
    began = time.monotonic()
    piece = rate * channels * 2 // 10          # 0.1 s
    with open(raw, "rb") as f:
        sent = 0
        while True:
            chunk = f.read(piece)
            if not chunk:
                break
            proc.stdin.write(chunk)
            sent += len(chunk)
            if pace:
                due = sent / (rate * channels * 2) / pace
                wait = due - (time.monotonic() - began)
                if wait > 0:
                    time.sleep(wait)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - began
    stop.set()
    if sampler:
        sampler.join()
    if status != 0:
        sys.exit(f"live_cost: record exited with status {status}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "sleepcycle"))
    ap.add_argument("--minutes", type=float, default=10, help="length of the real-time feeds (default 10)")
    ap.add_argument("--hours", type=float, default=8, help="length of the long night (default 8)")
    ap.add_argument("--skip-realtime", action="store_true", help="only the memory and store measurements")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sleepcycle-live-") as tmp:
        if not a.skip_realtime:
            realtime(a, tmp)
        long_night(a, tmp)


def realtime(a, tmp):
    if True:
        mono = os.path.join(tmp, "mono.raw")
        stereo = os.path.join(tmp, "stereo.raw")
        make_raw(mono, a.minutes * 60, 16000, 1)
        make_raw(stereo, a.minutes * 60, 44100, 2)
        results = {}

        def run(name, raw, rate, channels):
            results[name] = record(a.bin, raw, rate, channels, os.path.join(tmp, name + ".sqlite"), pace=1.0)

        threads = [threading.Thread(target=run, args=("16k-mono", mono, 16000, 1)),
                   threading.Thread(target=run, args=("44k-stereo", stereo, 44100, 2))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name in ("16k-mono", "44k-stereo"):
            cpu, wall, rss, _ = results[name]
            print(f"live CPU {name}: {cpu:.2f} s CPU in {wall:.0f} s = {100 * cpu / wall:.2f} % of one core "
                  f"(peak RSS {rss:.1f} MB)")



def long_night(a, tmp):
    for quiet in (True, False):
        kind = "a quiet room" if quiet else "the example night looped"
        short = os.path.join(tmp, "1h.raw")
        long = os.path.join(tmp, "long.raw")
        make_raw(short, 3600, 16000, 1, quiet)
        make_raw(long, a.hours * 3600, 16000, 1, quiet)
        _, wall1, rss1, _ = record(a.bin, short, 16000, 1, os.path.join(tmp, f"1h-{quiet}.sqlite"))
        store = os.path.join(tmp, f"long-{quiet}.sqlite")
        _, wall8, rss8, sizes = record(a.bin, long, 16000, 1, store, watch_store=True)
        with sqlite3.connect(store) as db:
            result, journal = db.execute("SELECT length(result), (SELECT count(*) FROM journal) FROM night").fetchone()
        after = sum(os.path.getsize(p) for p in (store, store + "-wal") if os.path.exists(p))
        print(f"{kind}: memory: 1 h fed in {wall1:.1f} s, peak RSS {rss1:.1f} MB; {a.hours:g} h fed in {wall8:.1f} s, "
              f"peak RSS {rss8:.1f} MB ({100 * (rss8 / rss1 - 1):+.1f} %)")
        print(f"{kind}: store: up to {max(sizes) / 1e6:.2f} MB while recording the {a.hours:g}-h night (journal "
              f"and log), {after / 1e6:.2f} MB after it completed, stored result {result / 1e3:.1f} KB, "
              f"{journal} journal chunks left")
        os.remove(short)
        os.remove(long)


if __name__ == "__main__":
    main()
