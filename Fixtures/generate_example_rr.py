#!/usr/bin/env python3
"""Writes Fixtures/example-night.rr.txt: 3 minutes of made-up RR intervals (ms) for the documentation's hr-session
example, as Polar's RR export lays them out (a header line, one interval per line): 62 bpm with a respiratory swing,
seeded noise, and one missed beat and one premature (ectopic) beat for the artefact correction to find."""
import math
import os
import random

rnd = random.Random(2026)
t, rr = 0.0, []
while t < 180:
    x = 968 + 45 * math.sin(2 * math.pi * 0.23 * t) + rnd.gauss(0, 12)
    rr.append(round(x))
    t += x / 1000
rr[60] += rr.pop(61)                                     # a missed beat: two intervals in one
rr[120], rr[121] = round(rr[120] * 0.7), round(rr[121] + rr[120] * 0.3)   # a premature beat and its pause
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "example-night.rr.txt")
with open(path, "w") as f:
    f.write("RR-interval [ms]\n" + "\n".join(str(x) for x in rr) + "\n")
