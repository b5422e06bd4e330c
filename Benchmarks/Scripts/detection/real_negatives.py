#!/usr/bin/env python3
"""Real recordings without any of the four classes: how many events does the detector report on them?

    python3 Benchmarks/Scripts/detection/real_negatives.py [--folds 0 1 2 3] [--builtin]

The evaluation nights are generated; this scores real audio instead: the Coswara deep-breathing recordings
(`breathing/coswara/`, real airborne breathing into phone and laptop microphones at home, 15-30 s each, about 10 min
in all), every one as recorded (no added background, no cutting), through `detect-dev events`. Deep breathing at a
phone is louder and faster than sleep breathing, so this is a hard test of "breathing is not snoring / coughing".
Each recording is scored by the fold model of its participant's fold (`$DETECT_WORK/model-fold<k>.json`, fitted
without that participant by `evaluate_nights.py`), or with `--builtin` by the committed model (held out only if it
was trained without Coswara). Reports events per class, per hour, and the share of recordings with any event.
"""
import argparse
import os

import numpy as np

import common as C


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--builtin", action="store_true", help="the committed model for every recording")
    args = ap.parse_args()
    recs = [r for r in C.load_breathing() if r["fold"] in args.folds]
    if not recs:
        raise SystemExit("real_negatives: no Coswara recordings of folds %s under %s" % (args.folds, C.BREATHING_DATA))
    counts = {c: 0 for c in C.CLASSES[1:]}
    seconds = {c: 0.0 for c in C.CLASSES[1:]}
    with_event, hours = 0, 0.0
    for k in sorted({r["fold"] for r in recs}):
        fold = [r for r in recs if r["fold"] == k]
        extra = [] if args.builtin else ["--model", os.path.join(C.WORK, "model-fold%d.json" % k)]
        audio = [C.read_audio(r["path"], max_sec=3600) for r in fold]
        lines = C.run_scenes("events", audio, extra)
        for j, (r, x) in enumerate(zip(fold, audio)):
            det = [d for d in lines if d["scene"] == j]
            hours += len(x) / C.SR / 3600
            with_event += bool(det)
            for d in det:
                counts[d["type"]] += 1
                seconds[d["type"]] += (d["end"] - d["start"]) / C.SR
        print("fold %d: %d recordings, %.1f min, %d events (%s)" % (
            k, len(fold), sum(len(x) for x in audio) / C.SR / 60, sum(1 for d in lines),
            ", ".join("%s %d" % (c, sum(1 for d in lines if d["type"] == c)) for c in counts)))
    print("\n== Coswara deep breathing, %d recordings, %.2f h, %s ==" % (
        len(recs), hours, "built-in model" if args.builtin else "fold models (held out)"))
    for c in counts:
        print("%-9s %3d events, %5.1f s, %5.1f events/h" % (c, counts[c], seconds[c], counts[c] / hours))
    print("recordings with any event: %d of %d" % (with_event, len(recs)))


if __name__ == "__main__":
    main()
