#!/usr/bin/env python3
"""Generates Fixtures/two-sleepers.flac: two sleepers side by side, one microphone near each (16 kHz stereo, 2 min).

Made only from Fixtures/example-night.flac (synthesised by generate_example_night.py, CC0), so it is CC0 too.
Regenerate with:  python3 Fixtures/generate_two_sleepers.py   (needs numpy, soundfile)

Sleeper A (primary, left microphone) is the example night's first 2 minutes; sleeper B (secondary, right
microphone) is its minutes 1-3, so both are active and their sounds overlap. Each microphone hears its own
sleeper directly and the other one 7 dB quieter and 1.9 ms (30 samples, 0.64 m of path) later, plus its own
faint noise. Timeline (seconds): A moves 18-24, snores 36-100, coughs 110-113; B snores 0-40, coughs 50-53,
talks 68-73, coughs 90-91 (also in Fixtures/two-sleepers.labels.csv).
"""
import os
import numpy as np
import soundfile as sf

here = os.path.dirname(os.path.abspath(__file__))
x, sr = sf.read(os.path.join(here, "example-night.flac"), dtype="float64")
n = 120 * sr
a, b = x[:n], x[60 * sr:60 * sr + n]
far, delay = 10 ** (-7 / 20), 30


def late(s):
    return np.concatenate([np.zeros(delay), s[:-delay]])


rng = np.random.default_rng(20261126)
left = a + far * late(b) + rng.normal(0, 10 ** (-70 / 20), n)
right = b + far * late(a) + rng.normal(0, 10 ** (-70 / 20), n)
stereo = np.stack([left, right], 1)
stereo *= min(1.0, 0.9 / np.max(np.abs(stereo)))
sf.write(os.path.join(here, "two-sleepers.flac"), stereo, sr, subtype="PCM_16")
with open(os.path.join(here, "two-sleepers.labels.csv"), "w") as f:
    f.write("sleeper,type,start,end\n")
    for row in [("primary", "movement", 18, 24), ("primary", "snoring", 36, 100), ("primary", "coughing", 110, 113),
                ("secondary", "snoring", 0, 40), ("secondary", "coughing", 50, 53),
                ("secondary", "talking", 68, 73), ("secondary", "coughing", 90, 91)]:
        f.write("%s,%s,%d,%d\n" % row)
