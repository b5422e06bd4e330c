#!/usr/bin/env python3
"""Train the built-in event classifier and report clip-level cross-validation.

    python3 Benchmarks/Scripts/detection/train.py [--model lr|mlp] [--no-write]

1. Builds a scene per clip (the events/ clips, Coswara breathing pieces and synthetic items, each on a generated
   bedroom background; two augmented copies) and asks the Swift binary (`sleepcycle detect-dev segment-features`)
   for every candidate segment's features: the very code that runs inside `sleepcycle analyze`.
2. Group 5-fold cross-validation (groups: ESC fold, speaker, cough submission, Khan number blocks, Coswara
   participant, synthetic blocks): clip-level precision / recall / F1 per class, reliability of the reported
   probabilities.
3. Fits the final model on everything, fits a softmax temperature on the out-of-fold probabilities, and writes
   Sources/EventDetection/Resources/event-model.json and Tests/EventDetectionTests/ModelParityVectors.swift.
Deterministic: sorted inputs, fixed seeds, single-threaded BLAS, weights rounded to 9 significant digits.
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import argparse
import functools
import json
import sys

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

import common as C
import dataset as D

MODEL_PATH = os.path.join(C.REPO, "Sources", "EventDetection", "Resources", "event-model.json")
PARITY_PATH = os.path.join(C.REPO, "Tests", "EventDetectionTests", "ModelParityVectors.swift")
MIN_PROBABILITY = 0.5
# Per-class event thresholds of DetectorConfiguration.default (minEventProbability): what `analyze` reports.
EVENT_PROBABILITY = {C.CLASSES.index("coughing"): 0.7}
EVENT_SHARE = float(os.environ.get("DETECT_EVENT_SHARE", "0.25"))
HIDDEN = tuple(int(h) for h in os.environ.get("DETECT_HIDDEN", "64").split(","))
# Gradient-boosted trees (the default model): rounds x 5 class trees of at most GBT_LEAVES leaves.
GBT_ROUNDS = int(os.environ.get("DETECT_GBT_ROUNDS", "300"))
GBT_LEAVES = int(os.environ.get("DETECT_GBT_LEAVES", "15"))
GBT_RATE = float(os.environ.get("DETECT_GBT_RATE", "0.08"))
# Ablations: features to withhold from the model (comma-separated names; "voicing" = the six pitch features,
# "shape" = the 39 temporal-shape features of SegmentShape.swift).
# A withheld column is set to 0 before fitting, so no tree splits on it and no MLP weight sees it.
VOICING_FEATURES = ["voiced_share", "voicing_r_top_mean", "voiced_log2_f0_median", "f0_std_semitones",
                    "voiced_run_max_s", "hnr_mean_db"]
SHAPE_FEATURES = (["shape_t%d_g%d_db" % (i, g) for i in range(3) for g in range(8)]
                  + ["group%d_std_db" % g for g in range(8)]
                  + ["flux_rise_mean_db", "flux_rise_max_db", "flux_fall_mean_db", "envelope_mod_2_8hz_share",
                     "envelope_mod_peak_hz", "centroid_band_slope_per_s", "centroid_band_first_minus_last"])
# Hard negatives: none-labelled segments of the distractor clips (ESC-10 classes, Khan `other`) count this many times
# (gradient-boosted trees only; sneezes, dogs, babies and clocks are few next to the background segments).
HARD_NEGATIVE_WEIGHT = float(os.environ.get("DETECT_HARD_NEGATIVE_WEIGHT", "1"))
# The context stage (SegmentContextModel): a second, smaller tree ensemble over 30 numbers per segment computed from
# the segment model's probabilities of the segment and its neighbours. Trained on out-of-fold segment probabilities
# of the clip scenes and the training nights; event classes weighted to CONTEXT_SHARE x none (0.25 over-reported
# events on the comparison nights of folds 2-3, no weighting lost cough recall).
CONTEXT_WINDOW, CONTEXT_LONG_WINDOW = 3.0, 10.0
CONTEXT_ROUNDS = int(os.environ.get("DETECT_CONTEXT_ROUNDS", "100"))
CONTEXT_LEAVES = int(os.environ.get("DETECT_CONTEXT_LEAVES", "7"))
CONTEXT_SHARE = float(os.environ.get("DETECT_CONTEXT_SHARE", "0.1"))
CONTEXT = os.environ.get("DETECT_CONTEXT", "1") != "0"
# The screen (SegmentScreen): binary trees (none vs any event) on the SCREEN_FEATURES leading segment features (the
# spectral summaries; no voicing, no shape) that decide plainly-none segments before the rest is computed. Its
# threshold is the out-of-fold score under which SCREEN_MISS of the training segments labelled as events fall.
# DETECT_SCREEN_ROUNDS=0 trains without it.
SCREEN_FEATURES = 61
SCREEN_ROUNDS = int(os.environ.get("DETECT_SCREEN_ROUNDS", "40"))
SCREEN_MISS = float(os.environ.get("DETECT_SCREEN_MISS", "0.005"))
SCREEN = SCREEN_ROUNDS > 0
DROP_FEATURES = [f for name in os.environ.get("DETECT_DROP_FEATURES", "").split(",") if name
                 for f in {"voicing": VOICING_FEATURES, "shape": SHAPE_FEATURES}.get(name, [name])]


def r9(v):
    return float("%.9g" % v)


@functools.lru_cache(maxsize=None)
def withheld_columns():
    """Column indices of DETECT_DROP_FEATURES (checked once; the names come from the segment cache)."""
    names = D.segments(0)["names"]
    missing = [f for f in DROP_FEATURES if f not in names]
    if missing:
        raise SystemExit("DETECT_DROP_FEATURES: unknown feature(s) %s" % ", ".join(missing))
    return [names.index(f) for f in DROP_FEATURES]


def withheld(X):
    """X with the DETECT_DROP_FEATURES columns set to 0 (the same at fitting and at scoring)."""
    if not DROP_FEATURES:
        return X
    X = np.array(X, dtype=np.float64, copy=True)
    X[:, withheld_columns()] = 0
    return X


def fit(X, y, kind, weight=None):
    """`weight`: extra per-segment weights (training_set's last array); used by the trees."""
    X = withheld(X)
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    Z = (X - mean) / scale
    counts = np.bincount(y, minlength=len(C.CLASSES)).astype(float)
    w = (len(y) / (len(C.CLASSES) * np.maximum(counts, 1)))[y]
    if kind == "gbt":
        return fit_gbt(X, y, counts, weight)
    if kind == "lr":
        m = LogisticRegression(C=1.0, max_iter=3000)
        m.fit(Z, y, sample_weight=w)
        layers = [(m.coef_, m.intercept_)]
    else:
        # MLPClassifier has no sample weights: balance by deterministic resampling.
        # Each event class is resampled to EVENT_SHARE x the none count: 0.25 makes the four event classes
        # together as frequent as none (full balancing, 1.0, over-predicted events on nights, where most
        # segments are breathing and background).
        rng = np.random.default_rng(D.SEED)
        target = [int(counts[0])] + [int(EVENT_SHARE * counts[0])] * (len(C.CLASSES) - 1)
        idx = np.concatenate([rng.choice(np.nonzero(y == c)[0], target[c], replace=True)
                              for c in range(len(C.CLASSES)) if counts[c] > 0])
        m = MLPClassifier(hidden_layer_sizes=HIDDEN, alpha=1e-2, max_iter=300, random_state=0,
                          early_stopping=False)
        m.fit(Z[idx], y[idx])
        layers = [(W.T, b) for W, b in zip(m.coefs_, m.intercepts_)]
    if DROP_FEATURES:
        # Withheld inputs get zero first-layer weights, so the Swift scorer (which sees the real values) agrees.
        W0 = np.array(layers[0][0], dtype=np.float64, copy=True)
        W0[:, withheld_columns()] = 0
        layers[0] = (W0, layers[0][1])
    model = {"mean": [r9(v) for v in mean], "scale": [r9(v) for v in scale],
             "layers": [{"weights": [[r9(v) for v in row] for row in W], "bias": [r9(v) for v in b]}
                        for W, b in layers],
             "temperature": 1.0}
    return model


def fit_gbt(X, y, counts, extra=None, share=None, rounds=None, leaves=None):
    """Multi-class gradient-boosted trees (scikit-learn HistGradientBoostingClassifier, log loss; Friedman 2001,
    histogram splits as in LightGBM, Ke et al. 2017). Each event class is weighted to EVENT_SHARE x the none count
    (as the MLP's resampling). Exported node by node: the Swift TreeEnsembleClassifier walks the same trees."""
    w = np.ones(len(y)) if extra is None else np.array(extra, dtype=np.float64)
    none_weight = w[y == 0].sum()
    share = EVENT_SHARE if share is None else share
    for c in range(1, len(C.CLASSES)):
        if counts[c] > 0:
            w[y == c] *= share * none_weight / w[y == c].sum()
    m = HistGradientBoostingClassifier(max_iter=rounds or GBT_ROUNDS, learning_rate=GBT_RATE,
                                       max_leaf_nodes=leaves or GBT_LEAVES,
                                       min_samples_leaf=20, l2_regularization=1.0, early_stopping=False,
                                       random_state=0)
    m.fit(X, y, sample_weight=w)
    trees = []
    for rnd in m._predictors:
        for c, tree in enumerate(rnd):
            trees.append({"class": c, "nodes": tree_string(tree.nodes)})
    return {"kind": "gbt", "baseline": [r9(v) for v in m._baseline_prediction.ravel()], "trees": trees,
            "temperature": 1.0}


def fit_screen(X, y, extra=None):
    """The screen's trees: binary gradient boosting (logistic loss) of "any event" against none on the leading
    SCREEN_FEATURES columns, events weighted to the none total (every event segment matters: the screen may only
    drop plain backgrounds). Exported as a one-class ensemble: score = baseline + leaves (the log-odds of an event)."""
    X = withheld(X)[:, :SCREEN_FEATURES]
    w = np.ones(len(y)) if extra is None else np.array(extra, dtype=np.float64)
    event = y > 0
    w[event] *= w[~event].sum() / w[event].sum()
    m = HistGradientBoostingClassifier(max_iter=SCREEN_ROUNDS, learning_rate=0.1, max_leaf_nodes=GBT_LEAVES,
                                       min_samples_leaf=20, l2_regularization=1.0, early_stopping=False,
                                       random_state=0)
    m.fit(X, event.astype(int), sample_weight=w)
    trees = [{"class": 0, "nodes": tree_string(rnd[0].nodes)} for rnd in m._predictors]
    return {"kind": "gbt", "baseline": [r9(float(m._baseline_prediction.ravel()[0]))], "trees": trees}


def screen_scores(screen, X):
    """SegmentScreen.score of every row (float64, as the Swift walk sums it)."""
    return logits(screen, withheld(np.asarray(X, dtype=np.float64))[:, :SCREEN_FEATURES], False)[:, 0]


def screen_threshold(scores, y):
    """The score under which SCREEN_MISS of the event-labelled segments fall (rounded to 9 digits, as written)."""
    return r9(float(np.percentile(scores[y > 0], 100 * SCREEN_MISS)))


def fold_screens(X, y, folds, weight):
    """Fold k's screen (fitted without fold k) and its threshold (from the out-of-fold scores of the other folds'
    event segments, each scored by a screen that did not see it), for every fold, and every row's out-of-fold
    score; ({}, None) without a screen."""
    if not SCREEN:
        return {}, None
    screens = {k: fit_screen(X[folds != k], y[folds != k], weight[folds != k]) for k in range(C.N_FOLDS)}
    oof = np.zeros(len(y))
    for k in range(C.N_FOLDS):
        oof[folds == k] = screen_scores(screens[k], X[folds == k])
    return ({k: dict(screens[k], threshold=screen_threshold(oof[folds != k], y[folds != k])) for k in range(C.N_FOLDS)},
            oof)


def screened_rows(screens, X, folds):
    """Which rows fold k's screen decides none (every row is scored by its own fold's screen)."""
    out = np.zeros(len(X), bool)
    for k, scr in screens.items():
        m = folds == k
        if m.any():
            out[m] = screen_scores(scr, X[m]) < scr["threshold"]
    return out


def screen_section(screen, names):
    return {"features": list(names[:SCREEN_FEATURES]), "baseline": screen["baseline"], "trees": screen["trees"],
            "threshold": screen["threshold"]}


SCREENED = np.array([1.0, 0.0, 0.0, 0.0, 0.0])   # ClassProbabilities.screenedNone


def float32_floor(t):
    """The largest float32 <= t: for a float32 feature x, `x <= t` exactly when `x <= float32_floor(t)`."""
    f = np.float32(t)
    if float(f) > t:
        f = np.nextafter(f, np.float32(-np.inf), dtype=np.float32)
    return f


def tree_string(nd):
    """One tree as text, nodes in pre-order: a split is `x<feature><=<threshold>:<index of its right child>` (its
    left child is the next node), a leaf is its output. Thresholds are float32 (features are float32, so the
    comparison is unchanged); leaf outputs are float32 too (summed in float64 here and in Swift, so both agree
    exactly). Example: `x3<=0.25:4 x7<=-1.5:3 0.1 -0.2 0.3`."""
    out = []

    def emit(i):
        k = len(out)
        out.append(None)
        if nd["is_leaf"][i]:
            out[k] = np.format_float_positional(np.float32(nd["value"][i]), unique=True, trim="-")
            return
        emit(int(nd["left"][i]))
        right = len(out)
        emit(int(nd["right"][i]))
        threshold = np.format_float_positional(float32_floor(nd["num_threshold"][i]), unique=True, trim="-")
        out[k] = "x%d<=%s:%d" % (nd["feature_idx"][i], threshold, right)
    emit(0)
    return " ".join(out)


def parse_tree(text):
    """(feature, threshold-or-output, right) arrays of a tree string; feature -1 marks a leaf."""
    feat, val, right = [], [], []
    for tok in text.split():
        if tok.startswith("x"):
            f, rest = tok[1:].split("<=")
            t, r = rest.split(":")
            feat.append(int(f)); val.append(float(np.float32(t))); right.append(int(r))
        else:
            feat.append(-1); val.append(float(np.float32(tok))); right.append(0)
    return np.array(feat), np.array(val), np.array(right)


def libraries():
    """The versions the model was fitted with (a refit on other versions or another CPU matches its behaviour to
    about a point, not its trees: the scripts README's reproducibility check)."""
    import platform
    import scipy
    import sklearn
    return {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "machine": platform.machine()}


def model_description(kind):
    if kind == "gbt":
        return ("HistGradientBoostingClassifier(max_iter=%d, learning_rate=%g, max_leaf_nodes=%d, min_samples_leaf=20, "
                "l2_regularization=1.0), event classes weighted to %g x none" % (GBT_ROUNDS, GBT_RATE, GBT_LEAVES,
                                                                                 EVENT_SHARE))
    if kind == "mlp":
        return "MLPClassifier(hidden_layer_sizes=%s, alpha=1e-2), event classes resampled to %g x none" % (
            HIDDEN, EVENT_SHARE)
    return "LogisticRegression(C=1.0), balanced class weights"


def logits(model, X, segment_features=True):
    """The class scores before the softmax: NeuralSegmentClassifier / TreeEnsembleClassifier, in float64 numpy
    (`segment_features` False: a context-stage ensemble, whose inputs are never withheld)."""
    X = np.asarray(X, dtype=np.float64)
    if segment_features:
        X = withheld(X)
    if model.get("kind") == "gbt":
        z = np.tile(np.array(model["baseline"]), (len(X), 1))
        rows = np.arange(len(X))
        for t in model["trees"]:
            feat, val, right = parse_tree(t["nodes"])
            node = np.zeros(len(X), int)
            while True:
                f = feat[node]
                inner = f >= 0
                if not inner.any():
                    break
                x = X[rows, np.maximum(f, 0)]
                node = np.where(inner, np.where(x <= val[node], node + 1, right[node]), node)   # NaN goes right
            z[:, t["class"]] += val[node]
        return z
    h = (X - np.array(model["mean"])) / np.array(model["scale"])
    for i, layer in enumerate(model["layers"]):
        h = h @ np.array(layer["weights"]).T + np.array(layer["bias"])
        if i < len(model["layers"]) - 1:
            h = np.maximum(h, 0)
    return h


def softmax(z, temperature):
    z = z / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def predict(model, X, temperature=None):
    """The scorer of the Swift classifiers, in float64 numpy."""
    return softmax(logits(model, X), temperature if temperature is not None else model["temperature"])


def clip_predictions(P, scene_idx, n_scenes):
    """Clip label = the class of its most confident segment classified as an event with p >= 0.5 (coughing: 0.7,
    as `analyze` reports events), else none."""
    label = np.zeros(n_scenes, int)
    prob = np.zeros(n_scenes)
    for p, k in zip(P, scene_idx):
        c = int(np.argmax(p))
        if c > 0 and p[c] >= EVENT_PROBABILITY.get(c, MIN_PROBABILITY) and p[c] > prob[k]:
            label[k], prob[k] = c, p[c]
    return label, prob


def prf(truth, pred, c):
    tp = int(np.sum((truth == c) & (pred == c)))
    fp = int(np.sum((truth != c) & (pred == c)))
    fn = int(np.sum((truth == c) & (pred != c)))
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0), tp, fp, fn


