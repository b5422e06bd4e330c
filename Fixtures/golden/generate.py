#!/usr/bin/env python3
"""Regenerates the DSP golden fixtures (run from the package root):

    python3 Fixtures/golden/generate.py

Writes small synthetic 16 kHz 16-bit WAV signals to Fixtures/golden/signals/ and, for each (frame, hop) pair,
`features_16000_<frame>_<hop>.json` with librosa's values for every FeatureLayout column. Needs numpy, scipy and
librosa (values committed; the Swift tests only read the JSON). Generated with librosa 0.11.0, numpy 2.4.
Definitions mirror docs/0001-dsp-features.md; spectral flux and band energies are not librosa features and are
computed here with numpy from librosa's magnitude STFT.
"""
import json
import os

import numpy as np
import scipy.io.wavfile
import scipy.signal
import librosa

SR = 16000
HERE = os.path.dirname(os.path.abspath(__file__))
SIGNALS = os.path.join(HERE, "signals")
PARAMS = [(1024, 512), (512, 256)]
BAND_EDGES = [0, 100, 300, 600, 1000, 2000, 4000, 6000, 8000]


def quantize(x):
    """Float signal -> int16 samples (what the WAV holds) and the float32 values a reader decodes (x / 32768)."""
    q = np.clip(np.round(x * 32767), -32768, 32767).astype(np.int16)
    return q, q.astype(np.float32) / 32768.0


def make_signals():
    rng = np.random.default_rng(20261121)
    t = np.arange(SR) / SR
    chirp = 0.5 * scipy.signal.chirp(t, f0=50, t1=1.0, f1=7900, method="logarithmic", phi=-90)
    noise = 0.2 * rng.standard_normal(SR // 2)
    noise[0] = -0.3  # a negative first sample: the zcr edge padding must not count a crossing there
    n = 20000  # 1.25 s, not a multiple of either hop
    tones = np.zeros(n)
    a, b = 4000, 12000
    tt = np.arange(b - a) / SR
    tones[a:b] = 0.3 * np.sin(2 * np.pi * 440 * tt) + 0.1 * np.sin(2 * np.pi * 3000 * tt)
    c = 16000
    tones[c:] = 0.01 * np.sin(2 * np.pi * 150 * np.arange(n - c) / SR)
    mono = {"chirp": chirp, "noise": noise, "tones_silence": tones}
    # Stereo fixture for the CLI tests (0.5 s): left = chirp start, right = noise.
    stereo = np.stack([chirp[: SR // 2], noise], axis=1)
    return mono, stereo


def features(y, fl, hop):
    kw = dict(n_fft=fl, hop_length=hop, center=True, pad_mode="constant")
    S = np.abs(librosa.stft(y, window="hann", **kw))
    mel = librosa.feature.melspectrogram(y=y, sr=SR, power=2.0, n_mels=40, htk=False, norm="slaney",
                                         fmin=0.0, fmax=SR / 2, **kw)
    mfcc = librosa.feature.mfcc(S=librosa.power_to_db(mel, ref=1.0, amin=1e-10, top_db=None), n_mfcc=13,
                                dct_type=2, norm="ortho")
    S64 = S.astype(np.float64)
    rise = np.maximum(np.diff(S64, axis=1), 0)
    flux = np.concatenate([[0.0], np.sqrt((rise ** 2).sum(axis=0))])
    freqs = librosa.fft_frequencies(sr=SR, n_fft=fl)
    P = S64 ** 2
    bands = []
    for i in range(len(BAND_EDGES) - 1):
        lo, hi = BAND_EDGES[i], BAND_EDGES[i + 1]
        sel = (freqs >= lo) & ((freqs < hi) | ((i == len(BAND_EDGES) - 2) & (freqs <= hi)))
        bands.append(P[sel].mean(axis=0) if sel.any() else np.zeros(P.shape[1]))
    out = {
        "rms": librosa.feature.rms(y=y, frame_length=fl, hop_length=hop, center=True, pad_mode="constant")[0],
        "spectral_centroid": librosa.feature.spectral_centroid(y=y, sr=SR, **kw)[0],
        "spectral_bandwidth": librosa.feature.spectral_bandwidth(y=y, sr=SR, p=2, **kw)[0],
        "spectral_rolloff": librosa.feature.spectral_rolloff(y=y, sr=SR, roll_percent=0.85, **kw)[0],
        "spectral_flatness": librosa.feature.spectral_flatness(y=y, amin=1e-10, power=2.0, **kw)[0],
        "spectral_flux": flux,
        "zero_crossing_rate": librosa.feature.zero_crossing_rate(y, frame_length=fl, hop_length=hop, center=True)[0],
        "band_energy": np.stack(bands, axis=1),
        "mel": mel.T,
        "mfcc": mfcc.T,
    }
    n = 1 + len(y) // hop
    for k, v in out.items():
        assert v.shape[0] == n, (k, v.shape, n)
    return out


def rounded(v):
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 1:
        return [float("%.8g" % x) for x in v]
    return [rounded(r) for r in v]


def main():
    os.makedirs(SIGNALS, exist_ok=True)
    mono, stereo = make_signals()
    decoded = {}
    for name, x in mono.items():
        q, y = quantize(x)
        scipy.io.wavfile.write(os.path.join(SIGNALS, name + ".wav"), SR, q)
        decoded[name] = y
    q, _ = quantize(stereo)
    scipy.io.wavfile.write(os.path.join(SIGNALS, "stereo.wav"), SR, q)
    for fl, hop in PARAMS:
        doc = {"generator": "Fixtures/golden/generate.py", "librosa": librosa.__version__,
               "sampleRate": SR, "frameLength": fl, "hopLength": hop, "signals": {}}
        for name, y in decoded.items():
            f = features(y, fl, hop)
            entry = {"file": "signals/%s.wav" % name, "samples": len(y), "frames": 1 + len(y) // hop}
            entry.update({k: rounded(v) for k, v in f.items()})
            doc["signals"][name] = entry
        path = os.path.join(HERE, "features_%d_%d_%d.json" % (SR, fl, hop))
        with open(path, "w") as fh:
            json.dump(doc, fh, separators=(",", ":"))
        print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()
