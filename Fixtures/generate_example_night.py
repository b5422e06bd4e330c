#!/usr/bin/env python3
"""Generates Fixtures/example-night.flac: a 3-minute synthetic bedroom night at 16 kHz mono.

Everything in it is synthesised here (no third-party audio), so it can be redistributed freely (CC0).
Regenerate with:  python3 Fixtures/generate_example_night.py   (needs numpy, scipy, soundfile, espeak-ng)

Timeline (seconds; also written to Fixtures/example-night.labels.csv):
  0-180    fan-like background (brown + pink noise, about -52 dBFS) and quiet breathing at 14 breaths/min
  18-24    movement: bed-sheet rustling (band-passed noise bursts with fast attack)
  36-100   a snoring bout: one snore per breath (4.3 s period), 1.1-1.4 s each, pitch ~90 Hz with flutter
  110-113  a burst of three coughs
  128-133  sleep talk (espeak-ng, low voice)
  150-151  a single cough
The random seed is fixed, so the file is byte-identical on every run with the same library versions.
"""
import os, subprocess, tempfile
import numpy as np
import scipy.signal as sg
import soundfile as sf

SR = 16000
DUR = 180
rng = np.random.default_rng(20261121)
here = os.path.dirname(os.path.abspath(__file__))


def db(x):
    return 10 ** (x / 20)


def colored_noise(n, exponent):
    """Noise with power spectrum ~ 1/f^exponent (0 white, 1 pink, 2 brown), unit RMS."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / SR)
    f[0] = f[1]
    spec /= f ** (exponent / 2)
    x = np.fft.irfft(spec, n)
    return x / np.sqrt(np.mean(x ** 2))


def bandpass(x, lo, hi, order=4):
    sos = sg.butter(order, [lo, hi], btype="band", fs=SR, output="sos")
    return sg.sosfilt(sos, x)


def envelope(n, attack, release):
    t = np.arange(n) / SR
    a = np.minimum(1, t / attack)
    r = np.minimum(1, (t[-1] - t) / release)
    return np.sin(0.5 * np.pi * a) * np.sin(0.5 * np.pi * r)


def place(dst, src, start_s, gain):
    i = int(start_s * SR)
    j = min(len(dst), i + len(src))
    dst[i:j] += gain * src[: j - i]


night = np.zeros(DUR * SR)
labels = []

# Background: a fan (brown + pink noise with a faint 120 Hz motor hum).
n = len(night)
fan = 0.6 * colored_noise(n, 2) + 0.4 * colored_noise(n, 1)
fan = fan / np.sqrt(np.mean(fan ** 2))
hum = 0.05 * np.sin(2 * np.pi * 120 * np.arange(n) / SR)
night += db(-52) * (fan + hum)

# Quiet breathing: inhale (1.6 s) and exhale (2.0 s) as band-passed noise, 14 breaths/min with jitter.
t = 1.0
while t < DUR - 4:
    period = 60 / 14 * (1 + 0.05 * rng.standard_normal())
    inh = bandpass(rng.standard_normal(int(1.6 * SR)), 400, 2500) * envelope(int(1.6 * SR), 0.5, 0.7)
    exh = bandpass(rng.standard_normal(int(2.0 * SR)), 250, 1500) * envelope(int(2.0 * SR), 0.3, 1.2)
    place(night, inh / np.std(inh), t, db(-50))
    place(night, exh / np.std(exh), t + 1.7, db(-53))
    t += period

# Movement: rustling, several bursts of band-passed noise with fast attack.
for k, (s, d) in enumerate([(18.0, 1.2), (19.6, 0.8), (21.0, 2.0), (23.3, 0.7)]):
    burst = bandpass(rng.standard_normal(int(d * SR)), 1500, 7000) * envelope(int(d * SR), 0.02, d * 0.6)
    burst *= 1 + 0.8 * np.abs(bandpass(rng.standard_normal(int(d * SR)), 5, 40))
    place(night, burst / np.std(burst), s, db(-30))
labels.append(("movement", 18.0, 24.0))


def snore(d, f0):
    """One snore: a glottal-like pulse train with flutter, shaped by low formants, plus turbulence."""
    m = int(d * SR)
    tt = np.arange(m) / SR
    f = f0 * (1 + 0.08 * np.sin(2 * np.pi * 0.7 * tt) + 0.02 * rng.standard_normal(m).cumsum() / np.sqrt(m))
    phase = np.cumsum(f) / SR
    pulses = (np.mod(phase, 1.0) < 0.12).astype(float) - 0.12
    voiced = sum(g * bandpass(pulses, fc * 0.75, fc * 1.3, 2) for fc, g in [(250, 1.0), (550, 0.6), (1100, 0.25)])
    noise = bandpass(rng.standard_normal(m), 300, 2500) * 0.25
    x = (voiced / np.std(voiced) + noise) * envelope(m, 0.25, 0.35)
    return x / np.std(x)


t = 36.0
while t < 99:
    d = rng.uniform(1.1, 1.4)
    place(night, snore(d, 90 + 8 * rng.standard_normal()), t, db(-24 + 2 * rng.standard_normal()))
    t += 60 / 14 * (1 + 0.04 * rng.standard_normal())
labels.append(("snoring", 36.0, 100.0))


def cough():
    """One cough: an explosive broadband burst (fast attack, ~0.35 s decay) with a short voiced tail."""
    m = int(0.45 * SR)
    tt = np.arange(m) / SR
    burst = bandpass(rng.standard_normal(m), 200, 6000) * np.exp(-tt / 0.07) * np.minimum(1, tt / 0.004)
    voiced = np.sign(np.sin(2 * np.pi * 180 * tt)) * np.exp(-((tt - 0.12) / 0.08) ** 2) * 0.3
    x = burst / np.max(np.abs(burst)) + bandpass(voiced, 200, 3000)
    return x / np.std(x)


for s in (110.0, 110.9, 111.9):
    place(night, cough(), s, db(-22))
labels.append(("coughing", 110.0, 112.5))
place(night, cough(), 150.0, db(-23))
labels.append(("coughing", 150.0, 150.6))

# Sleep talk: espeak-ng, low and slow, band-limited like a voice across the room.
with tempfile.TemporaryDirectory() as d:
    wav = os.path.join(d, "talk.wav")
    subprocess.run(["espeak-ng", "-s", "120", "-p", "30", "-a", "60", "-w", wav,
                    "no. not now. leave it there, by the window."], check=True)
    talk, sr_talk = sf.read(wav)
    talk = sg.resample_poly(talk, SR, sr_talk)
    talk = bandpass(talk, 120, 5000)
    place(night, talk / np.std(talk[np.abs(talk) > 1e-4]), 128.0, db(-28))
    labels.append(("talking", 128.0, round(128.0 + len(talk) / SR, 2)))

peak = np.max(np.abs(night))
assert peak < 1.0, peak
sf.write(os.path.join(here, "example-night.flac"), night.astype(np.float32), SR, subtype="PCM_16")
with open(os.path.join(here, "example-night.labels.csv"), "w") as fh:
    fh.write("type,start_s,end_s\n")
    for typ, s, e in labels:
        fh.write(f"{typ},{s:.2f},{e:.2f}\n")
print("wrote example-night.flac", len(night) / SR, "s, peak", round(float(peak), 3))
