"""Shared helpers of the event-detection training and evaluation scripts.

Everything is deterministic: files are taken in sorted manifest order, every random draw comes from a
numpy Generator seeded from a fixed seed and the item's index, and the Swift binary computes all features.
"""
import csv
import functools
import hashlib
import json
import os
import struct
import subprocess
import threading

import numpy as np
import soundfile as sf
from scipy.signal import butter, fftconvolve, istft, lfilter, sosfilt, stft

SR = 16000
CLASSES = ["none", "snoring", "talking", "coughing", "movement"]
DATA = os.environ.get("SLEEPCYCLE_DATA", "/work/shared/data/events")
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BREATHING_DATA = os.environ.get("SLEEPCYCLE_BREATHING_DATA", os.path.join(os.path.dirname(DATA), "breathing"))
WORK = os.environ.get("DETECT_WORK", "/tmp/sleepcycle-detect-work")
N_FOLDS = 5


def default_binary():
    """The release CLI; override with $SLEEPCYCLE_BIN (e.g. a dev harness that exposes the same subcommands)."""
    env = os.environ.get("SLEEPCYCLE_BIN")
    if env:
        return env.split()
    return [os.path.join(REPO, ".build", "release", "sleepcycle"), "detect-dev"]


def stable_hash(text):
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:12], 16)


def class_of(label):
    if label in ("snoring", "talking", "coughing", "movement"):
        return label
    return "none"


def group_of(row):
    """Cross-validation group: keeps a source recording / person on one side of every split.

    ESC-10: its fold. Speech: the speaker (FSDD) or the file (Mycroft has no speaker id). Cough: the file
    (one uuid = one submission = one person). Khan: no speaker id - clips are grouped in blocks of 20
    consecutive file numbers (neighbouring numbers tend to come from the same source recording).
    Synthetic items: blocks of 20 by index.
    """
    src = row["source"]
    if src == "esc10_ccby":
        return "esc-fold-%s" % row["fold"]
    if row.get("speaker"):
        return "speaker-%s" % row["speaker"]
    if src == "snoring_khan":
        name = os.path.basename(row["source_path"]).split(".")[0]   # e.g. 1_23 (one file is 1_499.wav.wav)
        cls, num = name.split("_")
        return "khan-%s-%d" % (cls, int(num) // 20)
    return "%s-%s" % (src, row["source_path"])


def fold_of(group):
    if group.startswith("esc-fold-"):
        return (int(group[-1]) - 1) % N_FOLDS        # ESC folds 1-3 -> CV folds 0-2
    return stable_hash(group) % N_FOLDS


def load_manifest():
    rows = list(csv.DictReader(open(os.path.join(DATA, "manifest.csv"))))
    rows.sort(key=lambda r: r["path"])
    items = []
    for r in rows:
        g = group_of(r)
        items.append({"id": r["path"], "path": os.path.join(DATA, r["path"]), "label": r["label"],
                      "cls": class_of(r["label"]), "source": r["source"], "group": g, "fold": fold_of(g)})
    return items


def load_breathing():
    """Coswara deep breathing (`breathing/coswara/`): real airborne breathing into phone and laptop microphones at
    home, 15-30 s per participant, no snoring, talking, coughing or movement labelled. One group per participant.
    Sorted by path. A missing manifest is an error (the committed model is trained with them; set
    DETECT_BREATHING_VARIANTS=0 to train without)."""
    path = os.path.join(BREATHING_DATA, "manifest.csv")
    if not os.path.exists(path):
        raise SystemExit("%s: missing (set SLEEPCYCLE_BREATHING_DATA, or DETECT_BREATHING_VARIANTS=0)" % path)
    rows = [r for r in csv.DictReader(open(path)) if r["subset"] == "coswara_breathing_deep"]
    rows.sort(key=lambda r: r["path"])
    out = []
    for r in rows:
        g = "coswara-%s" % r["participant"]
        out.append({"id": "breathing/" + r["path"], "path": os.path.join(BREATHING_DATA, r["path"]),
                    "label": "breathing", "cls": "none", "source": "coswara", "group": g, "fold": fold_of(g),
                    "duration": float(r["duration_s"])})
    return out


def read_audio(path, max_sec=10.0, offset_sec=0.0):
    x, sr = sf.read(path, dtype="float32", always_2d=True)
    assert sr == SR, path
    x = x.mean(axis=1)
    a = int(offset_sec * SR)
    return x[a:a + int(max_sec * SR)].astype(np.float32)


# ---------------------------------------------------------------- synthesis
def colored_noise(rng, n, exponent):
    """Noise with power spectrum ~ 1/f^exponent (0 white, 1 pink, 2 brown), unit RMS."""
    spec = rng.standard_normal(n // 2 + 1) + 1j * rng.standard_normal(n // 2 + 1)
    f = np.fft.rfftfreq(n, 1 / SR)
    f[0] = f[1]
    spec *= f ** (-exponent / 2)
    spec[f < 20] = 0                                   # microphones roll off below ~20 Hz
    x = np.fft.irfft(spec, n)
    return (x / (np.sqrt(np.mean(x ** 2)) + 1e-12)).astype(np.float32)


def bandpass(rng_unused, x, lo, hi):
    spec = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), 1 / SR)
    spec[(f < lo) | (f > hi)] = 0
    return np.fft.irfft(spec, len(x)).astype(np.float32)


