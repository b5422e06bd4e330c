"""Shared definitions for the sleepcycle staging model (training, LOSO evaluation, fixtures).

The Swift inference in Sources/Staging/ mirrors `epoch_design`, `predict_proba` and `viterbi`
exactly; change them together.

Data: Walch et al. 2019 per-epoch features (see /work/shared/data/staging/README.md).
"""
import json
import os

import numpy as np

DATA_DIR = os.environ.get("SLEEPCYCLE_STAGING_DATA", "/work/shared/data/staging")
SUBJECTS = [46343, 781756, 1066528, 1360686, 1449548, 1455390, 1818471, 2598705, 2638030, 3509524,
            3997827, 4018081, 4314139, 5132496, 5498603, 5797046, 7749105, 8000685, 8173033, 8258170,
            8530312, 8692923, 9618981, 9961348]
BASE = ["time_hours", "count", "hr", "cosine", "circadian"]
FILE_OF = {"time_hours": "time", "count": "count", "hr": "hr", "cosine": "cosine", "circadian": "circadian"}
STAGES = ["awake", "light", "deep", "rem"]
# Input sets, one sub-model each (largest available subset wins at run time).
INPUT_SETS = [
    ["time_hours", "count", "hr", "cosine", "circadian"],
    ["time_hours", "count", "hr", "cosine"],
    ["time_hours", "count", "cosine", "circadian"],
    ["time_hours", "count", "cosine"],
    ["time_hours", "hr", "cosine"],
    ["time_hours", "cosine"],
]
# Centred moving-average window lengths (epochs) applied to the per-night z-scored signals.
WINDOWS = [1, 5, 11, 21, 41]
# Signals that are z-scored within the night (time_hours and cosine keep their absolute meaning).
NORMALISED = ["count", "hr", "circadian"]


def load_subject(sid):
    cols = {}
    for name in BASE:
        cols[name] = np.loadtxt(os.path.join(DATA_DIR, f"{sid}_{FILE_OF[name]}_feature.out"))
    psg = np.loadtxt(os.path.join(DATA_DIR, f"{sid}_psg_labels.out")).astype(int)
    # 4-class: wake / N1+N2 / N3+N4 / REM
    y = np.select([psg == 0, (psg == 1) | (psg == 2), (psg == 3) | (psg == 4), psg == 5], [0, 1, 2, 3], -1)
    assert (y >= 0).all()
    return cols, y


def moving_average(x, w):
    """Centred mean over w epochs (w odd), indices clamped to the night (edge replication)."""
    if w == 1:
        return x.copy()
    h = w // 2
    n = len(x)
    idx = np.clip(np.arange(n)[:, None] + np.arange(-h, h + 1)[None, :], 0, n - 1)
    return x[idx].mean(axis=1)


def zscore(x):
    """Whole-night z-score (population standard deviation); a constant night maps to 0."""
    m = x.mean()
    s = x.std()
    return (x - m) / s if s > 1e-12 else np.zeros_like(x)


def signal(name, v):
    if name == "count":
        return np.log1p(np.maximum(v, 0.0))
    return v


def epoch_design(cols, inputs):
    """Design matrix (n_epochs x d) for one night and one input set. Column names returned too."""
    feats, names = [], []
    for name in inputs:
        v = signal(name, np.asarray(cols[name], dtype=float))
        if name in NORMALISED:
            z = zscore(v)
            for w in WINDOWS:
                feats.append(moving_average(z, w)); names.append(f"{name}_z_ma{w}")
        else:
            feats.append(v); names.append(name)
    if "time_hours" in inputs:
        t = np.asarray(cols["time_hours"], dtype=float)
        feats.append(t * t); names.append("time_hours_sq")
    return np.column_stack(feats), names


def predict_proba(model, X):
    Z = (X - np.array(model["mean"])) / np.array(model["scale"])
    logits = Z @ np.array(model["coef"]).T + np.array(model["intercept"])
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def viterbi(model, P):
    """Most likely stage path given per-epoch posteriors P, as an HMM with scaled likelihoods P / prior."""
    logA = np.log(np.array(model["transition"]))
    logpi = np.log(np.array(model["initial"]))
    logE = np.log(np.maximum(P, 1e-300)) - np.log(np.array(model["prior"]))
    n, k = P.shape
    delta = logpi + logE[0]
    back = np.zeros((n, k), dtype=int)
    for t in range(1, n):
        cand = delta[:, None] + logA  # from i to j
        back[t] = cand.argmax(axis=0)
        delta = cand.max(axis=0) + logE[t]
    path = np.zeros(n, dtype=int)
    path[-1] = int(delta.argmax())
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path
