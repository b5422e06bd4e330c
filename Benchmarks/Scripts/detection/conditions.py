#!/usr/bin/env python3
"""Unseen conditions: the same short nights under one changed condition at a time, through `sleepcycle analyze`.

    python3 Benchmarks/Scripts/detection/conditions.py [--fold 4] [--minutes 15] [--sets 1] [--binary PATH]
                                                       [--only NAME ...] [--fold-model | --model FILE]
                                                       [--detect-option=--OPTION=VALUE ...]

Issue 31, point 1. Every condition is a set of four nights (`mixed`, `mixed`, `no-snore`, `quiet`; `--minutes`
each) built by `nights.build_night` from ONE cross-validation fold's clips, with `COND_SPEC` (EVAL_SPEC with denser
events) and the same seeds [SEED, 900 + fold, 4 s + j] in every condition, so the conditions differ only in what
they change (the event schedule, clips and distractors are the same; the background, room and microphone draws are
the condition's own). The distractors are fold k's ESC-10 clips and Khan `other` clips (household sounds, people
talking, TV news): fold 4 has no ESC-10 clip, so its quiet nights are nights of household sounds.

Conditions (each applied alone to the reference night):
* `reference`   the generated bedroom beds of training (pink / brown / fan / AC / white), dry, flat microphone;
* `bed-*`       noise beds of types no training scene has (own generators, below): road traffic with passing
                vehicles, a fridge compressor cycling with its clicks, an air purifier (blade tone, peaked hiss);
* `snr-*`       every event at 20 / 10 / 5 / 0 dB over the bed (the placement's jitter, +-2-3 dB, stays); the
                sleeper's breathing stays 0-10 dB over the bed, so at 5 and 0 dB it is as loud as the events or louder;
* `snr-*-qb`    10 / 5 / 0 dB with quiet breathing (20 dB under the bed): the events against the bed alone, as in a
                recording of a distant sleeper whose breathing is lost in the bed with everything else of theirs;
* `room-*`      every clip convolved with an image-source room (pyroomacoustics shoebox; the microphone 0.7 / 2 / 4 m
                from 4 positions of the sleeper's head, distractors from 2 other places); levels are those of the
                reverberant sound, so distance here is reverberation only - its level loss is the SNR sweep; since
                2026-11-28 the sleeper's all-night breathing is in the room too (from one head position; before, it
                stayed dry and only the events were reverberant);
* `mic-*`       the whole night through a microphone response: phone, laptop, cheap USB (band limits and EQ);
* `level-*`     the whole night faded by 0 to -30 dB (input gain), stepped by +-6-12 dB every 1-4 min (an AGC),
                or only the sleeper's sounds faded by 0 to -15 dB against the bed (turning away);
* `household-x5` five times the distractors (60 per 30 min instead of 12), for the false events;
* `file-*`      the reference night as a recorder stores it, through `analyze`'s decoder and resampler: a 48-kHz
                16-bit WAV, a 44.1-kHz MP3 at 56 kbps (a phone's voice memo), an Ogg Opus voice note at ~24 kbps.
                With `--fold-model` / `--model` (`detect-dev events`, which reads 16-kHz audio) they equal `reference`;
* `mix-*`       several of the above at once, as a real bedroom combines them: a laptop in the 2-m room with the
                events at 10 dB; a phone 4 m away in the far room over the fridge bed, with AGC steps, stored as MP3;
                the 8-kHz USB microphone in the near room over traffic, the sleeper turning away.

Scoring (rules of evaluate_nights.py): snoring segment-based at 1 s after merging gaps < 10 s (as the outside check
scores it); talking and coughing event-based: reference and detected events merged across gaps < 3 s, a detected
event is correct and a reference event found when they overlap within 0.5 s (`evaluate_nights.matches_reference`'s
rule, applied to the merged events); the 1-s segment F1 of talking and coughing is in the JSON. False events per
hour: merged detected events of a class on the nights without that class (snoring: no-snore and quiet nights;
talking, coughing: the quiet night). Writes everything to $DETECT_WORK/conditions-fold<k>.json.

The split: fold 4 (default) is the fold no design choice has been compared on (choices: folds 2-3, reports: 0-1).
Keep it so: tune on `--fold 2` (same conditions, fold 2's clips), read fold 4 only to report. Caveat: the built-in
model `analyze` runs is fitted on every fold (train.py), so fold 4's clips are not new to it; the conditions are.
`--fold-model` scores with `$DETECT_WORK/model-fold<k>.json` through `detect-dev events` instead (fitted without
fold k by `evaluate_nights.py --folds k`): the clips are then held out too.
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
import argparse
import json
import time

import numpy as np
from scipy.ndimage import uniform_filter1d
from scipy.signal import butter, resample_poly, sosfilt

import common as C
import dataset as D
import evaluate_nights as E
import nights as N

NIGHT_KINDS = E.NIGHT_KINDS                  # mixed, mixed, no-snore, quiet
# EVAL_SPEC with about twice the events per minute (more events per hour of audio; gaps stay >= 10 s, far from
# the sustained-speech rule's half of 90 s), so that a few short nights per condition are enough.
COND_SPEC = dict(N.EVAL_SPEC, snore_bouts=6, others=14, event_gap=(10, 40), first_event=(10, 30), tail=60)
SNR_DB = (20, 10, 5, 0)
QUIET_BREATHING_SNR_DB = (10, 5, 0)
REPORTED = ("snoring", "talking", "coughing")


# ---------------------------------------------------------------- noise beds no training scene has
def _lowpass(x, hz, order=4):
    return sosfilt(butter(order, hz, "lowpass", fs=C.SR, output="sos"), x)


def _peak(f0, gain_db, q):
    """RBJ cookbook peaking EQ as one second-order section."""
    a = 10 ** (gain_db / 40)
    w = 2 * np.pi * f0 / C.SR
    al = np.sin(w) / (2 * q)
    b0, b1, b2 = 1 + al * a, -2 * np.cos(w), 1 - al * a
    a0, a1, a2 = 1 + al / a, -2 * np.cos(w), 1 - al / a
    return np.array([[b0 / a0, b1 / a0, b2 / a0, 1.0, a1 / a0, a2 / a0]])


def bed_traffic(rng, n):
    """Road traffic through a window: low rumble (1/f^1.7 under 1.2 kHz) and passing vehicles every 8-60 s (3-10 s
    swells of 6-15 dB, each its own low-passed noise)."""
    x = _lowpass(C.colored_noise(rng, n, 1.7), 1200)
    x /= np.sqrt(np.mean(x ** 2)) + 1e-12
    t = rng.uniform(0, 20)
    while t < n / C.SR:
        w = rng.uniform(3, 10)
        a, b = int(max(0, t - w) * C.SR), int(min(n / C.SR, t + w) * C.SR)
        if b > a:
            car = _lowpass(C.colored_noise(rng, b - a, 1.2), rng.uniform(800, 3000))
            env = np.exp(-0.5 * ((np.arange(a, b) / C.SR - t) / (w / 3)) ** 2)
            x[a:b] += car / (np.sqrt(np.mean(car ** 2)) + 1e-12) * env * 10 ** (rng.uniform(6, 15) / 20)
        t += rng.uniform(8, 60)
    return (x / (np.sqrt(np.mean(x ** 2)) + 1e-12)).astype(np.float32)


def bed_fridge(rng, n):
    """A fridge in the next room: a compressor (mains-harmonic hum at 100-150 Hz and its harmonics, motor noise)
    running 40-80 % of cycles of 2-6 min, a click at every start and stop, a faint hiss between."""
    tt = np.arange(n) / C.SR
    f0 = rng.choice([100.0, 120.0, 150.0])
    hum = sum(np.sin(2 * np.pi * f0 * k * tt + rng.uniform(0, 6.3)) * 0.6 ** k for k in range(1, 7))
    motor = _lowpass(C.colored_noise(rng, n, 1.0), 2500)
    on = np.zeros(n, np.float32)
    t = rng.uniform(0, 60)
    clicks = []
    while t < n / C.SR:
        cycle = rng.uniform(120, 360)
        run = cycle * rng.uniform(0.4, 0.8)
        a, b = int(t * C.SR), int(min(n / C.SR, t + run) * C.SR)
        on[a:b] = 1
        clicks += [a, b]
        t += cycle
    on = uniform_filter1d(on, int(0.5 * C.SR))
    x = (hum + 0.5 * motor) * (0.1 + on) + 0.05 * C.colored_noise(rng, n, 0.0)
    rms = np.sqrt(np.mean(x ** 2)) + 1e-12
    for c in clicks:
        cl = int(0.02 * C.SR)
        if c + cl < n:
            x[c:c + cl] += rng.standard_normal(cl) * np.exp(-np.arange(cl) / (0.003 * C.SR)) * 4 * rms
    return (x / (np.sqrt(np.mean(x ** 2)) + 1e-12)).astype(np.float32)


def bed_purifier(rng, n):
    """An air purifier / humidifier: a blade-pass tone (180-400 Hz and harmonics, slowly wandering), hiss with a
    6-10-dB resonance at 1-3 kHz, and a speed change (+-3 dB, tone +-10 %) every 2-8 min."""
    tt = np.arange(n) / C.SR
    speed = np.ones(n)
    t = 0.0
    while t < n / C.SR:
        a = int(t * C.SR)
        speed[a:] = rng.uniform(0.9, 1.1)
        t += rng.uniform(120, 480)
    speed = uniform_filter1d(speed, C.SR, mode="nearest")
    f0 = rng.uniform(180, 400) * speed * (1 + 0.005 * np.sin(2 * np.pi * 0.05 * tt))
    ph = 2 * np.pi * np.cumsum(f0) / C.SR
    tone = sum(np.sin(k * ph) * 0.5 ** k for k in range(1, 5))
    hiss = sosfilt(_peak(rng.uniform(1000, 3000), rng.uniform(6, 10), 1.5), C.colored_noise(rng, n, 0.5))
    hiss /= np.sqrt(np.mean(hiss ** 2)) + 1e-12
    x = (0.5 * tone + hiss) * speed ** 3
    return (x / (np.sqrt(np.mean(x ** 2)) + 1e-12)).astype(np.float32)


BEDS = {"traffic": bed_traffic, "fridge": bed_fridge, "purifier": bed_purifier}


# ---------------------------------------------------------------- rooms (image-source method)
# (room dimensions m, target RT60 s for pyroomacoustics.inverse_sabine, microphone-to-head distance m)
ROOMS = {"near": ([3.5, 3.0, 2.5], 0.3, 0.7), "2m": ([4.0, 3.5, 2.6], 0.4, 2.0), "far": ([6.0, 4.5, 2.8], 0.5, 4.0)}
N_RIRS = 6          # 4 positions of the sleeper's head at the distance (events), 2 elsewhere (distractors)


def room_rirs(name):
    """The room's impulse responses (cached in $DETECT_WORK): 4 head positions at the room's distance from a
    microphone 0.7 m high, then 2 distractor positions anywhere in the room, each normalised to a unit direct path;
    and the measured RT60 (Schroeder, median)."""
    dims, rt60, dist = ROOMS[name]
    cache = os.path.join(C.WORK, "conditions-rirs-%s.npz" % name)
    if os.path.exists(cache):
        z = np.load(cache)
        return [z["h%d" % i] for i in range(N_RIRS)], float(z["rt60"])
    import pyroomacoustics as pra
    rng = np.random.default_rng([D.SEED, 950, list(ROOMS).index(name)])
    mic = np.array([0.4, 0.4, 0.7])
    srcs = []
    while len(srcs) < N_RIRS:
        if len(srcs) < 4:
            az = rng.uniform(0, np.pi / 2)
            p = mic + np.array([dist * np.cos(az), dist * np.sin(az), 0.0]) * np.sqrt(1 - 0.05 ** 2)
            p[2] = rng.uniform(0.5, 0.8)
        else:
            p = np.array([rng.uniform(0.3, dims[0] - 0.3), rng.uniform(0.3, dims[1] - 0.3), rng.uniform(0.3, 1.8)])
        if all(0.2 < p[i] < dims[i] - 0.2 for i in range(3)):
            srcs.append(p)
    e_abs, order = pra.inverse_sabine(rt60, dims)
    r = pra.ShoeBox(dims, fs=C.SR, materials=pra.Material(float(e_abs)), max_order=order, air_absorption=True)
    for p in srcs:
        r.add_source(p.tolist())
    r.add_microphone_array(mic.reshape(3, 1))
    r.compute_rir()
    measured = float(np.median(r.measure_rt60()))
    hs = [C.from_direct_path(r.rir[0][i]) for i in range(N_RIRS)]
    C.write_atomically(cache, lambda tmp: np.savez(tmp, rt60=measured, **{"h%d" % i: h for i, h in enumerate(hs)}))
    return hs, measured


# ---------------------------------------------------------------- microphones
def _sos(*parts):
    return np.vstack(parts)


MICS = {
    # A phone on the nightstand: high-pass 150 Hz (4th order), +5 dB presence at 3 kHz, -4 dB shelf-like dip at 7 kHz.
    "phone": lambda x: sosfilt(_sos(butter(4, 150, "highpass", fs=C.SR, output="sos"), _peak(3000, 5, 1.0),
                                    _peak(7000, -4, 0.7)), x),
    # A laptop: high-pass 300 Hz, low-pass 6.5 kHz, a chassis resonance +6 dB at 1.2 kHz, a -6-dB notch at 4.5 kHz.
    "laptop": lambda x: sosfilt(_sos(butter(4, 300, "highpass", fs=C.SR, output="sos"),
                                     butter(4, 6500, "lowpass", fs=C.SR, output="sos"),
                                     _peak(1200, 6, 2.0), _peak(4500, -6, 2.0)), x),
    # A cheap USB microphone sampling at 8 kHz (content < 3.6 kHz after its anti-alias filter), high-pass 200 Hz,
    # +4 dB at 2 kHz.
    "usb": lambda x: sosfilt(_sos(butter(2, 200, "highpass", fs=C.SR, output="sos"), _peak(2000, 4, 1.0)),
                             resample_poly(resample_poly(x, 1, 2), 2, 1)[:len(x)]),
}


# ---------------------------------------------------------------- recorders' files
# The night as a recorder stores it, read by `analyze` through its decoder and resampler (the other conditions hand
# it a 16-bit WAV at 16 kHz). The compression levels are libsndfile's (0 best, 1 smallest).
INPUTS = {
    # A 48-kHz recorder (USB microphones, phones' WAV recorders): lossless, resampled by `analyze`.
    "wav48k": {"rate": 48000, "ext": "wav", "subtype": "PCM_16"},
    # A phone's voice-memo MP3: 44.1 kHz, LAME at a constant 56 kbps.
    "mp3": {"rate": 44100, "ext": "mp3", "format": "MP3", "subtype": "MPEG_LAYER_III", "compression_level": 0.9,
            "bitrate_mode": "CONSTANT"},
    # A messaging app's voice note: Ogg Opus at 48 kHz, about 24 kbps (variable).
    "opus": {"rate": 48000, "ext": "opus", "format": "OGG", "subtype": "OPUS", "compression_level": 0.9},
}


# ---------------------------------------------------------------- the conditions
def level_steps(rng, n):
    """Gain in dB per sample: +-6-12 dB steps every 1-4 min (an AGC), 0.2-s ramps, kept within -24..+6 dB."""
    g = np.zeros(n, np.float32)
    t, cur = rng.uniform(30, 120), 0.0
    while t < n / C.SR:
        step = rng.uniform(6, 12) * rng.choice([-1, 1])
        cur = float(np.clip(cur + step, -24, 6))
        g[int(t * C.SR):] = cur
        t += rng.uniform(60, 240)
    return uniform_filter1d(g, int(0.2 * C.SR), mode="nearest")


def conditions():
    """name -> dict(spec=..., background=..., room=..., mic=..., gain=..., event_gain=...) (absent: unchanged)."""
    out = {"reference": {}}
    for b in BEDS:
        out["bed-" + b] = {"background": b}
    for s in SNR_DB:
        out["snr-%d" % s] = {"spec": {k: (s, s) for k in ("snore_snr", "talk_snr", "cough_snr", "movement_snr")}}
    for s in QUIET_BREATHING_SNR_DB:
        out["snr-%d-qb" % s] = {"spec": dict(out["snr-%d" % s]["spec"], breathing_db=(-20, -20))}
    for r in ROOMS:
        out["room-" + r] = {"room": r}
    for m in MICS:
        out["mic-" + m] = {"mic": m}
    out["level-fade30"] = {"gain": "fade"}
    out["level-agc"] = {"gain": "steps"}
    out["level-turn15"] = {"event_gain": 15.0}
    out["household-x5"] = {"spec": {"distractors": 5 * COND_SPEC["distractors"]}}
    for i in INPUTS:
        out["file-" + i] = {"input": i}
    # Several changes at once, as a real bedroom combines them (each alone is a row above).
    out["mix-laptop-2m-10"] = {"mic": "laptop", "room": "2m", "spec": out["snr-10"]["spec"]}
    out["mix-phone-far-fridge-agc-mp3"] = {"mic": "phone", "room": "far", "background": "fridge", "gain": "steps",
                                           "input": "mp3"}
    out["mix-usb-near-traffic-turn15"] = {"mic": "usb", "room": "near", "background": "traffic", "event_gain": 15.0}
    return out


def condition_night(cond, name, pools, k, minutes, night_set, j):
    """Night j of set `night_set` of fold k under condition `cond`: (audio, truth)."""
    seed = len(NIGHT_KINDS) * night_set + j
    crng = np.random.default_rng([D.SEED, 910 + k, seed, sum(map(ord, name))])   # the condition's own draws
    spec = dict(COND_SPEC, **cond.get("spec", {}))
    kw = {}
    if "background" in cond:
        gen = BEDS[cond["background"]]
        kw["background"] = lambda rng, ln: gen(crng, ln)
    if "room" in cond:
        hs, _ = room_rirs(cond["room"])
        # The sleeper's sounds from one of the 4 head positions at the room's distance, distractors from the 2
        # positions elsewhere in the room, the breathing from the first head position all night.
        kw["convolve"], kw["convolve_breathing"] = C.room_hooks(hs, crng)
    total = minutes * 60
    if "event_gain" in cond:
        kw["event_gain_db"] = lambda t: -cond["event_gain"] * t / total
    x, truth = N.build_night(np.random.default_rng([D.SEED, 900 + k, seed]), NIGHT_KINDS[j], minutes, pools,
                             spec, **kw)
    if "mic" in cond:
        x = MICS[cond["mic"]](x).astype(np.float32)
    if cond.get("gain") == "fade":
        x = x * 10 ** (np.linspace(0, -30, len(x), dtype=np.float32) / 20)
    elif cond.get("gain") == "steps":
        x = x * 10 ** (level_steps(crng, len(x)) / 20)
    return np.clip(x, -1, 1).astype(np.float32), truth


# ---------------------------------------------------------------- scoring
def event_counts(ref, det):
    """(detected, correct detected, reference, found reference) of merged intervals, overlap within 0.5 s."""
    def hit(a, others):
        return any(s < a[1] + 0.5 and e > a[0] - 0.5 for s, e in others)
    return len(det), sum(hit(d, ref) for d in det), len(ref), sum(hit(r, det) for r in ref)


def prf(p_num, p_den, r_num, r_den):
    p = p_num / p_den if p_den else float("nan")
    r = r_num / r_den if r_den else float("nan")
    f = 2 * p * r / (p + r) if p_den and r_den and p + r else (0.0 if p_den and r_den else float("nan"))
    return p, r, f


def score(nights, detected):
    """Per class: segment counts (1 s), event counts, false events and hours of nights without the class."""
    st = {c: {"seg": [0, 0, 0], "ev": [0, 0, 0, 0], "false": 0, "neg_h": 0.0} for c in E.EVENT_CLASSES}
    for (x, truth), det in zip(nights, detected):
        n_sec = int(np.ceil(len(x) / C.SR))
        hours = len(x) / C.SR / 3600
        for c in E.EVENT_CLASSES:
            ref = E.merge([(s, e) for cls, s, e in truth if cls == c], E.MERGE_GAP[c])
            sysi = E.merge([(d["start"] / C.SR, d["end"] / C.SR) for d in det if d["type"] == c], E.MERGE_GAP[c])
            r, s = E.seconds_active(ref, n_sec), E.seconds_active(sysi, n_sec)
            seg = st[c]["seg"]
            seg[0] += int(np.sum(r & s)); seg[1] += int(np.sum(~r & s)); seg[2] += int(np.sum(r & ~s))
            st[c]["ev"] = [a + b for a, b in zip(st[c]["ev"], event_counts(ref, sysi))]
            if not ref:
                st[c]["false"] += len(sysi); st[c]["neg_h"] += hours
    out = {}
    for c, v in st.items():
        tp, fp, fn = v["seg"]
        sp, sr, sf1 = prf(tp, tp + fp, tp, tp + fn)
        nd, cd, nr, fr = v["ev"]
        ep, er, ef1 = prf(cd, nd, fr, nr)
        out[c] = {"segment": {"precision": sp, "recall": sr, "f1": sf1, "tp": tp, "fp": fp, "fn": fn},
                  "event": {"precision": ep, "recall": er, "f1": ef1, "detected": nd, "correct": cd,
                            "reference": nr, "found": fr},
                  "false_events_per_hour": v["false"] / v["neg_h"] if v["neg_h"] else float("nan"),
                  "false_events": v["false"], "negative_hours": v["neg_h"]}
    return out


def row(name, res):
    sn, tk, cg = res["snoring"]["segment"], res["talking"]["event"], res["coughing"]["event"]
    f = lambda v: " —  " if v != v else "%.2f" % v
    fph = " ".join("%4.1f" % res[c]["false_events_per_hour"] for c in REPORTED)
    return "| %-14s | %s %s %s | %s %s %s | %s %s %s | %s | %3d / %3d |" % (
        name, f(sn["precision"]), f(sn["recall"]), f(sn["f1"]), f(tk["precision"]), f(tk["recall"]), f(tk["f1"]),
        f(cg["precision"]), f(cg["recall"]), f(cg["f1"]), fph, tk["reference"], cg["reference"])


def pooled_false_events(report):
    """False events per hour of each reported class over every condition's nights without it (the per-condition
    figures step by 4 / h; the pool is the finer, if mixed, figure). {class: (events, hours)}."""
    out = {}
    for c in REPORTED:
        ev = sum(r[c]["false_events"] for r in report["conditions"].values())
        h = sum(r[c]["negative_hours"] for r in report["conditions"].values())
        out[c] = (ev, h)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fold", type=int, default=4, help="the clips' fold (4: report only, never tune; 2: develop)")
    ap.add_argument("--minutes", type=float, default=15.0)
    ap.add_argument("--sets", type=int, default=1, help="sets of the four nights per condition")
    ap.add_argument("--only", nargs="+", default=None, help="these conditions only (names as printed)")
    ap.add_argument("--binary", default=None, help="the sleepcycle CLI (default: $SLEEPCYCLE_BIN / .build/release)")
    ap.add_argument("--fold-model", action="store_true",
                    help="detect-dev events with $DETECT_WORK/model-fold<k>.json (held-out clips) instead of analyze")
    ap.add_argument("--tag", default="", help="appended to the report's file name (conditions-fold<k><tag>.json; a tag that starts with - as --tag=-name)")
    ap.add_argument("--model", default=None,
                    help="detect-dev events with this model file instead of analyze (e.g. the built-in model's JSON)")
    ap.add_argument("--detect-option", action="append", default=[],
                    help="passed to detect-dev events (with --model / --fold-model), e.g. --detect-option=--snore-bout-window=15")
    args = ap.parse_args()
    binary = args.binary or C.default_binary()[0]
    t_start = time.time()
    its = D.items()
    pools = N.pools_for_fold(its, args.fold, khan=True)
    conds = conditions()
    names = args.only or list(conds)
    report = {"fold": args.fold, "minutes": args.minutes, "sets": args.sets, "spec": COND_SPEC, "conditions": {}}
    for r in ROOMS:
        if any(conds[n].get("room") == r for n in names):
            report.setdefault("rooms", {})[r] = {"dims": ROOMS[r][0], "distance_m": ROOMS[r][2],
                                                 "rt60_measured": round(room_rirs(r)[1], 3)}
    lines = []
    for name in names:
        t0 = time.time()
        nights = [condition_night(conds[name], name, pools, args.fold, args.minutes, s, j)
                  for s in range(args.sets) for j in range(len(NIGHT_KINDS))]
        if args.fold_model or args.model:
            model = args.model or os.path.join(C.WORK, "model-fold%d.json" % args.fold)
            out = C.run_scenes("events", (x for x, _ in nights), ["--model", model] + args.detect_option,
                               binary=[binary, "detect-dev"])
            detected = [[l for l in out if l["scene"] == j] for j in range(len(nights))]
        else:
            detected = [E.run_analyze(x, binary, INPUTS.get(conds[name].get("input"))) for x, _ in nights]
        res = score(nights, detected)
        report["conditions"][name] = res
        lines.append(row(name, res))
        print(lines[-1] + "  (%.0f s)" % (time.time() - t0), flush=True)
    head = ("| condition      | snoring P R F1 (1 s) | talking P R F1 (events) | coughing P R F1 (events) | "
            "false/h snore talk cough | talk / cough events |")
    print("\nfold %d, %d set(s) of 4 nights x %g min per condition, %s:" % (
        args.fold, args.sets, args.minutes,
        "sleepcycle analyze (built-in model)" if not (args.fold_model or args.model) else
        "detect-dev events, %s %s" % (args.model or "fold model", " ".join(args.detect_option))))
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    print("\n".join(lines))
    pool = pooled_false_events(report)
    print("false events per hour, all conditions pooled: " + ", ".join(
        "%s %d in %.2f h = %.2f" % (c, ev, h, ev / h if h else float("nan")) for c, (ev, h) in pool.items()))
    report["seconds"] = round(time.time() - t_start, 1)
    print("%.1f min" % (report["seconds"] / 60))
    path = os.path.join(C.WORK, "conditions-fold%d%s.json" % (args.fold, args.tag))
    os.makedirs(C.WORK, exist_ok=True)
    json.dump(report, open(path, "w"), indent=1)
    print("written:", path)


if __name__ == "__main__":
    main()
