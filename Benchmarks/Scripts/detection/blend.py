#!/usr/bin/env python3
"""Train the built-in event model as an equal blend of two training mixes, and write it.

    python3 Benchmarks/Scripts/detection/blend.py                     # both mixes, then Sources/ and Tests/
    python3 Benchmarks/Scripts/detection/blend.py --reuse             # blend the mixes of an earlier run again
    python3 Benchmarks/Scripts/detection/blend.py --files A.json B.json OUT.json   # blend two model files

The built-in model is two `train.py` models averaged: the default mix ("plain": the training nights as recorded
by the bedroom microphone the clips came from) and the same mix with half of the training nights heard through a
random microphone ("night-mic": `DETECT_NIGHT_MIC_SHARE=0.5`, `common.through_microphone`). Each alone trades one
condition for another (docs/0005-event-detection-log.md, "A blend of two training mixes"): the plain model misses
snores through a laptop's or a USB microphone's response, the night-mic model misses more sleep talk in clean
rooms. Averaging their class scores keeps most of both.
Snoring bouts from 0 dB SNR in either mix (`DETECT_NIGHT_SNR_FLOORS=0,4,5`) were tried and reverted: quiet snores
were found, and the snoring events on reverberant breathing doubled in the separation benchmark's bedrooms
(docs/0005-event-detection-log.md, "Snores from 0 dB: ... reverted").

How the blend is written: the segment stage's score is a sum of tree outputs plus a baseline, divided by its
temperature before the softmax. The blend's is 0.5 * score_a / T_a + 0.5 * score_b / T_b, so its file holds both
tree lists with every leaf scaled by 0.5 / T (rounded to float32, as `train.py` writes leaves), the scaled
baselines summed, and temperature 1: the Swift classifier needs no change, a blend is a bigger ensemble. Only the
segment stage is blended; the context stage and the screen are the plain mix's. The segment trees carry the
microphone gain (the session log's stage swap), and the two other stages run on more segments: blending them too
measured no better and cost about 3 more points of `analyze` time (`cost.py`), over the 25 % budget.

Each mix is trained by `train.py --write-to $DETECT_WORK/mix-<name>` with `$DETECT_WORK/mix-<name>` as its own
work directory (its segment-feature caches stay there, so a rerun only refits). About 25 min per mix on 2 cores
with empty caches, about 10 with its caches. The parity fixture (Tests/EventDetectionTests/ModelParityVectors.swift)
takes its inputs from the plain mix and its probabilities from the blended file.
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
    """The trees with every leaf output multiplied by w (splits unchanged)."""
    return [dict(t, nodes=" ".join(tok if tok.startswith("x") else f32(float(tok) * w) for tok in t["nodes"].split()))
            for t in trees]


def blend_stage(stages, weights):
    """(baseline, trees) of the weighted sum of the stages' scores; `weights` already include 1 / temperature."""
    baseline = [float("%.9g" % sum(w * s["baseline"][i] for s, w in zip(stages, weights)))
                for i in range(len(stages[0]["baseline"]))]
    trees = [t for s, w in zip(stages, weights) for t in scaled_trees(s["trees"], w)]
    return baseline, trees


def blend(a, b):
    """The model file whose segment stage's softmax input is the mean of a's and b's, with a's context stage and
    screen."""
    for key in ("format", "kind", "classes", "features"):
        if a[key] != b[key]:
            raise SystemExit("blend.py: the models differ in %r" % key)
    if a["kind"] != "gbt":
        raise SystemExit("blend.py: only tree models (kind gbt) can be blended")
    out = dict(a)
    out["baseline"], out["trees"] = blend_stage([a, b], [0.5 / a["temperature"], 0.5 / b["temperature"]])
    out["temperature"] = 1.0
    out["training"] = {"script": "Benchmarks/Scripts/detection/blend.py",
                       "blend": "segment stage: mean of the class scores (before the softmax) of the two models below; "
                                "context stage and screen: the first model's",
                       "models": [a.get("training"), b.get("training")]}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", nargs=3, metavar=("A", "B", "OUT"), default=None,
                    help="blend two model files into OUT (e.g. evaluate_nights.py's fold models of two mixes)")
    ap.add_argument("--reuse", action="store_true",
                    help="blend the mixes' models of an earlier run ($DETECT_WORK/mix-*/) instead of training them")
    args = ap.parse_args()
    base = os.environ.get("DETECT_WORK", "/tmp/sleepcycle-detect-work")
    # train.py's writers, imported with the plain mix's work directory (its import reads $DETECT_WORK).
    os.environ["DETECT_WORK"] = os.path.join(base, "mix-plain")
    sys.path.insert(0, HERE)
    import train as T
    if args.files:
        a, b = (json.load(open(p)) for p in args.files[:2])
        out = blend(a, b)
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
    out = blend(*models)
    out["training"]["libraries"] = T.libraries()
    T.write_model(out)
    inputs = dict(np.load(os.path.join(base, "mix-plain", "parity-inputs.npz")))
    T.write_parity(out, inputs)


if __name__ == "__main__":
    sys.exit(main())
