#!/usr/bin/env python3
"""Where a condition's snores are lost: the segmenter or the classifier.

    python3 Benchmarks/Scripts/detection/snore_diagnosis.py --model A.json [--model B.json] [--fold 2] [--only ...]

For every condition (`conditions.py`'s, plus the pairs that make up `mix-laptop-2m-10`: `laptop-10`, `2m-10` and
`laptop-2m`), the two nights with snoring of set 0 are built as `conditions.py` builds them and cut into candidate
segments by `detect-dev segment-features`. A reference snore is *covered* when one segment overlaps at least 30 % of
it (the training label's threshold); for the covered snores, the segment stage's p(snoring) under each model (its
segment trees in float64, `train.predict`: no context stage, no screen, no bout rule). A low coverage says the
segmenter misses the snores; a high coverage with a low p(snoring) says the classifier does. Prints one line per
condition and model. About 30 s per condition on 2 cores.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common as C        # noqa: E402
import conditions as K    # noqa: E402
import dataset as D       # noqa: E402
import nights as N        # noqa: E402
import train as T         # noqa: E402

COVER = 0.3


def conditions():
    """conditions.py's conditions and the three pairs of mix-laptop-2m-10's changes."""
    conds = K.conditions()
    snr10 = conds["snr-10"]["spec"]
    conds["laptop-10"] = {"mic": "laptop", "spec": snr10}
    conds["2m-10"] = {"room": "2m", "spec": snr10}
    conds["laptop-2m"] = {"mic": "laptop", "room": "2m"}
    return conds


def covering_segment(segments, a, b):
    """(index, overlap share of [a, b]) of the segment that overlaps the interval most."""
    best, share = None, 0.0
    for start, end, i in segments:
        ov = max(0.0, min(b, end) - max(a, start)) / (b - a)
        if ov > share:
            best, share = i, ov
    return best, share


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", required=True, help="a model file (repeatable)")
    ap.add_argument("--fold", type=int, default=2)
    ap.add_argument("--only", nargs="+", default=["reference", "mic-laptop", "snr-10", "room-2m", "laptop-10", "2m-10",
                                                  "laptop-2m", "mix-laptop-2m-10"])
    ap.add_argument("--binary", default=None, help="the sleepcycle CLI (default: $SLEEPCYCLE_BIN / .build/release)")
    args = ap.parse_args()
    binary = [args.binary, "detect-dev"] if args.binary else None
    models = [json.load(open(p)) for p in args.model]
    pools = N.pools_for_fold(D.items(), args.fold, khan=True)
    conds = conditions()
    snoring = C.CLASSES.index("snoring")
    print("| condition | model | snores | covered | p(snoring) of covered: median | share >= 0.5 |")
    print("|---|---|---|---|---|---|")
    for name in args.only:
        nights = [K.condition_night(conds[name], name, pools, args.fold, 15.0, 0, j)
                  for j, kind in enumerate(K.NIGHT_KINDS) if kind == "mixed"]
        lines = C.run_scenes("segment-features", (x for x, _ in nights), binary=binary)
        segs = lines[1:]
        X = np.array([s["features"] for s in segs], dtype=np.float64)
        rows, total = [], 0
        for j, (_, truth) in enumerate(nights):
            scene = [(s["start"] / C.SR, s["end"] / C.SR, i) for i, s in enumerate(segs) if s["scene"] == j]
            for cls, a, b in truth:
                if cls == "snoring":
                    total += 1
                    i, share = covering_segment(scene, a, b)
                    if share >= COVER:
                        rows.append(i)
        for path, model in zip(args.model, models):
            p = T.predict(model, X[rows])[:, snoring] if rows else np.zeros(0)
            print("| %s | %s | %d | %.2f | %.2f | %.2f |" % (
                name, os.path.basename(path), total, len(rows) / max(total, 1),
                float(np.median(p)) if len(p) else float("nan"), float(np.mean(p >= 0.5)) if len(p) else float("nan")),
                flush=True)


if __name__ == "__main__":
    main()
