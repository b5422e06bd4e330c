#!/usr/bin/env python3
"""Train the built-in event classifier and report clip-level cross-validation.

    python3 Benchmarks/Scripts/detection/train.py [--model lr|mlp] [--no-write]

1. Builds a scene per clip (clip on a generated bedroom background; two augmented copies) and asks the Swift
   binary (`sleepcycle detect-dev segment-features`) for every candidate segment's features: the very code that
   runs inside `sleepcycle analyze`.
2. Group 5-fold cross-validation (groups: ESC fold, speaker, cough submission, Khan number blocks, synthetic
   blocks): clip-level precision / recall / F1 per class, reliability of the reported probabilities.
3. Fits the final model on everything, fits a softmax temperature on the out-of-fold probabilities, and writes
   Sources/EventDetection/Resources/event-model.json and Tests/EventDetectionTests/ModelParityVectors.swift.
Deterministic: sorted inputs, fixed seeds, single-threaded BLAS, weights rounded to 9 significant digits.
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import argparse
import json
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

import common as C
import dataset as D

MODEL_PATH = os.path.join(C.REPO, "Sources", "EventDetection", "Resources", "event-model.json")
PARITY_PATH = os.path.join(C.REPO, "Tests", "EventDetectionTests", "ModelParityVectors.swift")
MIN_PROBABILITY = 0.5
EVENT_SHARE = float(os.environ.get("DETECT_EVENT_SHARE", "0.25"))
HIDDEN = tuple(int(h) for h in os.environ.get("DETECT_HIDDEN", "64").split(","))


def r9(v):
    return float("%.9g" % v)


def fit(X, y, kind):
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    Z = (X - mean) / scale
    counts = np.bincount(y, minlength=len(C.CLASSES)).astype(float)
    w = (len(y) / (len(C.CLASSES) * np.maximum(counts, 1)))[y]
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
    model = {"mean": [r9(v) for v in mean], "scale": [r9(v) for v in scale],
             "layers": [{"weights": [[r9(v) for v in row] for row in W], "bias": [r9(v) for v in b]}
                        for W, b in layers],
             "temperature": 1.0}
    return model


def predict(model, X, temperature=None):
    """The scorer of NeuralSegmentClassifier.classify, in float64 numpy."""
    h = (np.asarray(X, dtype=np.float64) - np.array(model["mean"])) / np.array(model["scale"])
    for i, layer in enumerate(model["layers"]):
        h = h @ np.array(layer["weights"]).T + np.array(layer["bias"])
        if i < len(model["layers"]) - 1:
            h = np.maximum(h, 0)
    z = h / (temperature if temperature is not None else model["temperature"])
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def clip_predictions(P, scene_idx, n_scenes):
    """Clip label = the class of its most confident segment classified as an event with p >= 0.5, else none."""
    label = np.zeros(n_scenes, int)
    prob = np.zeros(n_scenes)
    for p, k in zip(P, scene_idx):
        c = int(np.argmax(p))
        if c > 0 and p[c] >= MIN_PROBABILITY and p[c] > prob[k]:
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
    Returns X, y, scene index (clip scenes; -1 for nights), source (0/1 copy, 2 nights), fold, signature."""
    folds = np.array([i["fold"] for i in its])
    copies = [D.label_segments(D.segments(c), its) for c in (0, 1)]
    nx, ny, nf, nsig = D.label_night_segments(D.night_segments())
    X = np.concatenate([c[0] for c in copies] + [nx])
    y = np.concatenate([c[1] for c in copies] + [ny])
    sc = np.concatenate([c[2] for c in copies] + [np.full(len(ny), -1)])
    cp = np.concatenate([np.full(len(c[1]), k) for k, c in enumerate(copies)] + [np.full(len(ny), 2)])
    fold = np.concatenate([folds[c[2]] for c in copies] + [nf])
    sig = np.concatenate([c[3] for c in copies] + [nsig])
    return X, y, sc, cp, fold, sig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["lr", "mlp"], default="mlp")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    its = D.items()
    n = len(its)
    truth = np.array([C.CLASSES.index(i["cls"]) for i in its])
    X, y, sc, cp, seg_fold, sig_all = training_set(its)
    print("segments: %d (copy0 %d, copy1 %d, training nights %d); per class %s" % (
          len(y), np.sum(cp == 0), np.sum(cp == 1), np.sum(cp == 2),
          dict(zip(C.CLASSES, np.bincount(y, minlength=5).tolist()))))

    # Out-of-fold probabilities (the model of fold k never saw fold k's groups).
    models = {}
    for k in range(C.N_FOLDS):
        tr = seg_fold != k
        models[k] = fit(X[tr], y[tr], args.model)

    def oof(t):
        P = np.zeros((len(y), 5))
        for k in range(C.N_FOLDS):
            te = seg_fold == k
            P[te] = predict(models[k], X[te], t)
        return P
    temperature = fit_temperature(oof, y)
    P = oof(temperature)
    print("temperature fitted on out-of-fold segments: %.2f" % temperature)

    report = {"model": args.model, "temperature": temperature, "copies": {}}
    for c in (0, 1):
        m = cp == c
        label, prob = clip_predictions(P[m], sc[m], n)
        print("\n== clip-level, copy %d (%s) ==" % (c, "moderate SNR 12-35 dB" if c == 0 else
                                                   "hard: SNR 5-20 dB, half band-limited"))
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
    m = cp == 2
    pred = np.where(P[m].max(axis=1) >= MIN_PROBABILITY, P[m].argmax(axis=1), 0)
    print("\n== segment-level, training nights (out-of-fold) ==")
    res = {}
    for ci in range(1, 5):
        p, r, f, tp, fp, fn = prf(y[m], pred, ci)
        res[C.CLASSES[ci]] = {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}
        print("%-9s P %.3f R %.3f F1 %.3f  (tp %d fp %d fn %d)" % (C.CLASSES[ci], p, r, f, tp, fp, fn))
    report["night_segments"] = res
    os.makedirs(C.WORK, exist_ok=True)
    json.dump(report, open(os.path.join(C.WORK, "cv-report-%s.json" % args.model), "w"), indent=1)

    if args.no_write:
        return
    final = fit(X, y, args.model)
    final["temperature"] = temperature
    snore_sig = sig_all[(y == 1) & (cp < 2)]   # signature statistics from the clip scenes, as before
    sig_mean = snore_sig.mean(axis=0)
    sig_scale = snore_sig.std(axis=0)
    sig_scale[sig_scale < 1e-9] = 1.0
    out = {"format": "sleepcycle-event-model-1", "kind": "logistic" if args.model == "lr" else "mlp",
           "classes": C.CLASSES, "features": D.segments(0)["names"],
           "mean": final["mean"], "scale": final["scale"], "layers": final["layers"],
           "temperature": temperature,
           "signature": {"mean": [r9(v) for v in sig_mean], "scale": [r9(v) for v in sig_scale]},
           "training": {"script": "Benchmarks/Scripts/detection/train.py", "seed": D.SEED,
                        "segments": int(len(y)), "clips": n,
                        "segmentation": "DetectorConfiguration.default, features 1024/512 at 16 kHz"}}
    with open(MODEL_PATH, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote", MODEL_PATH)
    write_parity(final, X, y)


def write_parity(model, X, y):
    """A few real feature vectors (one per class, first in order) and the script's probabilities, as a Swift
    test fixture: the Swift scorer must reproduce them."""
    picks = [int(np.nonzero(y == c)[0][0]) for c in range(5)] + [int(np.nonzero(y == c)[0][-1]) for c in range(5)]
    P = predict(model, X[picks])
    lines = ["// Generated by Benchmarks/Scripts/detection/train.py - do not edit.",
             "// Feature vectors (as printed by `sleepcycle detect-dev segment-features`) and the probabilities",
             "// the training script computes for them with the committed model.",
             "enum ModelParityVectors {",
             "    static let cases: [(features: [Float], probabilities: [Double])] = ["]
    for i, k in enumerate(picks):
        feats = ", ".join(repr(float(np.float32(v))) for v in X[k])
        probs = ", ".join(repr(float(v)) for v in P[i])
        lines.append("        ([%s],\n         [%s])," % (feats, probs))
    lines += ["    ]", "}", ""]
    open(PARITY_PATH, "w").write("\n".join(lines))
    print("wrote", PARITY_PATH)


if __name__ == "__main__":
    sys.exit(main())