def background(rng, n, kind=None):
    """A bedroom background of unit RMS: pink, brown, fan (brown + blade hum), air conditioner (hum + hiss),
    or near-silence (white noise, later scaled very low)."""
    kinds = ["pink", "brown", "fan", "ac", "white"]
    kind = kind or kinds[rng.integers(len(kinds))]
    t = np.arange(n) / SR
    if kind == "pink":
        x = colored_noise(rng, n, 1.0)
    elif kind == "brown":
        x = colored_noise(rng, n, 2.0)
    elif kind == "fan":
        f0 = rng.uniform(20, 60)
        hum = sum(np.sin(2 * np.pi * f0 * k * t + rng.uniform(0, 6.3)) / k for k in range(1, 6))
        x = colored_noise(rng, n, 1.5) + 0.3 * hum.astype(np.float32) * (1 + 0.05 * np.sin(2 * np.pi * 0.2 * t))
    elif kind == "ac":
        f0 = rng.choice([50.0, 60.0])
        hum = np.sin(2 * np.pi * f0 * t) + 0.5 * np.sin(2 * np.pi * 2 * f0 * t)
        x = 0.5 * colored_noise(rng, n, 0.7) + 0.2 * hum.astype(np.float32) + colored_noise(rng, n, 2.0)
    else:
        x = colored_noise(rng, n, 0.0)
    x = np.asarray(x, dtype=np.float32)
    return x / (np.sqrt(np.mean(x ** 2)) + 1e-12), kind


def room_impulse(rng, rt60=(0.3, 0.8), drr_db=(-3.0, 6.0)):
    """A synthetic room impulse response for a microphone 1-3 m from the sound: the direct sound, then after a
    2-8 ms pre-delay an exponentially decaying noise tail (-60 dB at `rt60` s, drawn from the range), low-passed by
    a random one-pole filter (absorption); direct-to-reverberant energy ratio drawn from `drr_db`."""
    t60 = rng.uniform(*rt60)
    pre = int(rng.uniform(0.002, 0.008) * SR)
    n = int(1.2 * t60 * SR)
    tail = rng.standard_normal(n) * np.exp(-6.908 * np.arange(n) / SR / t60)
    a = rng.uniform(0.0, 0.6)
    tail = lfilter([1 - a], [1, -a], tail)
    tail *= 10 ** (-rng.uniform(*drr_db) / 20) / np.sqrt(np.sum(tail ** 2))
    h = np.zeros(pre + n)
    h[0] = 1.0
    h[pre:] += tail
    return h.astype(np.float32)