def fit_temperature(P_logits_fn, y):
    best = (1e18, 1.0)
    for t in np.arange(0.5, 8.001, 0.05):
        P = P_logits_fn(t)
        nll = -np.mean(np.log(np.maximum(P[np.arange(len(y)), y], 1e-12)))
        best = min(best, (nll, round(float(t), 2)))
    return best[1]


def training_set(its):
    """All training segments: the clip scenes (two copies) and the night-like training scenes.
    Returns X, y, scene index (clip scenes; -1 for nights), source (0/1 copy, 2 nights), fold, signature and the
    extra sample weight of each segment (HARD_NEGATIVE_WEIGHT for the none segments of distractor-clip scenes)."""
    folds = np.array([i["fold"] for i in its])
    copies = [D.label_segments(D.segments(c), its) for c in (0, 1)]
    nx, ny, nf, nsig = D.label_night_segments(D.night_segments())
    X = np.concatenate([c[0] for c in copies] + [nx])
    y = np.concatenate([c[1] for c in copies] + [ny])
    sc = np.concatenate([c[2] for c in copies] + [np.full(len(ny), -1)])
    cp = np.concatenate([np.full(len(c[1]), k) for k, c in enumerate(copies)] + [np.full(len(ny), 2)])
    fold = np.concatenate([folds[c[2]] for c in copies] + [nf])
    sig = np.concatenate([c[3] for c in copies] + [nsig])
    distractor = np.array([it["cls"] == "none" and it["source"] in ("esc10_ccby", "snoring_khan") for it in its])
    w = np.ones(len(y))
    w[(sc >= 0) & (y == 0) & distractor[np.maximum(sc, 0)]] = HARD_NEGATIVE_WEIGHT
    return X, y, sc, cp, fold, sig, w


