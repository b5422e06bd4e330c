#!/usr/bin/env python3
"""A clock ticking all night: how many events does a bedside clock produce?

    python3 Benchmarks/Scripts/detection/clock_nights.py [--folds 0 1 2] [--minutes 10] [--detect-option=...]

The evaluation nights hold ESC-10 clock clips of 5 s; a clock in a bedroom ticks for hours. For every ESC-10
`clock_tick` clip of fold k (folds 0-2 have them) this cuts one tick period out of the clip (the lag of the highest
autocorrelation peak of its 10-ms RMS envelope between 0.3 and 2 s, starting just before its loudest tick) and
repeats it for `--minutes` over a generated background (-65 to -45 dBFS) with quiet breathing, 5-25 dB over the
background; no other sound. It runs `detect-dev events` with the fold model `$DETECT_WORK/model-fold<k>.json`
(written by evaluate_nights.py, fitted without fold k) and prints the events per hour of each class, merged as the
nights are scored (snoring across 10 s, the others across 3 s), per clip and in total. Every event is false.
`--detect-option` passes an option to `detect-dev events`.

A repeated period is every tick alike, recording noise and all, which real clocks are not. `--all-periods` loops
every whole tick period the clip holds instead (2-16 of them: each tick as recorded, a little different, with the
noise between the ticks; 5-ms crossfades at the seams, which keep the beat), so a tick's copies one, two and three
periods away are other ticks. `--jitter P` makes each repeated stretch P % longer or shorter at random (and 0-1 dB
louder or softer): a clock that keeps worse time.
"""
import argparse

import numpy as np

import common as C
import dataset as D
from evaluate_nights import EVENT_CLASSES, MERGE_GAP, merge

ENVELOPE_SEC = 0.01


def one_period(x, all_periods=False):
    """One tick period of clip `x`, starting just before its loudest tick, and the period (s); with `all_periods`
    every whole period of the clip, from the same phase."""
    hop = int(ENVELOPE_SEC * C.SR)
    env = np.sqrt(np.convolve(x.astype(np.float64) ** 2, np.ones(hop) / hop, "same"))[::hop]
    e = env - env.mean()
    ac = np.correlate(e, e, "full")[len(e) - 1:]
    lags = np.arange(len(ac)) * ENVELOPE_SEC
    ok = (lags >= 0.3) & (lags <= 2.0)
    period = float(lags[ok][np.argmax(ac[ok])])
    loudest = int(np.argmax(env[:max(1, len(env) - int(period / ENVELOPE_SEC) - 1)])) * hop
    a = max(0, loudest - int(0.15 * period * C.SR))
    p = int(period * C.SR)
    if all_periods:
        a %= p
        return x[a:a + (len(x) - a) // p * p], period
    return x[a:a + p], period


def looped(rng, tick, n, jitter, crossfade):
    """`tick` repeated to n samples; each copy's length changed by up to `jitter` (a fraction) and its level by up
    to 1 dB, or with `crossfade` samples of overlap between copies."""
    if not jitter and not crossfade:
        return np.tile(tick, int(np.ceil(n / len(tick))))[:n]
    out = np.zeros(n + 2 * len(tick))
    at = 0
    fade = np.linspace(0, 1, crossfade) if crossfade else None
    while at < n:
        copy = tick * 10 ** (rng.uniform(-1, 1) / 20) if jitter else tick.copy()
        if fade is not None:
            copy = copy.astype(np.float64)
            copy[:crossfade] *= fade
            copy[-crossfade:] *= fade[::-1]
        out[at:at + len(copy)] += copy
        step = len(tick) - crossfade
        at += int(round(step * (1 + rng.uniform(-jitter, jitter)))) if jitter else step
    return out[:n]


def clock_night(rng, tick, minutes, jitter=0.0, crossfade=0):
    n = int(minutes * 60 * C.SR)
    bg, _ = C.background(rng, n)
    db = rng.uniform(-65, -45)
    x = bg * 10 ** (db / 20)
    br = C.breathing(rng, n / C.SR)
    x = x + br / C.active_rms(br) * 10 ** ((db + rng.uniform(0, 10)) / 20)
    level = db + rng.uniform(5, 25)
    loop = looped(np.random.default_rng(rng.integers(1 << 32)), tick, n, jitter, crossfade)
    x = x + loop / C.active_rms(loop) * 10 ** (level / 20)
    return np.clip(x, -1, 1).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--all-periods", action="store_true", help="loop every whole tick period of the clip, not one")
    ap.add_argument("--jitter", type=float, default=0.0, help="per-period length change, percent")
    C.add_detect_option(ap)
    args = ap.parse_args()
    its = D.items()
    total = {c: 0 for c in EVENT_CLASSES}
    hours = 0.0
    for k in args.folds:
        clips = [(i, it) for i, it in enumerate(its) if it["label"] == "clock_tick" and it["fold"] == k]
        nights, periods = [], []
        for i, it in clips:
            tick, period = one_period(D.clip_audio(it, i), args.all_periods)
            crossfade = int(0.005 * C.SR) if args.all_periods else 0
            nights.append(clock_night(np.random.default_rng([D.SEED, 1300 + k, i]), tick, args.minutes,
                                      args.jitter / 100, crossfade))
            periods.append(period)
        lines = C.fold_events(k, nights, args.detect_option)
        for j, ((i, it), period) in enumerate(zip(clips, periods)):
            counts = {c: len(merge([(d["start"] / C.SR, d["end"] / C.SR) for d in lines
                                    if d["scene"] == j and d["type"] == c], MERGE_GAP[c])) for c in EVENT_CLASSES}
            print("fold %d %-28s period %.2f s: %s" % (k, it["id"], period,
                                                       ", ".join("%s %d" % kv for kv in counts.items())))
            for c in EVENT_CLASSES:
                total[c] += counts[c]
        hours += len(nights) * args.minutes / 60
    print("all-night clocks, %.1f h: events per hour %s" % (
        hours, ", ".join("%s %.1f" % (c, total[c] / hours) for c in EVENT_CLASSES)))


if __name__ == "__main__":
    main()
