#!/usr/bin/env python3
"""Train the built-in event model as an equal blend of two training mixes, and write it.

    python3 Benchmarks/Scripts/detection/blend.py                     # both mixes, then Sources/ and Tests/
    python3 Benchmarks/Scripts/detection/blend.py --reuse             # blend the mixes of an earlier run again
    python3 Benchmarks/Scripts/detection/blend.py --files A.json B.json OUT.json   # blend two model files
    python3 Benchmarks/Scripts/detection/blend.py --second-mix DETECT_NIGHT_REVERB_SHARE=0.5 ...   # another 2nd mix
    python3 Benchmarks/Scripts/detection/blend.py --reuse --second-share snoring=0.75   # 2nd mix's share of a class

The built-in model is two `train.py` models averaged: the default mix ("plain": the training nights as recorded
by the bedroom microphone the clips came from) and the same mix with half of the training nights heard through a
random microphone ("night-mic": `DETECT_NIGHT_MIC_SHARE=0.5`, `common.through_microphone`). Each alone trades one
condition for another (docs/0005-event-detection-log.md, "A blend of two training mixes"): the plain model misses
snores through a laptop's or a USB microphone's response, the night-mic model misses more sleep talk in clean
rooms. Averaging their class scores keeps most of both.
Snoring bouts from 0 dB SNR in either mix (`DETECT_NIGHT_SNR_FLOORS=0,4,5`) were tried and reverted: quiet snores
were found, and the snoring events on reverberant breathing doubled in the separation benchmark's bedrooms
(docs/0005-event-detection-log.md, "Snores from 0 dB: ... reverted"); with the context stage fitted on its own blend
(below) the 0-dB night-mic mix still made more of them than the committed model (session log, 2026-11-28).

How the blend is written: the segment stage's score is a sum of tree outputs plus a baseline, divided by its
temperature before the softmax. The blend's is 0.5 * score_a / T_a + 0.5 * score_b / T_b, so its file holds both
tree lists with every leaf scaled by 0.5 / T (rounded to float32, as `train.py` writes leaves), the scaled
baselines summed, and temperature 1: the Swift classifier needs no change, a blend is a bigger ensemble.
The screen is the plain mix's. The context stage reads the segment stage's probabilities, so it is fitted here on
the BLEND's out-of-fold probabilities: each mix's five cross-validation fold models (`train.py` leaves them in
`fold-models.json`) are blended fold by fold as above, score the plain mix's context rows out of fold
(`train.context_rows`), and the context stage and its temperature are fitted on those rows as `train.py` fits its
own. A context stage fitted on one mix's probabilities and run on the blend's turned breaths between snores into
snores in reverberant bedrooms (docs/0005-event-detection-log.md, "A context stage fitted on the blend's
probabilities"). The segment trees carry the microphone gain (the session log's stage swap); blending the screen
too measured no better and costs analyze time (`cost.py`).

Each mix is trained by `train.py --write-to $DETECT_WORK/mix-<name>` with `$DETECT_WORK/mix-<name>` as its own
work directory (its segment-feature caches stay there, so a rerun only refits). About 25 min per mix on 2 cores
with empty caches, about 10 with its caches; the context stage about 3 more. A mix directory written before
`train.py` kept its fold models gets them fitted here (about 4 minutes per mix, then cached). The parity fixture
(Tests/EventDetectionTests/ModelParityVectors.swift) takes its inputs from the plain mix and its probabilities from
the blended file.

    --fold-models DIR   also write DIR/model-fold2.json and model-fold3.json: the blended fold models (segment
                        stages blended with T = 1, as `evaluate_nights.py` + `blend.py --files` blend them) with a
                        context stage and a screen fitted without that fold, for `evaluate_nights.py --reuse-models`.
"""
import os
import argparse
import json
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MIXES = [("plain", {}), ("night-mic", {"DETECT_NIGHT_MIC_SHARE": "0.5"})]


def f32(v):
    return np.format_float_positional(np.float32(v), unique=True, trim="-")


def scaled_trees(trees, w):
    """The trees with every leaf output multiplied by its class's weight `w[class]` (splits unchanged)."""
    return [dict(t, nodes=" ".join(tok if tok.startswith("x") else f32(float(tok) * w[t["class"]])
                                   for tok in t["nodes"].split()))
            for t in trees]