def image_room(rng, n_heads=4, n_elsewhere=2, distance=(1.0, 4.0), rt60=(0.25, 0.7)):
    """Impulse responses of one random shoebox bedroom by the image-source method (pyroomacoustics): room 3-6.5 x
    2.5-5 x 2.3-3 m, a target RT60 drawn from `rt60` (Sabine's absorption, capped where the room cannot be that
    dry), air absorption; a microphone 0.3-1.2 m high near a wall, then `n_heads` positions of the sleeper's head at
    one distance drawn from `distance` (0.4-0.9 m high) and `n_elsewhere` positions anywhere in the room (the
    household's distractors). Each response starts just before its direct path and is normalised to a unit direct
    path, so distance is reverberation only (its level loss is the SNR draw). Unlike `room_impulse`, the early
    reflections are discrete and comb-filter the sound, and the late field is the room's modes, as in a real room."""
    import pyroomacoustics as pra
    dims = np.array([rng.uniform(3.0, 6.5), rng.uniform(2.5, 5.0), rng.uniform(2.3, 3.0)])
    mic = np.array([rng.uniform(0.2, 0.6), rng.uniform(0.2, dims[1] - 0.2), rng.uniform(0.3, 1.2)])
    dist = rng.uniform(*distance)
    srcs = []
    tries = 0
    while len(srcs) < n_heads + n_elsewhere:
        tries += 1
        if len(srcs) < n_heads:
            az = rng.uniform(-np.pi / 2, np.pi / 2)
            p = np.array([mic[0] + dist * np.cos(az), mic[1] + dist * np.sin(az), rng.uniform(0.4, 0.9)])
        else:
            p = np.array([rng.uniform(0.3, dims[0] - 0.3), rng.uniform(0.3, dims[1] - 0.3), rng.uniform(0.3, 1.8)])
        if all(0.2 < p[i] < dims[i] - 0.2 for i in range(3)):
            srcs.append(p)
        elif len(srcs) < n_heads and tries > 200:
            dist = max(0.5, dist * 0.95)    # the drawn distance does not fit this room: come a little closer
    target = rng.uniform(*rt60)
    while True:
        try:
            e_abs, order = pra.inverse_sabine(target, dims.tolist())
            break
        except ValueError:                  # too dry for the room's size (absorption > 1): a livelier target
            target *= 1.15
    r = pra.ShoeBox(dims.tolist(), fs=SR, materials=pra.Material(float(e_abs)), max_order=min(order, 40),
                    air_absorption=True)
    for p in srcs:
        r.add_source(p.tolist())
    r.add_microphone_array(mic.reshape(3, 1))
    r.compute_rir()
    return [from_direct_path(r.rir[0][i]) for i in range(len(srcs))]


def room_hooks(hs, rng, n_heads=4):
    """`nights.build_night`'s `convolve` and `convolve_breathing` for one room's responses `hs` (the first `n_heads`
    at the sleeper's head, the rest elsewhere): an event through a head position drawn from `rng`, a distractor
    through one of the others, the all-night breathing through the first head position (no draw)."""
    def convolve(clip, cls):
        h = hs[rng.integers(n_heads)] if cls else hs[n_heads + rng.integers(len(hs) - n_heads)]
        return fftconvolve(clip, h).astype(np.float32)

    def convolve_breathing(br):
        return fftconvolve(br, hs[0])[:len(br)].astype(np.float32)
    return convolve, convolve_breathing


def partner_hook(hs):
    """A second sleeper's breathing through the room's second head position (`room_hooks`' layout): the bedrooms of
    the separation benchmark, where a sleeper who does not snore breathes beside one who does."""
    return lambda br: fftconvolve(br, hs[1])[:len(br)].astype(np.float32)


