#!/usr/bin/env python3
"""Write the synthetic staging fixtures used by the Swift tests (no Walch data in them).

    python3 Benchmarks/Scripts/staging/make_fixture.py

Fixtures/staging/synthetic_<set>.csv: a made-up 8-hour night (960 epochs) with activity bursts, a heart-rate
feature with ~90-min cycles and the Walch time/cosine definitions; columns per input set.
Fixtures/staging/synthetic_<set>_expected.csv: `time_hours,stage` as predicted by staging_model.py with the
committed weights (Sources/Staging/Resources/staging_model.json). The Swift port must reproduce them exactly.
Regenerate after every train.py run.
"""
import json
import os

import numpy as np

import staging_model as sm

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../../.."))
SETS = {"full": ["time_hours", "count", "hr", "cosine", "circadian"],
        "nohr": ["time_hours", "count", "cosine"],
        "hr": ["time_hours", "count", "hr", "cosine"]}


def synthetic_night(n=960, seed=20260101):
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 30.0
    hours = t / 3600
    cycle = np.sin(2 * np.pi * hours / 1.5)
    count = np.maximum(0, rng.gamma(0.6, 8.0, n) * (1 + 3 * (hours < 0.4) + 3 * (hours > 7.6)) + 10 * (cycle > 0.8))
    count = np.round(np.convolve(count, np.ones(9) / 9, mode="same"), 6)
    hr = np.round(np.clip(0.35 + 0.25 * cycle + 0.05 * rng.standard_normal(n), 0.0, None), 6)
    circadian = np.round(np.maximum(-0.2, -0.002 * np.arange(n) + 0.05 * np.sin(hours)), 6)
    cosine = np.round(-np.cos(2 * np.pi * (t - 5 * 3600) / (24 * 3600)), 6)
    return {"time_hours": np.round(hours, 6), "count": count, "hr": hr, "cosine": cosine, "circadian": circadian}


def main():
    with open(os.path.join(ROOT, "Sources/Staging/Resources/staging_model.json")) as f:
        weights = json.load(f)
    night = synthetic_night()
    for name, cols in SETS.items():
        model = max((m for m in weights["models"] if set(m["inputs"]) <= set(cols)), key=lambda m: len(m["inputs"]))
        spec = [(f["kind"], f["input"], f["window"]) for f in model["features"]]
        path = sm.viterbi(model, sm.predict_proba(model, sm.design_matrix(night, spec)))
        base = os.path.join(ROOT, "Fixtures/staging", f"synthetic_{name}")
        with open(base + ".csv", "w") as f:
            f.write(",".join(cols) + "\n")
            for i in range(len(night["time_hours"])):
                f.write(",".join(f"{night[c][i]:.6f}" for c in cols) + "\n")
        with open(base + "_expected.csv", "w") as f:
            f.write("time_hours,stage\n")
            for i, s in enumerate(path):
                f.write(f"{night['time_hours'][i]:.6f},{sm.STAGES[s]}\n")
        print(base, np.bincount(path, minlength=4))


if __name__ == "__main__":
    main()
