#!/usr/bin/env python3
"""Experiment: a context stage fitted on the BLEND's out-of-fold segment probabilities (not the plain mix's).

    DETECT_WORK=<blend.py's work dir> python3 Benchmarks/Scripts/detection/blend_context.py OUT_DIR [MODEL.json]

The built-in model's context stage is the plain mix's: fitted on the plain model's out-of-fold probabilities, it
reads the blend's at run time, and turns breaths between snores into snores in reverberant bedrooms
(docs/0005-event-detection-log.md, "Snores from 0 dB: ... reverted", "Where they come from"). This script

1. fits the five cross-validation fold models of each mix (`train.fold_models`, in a subprocess per mix with the
   mix's work directory `$DETECT_WORK/mix-<name>` and knobs from `blend.MIXES`; about 8 minutes on 2 cores);
2. blends each fold's pair as `blend.py` blends the final models (0.5 · z / T per mix, T from each mix's
   event-model.json), scores the plain mix's context rows with them (`train.context_rows`, out of fold), and fits the
   context stage and its temperature on those rows as `train.py` does;
3. writes OUT_DIR/event-model.json: MODEL.json (default: the built-in model) with that context stage, and
   OUT_DIR/model-fold2.json, model-fold3.json: the blended fold models with a context stage fitted without that
   fold, for `evaluate_nights.py --reuse-models` (their segment stages blended with T = 1, as the fold models of
   `evaluate_nights.py` + `blend.py --files` are, so the night figures compare with the committed ones).

Nothing in Sources/ or Tests/ changes; measure OUT_DIR/event-model.json with `../separation/channels_detect.py
--model` and `conditions.py` through a binary whose resource bundle holds it.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def fold_models_of_mix(work, knobs, out):
    """Step 1 in a subprocess (train.py reads $DETECT_WORK and the knobs when it is imported)."""
    code = ("import json, sys; sys.path.insert(0, %r); import train as T, dataset as D; its = D.items(); "
            "X, y, sc, cp, f, s, w = T.training_set(its); m = T.fold_models(X, y, f, 'gbt', w); "
            "json.dump({str(k): v for k, v in m.items()}, open(%r, 'w'))" % (HERE, out))
    subprocess.run([sys.executable, "-c", code], env=dict(os.environ, DETECT_WORK=work, **knobs), check=True)


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    out_dir = os.path.abspath(sys.argv[1])
    base = os.environ.get("DETECT_WORK", "/tmp/sleepcycle-detect-work")
    os.makedirs(out_dir, exist_ok=True)
    sys.path.insert(0, HERE)
    import blend as B
    folds = {}
    for name, knobs in B.MIXES:
        path = os.path.join(out_dir, "folds-%s.json" % name)
        if not os.path.exists(path):
            print("fold models of mix %s ..." % name, flush=True)
            fold_models_of_mix(os.path.join(base, "mix-" + name), knobs, path)
        folds[name] = json.load(open(path))
    # Step 2 with the plain mix's work directory (its context rows), as train.py would run for it.
    os.environ["DETECT_WORK"] = os.path.join(base, "mix-plain")
    import numpy as np
    import dataset as D
    import train as T
    names = [name for name, _ in B.MIXES]
    temps = [json.load(open(os.path.join(base, "mix-" + n, "event-model.json")))["temperature"] for n in names]
    its = D.items()
    X, y, _, _, seg_fold, _, weight = T.training_set(its)
    screens, _ = T.fold_screens(X, y, seg_fold, weight)

    def blended(k, weights):
        baseline, trees = B.blend_stage([folds[n][str(k)] for n in names], weights)
        return {"kind": "gbt", "baseline": baseline, "trees": trees}
    models = {k: blended(k, [0.5 / t for t in temps]) for k in range(len(folds[names[0]]))}
    CF, cy, cfold, _, _, _ = T.context_rows(its, models, 1.0, screens)
    labelled = cy >= 0
    Z = np.zeros((len(cy), len(T.C.CLASSES)))
    for k in models:
        Z[cfold == k] = T.logits(T.fit_context(CF[cfold != k], cy[cfold != k]), CF[cfold == k], False)
    temperature = T.fit_temperature(lambda t: T.softmax(Z[labelled], t), cy[labelled])
    print("context stage on the blend's out-of-fold probabilities: temperature %.2f" % temperature, flush=True)
    model = json.load(open(sys.argv[2] if len(sys.argv) == 3 else T.MODEL_PATH))
    model["context"] = T.context_section(T.fit_context(CF, cy), temperature)
    model["training"] = dict(model.get("training", {}), context_refit="Benchmarks/Scripts/detection/blend_context.py")
    T.write_model(model, os.path.join(out_dir, "event-model.json"))
    for k in (2, 3):
        fold = {key: v for key, v in model.items() if key not in ("baseline", "trees", "context", "screen")}
        fold.update(blended(k, [0.5, 0.5]))
        fold["temperature"] = 1.0
        fold["screen"] = T.screen_section(screens[k], model["features"])
        fold["context"] = T.context_section(T.fit_context(CF[cfold != k], cy[cfold != k]), temperature)
        T.write_model(fold, os.path.join(out_dir, "model-fold%d.json" % k))
    print("wrote", out_dir)


if __name__ == "__main__":
    main()