def blend_stage(stages, weights):
    """(baseline, trees) of the weighted sum of the stages' scores; `weights`: per stage, one weight per class,
    already including 1 / temperature."""
    baseline = [float("%.9g" % sum(w[i] * s["baseline"][i] for s, w in zip(stages, weights)))
                for i in range(len(stages[0]["baseline"]))]
    trees = [t for s, w in zip(stages, weights) for t in scaled_trees(s["trees"], w)]
    return baseline, trees


def shares(second=None):
    """Per class, (the first mix's shares, the second's) of the blend's class scores: half each, or for the classes
    named in `second` (`CLASS=SHARE` strings, `--second-share`) the second mix's share as given."""
    import common as C
    given = {}
    for spec in second or []:
        name, _, value = spec.partition("=")
        try:
            share = float(value)
        except ValueError:
            share = float("nan")
        if name not in C.CLASSES or not 0 <= share <= 1:
            raise SystemExit("blend.py: --second-share %s: expected CLASS=SHARE with a class of %s and a share in 0-1"
                             % (spec, ", ".join(C.CLASSES)))
        given[name] = share
    b = [given.get(c, 0.5) for c in C.CLASSES]
    return [1 - x for x in b], b


def blend(a, b, second=None):
    """The model file whose segment stage's softmax input is the mean of a's and b's (or the per-class weighted
    mean of `shares(second)`), with a's context stage and screen (`main` replaces the context stage with the
    blend's own)."""
    for key in ("format", "kind", "classes", "features"):
        if a[key] != b[key]:
            raise SystemExit("blend.py: the models differ in %r" % key)
    if a["kind"] != "gbt":
        raise SystemExit("blend.py: only tree models (kind gbt) can be blended")
    out = dict(a)
    sa, sb = shares(second)
    out["baseline"], out["trees"] = blend_stage([a, b], [[x / a["temperature"] for x in sa],
                                                          [x / b["temperature"] for x in sb]])
    out["temperature"] = 1.0
    out["training"] = {"script": "Benchmarks/Scripts/detection/blend.py",
                       "blend": "segment stage: mean of the class scores (before the softmax) of the two models below; "
                                "context stage and screen: the first model's",
                       "models": [a.get("training"), b.get("training")]}
    return out


def mix_fold_models(work, knobs):
    """The mix's cross-validation fold models {"k": model}: train.py's (fold-models.json), or fitted here for a mix
    directory written before train.py kept them (in a subprocess: train.py reads $DETECT_WORK and the knobs when
    it is imported)."""
    path = os.path.join(work, "fold-models.json")
    if not os.path.exists(path):
        print("fitting the fold models of %s ..." % work, flush=True)
        code = ("import sys; sys.path.insert(0, %r); import train as T, dataset as D; its = D.items(); "
                "X, y, sc, cp, f, s, w = T.training_set(its); m = T.fold_models(X, y, f, 'gbt', w); "
                "T.write_model({str(k): v for k, v in m.items()}, %r)" % (HERE, path))
        subprocess.run([sys.executable, "-c", code], env=dict(os.environ, DETECT_WORK=work, **knobs), check=True)
    return json.load(open(path))