def from_direct_path(h):
    """An image-source impulse response from 40 samples before its direct path (its largest tap), scaled to a unit
    direct path."""
    h = np.asarray(h, np.float64)
    d0 = int(np.argmax(np.abs(h)))
    return (h[max(0, d0 - 40):] / np.abs(h[d0])).astype(np.float32)


def reverberate(rng, x, **kw):
    """`x` convolved with a fresh `room_impulse(rng, **kw)` (longer by the impulse response's tail)."""
    return fftconvolve(x, room_impulse(rng, **kw)).astype(np.float32)


def rustle(rng, dur):
    """Synthetic movement: bedding rustle = dense band-passed noise grains under a fast-attack envelope,
    sometimes with a low body-movement thump."""
    n = int(dur * SR)
    lo, hi = rng.uniform(200, 1500), rng.uniform(3000, 7800)
    grains = np.zeros(n, np.float32)
    density = rng.uniform(20, 200)                     # grains per second
    for _ in range(int(density * dur)):
        gl = int(rng.uniform(0.003, 0.04) * SR)
        p = rng.integers(0, max(1, n - gl))
        grains[p:p + gl] += rng.standard_normal(gl).astype(np.float32) * np.hanning(gl) * rng.uniform(0.2, 1.0)
    x = bandpass(None, grains + 0.3 * rng.standard_normal(n).astype(np.float32), lo, hi)
    attack = int(rng.uniform(0.01, 0.06) * SR)
    env = np.ones(n, np.float32)
    env[:attack] = np.linspace(0, 1, attack)
    env *= np.exp(-np.arange(n) / SR / rng.uniform(0.3, 3.0)).astype(np.float32) * 0.7 + 0.3
    env[-int(0.05 * SR):] *= np.linspace(1, 0, int(0.05 * SR))
    x = x * env
    if rng.random() < 0.4:
        tl = int(0.15 * SR)
        thump = bandpass(None, rng.standard_normal(tl).astype(np.float32), 30, 250) * np.hanning(tl)
        x[:tl] += 2 * thump * np.sqrt(np.mean(x ** 2)) / (np.sqrt(np.mean(thump ** 2)) + 1e-12)
    return x.astype(np.float32)


