#!/usr/bin/env python3
"""Train the built-in event model as a per-class blend of three training mixes, and write it.

    python3 Benchmarks/Scripts/detection/blend.py                     # the three mixes, then Sources/ and Tests/
    python3 Benchmarks/Scripts/detection/blend.py --reuse             # blend the mixes of an earlier run again
    python3 Benchmarks/Scripts/detection/blend.py --files A.json B.json OUT.json   # blend model files (2 or more)
    python3 Benchmarks/Scripts/detection/blend.py --mix DETECT_NIGHT_MIC_SHARE=0.5 --mix DETECT_NIGHT_REVERB_SHARE=0.5
                                                                      # plain and these experimental mixes instead
    python3 Benchmarks/Scripts/detection/blend.py --reuse --share snoring=0,0.5,0.5   # each mix's share of a class

The built-in model blends three `train.py` models class by class (MIXES, SHARES):
- "plain": the default mix, the training nights as recorded by the bedroom microphone the clips came from;
- "night-mic": the same mix with half of the training nights heard through a random microphone
  (`DETECT_NIGHT_MIC_SHARE=0.5`, `common.through_microphone`);
- "partner": half of the nights through a random microphone with the snores there 5-15 dB above the night's floor
  and high-passed at 150-450 Hz, half of the nights in a simulated room, half reverberant, and on half of the nights
  a second sleeper's all-night breathing (`DETECT_NIGHT_PARTNER_SHARE`): the separation benchmark's bedrooms, where
  a non-snorer breathes beside a snorer.
Snoring's score is the partner mix's alone and none's is half the partner mix's and a quarter each of the others'
(none from the partner mix alone made a third more false talking events: the partner mix's none is surer of quiet
speech); every other class's score is half plain and half night-mic. Each mix alone
trades one condition for another (docs/0005-event-detection-log.md, "A blend of two training mixes" and "A second
sleeper's breathing"): the plain model misses snores through a laptop's or a USB microphone's response, the
night-mic model misses more sleep talk in clean rooms, and neither tells a quiet snore through a laptop from a
neighbour's reverberant breath; the partner mix does, but its talk and coughs at low SNR are worse than the other
two's blended. Taking each class's score from the mixes that hear it best keeps most of all three.
Snoring bouts from 0 dB SNR in either mix (`DETECT_NIGHT_SNR_FLOORS=0,4,5`) were tried and reverted: quiet snores
were found, and the snoring events on reverberant breathing doubled in the separation benchmark's bedrooms
(docs/0005-event-detection-log.md, "Snores from 0 dB: ... reverted"); with the context stage fitted on its own blend
(below) the 0-dB night-mic mix still made more of them than the committed model (session log, 2026-11-28).
The partner mix's microphone-night snores at 0-10 dB instead of 5-15 (`DETECT_NIGHT_MIC_SNORE_SNR=0,10`) kept the
bedrooms' breaths as breaths (10 false snores instead of 19) but found fewer of the laptop's snores on fold 2's
conditions (0.83 -> 0.64) and no more at 5 dB: not kept (session log, "Snores from 0-10 dB in the partner mix").
Its dry nights' snores from 0 dB (`DETECT_NIGHT_SNR_FLOORS=0,4,5` with PARTNER) gained 5 dB's snores (0.64 -> 0.68)
for the laptop's (0.83 -> 0.75) and more bedroom false snores (19 -> 24): not kept (session log, "Dry-night snores").

How the blend is written: the segment stage's score is a sum of tree outputs plus a baseline, divided by its
temperature before the softmax. The blend's score for class c is the sum over mixes m of share[c][m] * score_m / T_m,
so its file holds every mix's trees with each leaf scaled by its class's share / T (rounded to float32, as
`train.py` writes leaves; a class's trees of share 0 are left out), the scaled baselines summed, and temperature 1:
the Swift classifier needs no change, a blend is a bigger ensemble.
The screen is the plain mix's. The context stage reads the segment stage's probabilities, so it is fitted here on
the BLEND's out-of-fold probabilities: each mix's five cross-validation fold models (`train.py` leaves them in
`fold-models.json`) are blended fold by fold as above, score the plain mix's context rows out of fold
(`train.context_rows`), and the context stage and its temperature are fitted on those rows as `train.py` fits its
own. A context stage fitted on one mix's probabilities and run on the blend's turned breaths between snores into
snores in reverberant bedrooms (docs/0005-event-detection-log.md, "A context stage fitted on the blend's
probabilities"). The segment trees carry the microphone gain (the session log's stage swap); blending the screen
too measured no better and costs analyze time (`cost.py`).

Each mix is trained by `train.py --write-to $DETECT_WORK/mix-<name>` with `$DETECT_WORK/mix-<name>` as its own
work directory (its segment-feature caches stay there, so a rerun only refits). On 2 cores with empty caches about
25 min for plain, about 50 for night-mic and about 65 for partner (its simulated rooms), about 10-20 each with its
caches; the context stage about 8 more. A mix directory written before
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
# The built-in blend's mixes, in order (the first is always the plain mix: its screen, its parity inputs and its
# training rows are the blend's): name -> the train.py knobs of its training nights.
PARTNER = {"DETECT_NIGHT_MIC_HIGHPASS": "150,450", "DETECT_NIGHT_MIC_SHARE": "0.5", "DETECT_NIGHT_MIC_SNORE_SNR": "5,15",
           "DETECT_NIGHT_PARTNER_SHARE": "0.5", "DETECT_NIGHT_REVERB_SHARE": "0.5", "DETECT_NIGHT_ROOM": "image"}
MIXES = [("plain", {}), ("night-mic", {"DETECT_NIGHT_MIC_SHARE": "0.5"}), ("partner", PARTNER)]
# Per class, each mix's share of the blend's class score (MIXES order): snoring from the partner mix alone, none half
# from it and a quarter from each of the others, every other class half plain and half night-mic.
SHARES = {"none": (0.25, 0.25, 0.5), "snoring": (0, 0, 1), "talking": (0.5, 0.5, 0), "coughing": (0.5, 0.5, 0),
          "movement": (0.5, 0.5, 0)}


def mix_name(knobs):
    """The mix directory's name for these knobs: a built-in mix's name, else the knobs sorted and joined."""
    for name, known in MIXES:
        if knobs == known:
            return name
    return "-".join("%s%s" % (k.replace("DETECT_", "").lower().replace("_", "-"), v) for k, v in sorted(knobs.items()))


def f32(v):
    return np.format_float_positional(np.float32(v), unique=True, trim="-")


def scaled_trees(trees, w):
    """The trees with every leaf output multiplied by its class's weight `w[class]` (splits unchanged); the trees of a
    class weighted 0 are left out (they add nothing, and every tree costs a walk in `analyze`)."""
    return [dict(t, nodes=" ".join(tok if tok.startswith("x") else f32(float(tok) * w[t["class"]])
                                   for tok in t["nodes"].split()))
            for t in trees if w[t["class"]] != 0]


def blend_stage(stages, weights):
    """(baseline, trees) of the weighted sum of the stages' scores; `weights`: per stage, one weight per class,
    already including 1 / temperature."""
    baseline = [float("%.9g" % sum(w[i] * s["baseline"][i] for s, w in zip(stages, weights)))
                for i in range(len(stages[0]["baseline"]))]
    trees = [t for s, w in zip(stages, weights) for t in scaled_trees(s["trees"], w)]
    return baseline, trees


def shares(specs, n, default=None):
    """Per mix (n of them), its share of each class's score, as one list per mix in class order. `specs`: `CLASS=S1,
    S2,...` strings (`--share`), one share per mix, summing to 1; a class not named takes `default[class]` (SHARES for
    the built-in mixes) or, without a default, an equal share of every mix."""
    import common as C
    given = dict(default or {})
    for spec in specs or []:
        name, _, value = spec.partition("=")
        try:
            row = tuple(float(x) for x in value.split(","))
        except ValueError:
            row = ()
        if name not in C.CLASSES or len(row) != n or min(row) < 0 or abs(sum(row) - 1) > 1e-6:
            raise SystemExit("blend.py: --share %s: expected CLASS=S1,...,S%d (a class of %s; %d shares in 0-1 that sum "
                             "to 1, one per mix)" % (spec, n, ", ".join(C.CLASSES), n))
        given[name] = row
    rows = [tuple(float(x) for x in given.get(c, (1.0 / n,) * n)) for c in C.CLASSES]
    return [[row[m] for row in rows] for m in range(n)]


def blend(models, split):
    """The model file whose segment stage's softmax input is the per-class weighted mean of the models' (`split`,
    from `shares`), with the first model's context stage and screen (`main` replaces the context stage with the
    blend's own)."""
    a = models[0]
    for b in models[1:]:
        for key in ("format", "kind", "classes", "features"):
            if a[key] != b[key]:
                raise SystemExit("blend.py: the models differ in %r" % key)
    if a["kind"] != "gbt":
        raise SystemExit("blend.py: only tree models (kind gbt) can be blended")
    out = dict(a)
    out["baseline"], out["trees"] = blend_stage(models, [[x / m["temperature"] for x in sh]
                                                         for m, sh in zip(models, split)])
    out["temperature"] = 1.0
    out["training"] = {"script": "Benchmarks/Scripts/detection/blend.py",
                       "blend": "segment stage: per class, the weighted mean of the class scores (before the softmax) "
                                "of the models below; context stage and screen: the first model's",
                       "shares": {c: [sh[i] for sh in split] for i, c in enumerate(a["classes"])},
                       "models": [m.get("training") for m in models]}
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


def blend_context(T, base, mixes, split, temps, fold_dir=None):
    """The context stage section fitted on the blend's out-of-fold probabilities (module docstring); `temps`: each
    mix's segment temperature. `T` is train.py imported with the plain mix's work directory. With `fold_dir`, also
    writes the blended fold models 2 and 3 there."""
    import dataset as D
    folds = [mix_fold_models(os.path.join(base, "mix-" + name), knobs) for name, knobs in mixes]
    its = D.items()
    X, y, _, _, seg_fold, _, weight = T.training_set(its)
    screens, _ = T.fold_screens(X, y, seg_fold, weight)

    def blended(k, weights):
        baseline, trees = blend_stage([f[str(k)] for f in folds], weights)
        return {"kind": "gbt", "baseline": baseline, "trees": trees}
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
    ap.add_argument("--files", nargs="+", metavar="FILE", default=None,
                    help="A.json B.json [...] OUT.json: blend these model files into OUT (e.g. evaluate_nights.py's "
                         "fold models of two mixes), with --share over them in this order")
    ap.add_argument("--reuse", action="store_true",
                    help="blend the mixes' models of an earlier run ($DETECT_WORK/mix-*/) instead of training them")
    ap.add_argument("--fold-models", metavar="DIR", default=None,
                    help="also write the blended fold models 2 and 3 into DIR (for evaluate_nights.py --reuse-models)")
    ap.add_argument("--mix", nargs="+", action="append", metavar="KNOB=VALUE", default=None,
                    help="an experimental mix (repeat for each) in place of the built-in mixes after plain: these "
                         "environment knobs (README), trained in $DETECT_WORK/mix-<name> with <name> made from them")
    ap.add_argument("--share", nargs="+", metavar="CLASS=S1,S2,...", default=None,
                    help="each mix's share of these classes' scores, in mix order (plain first), e.g. snoring=0,0,1")
    args = ap.parse_args()
    mixes = MIXES
    if args.mix:
        mixes = [MIXES[0]]
        for kvs in args.mix:
            if not all("=" in kv for kv in kvs):
                raise SystemExit("blend.py: --mix %s: expected KNOB=VALUE ..." % " ".join(kvs))
            knobs = dict(kv.split("=", 1) for kv in kvs)
            mixes.append((mix_name(knobs), knobs))
    base = os.environ.get("DETECT_WORK", "/tmp/sleepcycle-detect-work")
    # train.py's writers, imported with the plain mix's work directory (its import reads $DETECT_WORK).
    os.environ["DETECT_WORK"] = os.path.join(base, "mix-plain")
    sys.path.insert(0, HERE)
    import train as T
    if args.files:
        if len(args.files) < 3:
            raise SystemExit("blend.py: --files needs at least two model files and the output file")
        models = [json.load(open(p)) for p in args.files[:-1]]
        out = blend(models, shares(args.share, len(models)))
        out["training"]["libraries"] = T.libraries()   # where the blend was written; each model's own: where it was fitted
        T.write_model(out, args.files[-1])
        return
    # A bad --share fails here, before any training.
    split = shares(args.share, len(mixes), SHARES if mixes == MIXES else None)

    models = []
    for name, knobs in mixes:
        work = os.path.join(base, "mix-" + name)
        env = dict(os.environ, DETECT_WORK=work, **knobs)
        if not args.reuse:
            print("== mix %s (%s) ==" % (name, " ".join("%s=%s" % kv for kv in knobs.items()) or "defaults"), flush=True)
            subprocess.run([sys.executable, os.path.join(HERE, "train.py"), "--write-to", work], env=env, check=True)
        models.append(json.load(open(os.path.join(work, "event-model.json"))))
    out = blend(models, split)
    out["context"] = blend_context(T, base, mixes, split, [m["temperature"] for m in models], args.fold_models)
    out["training"]["blend"] = ("segment stage: per class, the weighted mean of the class scores (before the softmax) "
                                "of the models below (shares: per class, one per model); context stage: fitted on "
                                "that blend's out-of-fold probabilities; screen: the first model's")
    out["training"]["libraries"] = T.libraries()
    T.write_model(out)
    inputs = dict(np.load(os.path.join(base, "mix-plain", "parity-inputs.npz")))
    T.write_parity(out, inputs)


if __name__ == "__main__":
    sys.exit(main())
