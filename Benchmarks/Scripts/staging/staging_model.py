"""Shared definitions of the sleepcycle staging model (training, LOSO evaluation, fixtures).

The Swift inference in Sources/Staging/ (EpochDesign.swift, StagingModel.swift, StagingTrees.swift,
StageDecoder.swift) mirrors `design_matrix`, `predict_proba` and `viterbi` operation for operation; change them
together.

Data: Walch et al. 2019 per-epoch features, https://doi.org/10.1093/sleep/zsz180
(see /work/shared/data/staging/README.md).
"""
import os

import numpy as np

DATA_DIR = os.environ.get("SLEEPCYCLE_STAGING_DATA", "/work/shared/data/staging")
SUBJECTS = [46343, 781756, 1066528, 1360686, 1449548, 1455390, 1818471, 2598705, 2638030, 3509524,
            3997827, 4018081, 4314139, 5132496, 5498603, 5797046, 7749105, 8000685, 8173033, 8258170,
            8530312, 8692923, 9618981, 9961348]
BASE = ["time_hours", "count", "hr", "cosine", "circadian"]
FILE_OF = {"time_hours": "time", "count": "count", "hr": "hr", "cosine": "cosine", "circadian": "circadian"}
STAGES = ["awake", "light", "deep", "rem"]
# One sub-model per input set; at run time the largest set contained in the available inputs is used.
INPUT_SETS = [
    ["time_hours", "count", "hr", "cosine", "circadian"],
    ["time_hours", "count", "hr", "cosine"],
    ["time_hours", "count", "cosine", "circadian"],
    ["time_hours", "count", "cosine"],
    ["time_hours", "hr", "cosine"],
    ["time_hours", "cosine"],
]
# Signals z-scored within the night and given temporal context; the others keep their absolute meaning.
NORMALISED = ["count", "hr", "circadian"]
CENTRED_MEANS = [1, 5, 11, 21, 41, 81, 161]   # centred moving averages (epochs, odd)
CENTRED_STDS = [11, 41, 81]                     # centred moving standard deviations (epochs, odd)
ONE_SIDED = [10, 30, 60]                      # mean of the L epochs before / after (epochs)
# Heart-rate (HRV-like `hr`) and activity context beyond means and SDs (docs/0007 sec. 1, experiment log in
# docs/0007-staging-log.md): local extremes, deviation from a rolling median, local slope, within-night rank.
# Only in the sub-models that have `hr` (classified by gradient-boosted trees); the others keep the earlier design.
EXTRA = {
    "hr": [("zmax", w) for w in (11, 21, 41)] + [("zmin", w) for w in (11, 21, 41)]
          + [("zdmed", w) for w in (21, 61, 121)] + [("zslope", w) for w in (5, 10, 20)]
          + [("rank", w) for w in (1, 5, 21, 61)],
    "count": [("zmax", 11), ("zmax", 41), ("rank", 1)],
}


def load_subject(sid):
    cols = {name: np.loadtxt(os.path.join(DATA_DIR, f"{sid}_{FILE_OF[name]}_feature.out")) for name in BASE}
    psg = np.loadtxt(os.path.join(DATA_DIR, f"{sid}_psg_labels.out")).astype(int)
    # 4 classes: wake / N1+N2 (light) / N3+N4 (deep) / REM
    y = np.select([psg == 0, (psg == 1) | (psg == 2), (psg == 3) | (psg == 4), psg == 5], [0, 1, 2, 3], -1)
    assert (y >= 0).all()
    return cols, y


def feature_spec(inputs):
    """The ordered feature descriptors of one input set: (kind, input, window)."""
    spec = []
    for name in inputs:
        if name in NORMALISED:
            spec += [("zmean", name, w) for w in CENTRED_MEANS]
            spec += [("zstd", name, w) for w in CENTRED_STDS]
            spec += [("zpast", name, w) for w in ONE_SIDED]
            spec += [("zfuture", name, w) for w in ONE_SIDED]
            if "hr" in inputs:
                spec += [(k, name, w) for k, w in EXTRA.get(name, [])]
        else:
            spec.append(("raw", name, 0))
    if "time_hours" in inputs:
        spec.append(("square", "time_hours", 0))
    return spec


def transformed(name, v):
    """count -> log1p(max(count, 0)); the others unchanged."""
    v = np.asarray(v, dtype=float)
    return np.log1p(np.maximum(v, 0.0)) if name == "count" else v


def zscore(x, quiet_prior=0):
    """Whole-night z-score (population standard deviation); a constant night maps to 0.
    quiet_prior extra zeros join the statistics (online use only, see SleepStager)."""
    n = len(x) + quiet_prior
    m = x.sum() / n if quiet_prior else x.mean()
    s = np.sqrt((((x - m) ** 2).sum() + quiet_prior * m * m) / n) if quiet_prior else np.sqrt(((x - m) ** 2).mean())
    return (x - m) / s if s > 1e-12 else np.zeros_like(x)


def percentile_rank(v, quiet_prior=0):
    """Within-night percentile rank of each value: (#smaller + #equal / 2) / n. quiet_prior extra zeros join the
    reference values (online `count` only; the transformed count is >= 0, so they are never larger)."""
    s = np.sort(v)
    lo = np.searchsorted(s, v, "left").astype(float)
    eq = np.searchsorted(s, v, "right") - lo
    if quiet_prior:
        lo = lo + quiet_prior * (v > 0)
        eq = eq + quiet_prior * (v == 0)
    return (lo + 0.5 * eq) / (len(v) + quiet_prior)