# ---------------------------------------------------------------- the context stage
CONTEXT_FEATURES = (["p_%s" % c for c in C.CLASSES] + ["log_duration"]
                    + ["before_p_%s" % c for c in C.CLASSES] + ["before_gap_s", "before_count"]
                    + ["after_p_%s" % c for c in C.CLASSES] + ["after_gap_s", "after_count"]
                    + ["around_p_%s" % c for c in C.CLASSES] + ["around_max_%s" % c for c in C.CLASSES[1:]]
                    + ["around_count"])


def context_features(scene, start, end, P):
    """SegmentContextModel.features of every segment (start / end in seconds, P = segment-model probabilities);
    neighbours are the other segments of the same scene. Rounded to float32 like the Swift inputs."""
    W, L = CONTEXT_WINDOW, CONTEXT_LONG_WINDOW
    F = np.zeros((len(P), len(CONTEXT_FEATURES)))
    dur_all = end - start

    def mean(p, d, m):
        return (p[m] * d[m, None]).sum(0) / d[m].sum() if m.any() else np.zeros(p.shape[1])
    for sc in np.unique(scene):
        idx = np.nonzero(scene == sc)[0]
        idx = idx[np.argsort(start[idx], kind="stable")]
        st, en, p, d = start[idx], end[idx], P[idx], dur_all[idx]
        pos = np.arange(len(idx))
        for a in range(len(idx)):
            before = (pos < a) & (en > st[a] - W)
            after = (pos > a) & (st < en[a] + W)
            around = (pos != a) & (en > st[a] - L) & (st < en[a] + L)
            gb = st[a] - en[a - 1] if a > 0 else L
            ga = st[a + 1] - en[a] if a + 1 < len(idx) else L
            mx = p[around, 1:].max(0) if around.any() else np.zeros(p.shape[1] - 1)
            F[idx[a]] = np.concatenate([p[a], [np.log(d[a])], mean(p, d, before), [min(gb, L), before.sum()],
                                        mean(p, d, after), [min(ga, L), after.sum()],
                                        mean(p, d, around), mx, [around.sum()]])
    return F.astype(np.float32).astype(np.float64)


