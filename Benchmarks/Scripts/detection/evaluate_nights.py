#!/usr/bin/env python3
"""Synthetic nights: held-out clips laid on bedroom backgrounds, run through the detector, scored per second.

    python3 Benchmarks/Scripts/detection/evaluate_nights.py [--folds 0 1] [--minutes 30] [--sets 1] [--analyze]

For each held-out fold k a model is trained on the other folds (same features and fit as train.py, with its context
stage unless --no-context; the context stage's inputs are out-of-fold segment probabilities) and the nights
are built ONLY from fold k's clips (and fold k's synthetic movement), so no clip in a night was seen in training.
Night kinds: `mixed` (snoring bouts, talking, coughs, movement), `no-snore` (talking, coughs, movement) and
`quiet` (no events): all with quiet breathing, distractors (held-out ESC-10 clips: dog, clock ticks, sneezing,
crying baby, sea waves, ...) and a background that changes every 5-15 min (pink / brown / fan / AC / rain from
ESC-10, -70 to -40 dBFS). Detection runs through `sleepcycle detect-dev events --model <fold model>`
(or, with --analyze and the built-in model, through `sleepcycle analyze --format json`).

Scoring (sed_eval-style segment-based metrics at 1-s resolution): reference and detected events of one class are
first merged across gaps < 10 s (snoring) or < 3 s (others); a second counts as active when an event overlaps it.
False events per hour: merged detected events of a class on nights without that class.
The 95 % interval after each F1 is a block bootstrap: the nights' seconds are cut into 60-s blocks (events are
20-90 s apart, so a block holds about one event), blocks are drawn with replacement 2000 times and F1 is recomputed
from the drawn blocks' counts (percentiles 2.5 / 97.5). It shows how much of a difference between two runs is
the luck of which clips were drawn.
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
import argparse
import json
import math
import subprocess

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

import common as C
import dataset as D
import nights as N
import train as T

MERGE_GAP = {"snoring": 10.0, "talking": 3.0, "coughing": 3.0, "movement": 3.0}
EVENT_CLASSES = ["snoring", "talking", "coughing", "movement"]
BOOTSTRAP_BLOCK_SEC, BOOTSTRAP_DRAWS = 60, 2000


def block_counts(r, s, block=BOOTSTRAP_BLOCK_SEC):
    """(tp, fp, fn) of every `block`-second block of one night's per-second reference / system activity."""
    n = int(np.ceil(len(r) / block))
    out = np.zeros((n, 3), np.int64)
    for i in range(n):
        rb, sb = r[i * block:(i + 1) * block], s[i * block:(i + 1) * block]
        out[i] = (np.sum(rb & sb), np.sum(~rb & sb), np.sum(rb & ~sb))
    return out


def bootstrap_f1(blocks, draws=BOOTSTRAP_DRAWS, seed=0):
    """95 % percentile interval of F1 = 2 tp / (2 tp + fp + fn) over blocks drawn with replacement."""
    blocks = np.asarray(blocks)
    idx = np.random.default_rng(seed).integers(0, len(blocks), (draws, len(blocks)))
    tp, fp, fn = blocks[idx].sum(axis=1).T
    f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)
    return float(np.percentile(f1, 2.5)), float(np.percentile(f1, 97.5))


def merge(intervals, gap):
    out = []
    for s, e in sorted(intervals):
        if out and s - out[-1][1] < gap:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def seconds_active(intervals, n_sec):
    act = np.zeros(n_sec, bool)
    for s, e in intervals:
        act[max(0, int(np.floor(s))):min(n_sec, int(np.ceil(e)))] = True
    return act