def _gather(x, offsets, rows):
    n = len(x)
    return x[np.clip(rows[:, None] + np.asarray(offsets)[None, :], 0, n - 1)]


def design_matrix(cols, spec, quiet_count_prior=0, rows=None):
    """Design matrix (n_epochs x len(spec)) of one night. Windows are clamped to the night (edge replication).
    rows: optional epoch indices to compute (default all)."""
    n = len(cols["time_hours"]) if "time_hours" in cols else len(next(iter(cols.values())))
    rows = np.arange(n) if rows is None else np.asarray(rows)
    z, r = {}, {}
    out = []
    for kind, name, w in spec:
        if kind == "raw":
            out.append(np.asarray(cols[name], dtype=float)[rows]); continue
        if kind == "square":
            v = np.asarray(cols[name], dtype=float)[rows]; out.append(v * v); continue
        prior = quiet_count_prior if name == "count" else 0
        if kind == "rank":
            if name not in r:
                r[name] = percentile_rank(transformed(name, cols[name]), prior)
            out.append(_gather(r[name], np.arange(-(w // 2), w // 2 + 1), rows).mean(axis=1)); continue
        if name not in z:
            z[name] = zscore(transformed(name, cols[name]), prior)
        x = z[name]
        if kind == "zmean":
            out.append(_gather(x, np.arange(-(w // 2), w // 2 + 1), rows).mean(axis=1))
        elif kind == "zstd":
            g = _gather(x, np.arange(-(w // 2), w // 2 + 1), rows)
            m = g.mean(axis=1, keepdims=True)
            out.append(np.sqrt(((g - m) ** 2).mean(axis=1)))
        elif kind == "zpast":
            out.append(_gather(x, -np.arange(1, w + 1), rows).mean(axis=1))
        elif kind == "zfuture":
            out.append(_gather(x, np.arange(1, w + 1), rows).mean(axis=1))
        elif kind == "zmax":
            out.append(_gather(x, np.arange(-(w // 2), w // 2 + 1), rows).max(axis=1))
        elif kind == "zmin":
            out.append(_gather(x, np.arange(-(w // 2), w // 2 + 1), rows).min(axis=1))
        elif kind == "zdmed":
            out.append(x[rows] - np.median(_gather(x, np.arange(-(w // 2), w // 2 + 1), rows), axis=1))
        elif kind == "zslope":
            out.append(_gather(x, np.arange(1, w + 1), rows).mean(axis=1)
                       - _gather(x, -np.arange(1, w + 1), rows).mean(axis=1))
        else:
            raise ValueError(kind)
    return np.column_stack(out)


def parse_tree(text):
    """One tree of the text format (pre-order; a split `x<feature><=<threshold>:<index of its right child>`, its
    left child being the next node; a leaf is its output) -> arrays feature, threshold, right, value (right = -1
    at leaves)."""
    feat, thr, right, value = [], [], [], []
    for tok in text.split():
        if tok.startswith("x"):
            f, rest = tok[1:].split("<=")
            t, r = rest.rsplit(":", 1)
            feat.append(int(f)); thr.append(float(t)); right.append(int(r)); value.append(0.0)
        else:
            feat.append(0); thr.append(0.0); right.append(-1); value.append(float(tok))
    return np.array(feat), np.array(thr), np.array(right), np.array(value)


def tree_scores(model, X):
    """Gradient-boosted trees: each class's baseline plus, tree after tree (file order), the leaf it reaches
    (`x[feature] <= threshold` goes left = next node)."""
    if "_parsed" not in model:
        model["_parsed"] = [(t["class"],) + parse_tree(t["nodes"]) for t in model["trees"]]
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    z = np.tile(np.array(model["baseline"], dtype=float), (n, 1))
    rows = np.arange(n)
    for k, feat, thr, right, value in model["_parsed"]:
        at = np.zeros(n, dtype=int)
        while True:
            inner = right[at] >= 0
            if not inner.any():
                break
            go_left = X[rows, feat[at]] <= thr[at]
            at = np.where(inner, np.where(go_left, at + 1, right[at]), at)
        z[:, k] += value[at]
    return z


def predict_proba(model, X):
    """Stage posteriors: softmax of the class scores, from gradient-boosted trees (`tree_scores`, classifier
    "gbt") or from a multinomial logistic regression on standardised features ((X - mean) / scale @ coef.T + b,
    classifier "lr")."""
    if model["classifier"] == "gbt":
        z = tree_scores(model, X)
    else:
        z = (X - np.array(model["mean"])) / np.array(model["scale"]) @ np.array(model["coef"]).T \
            + np.array(model["intercept"])
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def emission_log(model, P):
    """Per-epoch log evidence: b * (log P - g * log prior). g > 0 shifts decisions towards rare stages."""
    g = model["prior_exponent"]
    b = model["emission_exponent"]
    return b * (np.log(np.maximum(P, 1e-300)) - g * np.log(np.array(model["prior"])))


def viterbi(model, P):
    """Most likely stage path (Viterbi 1967; Rabiner 1989 sec. III-B) with log evidence `emission_log`."""
    logA = np.log(np.array(model["transition"]))
    logE = emission_log(model, P)
    n, k = P.shape
    delta = np.log(np.array(model["initial"])) + logE[0]
    back = np.zeros((n, k), dtype=int)
    for t in range(1, n):
        cand = delta[:, None] + logA      # cand[i, j]: from i to j
        back[t] = cand.argmax(axis=0)     # first maximum, as in the Swift port
        delta = cand.max(axis=0) + logE[t]
    path = np.zeros(n, dtype=int)
    path[-1] = int(delta.argmax())
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path
