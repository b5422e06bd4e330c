#!/usr/bin/env python3
"""Breathing-rate evaluation of the engine's BreathingRateEstimator (see README.md next to this file).

Runs the Swift estimator through `sleepcycle breathing-eval` (hidden subcommand; raw 16 kHz float32 in,
JSON lines out) on
  * synthetic breathing (band-passed noise bursts with inhale/exhale envelopes and rate jitter) at
    6-30 breaths/min in pink, brown and fan noise at SNR inf/20/10/5/0 dB,
  * a fast/slow and asymmetry set (4-40 breaths/min; inhale only, exhale 0.25-1x, heart sounds, noise,
    30-s clips) with halved/doubled answers counted per condition,
  * negatives (white/pink/brown/fan noise, silence, heart sounds alone) that must get no value,
  * ICBHI chest recordings (manifest bpm), Coswara deep breathing (no labels).
Nothing from shared/data is written into the repository: audio is converted into a temporary directory.
"""
import argparse, csv, json, math, os, statistics, subprocess, sys, tempfile

import numpy as np
import scipy.signal as sps
import soundfile as sf

FS = 16000


def pink(n, rng, exponent=1.0):
    """Noise with power spectrum ~ 1/f**exponent (1 = pink, 2 = brown), by spectral shaping."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / FS)
    f[0] = f[1]
    spec /= f ** (exponent / 2)
    x = np.fft.irfft(spec, n)
    return x / np.std(x)


def fan(n, rng):
    """Fan: low-passed broadband noise, a motor hum with harmonics, blade-rate amplitude ripple."""
    t = np.arange(n) / FS
    b, a = sps.butter(2, 1200 / (FS / 2))
    x = sps.lfilter(b, a, rng.standard_normal(n))
    hum = rng.uniform(45, 120)
    x += 0.3 * np.std(x) * sum(np.sin(2 * np.pi * k * hum * t + rng.uniform(0, 6)) / k for k in (1, 2, 3))
    x *= 1 + 0.1 * np.sin(2 * np.pi * rng.uniform(15, 30) * t)
    return x / np.std(x)


NOISES = {"pink": lambda n, r: pink(n, r, 1.0), "brown": lambda n, r: pink(n, r, 2.0), "fan": fan,
          "white": lambda n, r: r.standard_normal(n), "heart": lambda n, r: heart(n, r),
          "heart+pink": lambda n, r: heart(n, r) + 0.3 * pink(n, r, 1.0)}


def breathing(duration, bpm, rng, jitter=0.08, exhale_gain=None, max_burst=None, even=False, alternate_db=0,
              deep_brighter=False, long_exhale=False):
    """Breath sounds at `bpm` with per-cycle jitter. Returns (signal, cycle onsets in s, periods in s).

    Each cycle: inhale (35-45 % of the cycle) then exhale (40-50 %), then a pause. Each phase is
    band-passed noise with a raised-sine envelope; inhale and exhale differ in band and level (exhale
    0.4-0.9 x inhale unless `exhale_gain` is given; 0 = inhale-only), as recorded breathing does.
    `max_burst` (s) caps each burst's length, so slow breathing has long pauses between short breaths.
    `even`: inhale and exhale each 40 % of the cycle, the exhale starting half a cycle after the inhale
    (evenly spaced bursts), the inhale bright (band within 700-2500 Hz) and the exhale dark (200-750 Hz).
    `alternate_db`: every other breath that many dB shallower; `deep_brighter`: the deep breaths' inhale band
    an octave higher (more flow, more hiss). `long_exhale`: inhale 25-30 % of the cycle, then after a 2-8 % pause
    an exhale of 50-60 % (the resting inhale:exhale ratio of about 1:2)."""
    n = int(duration * FS)
    out = np.zeros(n)
    if even:
        inhale_band = sorted(rng.uniform([700, 1800], [900, 2500]))
        exhale_band = sorted(rng.uniform([200, 600], [300, 750]))
    else:
        inhale_band = sorted(rng.uniform([250, 1500], [500, 3500]))
        exhale_band = sorted(rng.uniform([150, 800], [350, 2000]))
    bi = sps.butter(2, [inhale_band[0] / (FS / 2), inhale_band[1] / (FS / 2)], "band")
    be = sps.butter(2, [exhale_band[0] / (FS / 2), exhale_band[1] / (FS / 2)], "band")
    bright = sps.butter(2, [min(2 * inhale_band[0], 3000) / (FS / 2), min(2 * inhale_band[1], 7000) / (FS / 2)], "band")
    if exhale_gain is None:
        exhale_gain = rng.uniform(0.4, 0.9)
    t, onsets, periods = rng.uniform(0, 60 / bpm), [], []
    while t < duration:
        period = 60 / bpm * max(0.6, 1 + jitter * rng.standard_normal())
        ti = period * rng.uniform(0.35, 0.45)
        te = period * rng.uniform(0.40, 0.50)
        if even:
            ti = te = 0.4 * period
        # Drawn only for this option, so that the other conditions keep their random draws.
        pause = period * rng.uniform(0.02, 0.08) if long_exhale else 0.0
        if long_exhale:
            ti, te = period * rng.uniform(0.25, 0.30), period * rng.uniform(0.50, 0.60)
        if max_burst is not None:
            ti, te = min(ti, max_burst * rng.uniform(0.8, 1.0)), min(te, 1.2 * max_burst * rng.uniform(0.8, 1.0))
        # Evenly spaced: the exhale half a cycle after the inhale, unless `max_burst` shortened the inhale.
        exhale_start = t + (0.5 * period if even and ti >= 0.4 * period else ti + pause)
        shallow = alternate_db and len(onsets) % 2 == 1
        depth = 10 ** (-alternate_db / 20) if shallow else 1.0
        inhale_filter = bright if deep_brighter and not shallow else bi
        for (start, length, (b, a), gain) in ((t, ti, inhale_filter, depth), (exhale_start, te, be, depth * exhale_gain)):
            i0, m = int(start * FS), int(length * FS)
            if i0 >= n or m < 8 or gain == 0:
                continue
            m = min(m, n - i0)
            burst = sps.lfilter(b, a, rng.standard_normal(m))
            env = np.sin(np.pi * np.arange(m) / int(length * FS)) ** 2
            out[i0:i0 + m] += gain * burst * env
        onsets.append(t); periods.append(period)
        t += period
    return out, np.array(onsets), np.array(periods)


def heart(n, rng, bpm=None):
    """Heart sounds as a microphone or stethoscope hears them: per beat S1 (a damped 30-150 Hz thump with a
    little band-passed noise up to ~400 Hz, 60-100 ms) and S2 (shorter, higher, 0.3 s later), at `bpm`
    (default U(50, 90)) with 3 % beat-to-beat variation. Unit RMS."""
    bpm = bpm or rng.uniform(50, 90)
    out = np.zeros(n)
    bn = sps.butter(2, [40 / (FS / 2), 400 / (FS / 2)], "band")
    t = rng.uniform(0, 60 / bpm)
    while t < n / FS:
        for (offset, f0, length, level) in ((0.0, rng.uniform(30, 80), 0.09, 1.0),
                                            (0.30, rng.uniform(60, 150), 0.06, 0.7)):
            i0, m = int((t + offset) * FS), int(length * FS)
            if i0 + m >= n:
                continue
            k = np.arange(m) / FS
            thump = np.sin(2 * np.pi * f0 * k) * np.exp(-k / (length / 3))
            noise = sps.lfilter(*bn, rng.standard_normal(m)) * np.exp(-k / (length / 4))
            out[i0:i0 + m] += level * (thump + 0.3 * noise / (np.std(noise) + 1e-12))
        t += 60 / bpm * (1 + 0.03 * rng.standard_normal())
    return out / (np.std(out) + 1e-12)


def band_power(x):
    b, a = sps.butter(4, [100 / (FS / 2), 4000 / (FS / 2)], "band")
    return float(np.mean(sps.lfilter(b, a, x) ** 2))


def run_engine(binary, files, channels=1, extra=()):
    cmd = binary + ["--channels", str(channels), *extra, *files]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


# `--codec`: every signal goes through a recorder's lossy file before the estimator hears it (upsampled to the
# recorder's rate, encoded and decoded by libsndfile as `analyze` decodes it, then back to 16 kHz). Compression
# levels are libsndfile's (0 best, 1 smallest).
CODECS = {
    # A phone's voice-memo MP3: 44.1 kHz, LAME at a constant 56 kbps.
    "mp3": (44100, "mp3", dict(format="MP3", subtype="MPEG_LAYER_III", compression_level=0.9,
                               bitrate_mode="CONSTANT")),
    # A messaging app's voice note: Ogg Opus at 48 kHz, about 24 kbps (variable).
    "opus": (48000, "opus", dict(format="OGG", subtype="OPUS", compression_level=0.9)),
}
CODEC = None


def coded(x, path):
    """`x` (16 kHz) after a round trip through the file format CODEC names, written beside `path`."""
    rate, ext, kw = CODECS[CODEC]
    g = math.gcd(rate, FS)
    up = sps.resample_poly(np.asarray(x, dtype=np.float64), rate // g, FS // g)
    peak = max(1.0, float(np.max(np.abs(up)))) if len(up) else 1.0   # the file holds -1..1; the scale is undone
    coded_path = path + "." + ext
    sf.write(coded_path, (up / peak).astype(np.float32), rate, **kw)
    y, fs = sf.read(coded_path, dtype="float64")
    os.remove(coded_path)
    g = math.gcd(fs, FS)
    y = sps.resample_poly(y, FS // g, fs // g) * peak
    return y[:len(x)] if len(y) >= len(x) else np.concatenate([y, np.zeros(len(x) - len(y))])


def write_f32(path, x):
    if CODEC:
        x = coded(x, path)
    np.asarray(x, dtype="<f4").tofile(path)


def expected_windows(duration, window, hop):
    return 1 if duration < window else int((duration - window) // hop) + 1


def octave(est, truth):
    """'halved', 'doubled' or None: the octave errors counted explicitly."""
    q = est / truth
    return "halved" if abs(q - 0.5) < 0.1 else "doubled" if abs(q - 2) < 0.2 else None


def window_truth(e, r, onsets, periods, window):
    half = min(window, r["durationSec"]) / 2
    sel = (onsets >= e["timeSec"] - half) & (onsets < e["timeSec"] + half)
    return 60 / np.mean(periods[sel]) if sel.any() else 60 / np.mean(periods)


# The fast/slow and asymmetry set: condition -> (exhale gain, background, SNR dB, duration s).
FASTSLOW_RATES = [4, 5, 8, 12, 18, 26, 34, 40]
FASTSLOW = {
    "inhale only": (0.0, None, None, 150),
    "exhale 0.25x": (0.25, None, None, 150),
    "exhale 0.5x": (0.5, None, None, 150),
    "exhale 1x (equal)": (1.0, None, None, 150),
    "heart thumps, exhale 0.5x": (0.5, "heart", 0, 150),
    "heart thumps, inhale only": (0.0, "heart", 0, 150),
    "pink 5 dB, exhale 0.25x": (0.25, "pink", 5, 150),
    "30-s clip, exhale 0.25x": (0.25, None, None, 30),
    "30-s clip, inhale only, pink 10 dB": (0.0, "pink", 10, 30),
    # Appended last so that the conditions above keep their random draws.
    "equal bursts evenly spaced, bright inhale / dark exhale": (1.0, None, None, 150, {"even": True}),
    "alternate breaths 8 dB shallower, exhale 0.5x": (0.5, None, None, 150, {"alternate_db": 8}),
    "alternate breaths 8 dB shallower and darker, exhale 0.5x": (0.5, None, None, 150,
                                                                 {"alternate_db": 8, "deep_brighter": True}),
    "inhale:exhale 1:2, exhale 10 dB quieter": (10 ** (-10 / 20), None, None, 150, {"long_exhale": True}),
    "inhale:exhale 1:2, exhale 16 dB quieter": (10 ** (-16 / 20), None, None, 150, {"long_exhale": True}),
    "inhale:exhale 1:2, exhale 10 dB quieter, white 30 dB": (10 ** (-10 / 20), "white", 30, 150, {"long_exhale": True}),
    "inhale:exhale 1:2, exhale 16 dB quieter, pink 25 dB": (10 ** (-16 / 20), "pink", 25, 150, {"long_exhale": True}),
}


def fastslow(binary, tmp, args, rng):
    jobs = []
    for cond, (gain, noise, snr, duration, *options) in FASTSLOW.items():
        for bpm in FASTSLOW_RATES:
            for rep in range(args.reps):
                true_bpm = bpm * rng.uniform(1.0, 1.05)
                # Slow breaths are short bursts with long pauses; fast ones fill the cycle.
                x, onsets, periods = breathing(duration, true_bpm, rng, exhale_gain=gain,
                                               max_burst=rng.uniform(1.8, 3.0), **(options[0] if options else {}))
                x *= 0.05 / np.sqrt(np.mean(x ** 2))
                if noise is not None:
                    v = NOISES[noise](len(x), rng)
                    # Heart thumps: SNR over the whole band (they sit below the breath band but are loud).
                    power = (lambda y: float(np.mean(y ** 2))) if noise == "heart" else band_power
                    v *= np.sqrt(power(x) / power(v) / 10 ** (snr / 10))
                    x = x + v
                path = os.path.join(tmp, f"fs_{len(jobs)}.f32")
                write_f32(path, x)
                jobs.append((path, cond, bpm, onsets, periods, duration))
    results = {r["file"]: r for r in run_engine(binary, [j[0] for j in jobs])}
    print("\n## Fast/slow breathing and inhale/exhale asymmetry (%d reps x rates %s)" % (args.reps, FASTSLOW_RATES))
    print("Windows: those with at least three breaths (60/bpm*3 <= window or clip length). halved = |est/true - 0.5| < 0.1,\n"
          "doubled = |est/true - 2| < 0.2.\n")
    print("| condition | MAE (bpm) | answered | halved | doubled | off > 3 (other) | windows |\n|---|---:|---:|---:|---:|---:|---:|")
    total = {"errs": [], "ans": 0, "win": 0, "halved": 0, "doubled": 0, "other": 0}
    per_rate, bad = {}, []
    for cond in FASTSLOW:
        c = {"errs": [], "ans": 0, "win": 0, "halved": 0, "doubled": 0, "other": 0}
        for path, k, bpm, onsets, periods, duration in jobs:
            if k != cond:
                continue
            r = results[path]
            span = min(duration, args.window)
            if 3 * 60 / bpm > span * 0.95:
                windows = 0       # fewer than three breaths: refusing is right
            else:
                windows = expected_windows(r["durationSec"], args.window, args.hop)
            pr = per_rate.setdefault(bpm, {"ans": 0, "win": 0, "halved": 0, "doubled": 0, "errs": []})
            c["win"] += windows; pr["win"] += windows
            for e in r["estimates"]:
                truth = window_truth(e, r, onsets, periods, args.window)
                err = abs(e["bpm"] - truth)
                kind = octave(e["bpm"], truth)
                c["errs"].append(err); pr["errs"].append(err)
                c["ans"] += 1; pr["ans"] += 1
                if kind:
                    c[kind] += 1; pr[kind] += 1
                elif err > 3:
                    c["other"] += 1
                if err > 3:
                    bad.append(f"{cond} rate {bpm}: t={e['timeSec']:.0f}s truth {truth:.1f} est {e['bpm']:.1f} "
                               f"conf {e['confidence']:.2f} ({kind or 'other'})")
        for key in total:
            total[key] += c[key]
        mae = f"{np.mean(c['errs']):.2f}" if c["errs"] else "-"
        ans = f"{c['ans'] / c['win']:.2f}" if c["win"] else f"({c['ans']})"
        print(f"| {cond} | {mae} | {ans} | {c['halved']} | {c['doubled']} | {c['other']} | {c['win']} |")
    mae = f"{np.mean(total['errs']):.2f}" if total["errs"] else "-"
    print(f"| **all** | **{mae}** | **{total['ans'] / total['win']:.2f}** | **{total['halved']}** | "
          f"**{total['doubled']}** | {total['other']} | {total['win']} |")
    print("\n| rate (bpm) | MAE | answered | halved | doubled |\n|---:|---:|---:|---:|---:|")
    for bpm in FASTSLOW_RATES:
        pr = per_rate[bpm]
        mae = f"{np.mean(pr['errs']):.2f}" if pr["errs"] else "-"
        ans = f"{pr['ans'] / pr['win']:.2f}" if pr["win"] else f"({pr['ans']})"
        print(f"| {bpm} | {mae} | {ans} | {pr['halved']} | {pr['doubled']} |")
    print(f"\nestimatorCpuSec over the set: {sum(r['estimatorCpuSec'] for r in results.values()):.3f} s for "
          f"{sum(r['durationSec'] for r in results.values()) / 3600:.2f} h of audio")
    if args.verbose:
        print("\n".join(bad))


def synthetic(binary, tmp, args, rng):
    rates = [6, 9, 12, 15, 18, 24, 30]
    snrs = [None, 20, 10, 5, 0]
    jobs = []
    for noise in ("pink", "brown", "fan"):
        for snr in snrs:
            for bpm in rates:
                for rep in range(args.reps):
                    x, onsets, periods = breathing(args.duration, bpm * rng.uniform(1.0, 1.05), rng)
                    x *= 0.05 / np.sqrt(np.mean(x ** 2))
                    if snr is not None:
                        v = NOISES[noise](len(x), rng)
                        v *= np.sqrt(band_power(x) / band_power(v) / 10 ** (snr / 10))
                        x = x + v
                    path = os.path.join(tmp, f"syn_{noise}_{snr}_{bpm}_{rep}.f32")
                    write_f32(path, x)
                    jobs.append((path, noise, snr, bpm, onsets, periods))
    results = {r["file"]: r for r in run_engine(binary, [j[0] for j in jobs])}
    rows, bad = {}, []
    for path, noise, snr, bpm, onsets, periods in jobs:
        r = results[path]
        key = (noise, "clean" if snr is None else f"{snr} dB")
        errs, answered = rows.setdefault(key, ([], [0, 0, 0, 0]))
        answered[1] += expected_windows(r["durationSec"], args.window, args.hop)
        for e in r["estimates"]:
            truth = window_truth(e, r, onsets, periods, args.window)
            errs.append(abs(e["bpm"] - truth))
            answered[0] += 1
            kind = octave(e["bpm"], truth)
            if kind:
                answered[2 if kind == "halved" else 3] += 1
            if abs(e["bpm"] - truth) > 3:
                bad.append(f"{os.path.basename(path)} t={e['timeSec']:.0f}s truth {truth:.1f} est {e['bpm']:.1f} "
                           f"conf {e['confidence']:.2f}")
    print("\n## Synthetic breathing (%d s, %d reps x %d rates per cell)" % (args.duration, args.reps, len(rates)))
    print("| noise | SNR | MAE (bpm) | answered | halved | doubled | windows |\n|---|---|---:|---:|---:|---:|---:|")
    all_errs, all_ans = [], [0, 0, 0, 0]
    for (noise, snr), (errs, ans) in rows.items():
        all_errs += errs
        for i in range(4):
            all_ans[i] += ans[i]
        mae = f"{np.mean(errs):.2f}" if errs else "-"
        print(f"| {noise} | {snr} | {mae} | {ans[0] / ans[1]:.2f} | {ans[2]} | {ans[3]} | {ans[1]} |")
    print(f"| **all** | | **{np.mean(all_errs):.2f}** | **{all_ans[0] / all_ans[1]:.2f}** | **{all_ans[2]}** | "
          f"**{all_ans[3]}** | {all_ans[1]} |")
    big = sum(1 for e in all_errs if e > 3)
    print(f"\nEstimates off by > 3 bpm: {big} of {len(all_errs)}")
    if args.verbose:
        print("\n".join(bad))


KINDS = ("white", "pink", "brown", "fan", "silence", "heart", "heart+pink")


def negatives(binary, tmp, args, rng):
    jobs = []
    for kind in KINDS:
        for rep in range(3 * args.reps):
            n = int(args.duration * FS)
            x = np.zeros(n) if kind == "silence" else 0.05 * NOISES[kind](n, rng)
            path = os.path.join(tmp, f"neg_{kind}_{rep}.f32")
            write_f32(path, x)
            jobs.append((path, kind))
    results = {r["file"]: r for r in run_engine(binary, [j[0] for j in jobs])}
    print("\n## No rhythm (must give no value)\n| input | windows | answered (false) |\n|---|---:|---:|")
    for kind in KINDS:
        sel = [results[p] for p, k in jobs if k == kind]
        windows = sum(expected_windows(r["durationSec"], args.window, args.hop) for r in sel)
        answered = sum(len(r["estimates"]) for r in sel)
        print(f"| {kind} | {windows} | {answered} |")


def load(path):
    x, fs = sf.read(path, dtype="float32", always_2d=True)
    if fs != FS:
        raise SystemExit(f"{path}: expected {FS} Hz, found {fs} Hz")
    return x.mean(axis=1)


def real_sets(binary, tmp, args):
    manifest = os.path.join(args.data, "manifest.csv")
    rows = list(csv.DictReader(open(manifest)))
    icbhi = [r for r in rows if r["subset"] == "icbhi_stethoscope"]
    cos = [r for r in rows if r["subset"] == "coswara_breathing_deep"]
    files = {}
    for r in icbhi + cos:
        p = os.path.join(tmp, os.path.basename(r["path"]) + ".f32")
        write_f32(p, load(os.path.join(args.data, r["path"])))
        files[r["path"]] = p
    res = {r["file"]: r for r in run_engine(binary, list(files.values()))}

    print("\n## ICBHI (chest stethoscope; one window per file, all files < window)")
    print("References: `bpm` = manifest (60/mean cycle length, pulled up by edge-cut first/last cycles),\n"
          "`onsets` = manifest bpm_from_onsets, `full` = 60/mean length of the annotated cycles without the\n"
          "first and last one (the cycles that lie wholly inside the recording).\n")
    print("| file | bpm | onsets | full | estimate | conf |\n|---|---:|---:|---:|---:|---:|")
    errs = {"bpm": [], "onsets": [], "full": []}
    groups, answered, octaves = {}, 0, []
    for r in icbhi:
        est = res[files[r["path"]]]["estimates"]
        cycles = np.loadtxt(os.path.join(args.data, r["annotation"]), ndmin=2)
        lengths = cycles[:, 1] - cycles[:, 0]
        full = 60 / np.mean(lengths[1:-1] if len(lengths) > 2 else lengths)
        refs = {"bpm": float(r["bpm"]), "onsets": float(r["bpm_from_onsets"]), "full": full}
        name = os.path.basename(r["path"])
        group = name[:7] if name.startswith(("106_2b1", "107_2b3")) else name
        cell = "- | -"
        if est:
            e = est[0]
            answered += 1
            for k, v in refs.items():
                errs[k].append(abs(e["bpm"] - v))
            groups.setdefault(group, []).append(abs(e["bpm"] - full))
            if octave(e["bpm"], full):
                octaves.append(f"{name}: {e['bpm']:.1f} for {full:.1f} ({octave(e['bpm'], full)})")
            cell = f"{e['bpm']:.1f} | {e['confidence']:.2f}"
        print(f"| {name} | {refs['bpm']:.1f} | {refs['onsets']:.1f} | {full:.1f} | {cell} |")
    print(f"\nICBHI answered {answered}/{len(icbhi)} files ({answered / len(icbhi):.2f}).")
    if answered:
        for k, v in errs.items():
            print(f"MAE vs {k}: {np.mean(v):.2f} bpm (median {np.median(v):.2f}, max {np.max(v):.2f})")
        gm = np.mean([np.mean(v) for v in groups.values()])
        print(f"MAE vs full over {len(groups)} independent recordings (multichannel duplicates averaged): {gm:.2f}")
    print(f"Halved/doubled vs full: {len(octaves)}" + "".join(f"\n  {o}" for o in octaves))
    print("\n## Coswara deep breathing (no labels)")
    bpms, n = [], 0
    for r in cos:
        est = res[files[r["path"]]]["estimates"]
        n += 1
        bpms += [e["bpm"] for e in est[:1]]
    print(f"answered {len(bpms)}/{n} ({len(bpms) / n:.2f}); rates: " +
          (f"min {min(bpms):.1f}, quartiles {np.percentile(bpms, 25):.1f} / {np.median(bpms):.1f} / "
           f"{np.percentile(bpms, 75):.1f}, max {max(bpms):.1f}" if bpms else "none"))
    durs = [float(r["duration_s"]) for r in cos]
    print(f"(durations {min(durs):.1f}-{max(durs):.1f} s; files < 6 s are never analysed)")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(os.path.join(here, "..", "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=f"{root}/.build-breathing/release/sleepcycle breathing-eval",
                    help="command that runs the estimator (default: %(default)s)")
    ap.add_argument("--data", default="/work/shared/data/breathing")
    ap.add_argument("--duration", type=float, default=150, help="synthetic signal length (s)")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--window", type=float, default=60)
    ap.add_argument("--hop", type=float, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--envelope", choices=["features", "audio"], default="features",
                    help="envelope input of the estimator (default: %(default)s, as in the engine)")
    ap.add_argument("--verbose", action="store_true", help="list the synthetic estimates off by > 3 bpm")
    ap.add_argument("--only", choices=["synthetic", "fastslow", "negatives", "real"], action="append")
    ap.add_argument("--codec", choices=sorted(CODECS),
                    help="pass every signal through this lossy file format first (a phone's MP3, an Opus voice note)")
    args = ap.parse_args()
    global CODEC
    CODEC = args.codec
    binary = args.bin.split() + ["--window-sec", str(args.window), "--hop-sec", str(args.hop),
                                 "--envelope", args.envelope]
    rng = np.random.default_rng(args.seed)
    only = set(args.only or ["synthetic", "fastslow", "negatives", "real"])
    with tempfile.TemporaryDirectory() as tmp:
        if "synthetic" in only: synthetic(binary, tmp, args, rng)
        if "fastslow" in only: fastslow(binary, tmp, args, np.random.default_rng(args.seed + 1000))
        if "negatives" in only: negatives(binary, tmp, args, rng)
        if "real" in only: real_sets(binary, tmp, args)


if __name__ == "__main__":
    main()
