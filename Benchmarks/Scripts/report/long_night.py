#!/usr/bin/env python3
"""Writes a result JSON (analyze --format json's shape) of a long, busy night for the report benchmark:
HOURS hours from 2026-01-01T23:00:00+01:00, EVENTS events spread evenly (6 in 7 snores, the rest talking,
coughing and movement; 1.5-2.7 s each, levels -40..-21 dBFS), a stage change every 10 minutes (awake, light,
deep, light, rem), a breathing rate and a 30-s level per epoch, healthy audio throughout.

    report/long_night.py [HOURS [EVENTS]] > night.json       (defaults: 8 2000)
"""
import json
import sys
from datetime import datetime, timedelta, timezone

hours = float(sys.argv[1]) if len(sys.argv) > 1 else 8.0
count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
start = datetime(2026, 1, 1, 22, 0, tzinfo=timezone.utc)
span = hours * 3600


def t(seconds):
    return (start + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.") + \
        "%03dZ" % round((seconds % 1) * 1000 % 1000)


types = ["snoring", "talking", "coughing", "movement"]
events = []
for i in range(count):
    kind = types[1 + i % 3] if i % 7 == 0 else "snoring"
    s = round(i * span / count, 3)
    e = {"type": kind, "start": t(s), "end": t(s + 1.5 + (i % 5) * 0.3), "probability": 0.9, "source": "audio",
         "levelDb": -40.0 + i % 20}
    if kind == "snoring":
        e["signature"] = [0.25] * 16
    events.append(e)
stages = ["awake", "light", "deep", "light", "rem"]
intervals = [{"stage": stages[i % 5], "start": t(i * 600), "end": t((i + 1) * 600)} for i in range(int(span // 600))]
epochs = int(span // 30)
result = {
    "sessionId": "00000000-0000-0000-0000-000000000030", "startTime": t(0), "endTime": t(span), "utcOffset": "+01:00",
    "source": {"path": "long-night.flac", "sampleRate": 16000, "channels": 1, "durationSec": span},
    "events": events,
    "breathingRates": [{"timestamp": t(k * 30 + 15), "bpm": 14 + (k % 7) * 0.1, "confidence": 0.8} for k in range(epochs)],
    "sleepStageIntervals": intervals,
    "statistics": {"totalSleepDuration": span * 0.8, "sleepOnsetLatency": 600.0, "sleepEfficiency": 0.8,
                   "finalWakeTime": t(span), "numberOfAwakenings": 3, "snoreTime": 3000.0, "snoreSessions": [],
                   "sleepStageDurations": {"awake": span * 0.2, "light": span * 0.4, "deep": span * 0.2, "rem": span * 0.2},
                   "timeInBed": span, "sleepPeriodTime": span - 600, "wakeAfterSleepOnset": 600.0, "remLatency": 3000.0,
                   "sleepStagePercentages": {"light": 50.0, "deep": 25.0, "rem": 25.0}, "snoreScore": 12.5},
    "audioStatistics": {"healthIntervals": [{"status": "healthy", "start": t(0), "end": t(span)}],
                        "gapCount": 0, "gapDuration": 0.0, "overrunCount": 0},
    "loudness": [{"start": t(k * 30), "end": t(k * 30 + 30), "levelDb": -50.0 + k % 13} for k in range(epochs)],
}
json.dump(result, sys.stdout, indent=1)
sys.stdout.write("\n")
