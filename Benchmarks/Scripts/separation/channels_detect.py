#!/usr/bin/env python3
"""The event detector alone on every microphone of the simulated bedrooms: false events on breathing and the bed.

    python3 Benchmarks/Scripts/separation/channels_detect.py --split heldout [--model A.json ...] [--no-context]
        [--detect-option=--class-weight=snoring=0.5 ...]

Each channel of each scene (rooms.py; generated on first use) is one mono scene for `sleepcycle detect-dev events`
(the built-in model, or each `--model` file; `--no-context` also runs every model without its context stage, the
file without its `context` key). Per model it prints

* events on nothing: detected events that overlap (0.5 s margin, as score.py) no reference event of either
  sleeper, per class; for snoring also how many lie within 6 s of a reference snore (a breath between the snores of
  a bout called a snore) and how many further away (a sleeper who does not snore at all reported snoring: the
  worse error);
* own snores found: the reference snores of the sleeper next to that microphone (channel 0: primary, 1: secondary)
  that a snoring event overlaps.

No channel separation is involved: this is the detector on reverberant rooms with two sleepers breathing, the
setting where event models trained on snores from 0 dB SNR made breaths into snores (docs/0005-event-detection-log.md,
"Snores from 0 dB: ... reverted").
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
import argparse
import collections
import json
import sys
import tempfile

import soundfile as sf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rooms as R    # noqa: E402
from score import TOLERANCE, default_binary, overlaps    # noqa: E402

SR = 16000
NEAR_SNORE_SEC = 6.0


def channels(paths):
    """Every channel of the stereo scene files, one mono scene each (read again per model: little memory)."""
    for path in paths:
        x, sr = sf.read(path, dtype="float32")
        assert sr == SR and x.ndim == 2 and x.shape[1] == 2, "%s: stereo 16 kHz expected" % path
        yield x[:, 0]
        yield x[:, 1]


def detect(binary, paths, model=None, options=()):
    """{scene index: [(type, start_s, end_s, probability)]} from `detect-dev events` (detection's `run_scenes`)."""
    events = collections.defaultdict(list)
    args = (["--model", model] if model else []) + list(options)
    for d in R.C.run_scenes("events", channels(paths), args, [binary, "detect-dev"]):
        events[d["scene"]].append((d["type"], d["start"] / SR, d["end"] / SR, d["probability"]))
    return events


def score(events, truths):
    """(events on nothing per class, snoring ones near a snore, own snores found, own snores)."""
    nothing, near, found, total = collections.Counter(), 0, 0, 0
    for i, truth in enumerate(truths):
        own = R.SLEEPERS[i % 2]
        snores = [t for t in truth if t["class"] == "snoring"]
        for typ, a, b, _ in events[i]:
            if any(overlaps(a, b, t["start"], t["end"], TOLERANCE) for t in truth):
                continue
            nothing[typ] += 1
            if typ == "snoring" and any(min(abs(a - t["end"]), abs(t["start"] - b)) < NEAR_SNORE_SEC for t in snores):
                near += 1
        for t in snores:
            if t["sleeper"] == own:
                total += 1
                found += any(typ == "snoring" and overlaps(a, b, t["start"], t["end"], TOLERANCE)
                             for typ, a, b, _ in events[i])
    return nothing, near, found, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", choices=sorted(R.SPLITS), default="heldout")
    ap.add_argument("--preset", choices=R.PRESETS, nargs="+", default=R.PRESETS)
    ap.add_argument("--scenes", type=int, default=8)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--model", action="append", default=[], help="a model file instead of the built-in (repeatable)")
    ap.add_argument("--no-context", action="store_true", help="also each model without its context stage")
    ap.add_argument("--binary", default=default_binary())
    R.C.add_detect_option(ap)
    args = ap.parse_args()
    if args.no_context and not args.model:
        raise SystemExit("--no-context needs --model files (the built-in model is read from the binary)")
    paths, truths = [], []
    for preset in args.preset:
        for meta in R.ensure_scenes(args.split, preset, args.scenes, args.minutes):
            paths.append(os.path.join(R.scene_dir(args.split, preset, meta["index"], args.minutes), "stereo.wav"))
            truths += [meta["events"], meta["events"]]
    hours = sum(sf.info(p).duration for p in paths) * 2 / 3600
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(m or "built-in", m) for m in (args.model or [None])]
        if args.no_context:
            for label, m in list(runs):
                doc = json.load(open(m))
                doc.pop("context", None)
                path = os.path.join(tmp, "noctx-%d.json" % len(runs))
                json.dump(doc, open(path, "w"))
                runs.append((label + " without context", path))
        print("%s, %s: %d channels, %.2f h%s" % (args.split, "/".join(args.preset), len(truths), hours,
                                                 "; detect-dev events " + " ".join(args.detect_option)
                                                 if args.detect_option else ""))
        for label, m in runs:
            nothing, near, found, total = score(detect(args.binary, paths, m, args.detect_option), truths)
            print("%-40s events on nothing %s (snoring within %g s of a snore: %d, further: %d) | own snores found "
                  "%d / %d = %.3f" % (label, dict(sorted(nothing.items())), NEAR_SNORE_SEC, near,
                                      nothing["snoring"] - near, found, total, found / max(1, total)), flush=True)


if __name__ == "__main__":
    main()
