#!/usr/bin/env python3
"""Train the sleepcycle staging model on all development subjects and write the committed weights.

    OMP_NUM_THREADS=1 python3 Benchmarks/Scripts/staging/train.py \
        [--out Sources/Staging/Resources/staging_model.json]

Deterministic: L-BFGS logistic regression (scikit-learn) on fixed data, no random state involved; the
output JSON is byte-identical from run to run. See docs/0007-staging-statistics-alarm.md.
"""
import argparse
import json
import os

import numpy as np
from sklearn.linear_model import LogisticRegression

import staging_model as sm

C = 1.0                  # inverse L2 strength of the logistic regression
PRIOR_EXPONENT = 0.5     # g in emission_log: decisions use P / prior^g
EMISSION_EXPONENT = 0.5  # b in emission_log
TRANSITION_PSEUDOCOUNT = 1.0


def fit(nights, inputs):
    """nights: list of (cols, y). Returns the JSON-ready sub-model for one input set."""
    spec = sm.feature_spec(inputs)
    X = np.vstack([sm.design_matrix(cols, spec) for cols, _ in nights])
    y = np.concatenate([yy for _, yy in nights])
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-12] = 1.0
    lr = LogisticRegression(C=C, max_iter=5000, tol=1e-8).fit((X - mean) / scale, y)
    assert list(lr.classes_) == [0, 1, 2, 3]
    A = np.full((4, 4), TRANSITION_PSEUDOCOUNT)
    first = np.full(4, TRANSITION_PSEUDOCOUNT)
    for _, yy in nights:
        np.add.at(A, (yy[:-1], yy[1:]), 1.0)
        first[yy[0]] += 1.0
    prior = np.bincount(y, minlength=4) / len(y)
    return {
        "inputs": list(inputs),
        "features": [{"kind": k, "input": n, "window": int(w)} for k, n, w in spec],
        "mean": mean.tolist(), "scale": scale.tolist(),
        "coef": lr.coef_.tolist(), "intercept": lr.intercept_.tolist(),
        "prior": prior.tolist(),
        "transition": (A / A.sum(axis=1, keepdims=True)).tolist(),
        "initial": (first / first.sum()).tolist(),
        "prior_exponent": PRIOR_EXPONENT, "emission_exponent": EMISSION_EXPONENT,
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "../../../Sources/Staging/Resources/staging_model.json"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=default_out)
    args = ap.parse_args()
    nights = [sm.load_subject(s) for s in sm.SUBJECTS]
    model = {
        "format": 1,
        "description": "sleepcycle staging: multinomial LR over per-night z-scored, context-smoothed Walch 2019 "
                       "features + HMM/Viterbi. Trained by Benchmarks/Scripts/staging/train.py on 24 subjects.",
        "stages": sm.STAGES,
        "models": [fit([(c, y) for c, y in nights], inputs) for inputs in sm.INPUT_SETS],
    }
    with open(args.out, "w") as f:
        json.dump(model, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