def run_analyze(x, binary, encoding=None):
    """`analyze`'s events of the 16-kHz night `x` (times in 16-kHz samples). The night is written as a 16-bit WAV at
    16 kHz, or as `encoding` says: a dict of `rate` (the night resampled to it first), `ext` (the file name's
    extension) and the keyword arguments of `soundfile.write` (format, subtype, compression_level, ...)."""
    enc = dict(encoding or {"rate": C.SR, "ext": "wav", "subtype": "PCM_16"})
    rate, ext = enc.pop("rate"), enc.pop("ext")
    if rate != C.SR:
        g = math.gcd(rate, C.SR)
        x = np.clip(resample_poly(x, rate // g, C.SR // g), -1, 1).astype(np.float32)
    # One file per process: two scripts running side by side in one $DETECT_WORK must not read each other's night.
    path = os.path.join(C.WORK, "night-%d.%s" % (os.getpid(), ext))
    sf.write(path, x, rate, **enc)
    try:
        out = subprocess.run([binary, "analyze", path, "--format", "json", "--start", "2026-01-01T23:00:00.000Z",
                              "--no-progress"], capture_output=True, check=True, text=True).stdout
    finally:
        os.remove(path)
    res = json.loads(out)
    from datetime import datetime
    t0 = datetime.fromisoformat(res["startTime"].replace("Z", "+00:00"))
    ev = []
    for e in res["events"]:
        s = (datetime.fromisoformat(e["start"].replace("Z", "+00:00")) - t0).total_seconds()
        f = (datetime.fromisoformat(e["end"].replace("Z", "+00:00")) - t0).total_seconds()
        ev.append({"type": e["type"], "start": s * C.SR, "end": f * C.SR, "probability": e["probability"]})
    return ev


NIGHT_KINDS = ["mixed", "mixed", "no-snore", "quiet"]


def build_eval_night(pools, k, minutes, night_set, j, reverb=False, placed=None):
    """Night j (kind NIGHT_KINDS[j]) of set `night_set` of fold k, from fold k's `pools`: (audio, truth). Seeded
    [SEED, 100 + k, 4 s + j]; with `reverb` every clip in its own room, seeded [SEED, 300 + k, 4 s + j]. `placed`:
    see `nights.build_night`."""
    seed = len(NIGHT_KINDS) * night_set + j
    rrng = np.random.default_rng([D.SEED, 300 + k, seed]) if reverb else None
    return N.build_night(np.random.default_rng([D.SEED, 100 + k, seed]), NIGHT_KINDS[j], minutes, pools,
                         N.EVAL_SPEC, rrng, placed)


def matches_reference(d, truth):
    """Whether detected event `d` overlaps a reference event of its class, within 0.5 s."""
    a, b = d["start"] / C.SR, d["end"] / C.SR
    return any(cls == d["type"] and s < b + 0.5 and e > a - 0.5 for cls, s, e in truth)


def fold_nights(its, k, minutes, night_set=0, reverb=False, khan=False):
    """Set `night_set` of fold k's evaluation nights [(kind, audio, truth)], cached in $DETECT_WORK. Night j of set s
    is seeded [SEED, 100 + k, 4 s + j]: set 0 is the standard evaluation. `reverb`: the same nights with every clip
    in a synthetic room (impulse responses seeded [SEED, 300 + k, 4 s + j]). `khan`: fold k's Khan `other` clips
    are distractors too (same seeds and events; the distractors differ)."""
    suffix = (("" if night_set == 0 else "-set%d" % night_set) + ("-reverb" if reverb else "")
              + ("-khan" if khan else ""))
    cache = os.path.join(C.WORK, "nights-fold%d-%gmin%s.npz" % (k, minutes, suffix))
    if os.path.exists(cache):
        z = np.load(cache, allow_pickle=True)
        return [(kind, z["x%d" % j], [tuple(t) for t in z["t%d" % j]]) for j, kind in enumerate(NIGHT_KINDS)]
    pools = N.pools_for_fold(its, k, khan=khan)
    nights = [(kind,) + build_eval_night(pools, k, minutes, night_set, j, reverb) for j, kind in enumerate(NIGHT_KINDS)]
    C.write_atomically(cache, lambda tmp: np.savez(tmp, **{"x%d" % j: n[1] for j, n in enumerate(nights)},
                                                     **{"t%d" % j: np.array(n[2], dtype=object)
                                                        for j, n in enumerate(nights)}))
    return nights


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--model", choices=["gbt", "mlp", "lr"], default="gbt")
    ap.add_argument("--analyze", action="store_true", help="use `sleepcycle analyze` (built-in model: not held out)")
    ap.add_argument("--no-context", action="store_true", help="the segment model alone (no context stage)")
    ap.add_argument("--min-probability", type=float, default=0.0,
                    help="drop detected events below this probability before scoring (operating-point study)")
    ap.add_argument("--min-event-probability", action="append", default=[], metavar="TYPE=P",
                    help="forwarded to `detect-dev events` (a per-class event threshold in the detector itself, "
                         "so merging sees the same events as `analyze` would); repeatable")
    C.add_detect_option(ap)
    ap.add_argument("--reverb", action="store_true",
                    help="the same nights with every clip in a synthetic room (RT60 0.3-0.8 s, DRR -3 to +6 dB)")
    ap.add_argument("--khan-distractors", action="store_true",
                    help="fold k's Khan `other` clips (household sounds, people talking, TV news) are distractors too, "
                         "next to its ESC-10 clips: fold 4 has no ESC-10 clips, so only this variant puts distractors in "
                         "its nights (fold 3 has no Khan `other` clips either: its nights stay distractor-free)")
    ap.add_argument("--sets", type=int, default=1,
                    help="sets of the four night kinds per fold (set 0 = the standard nights; more sets, new seeds, "
                         "narrow the bootstrap interval)")
    ap.add_argument("--reuse-models", action="store_true",
                    help="score the fold models already in $DETECT_WORK (model-fold<k>.json) instead of fitting them")
    args = ap.parse_args()
    its = D.items()
    if not args.analyze and not args.reuse_models:   # (--analyze runs the built-in model: nothing to fit)
        X, y, _, _, folds, _, weight = T.training_set(its)
        screens, _ = T.fold_screens(X, y, folds, weight)   # {} with DETECT_SCREEN_ROUNDS=0
    committed = json.load(open(T.MODEL_PATH))
    context = T.CONTEXT and not args.no_context and not args.analyze and not args.reuse_models
    if context:
        # Every fold's segment model (the context features of the training rows are out of fold), and the rows.
        models = T.fold_models(X, y, folds, args.model, weight)
        CF, cy, cfold, _, _, _ = T.context_rows(its, models, committed["temperature"], screens)
        context_temperature = committed.get("context", {}).get("temperature", 1.0)
    stats = {c: {"tp": 0, "fp": 0, "fn": 0, "false_events": 0, "neg_hours": 0.0} for c in EVENT_CLASSES}
    blocks = {c: [] for c in EVENT_CLASSES}
    reliab = []
    total_hours = 0.0
    for k in args.folds:
        mpath = os.path.join(C.WORK, "model-fold%d.json" % k)
        if not args.analyze and not args.reuse_models:
            m = models[k] if context else T.fit(X[folds != k], y[folds != k], args.model, weight[folds != k])
            # The committed file's header (classes, feature names, temperature, signature) with this fold's model.
            model = {key: v for key, v in committed.items()
                     if key not in ("mean", "scale", "layers", "baseline", "trees", "context", "screen")}
            model.update({key: v for key, v in m.items() if key != "temperature"})
            model["features"] = D.segments(0)["names"]   # this build's (the committed file may predate a feature)
            model["kind"] = {"lr": "logistic", "mlp": "mlp", "gbt": "gbt"}[args.model]
            if screens:
                # This fold's screen: fitted without fold k, its threshold from the other folds' out-of-fold scores.
                model["screen"] = T.screen_section(screens[k], model["features"])
            if context:
                # This fold's context stage: trained on the other folds' rows only.
                model["context"] = T.context_section(T.fit_context(CF[cfold != k], cy[cfold != k]),
                                                     context_temperature)
            json.dump(model, open(mpath, "w"))
        nights = [n for s in range(args.sets) for n in fold_nights(its, k, args.minutes, s, args.reverb,
                                                                    args.khan_distractors)]
        if args.analyze:
            binary = C.default_binary()[0]
            detected = [run_analyze(x, binary) for _, x, _ in nights]
        else:
            thresholds = [a for t in args.min_event_probability for a in ("--min-event-probability", t)]
            lines = C.run_scenes("events", (x for _, x, _ in nights), ["--model", mpath] + thresholds
                                 + args.detect_option)
            detected = [[l for l in lines if l["scene"] == j] for j in range(len(nights))]
        detected = [[d for d in det if d["probability"] >= args.min_probability] for det in detected]
        for (kind, x, truth), det in zip(nights, detected):
            n_sec = int(np.ceil(len(x) / C.SR))
            hours = len(x) / C.SR / 3600
            total_hours += hours
            for c in EVENT_CLASSES:
                ref = merge([(s, e) for cls, s, e in truth if cls == c], MERGE_GAP[c])
                sysi = merge([(d["start"] / C.SR, d["end"] / C.SR) for d in det if d["type"] == c], MERGE_GAP[c])
                r, s = seconds_active(ref, n_sec), seconds_active(sysi, n_sec)
                stats[c]["tp"] += int(np.sum(r & s)); stats[c]["fp"] += int(np.sum(~r & s))
                stats[c]["fn"] += int(np.sum(r & ~s))
                blocks[c].extend(block_counts(r, s))
                if not ref:
                    stats[c]["false_events"] += len(sysi); stats[c]["neg_hours"] += hours
            for d in det:
                reliab.append((d["probability"], matches_reference(d, truth)))
            print("fold %d %-8s %4.1f min: %d reference events, %d detected (%s)" % (
                k, kind, len(x) / C.SR / 60, len(truth), len(det),
                ", ".join("%s %d" % (c, sum(1 for d in det if d["type"] == c)) for c in EVENT_CLASSES)))
    print("\n== segment-based (1 s) over %.1f h of synthetic nights, folds %s ==" % (total_hours, args.folds))
    report = {"hours": round(total_hours, 2), "folds": args.folds, "classes": {}}
    for c in EVENT_CLASSES:
        s = stats[c]
        p = s["tp"] / (s["tp"] + s["fp"]) if s["tp"] + s["fp"] else 0.0
        r = s["tp"] / (s["tp"] + s["fn"]) if s["tp"] + s["fn"] else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        fph = s["false_events"] / s["neg_hours"] if s["neg_hours"] else float("nan")
        lo, hi = bootstrap_f1(blocks[c])
        print("%-9s P %.3f R %.3f F1 %.3f [95%% %.3f-%.3f] | false events/h on nights without it: %.2f (%.1f h)" % (
            c, p, r, f, lo, hi, fph, s["neg_hours"]))
        report["classes"][c] = {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
                                "f1_ci95": [round(lo, 4), round(hi, 4)],
                                "false_events_per_hour": round(fph, 3), "negative_hours": round(s["neg_hours"], 2)}
    rel = []
    for lo in (0.5, 0.6, 0.7, 0.8, 0.9):
        sel = [ok for p, ok in reliab if lo <= p < lo + 0.1 or (lo == 0.9 and p >= 0.9)]
        if sel:
            rel.append({"bin": [lo, round(lo + 0.1, 1)], "n": len(sel), "precision": round(float(np.mean(sel)), 3)})
    print("event reliability (detected events by probability):", rel)
    report["reliability"] = rel
    json.dump(report, open(os.path.join(C.WORK, "nights-report.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