def fold_models(X, y, folds, kind, weight):
    """The segment model of every cross-validation fold k, fitted without fold k."""
    return {k: fit(X[folds != k], y[folds != k], kind, weight[folds != k]) for k in range(C.N_FOLDS)}


def context_rows(its, models, temperature, screens=None):
    """Every segment of the clip scenes (both copies) and of the training nights, with its context features computed
    from OUT-OF-FOLD segment-model probabilities (fold k's segments scored by the model that never saw fold k; a
    segment fold k's screen decides none gets SCREENED, as in the detector).
    Returns F, y (-1: ambiguous night segment, not trained on), fold, source (0/1 copy, 2 nights), scene index and
    whether the row was screened (the detector decides such a segment none without the context stage)."""
    folds_it = np.array([i["fold"] for i in its])
    parts = []
    for c in (0, 1):
        data = D.segments(c)
        X, y, sc, _ = D.label_segments(data, its)
        parts.append((X, y, folds_it[sc], np.full(len(y), c), sc, sc + 1_000_000 * c,
                      np.array([[s["start"], s["end"]] for s in data["segments"]], dtype=np.float64).reshape(-1, 2)))
    nd = D.night_segments()
    segs = nd["segments"]
    X = np.array([s["features"] for s in segs], dtype=np.float32).astype(np.float64)
    sc = np.array([s["scene"] for s in segs], dtype=int)
    parts.append((X, D.night_labels(nd), np.array(nd["folds"], dtype=int)[sc], np.full(len(segs), 2), sc,
                  sc + 3_000_000, np.array([[s["start"], s["end"]] for s in segs], dtype=np.float64).reshape(-1, 2)))
    out = []
    for X, y, fold, cp, sc, group, times in parts:
        Z = np.zeros((len(y), len(C.CLASSES)))
        for k in range(C.N_FOLDS):
            Z[fold == k] = logits(models[k], X[fold == k])
        P = softmax(Z, temperature)
        screened = screened_rows(screens, X, fold) if screens else np.zeros(len(y), bool)
        P[screened] = SCREENED
        F = context_features(group, times[:, 0] / C.SR, times[:, 1] / C.SR, P)
        out.append((F, y, fold, cp, sc, screened))
    return tuple(np.concatenate([o[i] for o in out]) for i in range(6))