def blend_context(T, base, temps, fold_dir=None, second=None):
    """The context stage section fitted on the blend's out-of-fold probabilities (module docstring); `temps`: each
    mix's segment temperature. `T` is train.py imported with the plain mix's work directory. With `fold_dir`, also
    writes the blended fold models 2 and 3 there."""
    import dataset as D
    folds = [mix_fold_models(os.path.join(base, "mix-" + name), knobs) for name, knobs in MIXES]
    its = D.items()
    X, y, _, _, seg_fold, _, weight = T.training_set(its)
    screens, _ = T.fold_screens(X, y, seg_fold, weight)

    def blended(k, weights):
        baseline, trees = blend_stage([f[str(k)] for f in folds], weights)
        return {"kind": "gbt", "baseline": baseline, "trees": trees}
    split = shares(second)
    models = {k: blended(k, [[x / t for x in sh] for sh, t in zip(split, temps)]) for k in range(T.C.N_FOLDS)}
    CF, cy, cfold, _, _, _ = T.context_rows(its, models, 1.0, screens)
    labelled = cy >= 0
    Z = np.zeros((len(cy), len(T.C.CLASSES)))
    for k in models:
        Z[cfold == k] = T.logits(T.fit_context(CF[cfold != k], cy[cfold != k]), CF[cfold == k], False)
    temperature = T.fit_temperature(lambda t: T.softmax(Z[labelled], t), cy[labelled])
    print("context stage on the blend's out-of-fold probabilities: temperature %.2f" % temperature, flush=True)
    if fold_dir:
        os.makedirs(fold_dir, exist_ok=True)
        final = json.load(open(os.path.join(base, "mix-plain", "event-model.json")))
        for k in (2, 3):
            fold = {key: v for key, v in final.items() if key not in ("baseline", "trees", "context", "screen")}
            fold.update(blended(k, list(split)))
            fold["temperature"] = 1.0
            fold["screen"] = T.screen_section(screens[k], final["features"])
            fold["context"] = T.context_section(T.fit_context(CF[cfold != k], cy[cfold != k]), temperature)
            T.write_model(fold, os.path.join(fold_dir, "model-fold%d.json" % k))
    return T.context_section(T.fit_context(CF, cy), temperature)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", nargs=3, metavar=("A", "B", "OUT"), default=None,
                    help="blend two model files into OUT (e.g. evaluate_nights.py's fold models of two mixes)")
    ap.add_argument("--reuse", action="store_true",
                    help="blend the mixes' models of an earlier run ($DETECT_WORK/mix-*/) instead of training them")
    ap.add_argument("--fold-models", metavar="DIR", default=None,
                    help="also write the blended fold models 2 and 3 into DIR (for evaluate_nights.py --reuse-models)")
    ap.add_argument("--second-mix", nargs="+", metavar="KNOB=VALUE", default=None,
                    help="an experimental second mix in place of night-mic: these environment knobs (README), trained "
                         "in $DETECT_WORK/mix-<name> with <name> made from them; the plain mix is shared")
    ap.add_argument("--second-share", nargs="+", metavar="CLASS=SHARE", default=None,
                    help="the second mix's share of these classes' scores instead of 0.5, e.g. snoring=0.75")
    args = ap.parse_args()
    second = args.second_share
    if args.second_mix:
        knobs = dict(kv.split("=", 1) for kv in args.second_mix)
        name = "-".join("%s%s" % (k.replace("DETECT_", "").lower().replace("_", "-"), v) for k, v in sorted(knobs.items()))
        MIXES[1] = (name, knobs)
    base = os.environ.get("DETECT_WORK", "/tmp/sleepcycle-detect-work")
    # train.py's writers, imported with the plain mix's work directory (its import reads $DETECT_WORK).
    os.environ["DETECT_WORK"] = os.path.join(base, "mix-plain")
    sys.path.insert(0, HERE)
    import train as T
    shares(second)   # a bad --second-share fails here, before any training
    if args.files:
        a, b = (json.load(open(p)) for p in args.files[:2])
        out = blend(a, b, second)
        out["training"]["libraries"] = T.libraries()   # where the blend was written; each model's own: where it was fitted
        T.write_model(out, args.files[2])
        return

    models = []
    for name, knobs in MIXES:
        work = os.path.join(base, "mix-" + name)
        env = dict(os.environ, DETECT_WORK=work, **knobs)
        if not args.reuse:
            print("== mix %s (%s) ==" % (name, " ".join("%s=%s" % kv for kv in knobs.items()) or "defaults"), flush=True)
            subprocess.run([sys.executable, os.path.join(HERE, "train.py"), "--write-to", work], env=env, check=True)
        models.append(json.load(open(os.path.join(work, "event-model.json"))))
    out = blend(*models, second)
    out["context"] = blend_context(T, base, [m["temperature"] for m in models], args.fold_models, second)
    out["training"]["blend"] = ("segment stage: mean of the class scores (before the softmax) of the two models "
                                "below%s; context stage: fitted on that blend's out-of-fold probabilities; screen: the "
                                "first model's" % (", the second's share of " + ", ".join(second) if second else ""))
    out["training"]["libraries"] = T.libraries()
    T.write_model(out)
    inputs = dict(np.load(os.path.join(base, "mix-plain", "parity-inputs.npz")))
    T.write_parity(out, inputs)


if __name__ == "__main__":
    sys.exit(main())
