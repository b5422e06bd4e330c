#!/usr/bin/env python3
"""What the false events on the evaluation nights are: each detected event that overlaps no reference event of its
class (within 0.5 s, the reliability rule of evaluate_nights.py) is attributed to what was sounding under it.

    DETECT_WORK=<folder with model-fold<k>.json> python3 Benchmarks/Scripts/detection/false_events.py \
        [--folds 0 1] [--sets 3] [--reverb] [--khan-distractors]

The nights are rebuilt with their distractor placements recorded (`nights.build_night(placed=...)`) and checked
sample for sample against the cached nights that evaluate_nights.py scored. A false event's cause is the ESC-10
label of every distractor it overlaps, the class of every reference event of another class it overlaps, or
`background` (breathing and room noise only). Prints the counts per detected class and cause, then the false events
on the `quiet` nights (the nights behind "false events per hour"); writes every false event to
$DETECT_WORK/false-events-folds<...>.json.
"""
import argparse
import collections
import json
import os

import numpy as np

import common as C
import dataset as D
import evaluate_nights as E
import nights as N


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--sets", type=int, default=3)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--reverb", action="store_true")
    ap.add_argument("--khan-distractors", action="store_true", help="as in evaluate_nights.py")
    C.add_detect_option(ap)
    args = ap.parse_args()
    its = D.items()
    causes = collections.defaultdict(collections.Counter)
    rows = []
    for k in args.folds:
        pools = N.pools_for_fold(its, k, khan=args.khan_distractors)
        nights = []
        for s in range(args.sets):
            cached = E.fold_nights(its, k, args.minutes, s, args.reverb, args.khan_distractors)
            for j, kind in enumerate(E.NIGHT_KINDS):
                placed = []
                x, truth = E.build_eval_night(pools, k, args.minutes, s, j, args.reverb, placed)
                if not np.array_equal(x, cached[j][1]):
                    raise SystemExit("false_events: fold %d set %d night %d differs from its cache in %s "
                                     "(delete the cached nights)" % (k, s, j, C.WORK))
                nights.append((s, kind, x, truth, placed))
        lines = C.fold_events(k, (n[2] for n in nights), args.detect_option)
        for j, (s, kind, _, truth, placed) in enumerate(nights):
            for d in (l for l in lines if l["scene"] == j):
                if E.matches_reference(d, truth):
                    continue
                a, b = d["start"] / C.SR, d["end"] / C.SR
                under = {c for c, ts, te in truth + placed if ts < b and te > a}
                cause = "+".join(sorted(under)) or "background"
                causes[d["type"]][cause] += 1
                rows.append({"fold": k, "set": s, "night": kind, "type": d["type"], "start": round(a, 2),
                             "duration": round(b - a, 2), "probability": round(d["probability"], 3),
                             "cause": cause})
    for t in E.EVENT_CLASSES:
        c = causes.get(t, collections.Counter())
        print("%-9s %3d false events: %s" % (t, sum(c.values()), ", ".join("%s %d" % kv for kv in c.most_common())))
    print("\non the quiet nights:")
    for r in rows:
        if r["night"] == "quiet":
            print("  fold %(fold)d set %(set)d  %(type)-9s at %(start)7.1f s, %(duration)4.1f s, p %(probability).2f:"
                  " %(cause)s" % r)
    out = os.path.join(C.WORK, "false-events-folds%s%s%s.json" % ("".join(map(str, args.folds)),
                                                                  "-reverb" if args.reverb else "",
                                                                  "-khan" if args.khan_distractors else ""))
    json.dump(rows, open(out, "w"), indent=0)


if __name__ == "__main__":
    main()
