#!/usr/bin/env python3
"""Comparison point for bench_features.sh: librosa computing the same per-frame features from one shared STFT
(RMS, centroid, bandwidth, roll-off, flatness, ZCR, 40 mel, 13 MFCC; 1024/512) for FILE at 16 kHz."""
import sys
import numpy as np
import librosa

y, sr = librosa.load(sys.argv[1], sr=16000, mono=True, res_type="soxr_hq")
S = np.abs(librosa.stft(y, n_fft=1024, hop_length=512, window="hann", center=True, pad_mode="constant"))
rms = librosa.feature.rms(S=S, frame_length=1024)
cent = librosa.feature.spectral_centroid(S=S, sr=sr)
bw = librosa.feature.spectral_bandwidth(S=S, sr=sr)
roll = librosa.feature.spectral_rolloff(S=S, sr=sr)
flat = librosa.feature.spectral_flatness(S=S)
zcr = librosa.feature.zero_crossing_rate(y, frame_length=1024, hop_length=512)
mel = librosa.feature.melspectrogram(S=S**2, sr=sr, n_mels=40)
mfcc = librosa.feature.mfcc(S=librosa.power_to_db(mel, top_db=None), n_mfcc=13)
print(f"librosa frames={S.shape[1]}", file=sys.stderr)
