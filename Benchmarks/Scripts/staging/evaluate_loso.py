#!/usr/bin/env python3
"""Leave-one-subject-out evaluation of the sleepcycle staging model on the 24 development subjects.

    OMP_NUM_THREADS=1 python3 Benchmarks/Scripts/staging/evaluate_loso.py [--online] [--sets all|0,1,..]

For each input set (staging_model.INPUT_SETS) and each subject, trains on the other 23 exactly as train.py does
and stages the held-out night (whole-night Viterbi = what `sleepcycle stage` and the final
sleepStageIntervals do). With --online it also scores the causal per-epoch decision that SleepStager publishes
during a night (features from the epochs so far with a
30-min quiet prior on the count z-score and rank, HMM forward filter). Prints accuracy and Cohen's kappa for
4 classes (wake/light/deep/REM), 3 classes (wake/NREM/REM) and sleep/wake, and the 4-class confusion matrix
(rows = PSG, columns = predicted), pooled over all epochs.
"""
import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402

import numpy as np  # noqa: E402

import staging_model as sm  # noqa: E402
from train import fit  # noqa: E402


def kappa(y, p, k):
    cm = np.zeros((k, k))
    np.add.at(cm, (y, p), 1)
    n = cm.sum()
    po = np.trace(cm) / n
    pe = (cm.sum(0) * cm.sum(1)).sum() / n / n
    return po, (po - pe) / (1 - pe)


def three(a):
    return np.select([a == 0, (a == 1) | (a == 2), a == 3], [0, 1, 2])


def online_path(model, cols):
    """Causal decisions: epoch i sees epochs 0..i only (as SleepStager does), forward-filtered. The design row of
    epoch i is computed from epochs 0..i; the rows are then classified together (same numbers, one call)."""
    spec = [(f["kind"], f["input"], f["window"]) for f in model["features"]]
    A = np.array(model["transition"])
    rows = np.vstack([sm.design_matrix({k: np.asarray(v)[: i + 1] for k, v in cols.items()}, spec,
                                       quiet_count_prior=60, rows=[i])
                      for i in range(len(cols["time_hours"]))])
    E = sm.emission_log(model, sm.predict_proba(model, rows))
    belief = None
    out = []
    for e in E:
        pred = np.array(model["initial"]) if belief is None else belief @ A
        b = pred * np.exp(e - e.max())
        belief = b / b.sum()
        out.append(int(belief.argmax()))
    return np.array(out)


def report(name, y, p):
    a4, k4 = kappa(y, p, 4)
    a3, k3 = kappa(three(y), three(p), 3)
    a2, k2 = kappa((y > 0).astype(int), (p > 0).astype(int), 2)
    print(f"  {name:8s} 4-class acc {a4:.3f} kappa {k4:.3f} | wake/NREM/REM acc {a3:.3f} kappa {k3:.3f} "
          f"| sleep/wake acc {a2:.3f} kappa {k2:.3f}")
    cm = np.zeros((4, 4), dtype=int)
    np.add.at(cm, (y, p), 1)
    print("           confusion (rows PSG, cols predicted; " + " ".join(sm.STAGES) + ")")
    for s, row in zip(sm.STAGES, cm):
        print(f"           {s:6s} " + " ".join(f"{v:6d}" for v in row))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--online", action="store_true", help="also score the causal per-epoch decisions")
    ap.add_argument("--sets", default="0,2,3", help="indices into INPUT_SETS, or 'all' (default 0,2,3)")
    args = ap.parse_args()
    sets = range(len(sm.INPUT_SETS)) if args.sets == "all" else [int(s) for s in args.sets.split(",")]
    data = {s: sm.load_subject(s) for s in sm.SUBJECTS}
    for si in sets:
        inputs = sm.INPUT_SETS[si]
        ys, ps, os_ = [], [], []
        for s in sm.SUBJECTS:
            model = fit([data[t] for t in sm.SUBJECTS if t != s], inputs)
            cols, y = data[s]
            X = sm.design_matrix(cols, [(f["kind"], f["input"], f["window"]) for f in model["features"]])
            ys.append(y)
            ps.append(sm.viterbi(model, sm.predict_proba(model, X)))
            if args.online:
                os_.append(online_path(model, cols))
        print(f"inputs {','.join(inputs)} (LOSO, {len(sm.SUBJECTS)} subjects, {sum(map(len, ys))} epochs)")
        report("viterbi", np.concatenate(ys), np.concatenate(ps))
        if args.online:
            report("online", np.concatenate(ys), np.concatenate(os_))


if __name__ == "__main__":
    main()