def tonal(rng):
    """A synthetic tonal or harmonic sound that is none of the four classes (0.3-6 s): electronic beeps (alarm,
    phone, microwave), struck bells and chimes (inharmonic decaying partials), sirens and horns, bird chirps (fast
    frequency sweeps over 1.5 kHz), or animal-like calls (harmonic stacks at f0 350-1000 Hz with a pitch contour,
    barks with a noisy onset, repeated). Voiced like speech, but not speech-like in pitch range, rhythm or spectrum:
    the tree model must not read "harmonic" as "talking" or "snoring"."""
    kind = ("beep", "bell", "siren", "chirp", "call")[int(rng.integers(5))]
    out = []

    def stack(f0, dur, n_harm, tilt, jitter=0.0):
        """Harmonic stack of a (time-varying) f0 track; amplitudes fall by `tilt` dB per harmonic."""
        n = max(1, int(dur * SR))
        f = np.broadcast_to(np.asarray(f0, dtype=np.float64), (n,))
        if jitter:
            f = f * (1 + jitter * np.cumsum(rng.standard_normal(n)) / np.sqrt(n))
        ph = 2 * np.pi * np.cumsum(f) / SR
        y = np.zeros(n)
        for h in range(1, n_harm + 1):
            keep = f * h < SR / 2 - 200
            y += keep * np.sin(h * ph + rng.uniform(0, 6.3)) * 10 ** (-tilt * (h - 1) / 20)
        return y

    def envelope(n, attack, release):
        env = np.ones(n)
        a, r = max(1, min(n // 2, int(attack * SR))), max(1, min(n // 2, int(release * SR)))
        env[:a] = np.linspace(0, 1, a)
        env[-r:] *= np.linspace(1, 0, r)
        return env

    if kind == "beep":
        f, on, off = rng.uniform(400, 4000), rng.uniform(0.05, 0.5), rng.uniform(0.05, 0.5)
        n_harm, tilt = (1, 0.0) if rng.random() < 0.5 else (int(rng.integers(3, 8)), rng.uniform(3, 12))
        for _ in range(int(rng.integers(2, 9))):
            y = stack(f, on, n_harm, tilt)
            out += [y * envelope(len(y), 0.003, 0.005), np.zeros(int(off * SR))]
    elif kind == "bell":
        base = rng.uniform(200, 2500)
        ratios = np.concatenate([[1.0], np.sort(rng.uniform(1.3, 6.0, int(rng.integers(3, 8))))])
        decay = rng.uniform(0.2, 2.5)
        for _ in range(int(rng.integers(1, 5))):
            n = int(min(3.0, 2 * decay) * SR)
            t = np.arange(n) / SR
            y = sum(rng.uniform(0.2, 1) * np.sin(2 * np.pi * base * r * t + rng.uniform(0, 6.3)) *
                    np.exp(-t * r ** 0.5 / decay) for r in ratios if base * r < SR / 2 - 200)
            out += [y * envelope(n, 0.001, 0.02), np.zeros(int(rng.uniform(0.1, 1.0) * SR))]
    elif kind == "siren":
        dur = rng.uniform(1.0, 5.0)
        t = np.arange(int(dur * SR)) / SR
        if rng.random() < 0.6:
            lo, hi = rng.uniform(450, 900), rng.uniform(1000, 1800)
            f0 = lo + (hi - lo) * (0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(0.2, 3.0) * t))
        else:                                           # horn: steady, rich
            f0 = np.full(len(t), rng.uniform(300, 550))
        y = stack(f0, dur, int(rng.integers(2, 9)), rng.uniform(2, 8))
        out.append(y * envelope(len(y), 0.02, 0.05))
    elif kind == "chirp":
        for _ in range(int(rng.integers(2, 12))):
            dur = rng.uniform(0.03, 0.2)
            n = int(dur * SR)
            fa, fb = rng.uniform(1500, 7000, 2)
            f0 = np.linspace(fa, fb, n) * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(20, 80) * np.arange(n) / SR))
            y = stack(f0, dur, int(rng.integers(1, 3)), 10.0)
            out += [y * np.hanning(n), np.zeros(int(rng.uniform(0.03, 0.3) * SR))]
    else:                                               # animal-like call
        bark = rng.random() < 0.5
        f0c = rng.uniform(350, 1000)
        formant = rng.uniform(800, 3500)
        for _ in range(int(rng.integers(1, 6))):
            dur = rng.uniform(0.08, 0.3) if bark else rng.uniform(0.25, 1.2)
            n = int(dur * SR)
            u = np.linspace(0, 1, n)
            contour = 1 + rng.uniform(-0.3, 0.4) * np.sin(np.pi * u) + rng.uniform(-0.2, 0.2) * u
            y = stack(f0c * contour, dur, int(rng.integers(4, 12)), rng.uniform(1, 5), jitter=0.02)
            spec = np.fft.rfft(y)
            fr = np.fft.rfftfreq(n, 1 / SR)
            spec *= 1 / (1 + ((fr - formant) / (0.6 * formant)) ** 2) + 0.1
            y = np.fft.irfft(spec, n)
            if bark:
                noise = bandpass(None, rng.standard_normal(n).astype(np.float32), 300, 6000)
                y = y / (np.std(y) + 1e-12) + rng.uniform(0.3, 1.0) * noise / (np.std(noise) + 1e-12) * \
                    np.exp(-u * rng.uniform(3, 10))
            out += [y * envelope(n, 0.005 if bark else 0.03, 0.03), np.zeros(int(rng.uniform(0.2, 1.2) * SR))]
    x = np.concatenate(out)[:int(6 * SR)]
    return (x / (np.max(np.abs(x)) + 1e-12) * 0.5).astype(np.float32)


