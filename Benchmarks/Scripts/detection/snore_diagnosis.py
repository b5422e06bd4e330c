#!/usr/bin/env python3
"""Where a condition's snores (or talking, or coughs) are lost: the segmenter or the classifier.

    python3 Benchmarks/Scripts/detection/snore_diagnosis.py --model A.json [--model B.json] [--fold 2] [--only ...]

For every condition (`conditions.py`'s, plus the pairs that make up `mix-laptop-2m-10`: `laptop-10`, `2m-10` and
`laptop-2m`), the two nights with snoring of set 0 are built as `conditions.py` builds them and cut into candidate
segments by `detect-dev segment-features`. A reference snore is *covered* when one segment overlaps at least 30 % of
it (the training label's threshold); for the covered snores, the segment stage's p(snoring) under each model (its
segment trees in float64, `train.predict`: no context stage, no screen, no bout rule). A low coverage says the
segmenter misses the snores; a high coverage with a low p(snoring) says the classifier does. Prints one line per
condition and model. About 30 s per condition on 2 cores.

    python3 Benchmarks/Scripts/detection/snore_diagnosis.py --model A.json --event-class talking [--only ...]

asks the same of talking or coughing events (of all four nights of the condition: the quiet night has none of its
own, but the `no-snore` night has both). An utterance or a cough burst is cut into several segments, so an event is
covered when the segments overlapping it together cover 30 % of it, and its p is the highest p(class) among them.
For the covered events under 0.5 the line also counts what their surest segment was called instead (none, i.e. the
breathing and background class, or another event class): a sound the classifier hears but takes for breathing
wants other training than one it takes for a snore.

    python3 Benchmarks/Scripts/detection/snore_diagnosis.py --model A.json --model B.json --bedrooms

compares the models' segment stages at equal cost instead: the breathing and bedding of the separation
benchmark's reverberant bedrooms (`../separation/rooms.py`, held-out split, both microphone layouts: 32 channels of
10 min, 5.3 h; segments overlapping no reference event, with 0.5 s of margin) are what a model that finds quiet
snores tends to call snores (docs/0005-event-detection-log.md, "Quiet high-passed snores"). For each condition and
model it prints the covered snores and the bedroom segments at p(snoring) >= 0.5, then the share of covered snores
found at the thresholds that let 5, 15, 30 and 60 bedroom segments through: a model whose row is higher there is
better whatever its operating point (which `DetectorConfiguration.classWeights` can move). About a minute more.

    python3 Benchmarks/Scripts/detection/snore_diagnosis.py --levels laptop

says instead how a microphone of `conditions.py` moves the SNR: the level it takes from snores, speech and each kind
of training background.
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
BEDROOM_BUDGETS = (5, 15, 30, 60)


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


def overlapping_segments(segments, a, b):
    """(indices, union overlap share of [a, b]) of the segments that overlap the interval (a channel's segments do
    not overlap each other)."""
    idx, covered = [], 0.0
    for start, end, i in segments:
        ov = max(0.0, min(b, end) - max(a, start))
        if ov > 0:
            idx.append(i)
            covered += ov
    return idx, covered / (b - a)


def bedroom_segments(binary):
    """Segment features of the held-out bedrooms' channels (`channels_detect.py`'s scenes) that overlap no reference
    event of either sleeper (score.py's 0.5-s margin)."""
    sys.path.insert(0, os.path.join(HERE, "..", "separation"))
    import rooms as R                                # noqa: E402
    from score import TOLERANCE, overlaps            # noqa: E402
    from channels_detect import channels             # noqa: E402
    paths, truths = [], []
    for preset in R.PRESETS:
        for meta in R.ensure_scenes("heldout", preset, 8, 10):
            paths.append(os.path.join(R.scene_dir("heldout", preset, meta["index"], 10), "stereo.wav"))
            truths += [meta["events"], meta["events"]]
    lines = C.run_scenes("segment-features", channels(paths), binary=binary)
    return np.array([s["features"] for s in lines[1:]
                     if not any(overlaps(s["start"] / C.SR, s["end"] / C.SR, e["start"], e["end"], TOLERANCE)
                                for e in truths[s["scene"]])], dtype=np.float64)


def at_budgets(p_snores, p_bedroom):
    """Share of `p_snores` above the thresholds that let BEDROOM_BUDGETS of `p_bedroom` through."""
    ranked = np.sort(p_bedroom)[::-1]
    return [float(np.mean(p_snores > ranked[n])) if n < len(ranked) else float("nan") for n in BEDROOM_BUDGETS]


def levels(mic, pools):
    """Median change of active RMS (dB) through `mic`: up to 200 of the fold's snores, 10 utterances of each of the
    first 3 speakers, and 40 20-s training backgrounds (`common.background`, seed 1) by kind."""
    def change(x):
        return 20 * np.log10(C.active_rms(mic(x).astype(np.float32)) / C.active_rms(x))
    snores = [change(c) for g in pools["snore_groups"] for c in g][:200]
    speech = [change(u) for spk in pools["speakers"][:3] for u in spk[:10]]
    rng, beds = np.random.default_rng(1), {}
    for _ in range(40):
        piece, kind = C.background(rng, 20 * C.SR)
        beds.setdefault(kind, []).append(change(piece))
    print("snores: median %.1f dB (10-90 %%: %.1f to %.1f), n %d" % (np.median(snores), *np.percentile(snores, [10, 90]),
                                                                  len(snores)))
    print("speech: median %.1f dB, n %d" % (np.median(speech), len(speech)))
    for kind, v in sorted(beds.items()):
        print("background %s: median %.1f dB, n %d" % (kind, np.median(v), len(v)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", help="a model file (repeatable)")
    ap.add_argument("--fold", type=int, default=2)
    ap.add_argument("--only", nargs="+", default=["reference", "mic-laptop", "snr-10", "room-2m", "laptop-10", "2m-10",
                                                  "laptop-2m", "mix-laptop-2m-10"])
    ap.add_argument("--binary", default=None, help="the sleepcycle CLI (default: $SLEEPCYCLE_BIN / .build/release)")
    ap.add_argument("--event-class", default="snoring", choices=C.CLASSES[1:4],
                    help="the reference events diagnosed (default snoring; talking and coughing: see above)")
    ap.add_argument("--bedrooms", action="store_true",
                    help="compare the models at equal numbers of false snoring segments on the reverberant bedrooms")
    ap.add_argument("--levels", metavar="MIC", default=None, choices=sorted(K.MICS),
                    help="instead: how much a conditions.py microphone (phone, laptop, usb) lowers the fold's snores, "
                         "speech and each kind of training background (active RMS in dB), i.e. how it moves the SNR")
    args = ap.parse_args()
    if not args.model and not args.levels:
        ap.error("give at least one --model (or --levels MIC)")
    if args.bedrooms and args.event_class != "snoring":
        ap.error("--bedrooms compares snoring only")
    pools = N.pools_for_fold(D.items(), args.fold, khan=True)
    if args.levels:
        return levels(K.MICS[args.levels], pools)
    binary = [args.binary, "detect-dev"] if args.binary else None
    models = [json.load(open(p)) for p in args.model]
    conds = conditions()
    snoring = C.CLASSES.index("snoring")
    target = C.CLASSES.index(args.event_class)
    if args.bedrooms:
        Xb = bedroom_segments(binary)
        p_bedroom = [T.predict(model, Xb)[:, snoring] for model in models]
        print("%d bedroom segments on nothing" % len(Xb))
        print("| condition | model | covered snores | share >= 0.5 | bedroom segments >= 0.5 | "
              + " | ".join("share at %d bedroom" % n for n in BEDROOM_BUDGETS) + " |")
        print("|---" * (5 + len(BEDROOM_BUDGETS)) + "|")
    elif target == snoring:
        print("| condition | model | snores | covered | p(snoring) of covered: median | share >= 0.5 |")
        print("|---|---|---|---|---|---|")
    else:
        print("| condition | model | %s events | covered | p(%s) of covered: median | share >= 0.5 | "
              "under 0.5, called: %s |" % (args.event_class, args.event_class, " / ".join(C.CLASSES)))
        print("|---|---|---|---|---|---|---|")
    for name in args.only:
        nights = [K.condition_night(conds[name], name, pools, args.fold, 15.0, 0, j)
                  for j, kind in enumerate(K.NIGHT_KINDS) if kind == "mixed" or target != snoring]
        lines = C.run_scenes("segment-features", (x for x, _ in nights), binary=binary)
        segs = lines[1:]
        X = np.array([s["features"] for s in segs], dtype=np.float64)
        rows, total = [], 0
        for j, (_, truth) in enumerate(nights):
            scene = [(s["start"] / C.SR, s["end"] / C.SR, i) for i, s in enumerate(segs) if s["scene"] == j]
            for cls, a, b in truth:
                if cls != args.event_class:
                    continue
                total += 1
                if target == snoring:
                    i, share = covering_segment(scene, a, b)
                    if share >= COVER:
                        rows.append(i)
                else:
                    idx, share = overlapping_segments(scene, a, b)
                    if share >= COVER:
                        rows.append(idx)
        for m, (path, model) in enumerate(zip(args.model, models)):
            if target != snoring:
                P = T.predict(model, X) if len(X) else np.zeros((0, len(C.CLASSES)))
                best = [max(idx, key=lambda i: P[i, target]) for idx in rows]
                p = np.array([P[i, target] for i in best])
                called = np.zeros(len(C.CLASSES), int)
                for i in best:
                    if P[i, target] < 0.5:
                        called[int(np.argmax(P[i]))] += 1
                print("| %s | %s | %d | %.2f | %.2f | %.2f | %s |" % (
                    name, os.path.basename(path), total, len(rows) / max(total, 1),
                    float(np.median(p)) if len(p) else float("nan"), float(np.mean(p >= 0.5)) if len(p) else float("nan"),
                    " / ".join(str(c) for c in called)), flush=True)
                continue
            p = T.predict(model, X[rows])[:, snoring] if rows else np.zeros(0)
            if args.bedrooms:
                print("| %s | %s | %d | %.2f | %d | %s |" % (
                    name, os.path.basename(path), len(rows), float(np.mean(p >= 0.5)) if len(p) else float("nan"),
                    int(np.sum(p_bedroom[m] >= 0.5)), " | ".join("%.2f" % v for v in at_budgets(p, p_bedroom[m]))),
                    flush=True)
                continue
            print("| %s | %s | %d | %.2f | %.2f | %.2f |" % (
                name, os.path.basename(path), total, len(rows) / max(total, 1),
                float(np.median(p)) if len(p) else float("nan"), float(np.mean(p >= 0.5)) if len(p) else float("nan")),
                flush=True)


if __name__ == "__main__":
    main()
