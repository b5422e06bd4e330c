#!/usr/bin/env python3
"""What channel separation costs: CPU time against the mono analysis of one channel, and peak memory over a night.

    python3 Benchmarks/Scripts/separation/cost.py [--runs 5] [--binary PATH] [--hours 8]

Input: the six `dev` bedside scenes of rooms.py (generated on first use, 10 min each) joined into one hour of
16 kHz stereo (`$SEPARATION_WORK/cost/hour.wav`) and its left channel as mono (`hour-left.wav`).

1. CPU (user + sys, /usr/bin/time): `analyze hour.wav --channel-separation bedside`, `analyze hour.wav` (stereo,
   no separation) and `analyze hour-left.wav` (mono), interleaved `--runs` times so they see the same machine load;
   medians, and the ratio separation / mono (the issue's target: at most 2.2).
2. Memory (peak RSS): `record --input - --channels 2 --channel-separation bedside` fed the hour's raw samples as fast
   as it reads them, once for 1 hour and once looped for `--hours`; flat means the long night's peak within 10 %.
"""
import argparse, os, statistics, subprocess, sys, tempfile

import numpy as np
import soundfile as sf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rooms as R  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def timed(cmd, stdin=None):
    """CPU seconds and peak RSS (MB) of `cmd` (GNU time's %U %S %M)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", t.name] + cmd, stdin=stdin,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise SystemExit("%s failed: %s" % (" ".join(cmd), p.stderr.decode()[-500:]))
        u, s, m = open(t.name).read().split()[-3:]
        return float(u) + float(s), int(m) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hours", type=int, default=8)
    ap.add_argument("--binary", default=os.environ.get("SLEEPCYCLE_BIN") or os.path.join(REPO, ".build", "release", "sleepcycle"))
    args = ap.parse_args()
    work = os.path.join(R.WORK, "cost")
    os.makedirs(work, exist_ok=True)
    hour, left = os.path.join(work, "hour.wav"), os.path.join(work, "hour-left.wav")
    if not os.path.exists(hour):
        metas = R.ensure_scenes("dev", "bedside", 6, 10, 2)
        parts = [sf.read(os.path.join(R.scene_dir("dev", "bedside", m["index"], 10), "stereo.wav"), dtype="int16")[0]
                 for m in metas]
        x = np.concatenate(parts)
        sf.write(hour, x, 16000, subtype="PCM_16")
        sf.write(left, x[:, 0], 16000, subtype="PCM_16")
    cpu = {"separation": [], "stereo": [], "mono": []}
    for _ in range(args.runs):
        cpu["separation"].append(timed([args.binary, "analyze", hour, "--channel-separation", "bedside", "--format", "json"])[0])
        cpu["stereo"].append(timed([args.binary, "analyze", hour, "--format", "json"])[0])
        cpu["mono"].append(timed([args.binary, "analyze", left, "--format", "json"])[0])
    med = {k: statistics.median(v) for k, v in cpu.items()}
    print("CPU for one hour (median of %d): separation %.2f s, stereo without separation %.2f s, mono (one channel) %.2f s"
          % (args.runs, med["separation"], med["stereo"], med["mono"]))
    print("  separation / mono = %.2f (target <= 2.2); separation / stereo = %.2f" %
          (med["separation"] / med["mono"], med["separation"] / med["stereo"]))
    raw = sf.read(hour, dtype="int16")[0].tobytes()
    peaks = {}
    for hours in (1, args.hours):
        store = os.path.join(work, "store-%d.sqlite" % hours)
        for suffix in ("", "-wal", "-shm", ".lock"):
            if os.path.exists(store + suffix):
                os.remove(store + suffix)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            view = memoryview(raw)
            for _ in range(hours):
                done = 0
                while done < len(view):
                    done += os.write(w, view[done:done + (1 << 20)])
            os._exit(0)
        os.close(w)
        _, peaks[hours] = timed([args.binary, "record", "--input", "-", "--input-format", "s16le", "--rate", "16000",
                                 "--channels", "2", "--channel-separation", "bedside", "--store", store, "--no-status",
                                 "--format", "json", "--start", "2026-01-01T22:00:00Z"], stdin=r)
        os.close(r)
        os.waitpid(pid, 0)
    print("peak RSS of record --channel-separation: 1 h %.1f MB, %d h %.1f MB (%+.1f %%)" % (
        peaks[1], args.hours, peaks[args.hours], (peaks[args.hours] / peaks[1] - 1) * 100))


if __name__ == "__main__":
    main()