def fit_context(F, y):
    """The context stage's trees (labelled rows only)."""
    m = y >= 0
    counts = np.bincount(y[m], minlength=len(C.CLASSES)).astype(float)
    g = fit_gbt(F[m], y[m], counts, share=CONTEXT_SHARE, rounds=CONTEXT_ROUNDS, leaves=CONTEXT_LEAVES)
    return {"kind": "gbt", "baseline": g["baseline"], "trees": g["trees"]}


def context_section(ctx, temperature):
    return {"features": CONTEXT_FEATURES, "window": CONTEXT_WINDOW, "longWindow": CONTEXT_LONG_WINDOW,
            "baseline": ctx["baseline"], "trees": ctx["trees"], "temperature": temperature}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["gbt", "mlp", "lr"], default="gbt")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--write-to", metavar="DIR", default=None,
                    help="write the model and the parity inputs into DIR instead of Sources/ and Tests/ (blend.py)")
    args = ap.parse_args()

    its = D.items()
    n = len(its)
    truth = np.array([C.CLASSES.index(i["cls"]) for i in its])
    X, y, sc, cp, seg_fold, sig_all, weight = training_set(its)
    print("segments: %d (copy0 %d, copy1 %d, training nights %d); per class %s" % (
          len(y), np.sum(cp == 0), np.sum(cp == 1), np.sum(cp == 2),
          dict(zip(C.CLASSES, np.bincount(y, minlength=5).tolist()))))

    # Out-of-fold probabilities (the model of fold k never saw fold k's groups).
    models = fold_models(X, y, seg_fold, args.model, weight)
    Z = np.zeros((len(y), 5))
    for k in range(C.N_FOLDS):
        te = seg_fold == k
        Z[te] = logits(models[k], X[te])

    def oof(t):
        return softmax(Z, t)
    temperature = fit_temperature(oof, y)
    P = oof(temperature)
    print("temperature fitted on out-of-fold segments: %.2f" % temperature)
    report = {"model": args.model, "temperature": temperature, "copies": {}}
    screens, screen_oof = fold_screens(X, y, seg_fold, weight)
    if screens:
        # What the detector does: a segment its fold's screen decides none is none (the reports below include it).
        screened = screen_oof < np.array([screens[k]["threshold"] for k in range(C.N_FOLDS)])[seg_fold]
        called_event = (np.argmax(P, 1) > 0) & (P.max(1) >= MIN_PROBABILITY)
        wrongly = screened & (y > 0) & called_event
        P[screened] = SCREENED
        print("screen (%d rounds, miss %.3g): %.1f %% of none segments and %.2f %% of event segments screened; %d event "
              "segments the segment model called events were screened" % (
                  SCREEN_ROUNDS, SCREEN_MISS, 100 * screened[y == 0].mean(), 100 * screened[y > 0].mean(),
                  int(wrongly.sum())))
        report["screen"] = {"none_screened": round(float(screened[y == 0].mean()), 4),
                            "event_screened": round(float(screened[y > 0].mean()), 4)}

    if CONTEXT:
        # The context stage, out of fold as well: fold k's context features come from the segment model without
        # fold k, and its context trees are fitted without fold k.
        CF, cy, cfold, ccp, csc, cscreened = context_rows(its, models, temperature, screens)
        Z2 = np.zeros((len(cy), 5))
        for k in range(C.N_FOLDS):
            Z2[cfold == k] = logits(fit_context(CF[cfold != k], cy[cfold != k]), CF[cfold == k], False)
        labelled = cy >= 0
        context_temperature = fit_temperature(lambda t: softmax(Z2[labelled], t), cy[labelled])
        print("context stage: temperature fitted on out-of-fold segments: %.2f" % context_temperature)
        report["context_temperature"] = context_temperature
        for c in (0, 1):
            # Without the context stage, for comparison.
            m = cp == c
            label, _ = clip_predictions(P[m], sc[m], n)
            print("copy %d, segment model alone: F1 %s" % (c, " / ".join(
                "%s %.3f" % (C.CLASSES[ci], prf(truth, label, ci)[2]) for ci in range(1, 5))))
    # The reported probabilities: the context stage's when there is one (its rows: every segment), else the
    # segment model's.
    rP, ry, rcp, rsc = (softmax(Z2, context_temperature), cy, ccp, csc) if CONTEXT else (P, y, cp, sc)
    if CONTEXT:
        rP[cscreened] = SCREENED   # as in the detector: a screened segment stays none

    for c in (0, 1):
        m = rcp == c
        label, prob = clip_predictions(rP[m], rsc[m], n)
        print("\n== clip-level, copy %d (%s) ==" % (c, "moderate: SNR 12-35 dB, %g %% through a random microphone" % (100 * D.MIC_SHARE[0]) if c == 0 else
                                                   "hard: SNR %g-%g dB, %g %% band-limited, %g %% reverberant, %g %% through a random microphone" % (
                                                       D.HARD_SNR + (100 * D.CLIP_BAND_LIMIT, 100 * D.REVERB_SHARE, 100 * D.MIC_SHARE[1]))))
        res = {}
        for ci in range(1, 5):
            p, r, f, tp, fp, fn = prf(truth, label, ci)
            res[C.CLASSES[ci]] = {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
                                  "tp": tp, "fp": fp, "fn": fn}
            print("%-9s P %.3f R %.3f F1 %.3f  (tp %d fp %d fn %d)" % (C.CLASSES[ci], p, r, f, tp, fp, fn))
        # Talking without the Khan 'other' clips (that set contains people talking and TV news).
        keep = np.array([it["source"] != "snoring_khan" or it["cls"] != "none" for it in its])
        p, r, f, *_ = prf(truth[keep], label[keep], 2)
        print("talking without Khan 'other' negatives: P %.3f R %.3f F1 %.3f" % (p, r, f))
        res["talking_without_khan_other"] = {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}
        # The clip set before session 5 (without the Coswara breathing pieces), for comparison with earlier figures.
        keep = np.array([it["source"] != "coswara" for it in its])
        old = [prf(truth[keep], label[keep], ci)[2] for ci in range(1, 5)]
        print("without Coswara breathing clips: F1 %s" % " / ".join(
            "%s %.3f" % (C.CLASSES[ci], f) for ci, f in zip(range(1, 5), old)))
        res["f1_without_coswara"] = {C.CLASSES[ci]: round(f, 4) for ci, f in zip(range(1, 5), old)}
        # Distractors: share classified as none of the four.
        dis = {}
        for lab in sorted(set(it["label"] for it in its if it["cls"] == "none")):
            sel = np.array([it["label"] == lab for it in its])
            dis[lab] = round(float(np.mean(label[sel] == 0)), 3)
        print("share of negatives classified none:", dis)
        cm = np.zeros((5, 5), int)
        for t_, p_ in zip(truth, label):
            cm[t_, p_] += 1
        print("confusion (rows truth, cols predicted; %s):\n%s" % (C.CLASSES, cm))
        res["confusion"] = cm.tolist()
        res["negatives_classified_none"] = dis
        # Reliability of reported probabilities (clips reported as an event).
        rel = []
        for lo in (0.5, 0.6, 0.7, 0.8, 0.9):
            sel = (label > 0) & (prob >= lo) & (prob < lo + 0.1 + (1e-9 if lo == 0.9 else 0))
            if sel.sum():
                rel.append({"bin": [lo, round(lo + 0.1, 1)], "n": int(sel.sum()),
                            "mean_p": round(float(prob[sel].mean()), 3),
                            "accuracy": round(float(np.mean(truth[sel] == label[sel])), 3)})
        print("reliability:", rel)
        res["reliability"] = rel
        report["copies"][c] = res
    # Segment level on the night-like training scenes (out-of-fold).
    m = (rcp == 2) & (ry >= 0)
    pred = np.where(rP[m].max(axis=1) >= MIN_PROBABILITY, rP[m].argmax(axis=1), 0)
    print("\n== segment-level, training nights (out-of-fold) ==")
    res = {}
    for ci in range(1, 5):
        p, r, f, tp, fp, fn = prf(ry[m], pred, ci)
        res[C.CLASSES[ci]] = {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}
        print("%-9s P %.3f R %.3f F1 %.3f  (tp %d fp %d fn %d)" % (C.CLASSES[ci], p, r, f, tp, fp, fn))
    report["night_segments"] = res
    os.makedirs(C.WORK, exist_ok=True)
    json.dump(report, open(os.path.join(C.WORK, "cv-report-%s.json" % args.model), "w"), indent=1)

    if args.no_write:
        return
    final = fit(X, y, args.model, weight)
    final["temperature"] = temperature
    snore_sig = sig_all[(y == 1) & (cp < 2)]   # signature statistics from the clip scenes, as before
    sig_mean = snore_sig.mean(axis=0)
    sig_scale = snore_sig.std(axis=0)
    sig_scale[sig_scale < 1e-9] = 1.0
    kind = {"lr": "logistic", "mlp": "mlp", "gbt": "gbt"}[args.model]
    out = {"format": "sleepcycle-event-model-1", "kind": kind,
           "classes": C.CLASSES, "features": D.segments(0)["names"]}
    if kind == "gbt":
        out.update({"baseline": final["baseline"], "trees": final["trees"]})
    else:
        out.update({"mean": final["mean"], "scale": final["scale"], "layers": final["layers"]})
    if CONTEXT:
        context_final = fit_context(CF, cy)
        out["context"] = context_section(context_final, context_temperature)
    if SCREEN:
        screen_final = dict(fit_screen(X, y, weight), threshold=screen_threshold(screen_oof, y))
        out["screen"] = screen_section(screen_final, D.segments(0)["names"])
    out.update({"temperature": temperature,
           "signature": {"mean": [r9(v) for v in sig_mean], "scale": [r9(v) for v in sig_scale]},
           "training": {"script": "Benchmarks/Scripts/detection/train.py", "seed": D.SEED,
                        "segments": int(len(y)), "clips": n, "model": model_description(args.model),
                        "segmentation": "DetectorConfiguration.default, features 1024/512 at 16 kHz",
                        "libraries": libraries(),
                        "context": ("HistGradientBoostingClassifier(max_iter=%d, max_leaf_nodes=%d) on out-of-fold "
                                    "segment probabilities, event classes weighted to %g x none" % (
                                        CONTEXT_ROUNDS, CONTEXT_LEAVES, CONTEXT_SHARE)) if CONTEXT else None,
                        "screen": ("binary HistGradientBoostingClassifier(max_iter=%d, learning_rate=0.1, "
                                   "max_leaf_nodes=%d) on the first %d features, threshold at %g of the out-of-fold "
                                   "event segments" % (SCREEN_ROUNDS, GBT_LEAVES, SCREEN_FEATURES, SCREEN_MISS))
                                  if SCREEN else None}})
    inputs = parity_inputs(X, y, (CF, cy) if CONTEXT else None)
    if args.write_to:
        # One mix of a blend (blend.py): the model and the parity inputs go to the directory, not into Sources/.
        os.makedirs(args.write_to, exist_ok=True)
        write_model(out, os.path.join(args.write_to, "event-model.json"))
        np.savez(os.path.join(args.write_to, "parity-inputs.npz"), **inputs)
        if args.model == "gbt":
            # blend.py fits the blend's context stage on the blend of these (out-of-fold probabilities).
            write_model({str(k): m for k, m in models.items()}, os.path.join(args.write_to, "fold-models.json"))
        print("wrote", args.write_to)
        return
    write_model(out)
    write_parity(out, inputs)


