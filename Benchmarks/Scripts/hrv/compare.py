#!/usr/bin/env python3
"""Time-domain HRV of sleepcycle (`sleepcycle hrv-dev`) against the reference libraries hrv-analysis and
neurokit2, on the shared vectors (../shared/data/hrv/, read in place, never copied) and on RR series generated here.

    swift build -c release --product sleepcycle
    python3 Benchmarks/Scripts/hrv/compare.py [--bin .build/release/sleepcycle] [--data ../shared/data/hrv]

Installs hrv-analysis and neurokit2 into a virtual environment of its own under $HRV_WORK (default
/tmp/sleepcycle-hrv-work) the first time; nothing is installed into the package. Prints, per series and metric,
sleepcycle's value, each library's and the largest difference. Conventions (docs: Task Force 1996): SDNN with n − 1
(both libraries); RMSSD over the n − 1 differences; pNN50 over the n − 1 differences (the contract's "over the
differences", as hrv-analysis; neurokit2 divides by the n intervals, so pNN50 is compared with hrv-analysis only);
SDSD with n − 1 in sleepcycle and neurokit2, n in hrv-analysis (np.std), so SDSD is compared with neurokit2 only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
WORK = os.environ.get("HRV_WORK", "/tmp/sleepcycle-hrv-work")


def venv_python():
    env = os.path.join(WORK, "venv")
    py = os.path.join(env, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", env], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "hrv-analysis", "neurokit2", "numpy", "pandas"], check=True)
        # hrv-analysis imports nolds, whose 0.6 releases fail to import their datasets on Python 3.11 here.
        subprocess.run([py, "-m", "pip", "install", "-q", "nolds==0.5.2"], check=True)
    return py


REFERENCE = r'''
import json, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")
from hrvanalysis import get_time_domain_features, get_frequency_domain_features
import neurokit2 as nk
out = {}
for path in sys.argv[1:]:
    nn = [float(x) for x in open(path) if x.strip() and not x.startswith("#")]
    a = get_time_domain_features(nn)
    fd = get_frequency_domain_features(nn)
    peaks = np.concatenate([[0], np.cumsum(nn)]).astype(float)      # ms at 1000 Hz
    k = nk.hrv_time(peaks, sampling_rate=1000)
    out[path] = {
        "hrv-analysis": {"meanNN": float(a["mean_nni"]), "sdnn": float(a["sdnn"]), "rmssd": float(a["rmssd"]),
                         "pnn50": float(a["pnni_50"]), "nn50": int(a["nni_50"]), "hrMean": float(a["mean_hr"]),
                         "lf": float(fd["lf"]), "hf": float(fd["hf"]), "vlf": float(fd["vlf"]),
                         "lfHfRatio": float(fd["lf_hf_ratio"])},
        "neurokit2": {"meanNN": float(k["HRV_MeanNN"][0]), "sdnn": float(k["HRV_SDNN"][0]),
                      "rmssd": float(k["HRV_RMSSD"][0]), "sdsd": float(k["HRV_SDSD"][0])},
    }
print(json.dumps(out))
'''


def generated(folder):
    """RR series made here: a resting night (60 bpm), a fast heart (110 bpm), an athlete's high variability."""
    import random
    series = []
    for name, mean, swing, noise, n in [("rest", 1000, 50, 20, 2000), ("fast", 545, 8, 6, 3000),
                                        ("variable", 1150, 120, 60, 1500)]:
        rnd = random.Random(name)
        values = [round(mean + swing * __import__("math").sin(i / 2.1) + rnd.gauss(0, noise), 1) for i in range(n)]
        path = os.path.join(folder, f"generated-{name}.txt")
        with open(path, "w") as f:
            f.write("\n".join(str(v) for v in values) + "\n")
        series.append(path)
    return series


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "sleepcycle"))
    p.add_argument("--data", default=os.path.join(os.path.dirname(ROOT), "shared", "data", "hrv"))
    a = p.parse_args()
    os.makedirs(WORK, exist_ok=True)
    folder = tempfile.mkdtemp(dir=WORK)
    files = [os.path.join(a.data, f) for f in ("hrv_analysis/test_nn_intervals.txt", "pyhrv/SampleNNISeriesLong.txt",
                                               "pyhrv/SampleNNISeriesShort.txt") if os.path.exists(os.path.join(a.data, f))]
    files += generated(folder)
    ours = {}
    for line in subprocess.run([a.bin, "hrv-dev"] + files, check=True, capture_output=True, text=True).stdout.splitlines():
        o = json.loads(line)
        ours[o["file"]] = o
    ref = json.loads(subprocess.run([venv_python(), "-c", REFERENCE] + files, check=True, capture_output=True,
                                    text=True).stdout)
    worst = {}
    print(f"{'series':<34} {'metric':<7} {'sleepcycle':>12} {'hrv-analysis':>13} {'neurokit2':>12}")
    for f in files:
        for metric in ("meanNN", "sdnn", "rmssd", "sdsd", "pnn50", "hrMean", "vlf", "lf", "hf", "lfHfRatio"):
            mine = ours[f][metric] if metric in ours[f] else ours[f].get("frequency", {}).get(metric)
            if mine is None:
                continue
            libs = [ref[f][lib].get(metric) for lib in ("hrv-analysis", "neurokit2")]
            shown = ["" if v is None else f"{v:.4f}" for v in libs]
            print(f"{os.path.basename(f):<34} {metric:<7} {mine:>12.4f} {shown[0]:>13} {shown[1]:>12}")
            for v in libs:
                if v is not None:
                    # Band powers and their ratio: relative difference; the rest: absolute (ms, %, bpm).
                    d = abs(mine - v) / abs(v) if metric in ("vlf", "lf", "hf", "lfHfRatio") and v else abs(mine - v)
                    worst[metric] = max(worst.get(metric, 0), d)
    print("largest difference:", ", ".join(f"{m} {d:.2g}" + (" (relative)" if m in ("vlf", "lf", "hf", "lfHfRatio") else "")
                                           for m, d in worst.items()))
    sessions(a.bin, files, ref, folder)


