#!/usr/bin/env python3
"""Continuous speech: is talking found as well in long utterances as in the evaluation nights' 1-3 words?

    python3 Benchmarks/Scripts/detection/long_utterances.py [--words 6 12] [--folds 0 1 2 3]

The training speech is single words and short phrases, and the evaluation nights place 1-3 of them per utterance;
real sleep talk (and the sealed set's meeting speech) can go on longer. For each fold k this builds one 20-minute
night from fold k's speakers only: a generated background (-65 to -45 dBFS) with quiet breathing, and utterances of
`--words` clips of one speaker 0.1-0.4 s apart, every 20-60 s, at 5-25 dB over the background (no distractors,
no other events). It runs `detect-dev events` with the fold model `$DETECT_WORK/model-fold<k>.json` (written by
`evaluate_nights.py`, which fits it without fold k) and scores talking per second as evaluate_nights.py does.
"""
import argparse

import numpy as np

import common as C
import dataset as D
import nights as N
from evaluate_nights import MERGE_GAP, merge, seconds_active


def night(rng, pools, minutes, words):
    n = int(minutes * 60 * C.SR)
    bg, _ = C.background(rng, n)
    x = (bg * 10 ** (rng.uniform(-65, -45) / 20)).astype(np.float32)
    level = 20 * np.log10(np.sqrt(np.mean(x ** 2)))
    br = C.breathing(rng, n / C.SR)
    x += br / C.active_rms(br) * 10 ** ((level + rng.uniform(0, 10)) / 20)
    truth, t = [], 20.0
    while t < n / C.SR - 60:
        speaker = pools["speakers"][rng.integers(len(pools["speakers"]))]
        snr = rng.uniform(5, 25)
        for _ in range(int(rng.integers(words[0], words[1] + 1))):
            clip = speaker[rng.integers(len(speaker))]
            a = int(t * C.SR)
            b = min(n, a + len(clip))
            x[a:b] += clip[:b - a] * (10 ** ((level + snr + rng.uniform(-2, 2)) / 20) / C.active_rms(clip))
            s, e = C.active_extent(clip[:b - a])
            truth.append(((a + s) / C.SR, (a + e) / C.SR))
            t += len(clip) / C.SR + rng.uniform(0.1, 0.4)
        t += rng.uniform(20, 60)
    return x, truth


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--words", type=int, nargs=2, default=[6, 12], help="clips per utterance (min max)")
    ap.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--minutes", type=float, default=20)
    C.add_detect_option(ap)
    args = ap.parse_args()
    its = D.items()
    tp = fp = fn = 0
    for k in args.folds:
        x, truth = night(np.random.default_rng([D.SEED, 900 + k]), N.pools_for_fold(its, k), args.minutes, args.words)
        lines = C.fold_events(k, [x], args.detect_option)
        n_sec = int(np.ceil(len(x) / C.SR))
        ref = merge(truth, MERGE_GAP["talking"])
        r = seconds_active(ref, n_sec)
        s = seconds_active(merge([(d["start"] / C.SR, d["end"] / C.SR) for d in lines if d["type"] == "talking"],
                                 MERGE_GAP["talking"]), n_sec)
        others = sum(1 for d in lines if d["type"] != "talking")
        print("fold %d: %d utterances, %d reference s, tp %d fp %d fn %d, %d events of other classes" % (
            k, len(ref), r.sum(), (r & s).sum(), (~r & s).sum(), (r & ~s).sum(), others))
        tp += int((r & s).sum()); fp += int((~r & s).sum()); fn += int((r & ~s).sum())
    p, rc = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    print("talking, %d-%d clips per utterance: P %.3f R %.3f F1 %.3f" % (
        args.words[0], args.words[1], p, rc, 2 * p * rc / max(p + rc, 1e-9)))


if __name__ == "__main__":
    main()