def write_model(model, path=MODEL_PATH):
    with open(path, "w") as f:
        json.dump(model, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote", path)


def parity_inputs(X, y, context_rows=None):
    """The inputs of the parity fixture: a few real feature vectors (one per class, first and last in order), with
    the context stage (`context_rows` = its features and labels) the same for its rows, and a made-up run of
    segments with its context features."""
    def picks(labels):   # the first row of each class, then the last
        return ([int(np.nonzero(labels == c)[0][0]) for c in range(5)]
                + [int(np.nonzero(labels == c)[0][-1]) for c in range(5)])
    out = {"X": np.asarray(X[picks(y)])}
    if context_rows is not None:
        CF, cy = context_rows
        out["CF"] = np.asarray(CF[picks(cy)])
        # A made-up run of segments (times in seconds, segment-model probabilities) and its context features.
        rng = np.random.default_rng(D.SEED)
        gaps, lengths = rng.uniform(0.0, 6.0, 12), rng.uniform(0.15, 3.0, 12)
        start, end = np.zeros(12), np.zeros(12)
        for i in range(12):
            start[i] = round((end[i - 1] if i else 1.0) + gaps[i], 3)
            end[i] = round(start[i] + lengths[i], 3)
        Pr = rng.dirichlet(np.ones(5), 12)
        out.update({"run_start": start, "run_end": end, "run_p": Pr,
                    "run_features": context_features(np.zeros(12, int), start, end, Pr)})
    return out


def write_parity(model, inputs):
    """The parity fixture as a Swift test file: `inputs` (from `parity_inputs`) and the probabilities this script
    computes for them with `model` (the model file's JSON object, any of its stages): the Swift scorer must
    reproduce them."""
    lines = ["// Generated by Benchmarks/Scripts/detection/blend.py (train.py's writer) - do not edit.",
             "// Feature vectors (as printed by `sleepcycle detect-dev segment-features`) and the probabilities",
             "// the training script computes for them with the committed model.",
             "enum ModelParityVectors {"]

    def numbers(v, f32=False):
        return ", ".join(repr(float(np.float32(x))) if f32 else repr(float(x)) for x in v)

    def cases(name, F, Pr):
        lines.append("    static let %s: [(features: [Float], probabilities: [Double])] = [" % name)
        for f, pr in zip(F, Pr):
            lines.append("        ([%s],\n         [%s])," % (numbers(f, True), numbers(pr)))
        lines.append("    ]")
    X = inputs["X"]
    cases("cases", X, predict(model, X))
    if "context" in model:
        ctx = dict(model["context"], kind="gbt")
        cases("contextCases", inputs["CF"], softmax(logits(ctx, inputs["CF"], False), ctx["temperature"]))
        lines.append("    static let contextRun: [(start: Double, end: Double, probabilities: [Double], features: [Float])] = [")
        for i in range(len(inputs["run_start"])):
            lines.append("        (%r, %r, [%s],\n         [%s])," % (
                float(inputs["run_start"][i]), float(inputs["run_end"][i]), numbers(inputs["run_p"][i]),
                numbers(inputs["run_features"][i], True)))
        lines.append("    ]")
    if "screen" in model:
        # The screen's scores (log-odds of an event) of the same feature vectors, and its threshold.
        lines.append("    static let screenThreshold = %r" % float(model["screen"]["threshold"]))
        lines.append("    static let screenScores: [Double] = [%s]" % numbers(screen_scores(dict(model["screen"], kind="gbt"), X)))
    lines += ["}", ""]
    with open(PARITY_PATH, "w") as f:
        f.write("\n".join(lines))
    print("wrote", PARITY_PATH)


if __name__ == "__main__":
    sys.exit(main())
