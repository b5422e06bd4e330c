#!/usr/bin/env python3
"""A TV in the room: is sustained speech reported as sleep talk, and does the sustained-speech rule cost sleep talk?

    python3 Benchmarks/Scripts/detection/tv_nights.py [--folds 0 1 2 3] [--minutes 60] [--tv-minutes 10 30]
                                                      [--detect-option=--sustained-speech-window=0 ...]

For each fold k this builds one night of `--minutes` from fold k's clips only: an evaluation night of kind `no-snore`
(`nights.build_night`, EVAL_SPEC: sleep talk of 1-3 words, coughs, movement, ESC-10 distractors, changing
backgrounds, quiet breathing) with a "TV programme" laid over a stretch of it. The programme is speech turns of 3-15
words by one of fold k's speakers (0.05-0.4 s between words, 0.2-2 s between turns, a 3-10-s pause every 1-4 minutes),
in one synthetic room (`common.room_impulse`: the set is across the room) and high-passed at 150 Hz
(small loudspeakers), 8-25 dB over the background; it starts 5-15 minutes in and lasts `--tv-minutes` (drawn).
The speech is the evaluation speakers' words, not broadcast audio: this measures the rule on continuous speech of
held-out voices, not on real TV sound (music, effects, laughter).

It runs `detect-dev events` with the fold model `$DETECT_WORK/model-fold<k>.json` (written by evaluate_nights.py,
fitted without fold k) and prints, per fold and in total: talking events on the programme (merged across 3-s
gaps, as scored; per hour of programme), the share of the programme reported as talking, and sleep talk outside it (segment-based P / R / F1 at 1 s over the night
outside the programme and 10 s around it). `--detect-option` passes an option to `detect-dev events` (e.g.
`--detect-option=--sustained-speech-window=0` turns the rule off).
"""
import argparse

import numpy as np
from scipy.signal import butter, fftconvolve, sosfilt

import common as C
import dataset as D
import nights as N
from evaluate_nights import MERGE_GAP, merge, seconds_active

MARGIN_SEC = 10.0


def programme(rng, speakers, seconds):
    """Continuous speech for `seconds`: (audio at unit active RMS per word, list of word (start, end) in s)."""
    n = int(seconds * C.SR)
    x = np.zeros(n, np.float32)
    hp = butter(2, 150, "highpass", fs=C.SR, output="sos")
    room = C.room_impulse(rng)     # one room: the set stays where it is
    t, next_pause = 0.0, rng.uniform(60, 240)
    while t < seconds - 1:
        spk = speakers[rng.integers(len(speakers))]
        for _ in range(int(rng.integers(3, 16))):
            clip = sosfilt(hp, fftconvolve(spk[rng.integers(len(spk))], room)).astype(np.float32)
            a = int(t * C.SR)
            b = min(n, a + len(clip))
            if b <= a:
                break
            x[a:b] += clip[:b - a] / C.active_rms(clip) * 10 ** (rng.uniform(-3, 3) / 20)
            t += len(clip) / C.SR + rng.uniform(0.05, 0.4)
        t += rng.uniform(0.2, 2.0)
        if t > next_pause:
            t += rng.uniform(3, 10)
            next_pause = t + rng.uniform(60, 240)
    return x


def tv_night(k, its, minutes, tv_minutes):
    rng = np.random.default_rng([D.SEED, 1100 + k])
    pools = N.pools_for_fold(its, k)
    x, truth = N.build_night(rng, "no-snore", minutes, pools, N.EVAL_SPEC)
    start = rng.uniform(5, 15) * 60
    length = min(rng.uniform(*tv_minutes) * 60, len(x) / C.SR - start - 60)
    tv = programme(rng, pools["speakers"], length)
    a = int(start * C.SR)
    # The programme's level follows the background where it starts (as the events' levels do), 8-25 dB over it.
    bg = x[max(0, a - 30 * C.SR):a]
    level = 20 * np.log10(np.sqrt(np.mean(bg.astype(np.float64) ** 2)) + 1e-12)
    x[a:a + len(tv)] += tv * 10 ** ((level + rng.uniform(8, 25)) / 20)
    np.clip(x, -1, 1, out=x)
    return x, truth, (start, start + len(tv) / C.SR)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--tv-minutes", type=float, nargs=2, default=[10, 30])
    C.add_detect_option(ap)
    args = ap.parse_args()
    its = D.items()
    tot = {"tp": 0, "fp": 0, "fn": 0, "tv_events": 0, "tv_hours": 0.0, "tv_talking_sec": 0.0}
    for k in args.folds:
        x, truth, (ts, te) = tv_night(k, its, args.minutes, args.tv_minutes)
        lines = C.fold_events(k, [x], args.detect_option)
        n_sec = int(np.ceil(len(x) / C.SR))
        talk = merge([(d["start"] / C.SR, d["end"] / C.SR) for d in lines if d["type"] == "talking"],
                     MERGE_GAP["talking"])
        on_tv = [e for e in talk if e[0] < te and e[1] > ts]
        tv_sec = sum(min(b, te) - max(a, ts) for a, b in on_tv)
        outside = ~seconds_active([(ts - MARGIN_SEC, te + MARGIN_SEC)], n_sec)
        ref = merge([(s, e) for c, s, e in truth if c == "talking"], MERGE_GAP["talking"])
        r, s = seconds_active(ref, n_sec) & outside, seconds_active(talk, n_sec) & outside
        tp, fp, fn = int((r & s).sum()), int((~r & s).sum()), int((r & ~s).sum())
        hours = (te - ts) / 3600
        print("fold %d: programme %.1f min from %.1f min: %d talking events on it (%.1f / h), %.0f %% of it reported as "
              "talking; sleep talk outside it: tp %d fp %d fn %d" % (
                  k, (te - ts) / 60, ts / 60, len(on_tv), len(on_tv) / hours, 100 * tv_sec / (te - ts), tp, fp, fn))
        for key, v in (("tp", tp), ("fp", fp), ("fn", fn), ("tv_events", len(on_tv)), ("tv_hours", hours),
                       ("tv_talking_sec", tv_sec)):
            tot[key] += v
    p = tot["tp"] / max(tot["tp"] + tot["fp"], 1)
    rc = tot["tp"] / max(tot["tp"] + tot["fn"], 1)
    print("programme: %d talking events over %.2f h of speech (%.1f / h), %.0f %% of it reported as talking; sleep talk "
          "outside it: P %.3f R %.3f F1 %.3f" % (
              tot["tv_events"], tot["tv_hours"], tot["tv_events"] / tot["tv_hours"],
              100 * tot["tv_talking_sec"] / (3600 * tot["tv_hours"]), p, rc, 2 * p * rc / max(p + rc, 1e-9)))


if __name__ == "__main__":
    main()
