#!/usr/bin/env python3
"""Train the sleepcycle staging model on all development subjects and write the committed weights.

    OMP_NUM_THREADS=1 python3 Benchmarks/Scripts/staging/train.py \
        [--out Sources/Staging/Resources/staging_model.json]

Per input set, over the per-night design of staging_model.design_matrix: with `hr`, scikit-learn's
HistGradientBoostingClassifier (multinomial log loss, no early stopping, no subsampling, so no random state is
involved); without `hr`, the L-BFGS multinomial logistic regression of the earlier model (gradient boosting did not
help there: docs/0007-staging-log.md). Then the HMM (transitions, initial distribution, stage prior counted on the
training nights). OpenMP is pinned to one
thread before scikit-learn loads (parallel reductions could change the last bits); the output JSON is
byte-identical from run to run. See docs/0007-staging-statistics-alarm.md.
"""
import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

import staging_model as sm  # noqa: E402

# Gradient boosting: fixed a priori (not searched; docs/0007-staging-log.md).
GBT = dict(max_iter=200, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40, l2_regularization=1.0,
           max_bins=255, early_stopping=False)
C = 1.0                  # inverse L2 strength of the logistic regression (sub-models without hr)
PRIOR_EXPONENT = 0.5     # g in emission_log: decisions use P / prior^g
EMISSION_EXPONENT = 0.5  # b in emission_log
TRANSITION_PSEUDOCOUNT = 1.0


def tree_text(nodes, i=0):
    """sklearn TreePredictor nodes -> the pre-order text format of staging_model.parse_tree (leaf values already
    include the learning rate). Numbers are written with repr, which reads back to the same double."""
    out = []

    def walk(j):
        node = nodes[j]
        if node["is_leaf"]:
            out.append(repr(float(node["value"])))
            return
        assert not node["is_categorical"]
        at = len(out)
        out.append(None)
        walk(node["left"])
        right = len(out)
        walk(node["right"])
        out[at] = f"x{int(node['feature_idx'])}<={float(node['num_threshold'])!r}:{right}"

    walk(i)
    return " ".join(out)


def fit(nights, inputs):
    """nights: list of (cols, y). Returns the JSON-ready sub-model for one input set."""
    spec = sm.feature_spec(inputs)
    X = np.vstack([sm.design_matrix(cols, spec) for cols, _ in nights])
    y = np.concatenate([yy for _, yy in nights])
    assert np.isfinite(X).all()
    if "hr" in inputs:
        clf = HistGradientBoostingClassifier(**GBT).fit(X, y)
        weights = {"classifier": "gbt",
                   "baseline": [float(v) for v in np.ravel(clf._baseline_prediction)],
                   "trees": [{"class": k, "nodes": tree_text(p.nodes)}
                             for iteration in clf._predictors for k, p in enumerate(iteration)]}
        Xs = X
    else:
        mean = X.mean(axis=0)
        scale = X.std(axis=0)
        scale[scale < 1e-12] = 1.0
        Xs = (X - mean) / scale
        clf = LogisticRegression(C=C, max_iter=5000, tol=1e-8).fit(Xs, y)
        weights = {"classifier": "lr", "mean": mean.tolist(), "scale": scale.tolist(),
                   "coef": clf.coef_.tolist(), "intercept": clf.intercept_.tolist()}
    assert list(clf.classes_) == [0, 1, 2, 3]
    A = np.full((4, 4), TRANSITION_PSEUDOCOUNT)
    first = np.full(4, TRANSITION_PSEUDOCOUNT)
    for _, yy in nights:
        np.add.at(A, (yy[:-1], yy[1:]), 1.0)
        first[yy[0]] += 1.0
    prior = np.bincount(y, minlength=4) / len(y)
    model = {
        "inputs": list(inputs),
        "features": [{"kind": k, "input": n, "window": int(w)} for k, n, w in spec],
        **weights,
        "prior": prior.tolist(),
        "transition": (A / A.sum(axis=1, keepdims=True)).tolist(),
        "initial": (first / first.sum()).tolist(),
        "prior_exponent": PRIOR_EXPONENT, "emission_exponent": EMISSION_EXPONENT,
    }
    # The exported weights must give scikit-learn's probabilities.
    check = slice(None, None, max(1, len(X) // 2000))
    assert np.abs(sm.predict_proba(dict(model), X[check]) - clf.predict_proba(Xs[check])).max() < 1e-9
    return model


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "../../../Sources/Staging/Resources/staging_model.json"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=default_out)
    args = ap.parse_args()
    nights = [sm.load_subject(s) for s in sm.SUBJECTS]
    model = {
        "format": 2,
        "description": "sleepcycle staging: per input set, gradient-boosted trees (with hr: heart-rate context "
                       "features) or multinomial LR (without hr) over per-night z-scored, context-smoothed Walch "
                       "2019 features + HMM/Viterbi. Trained by Benchmarks/Scripts/staging/train.py on 24 subjects.",
        "stages": sm.STAGES,
        "models": [fit([(c, y) for c, y in nights], inputs) for inputs in sm.INPUT_SETS],
    }
    with open(args.out, "w") as f:
        json.dump(model, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