KUBIOS = r'''
import json, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")
import neurokit2 as nk
out = {}
for path in sys.argv[1:]:
    rr = [float(x) for x in open(path) if x.strip() and not x[0].isalpha()]
    peaks = np.concatenate([[0], np.cumsum(rr)]).round().astype(int)
    _, fixed = nk.signal_fixpeaks(peaks, sampling_rate=1000, method="Kubios", iterative=True, show=False)
    nn = np.diff(fixed).astype(float)
    out[path] = {"rmssd": float(np.sqrt(np.mean(np.diff(nn) ** 2))), "sdnn": float(np.std(nn, ddof=1))}
print(json.dumps(out))
'''


def summary(binary, path, *extra):
    out = subprocess.run([binary, "hr-session", path, "--window", "3600", "--emit-interval", "3600", *extra],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    return json.loads(out[-1])["metrics"]


def sessions(binary, files, ref, folder):
    """The session engine end to end (`hr-session`, what users run): its summary without artefact correction
    against hrv-analysis on the same series; then, on series with 1-5 % injected missed / extra / ectopic beats, the
    corrected summary's RMSSD against the clean series' and against neurokit2's Kubios correction
    (signal_fixpeaks, Lipponen & Tarvainen 2019)."""
    print()
    print("hr-session --no-artifact-correction, whole-series summary vs hrv-analysis")
    worst = {}
    for f in files:
        m = summary(binary, f, "--no-artifact-correction")
        r = ref[f]["hrv-analysis"]
        for key, lib in (("mean_nn_ms", "meanNN"), ("hr_sdnn_ms", "sdnn"), ("rmssd_ms", "rmssd"), ("pnn50", "pnn50"),
                         ("lf_hf", "lfHfRatio")):
            if m.get(key) is None:
                continue
            d = abs(m[key] - r[lib]) / abs(r[lib]) if key == "lf_hf" else abs(m[key] - r[lib])
            worst[key] = max(worst.get(key, 0), d)
        print(f"  {os.path.basename(f):<34} rmssd {m['rmssd_ms']:.3f} / {r['rmssd']:.3f}  sdnn {m['hr_sdnn_ms']:.3f} / "
              f"{r['sdnn']:.3f}  pnn50 {m['pnn50']:.3f} / {r['pnn50']:.3f}  lf/hf {m['lf_hf']:.4f} / {r['lfHfRatio']:.4f}")
    print("  largest difference (output rounded to 0.001):",
          ", ".join(f"{k} {v:.2g}" + (" (relative)" if k == "lf_hf" else "") for k, v in worst.items()))
    import math, random
    print()
    print("artefacts injected, hr-session (corrected) vs the clean series and neurokit2's Kubios correction")
    print(f"  {'series':<28} {'clean':>8} {'raw':>8} {'ours':>8} {'kubios':>8} {'ours err':>9}  corrected")
    bad_files, rows = [], []
    for seed in range(1, 4):
        rnd = random.Random(seed)
        clean = [950 + 35 * math.sin(i / 2.2) + 20 * math.sin(i / 40) + rnd.gauss(0, 12) for i in range(1500)]
        for share in (0.01, 0.03, 0.05):
            for kind in ("missed", "extra", "ectopic", "mixed"):
                out, i, made, spacing = [], 0, 0, int(1 / share)
                while i < len(clean):
                    k = kind if kind != "mixed" else ("missed", "extra", "ectopic")[made % 3]
                    if i % spacing == spacing // 2 and i + 1 < len(clean):
                        made += 1
                        if k == "missed":
                            out.append(clean[i] + clean[i + 1]); i += 2; continue
                        if k == "extra":
                            f = 0.25 + 0.5 * rnd.random(); out += [clean[i] * f, clean[i] * (1 - f)]; i += 1; continue
                        d = clean[i] * (0.25 + 0.1 * rnd.random()); out += [clean[i] - d, clean[i + 1] + d]; i += 2; continue
                    out.append(clean[i]); i += 1
                path = os.path.join(folder, f"artefacts-{kind}-{share}-{seed}.txt")
                with open(path, "w") as fh:
                    fh.write("\n".join(f"{x:.1f}" for x in out) + "\n")
                c = math.sqrt(sum((b - a) ** 2 for a, b in zip(clean, clean[1:])) / (len(clean) - 1))
                raw = math.sqrt(sum((b - a) ** 2 for a, b in zip(out, out[1:])) / (len(out) - 1))
                bad_files.append(path)
                rows.append((path, c, raw))
    kubios = json.loads(subprocess.run([venv_python(), "-c", KUBIOS] + bad_files, check=True, capture_output=True,
                                       text=True).stdout)
    errors, kerrors = [], []
    for path, c, raw in rows:
        m = summary(binary, path)
        e = abs(m["rmssd_ms"] - c) / c
        ke = abs(kubios[path]["rmssd"] - c) / c
        errors.append(e); kerrors.append(ke)
        print(f"  {os.path.basename(path)[10:-4]:<28} {c:8.2f} {raw:8.2f} {m['rmssd_ms']:8.2f} {kubios[path]['rmssd']:8.2f}"
              f" {100 * e:8.1f}%  {m['artifact_count']}")
    print(f"  RMSSD error vs the clean series: ours max {100 * max(errors):.1f} %, mean {100 * sum(errors) / len(errors):.1f} %;"
          f" Kubios (neurokit2) max {100 * max(kerrors):.1f} %, mean {100 * sum(kerrors) / len(kerrors):.1f} %")


if __name__ == "__main__":
    main()