def breathing(rng, dur, bpm=None):
    """Quiet nasal/oral breathing (not snoring): band-passed noise under smooth inhale/exhale envelopes."""
    n = int(dur * SR)
    bpm = bpm or rng.uniform(11, 19)
    period = 60.0 / bpm
    lo, hi = rng.uniform(150, 400), rng.uniform(1500, 3500)
    noise = bandpass(None, colored_noise(rng, n, 0.5), lo, hi)
    env = np.zeros(n, np.float32)
    t0 = rng.uniform(0, period)
    while t0 < dur:
        ins, ex = period * rng.uniform(0.3, 0.4), period * rng.uniform(0.35, 0.5)
        for start, length, amp in ((t0, ins, 1.0), (t0 + ins + 0.1, ex, rng.uniform(0.5, 0.9))):
            a, b = int(start * SR), min(n, int((start + length) * SR))
            if b > a:
                env[a:b] = amp * np.sin(np.linspace(0, np.pi, b - a)) ** 2
        t0 += period * rng.uniform(0.9, 1.1)
    return (noise * env).astype(np.float32)


def active_rms(x):
    """RMS of the loudest half of 32-ms frames (the clip's level while it sounds)."""
    fl = 512
    m = len(x) // fl
    if m == 0:
        return float(np.sqrt(np.mean(x ** 2)) + 1e-12)
    e = np.sort(np.mean(x[: m * fl].reshape(m, fl) ** 2, axis=1))[::-1]
    return float(np.sqrt(np.mean(e[: max(1, m // 2)])) + 1e-12)


def active_extent(x, drop_db=25.0):
    """(start, end) in samples of the part of a clip within `drop_db` of its loudest 32-ms frame."""
    fl = 512
    m = max(1, len(x) // fl)
    e = np.array([np.mean(x[i * fl:(i + 1) * fl] ** 2) + 1e-20 for i in range(m)])
    db = 10 * np.log10(e)
    on = np.nonzero(db >= db.max() - drop_db)[0]
    return int(on[0] * fl), int(min(len(x), (on[-1] + 1) * fl))


def band_limit(rng, x):
    """Augmentation: telephone band (300-3400 Hz), a 4-kHz low-pass, or a 150-Hz high-pass."""
    r = rng.random()
    if r < 0.34:
        return bandpass(None, x, 300, 3400)
    if r < 0.67:
        return bandpass(None, x, 0, 4000)
    return bandpass(None, x, 150, 8000)


def _peaking(f0, gain_db, q):
    """One peaking-EQ biquad (RBJ cookbook) as a second-order section."""
    a = 10 ** (gain_db / 40)
    w = 2 * np.pi * f0 / SR
    al = np.sin(w) / (2 * q)
    b = np.array([1 + al * a, -2 * np.cos(w), 1 - al * a])
    d = np.array([1 + al / a, -2 * np.cos(w), 1 - al / a])
    return np.concatenate([b / d[0], d / d[0]])[None, :]


def microphone(rng, highpass=(60, 450)):
    """A random microphone response (second-order sections) for augmentation: a high-pass drawn from `highpass` Hz
    (60-450 by default; log-uniform; order 2 or 4), a low-pass at 3.4-7.5 kHz on 60 % of draws (order 4), and 0-3
    peaking resonances or notches (400 Hz - 6 kHz, +-3-9 dB, Q 0.7-3). Phones, laptops, webcams and cheap USB
    microphones cut the low end where snores live and colour the rest; every draw is a different one of them, none a
    copy of the responses `conditions.MICS` evaluates."""
    hp = float(np.exp(rng.uniform(np.log(highpass[0]), np.log(highpass[1]))))
    parts = [butter(int(rng.choice([2, 4])), hp, "highpass", fs=SR, output="sos")]
    if rng.random() < 0.6:
        parts.append(butter(4, rng.uniform(3400, 7500), "lowpass", fs=SR, output="sos"))
    for _ in range(int(rng.integers(0, 4))):
        f0 = float(np.exp(rng.uniform(np.log(400), np.log(6000))))
        parts.append(_peaking(f0, rng.uniform(3, 9) * rng.choice([-1, 1]), rng.uniform(0.7, 3.0)))
    return np.vstack(parts)


def through_microphone(sos, x):
    """`x` filtered by a `microphone` response, at the same active level (a microphone colours, the level is the
    scene's SNR draw)."""
    y = sosfilt(sos, x).astype(np.float32)
    return y * (active_rms(x) / (active_rms(y) + 1e-12))


def whisper(rng, x):
    """Whispered speech made from a voiced recording: every frame's spectral envelope (the log magnitude
    smoothed by keeping the first 24 cepstral coefficients, which removes the harmonics) over noise of random
    phase, then a high-pass at 250-500 Hz (a whisper has no voice below its first formant). Formants, syllable
    rhythm and fricatives stay; voicing and pitch go."""
    n_fft, hop = 512, 128
    _, _, z = stft(x, SR, nperseg=n_fft, noverlap=n_fft - hop)
    logm = np.log(np.abs(z) + 1e-7)
    cep = np.fft.irfft(logm, axis=0)
    keep = 24
    cep[keep:-keep + 1] = 0
    env = np.exp(np.fft.rfft(cep, axis=0).real[:z.shape[0]])
    ph = np.exp(2j * np.pi * rng.random(z.shape))
    _, y = istft(env * ph, SR, nperseg=n_fft, noverlap=n_fft - hop)
    y = sosfilt(butter(4, rng.uniform(250, 500), "highpass", fs=SR, output="sos"), y[:len(x)])
    return (y / (np.max(np.abs(y)) + 1e-12) * 0.5).astype(np.float32)


def mumble(rng, x):
    """Mumbled speech, as through a pillow or a blanket: a 4th-order low-pass at 700-2000 Hz."""
    y = sosfilt(butter(4, rng.uniform(700, 2000), "lowpass", fs=SR, output="sos"), x)
    return (y / (np.max(np.abs(y)) + 1e-12) * 0.5).astype(np.float32)


def impact(rng):
    """A household impact that is none of the four classes (0.3-4 s): knocks on a door or a wall (2-5 hits
    4-8 per second), an object dropped (one hit, sometimes a bounce or two), a door or drawer closing (a thud
    with a latch click), or footsteps (4-10 soft hits 0.4-0.7 s apart). Each hit is a short noise burst exciting
    3-8 damped modes (80 Hz - 4 kHz, decays 10-200 ms) - broadband and impulsive like a cough's onset, but without
    its noisy, breathy tail."""
    kind = ("knock", "drop", "door", "steps")[int(rng.integers(4))]
    modes_f = np.exp(rng.uniform(np.log(80), np.log(4000), int(rng.integers(3, 9))))
    modes_d = rng.uniform(0.01, 0.2, len(modes_f))

    def hit(gain, brightness):
        n = int(0.5 * SR)
        t = np.arange(n) / SR
        y = sum(rng.uniform(0.2, 1) * np.sin(2 * np.pi * f * t + rng.uniform(0, 6.3)) * np.exp(-t / d)
                for f, d in zip(modes_f, modes_d * rng.uniform(0.8, 1.2)))
        burst = int(rng.uniform(0.001, 0.006) * SR)
        y[:burst] += brightness * rng.standard_normal(burst) * np.max(np.abs(y))
        return gain * y / (np.max(np.abs(y)) + 1e-12)

    if kind == "knock":
        times = np.cumsum(np.r_[0, rng.uniform(0.12, 0.25, int(rng.integers(1, 5)))])
        hits = [(t, rng.uniform(0.7, 1.0), rng.uniform(0.3, 1.0)) for t in times]
    elif kind == "drop":
        hits = [(0.0, 1.0, rng.uniform(0.5, 2.0))]
        for k in range(int(rng.integers(0, 3))):
            hits.append((hits[-1][0] + rng.uniform(0.08, 0.3), 0.5 ** (k + 1), rng.uniform(0.5, 2.0)))
    elif kind == "door":
        hits = [(0.0, 1.0, rng.uniform(0.1, 0.5)), (rng.uniform(0.02, 0.15), rng.uniform(0.3, 0.7), 3.0)]
    else:
        t0 = np.cumsum(np.r_[0, rng.uniform(0.4, 0.7, int(rng.integers(3, 9)))])
        hits = [(t, rng.uniform(0.5, 1.0), rng.uniform(0.05, 0.3)) for t in t0]
    n = int((hits[-1][0] + 0.6) * SR)
    x = np.zeros(n)
    for t, g, b in hits:
        y = hit(g, b)
        a = int(t * SR)
        x[a:a + len(y)] += y[:n - a]
    return (x / (np.max(np.abs(x)) + 1e-12) * 0.5).astype(np.float32)


# ---------------------------------------------------------------- the Swift side
def write_atomically(path, write):
    """Writes a cache atomically: `write(tmp)` fills a temporary file (same extension as `path`, so writers that
    append one, like `np.savez`, keep its name), which is then renamed over `path`. An interrupted run leaves no
    half cache, and a cache that is a symbolic link to another work folder's file is replaced, not written through."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = "%s.tmp-%d%s" % (path, os.getpid(), os.path.splitext(path)[1])
    write(tmp)
    os.replace(tmp, path)


def write_cache(path, data):
    """A JSON cache, written atomically."""
    def dump(tmp):
        with open(tmp, "w") as f:
            json.dump(data, f)
    write_atomically(path, dump)


@functools.lru_cache(maxsize=None)
def binary_feature_names(binary=None):
    """The segment feature names of the binary that computes the caches (`detect-dev segment-features` on one
    second of silence): a cache written by a binary with other features (a stale build) is not reused."""
    return tuple(run_scenes("segment-features", [np.zeros(SR, np.float32)], binary=binary)[0]["features"])


def cache_matches_binary(names, first_features, binary=None):
    """Whether a segment cache fits the binary: its stored feature names (or, for a cache written before names
    were stored, its first segment's feature count) equal the binary's."""
    current = binary_feature_names(tuple(binary) if binary else None)
    if names is not None:
        return tuple(names) == current
    return first_features is None or len(first_features) == len(current)


def add_detect_option(parser):
    """`--detect-option` (repeatable): an option passed on to `detect-dev events`, e.g.
    `--detect-option=--sustained-speech-window=0`."""
    parser.add_argument("--detect-option", action="append", default=[],
                        help="an option for `detect-dev events`, e.g. --detect-option=--sustained-speech-window=0")


def fold_events(k, scenes, options=()):
    """`detect-dev events` on `scenes` with fold k's model (`$DETECT_WORK/model-fold<k>.json`, written by
    evaluate_nights.py without fold k) and extra `options`: the parsed event lines."""
    return run_scenes("events", scenes, ["--model", os.path.join(WORK, "model-fold%d.json" % k)] + list(options))


def run_scenes(subcommand, scenes, extra_args=(), binary=None):
    """Streams scenes (iterable of float32 arrays) into `sleepcycle detect-dev <subcommand>` and returns
    the parsed JSON lines."""
    os.makedirs(WORK, exist_ok=True)
    out_path = os.path.join(WORK, "swift-out-%d.jsonl" % os.getpid())
    cmd = list(binary or default_binary()) + [subcommand, "--output", out_path] + list(extra_args)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE)
    try:
        for x in scenes:
            x = np.ascontiguousarray(x, dtype="<f4")
            proc.stdin.write(struct.pack("<q", len(x)))
            proc.stdin.write(x.tobytes())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    if proc.wait() != 0:
        raise SystemExit("%s failed with status %d" % (" ".join(cmd), proc.returncode))
    lines = [json.loads(l) for l in open(out_path)]
    os.remove(out_path)
    return lines
