#!/usr/bin/env python3
"""Two-sleeper attribution ("channel separation") scored on simulated bedrooms (rooms.py).

    python3 Benchmarks/Scripts/separation/score.py --split heldout --preset bedside [--scenes 8] [--minutes 10]
    python3 Benchmarks/Scripts/separation/score.py --mode per-channel ...   # baseline: each channel analysed mono
    python3 Benchmarks/Scripts/separation/score.py --mode oracle ...        # ceiling: the mono references
    python3 Benchmarks/Scripts/separation/score.py --selftest                # the metrics on hand-made results

For every scene: `sleepcycle analyze stereo.wav --channel-separation PRESET --format json` (the two sleepers'
sessions) and `sleepcycle analyze ref-<sleeper>.wav --format json` (each sleeper alone at their own microphone:
the mono analysis the stereo result is compared with). `--mode per-channel` replaces the first by a mono analysis of
channel 0 (primary) and of channel 1 (secondary): no separation at all, the baseline every separator must beat;
`--mode oracle` takes the two mono references as the sessions: a perfect separator, the metrics' ceiling.
Metrics (README.md has the exact definitions): attribution accuracy, cross-talk in the silent sleeper's session,
duplicates, per-sleeper 1-s segment F1 per class next to the mono reference's. Prints markdown tables and writes
$SEPARATION_WORK/results-<split>.json (entries of other presets / modes already in the file are kept).
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
import argparse
import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import numpy as np
import soundfile as sf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "detection"))
import rooms as R    # noqa: E402

try:    # evaluate_nights imports train.py (scikit-learn); the three helpers need nothing of it
    from evaluate_nights import MERGE_GAP, merge, seconds_active    # noqa: E402
except ImportError:  # the same definitions, verbatim
    MERGE_GAP = {"snoring": 10.0, "talking": 3.0, "coughing": 3.0, "movement": 3.0}

    def merge(intervals, gap):
        out = []
        for s, e in sorted(intervals):
            if out and s - out[-1][1] < gap:
                out[-1][1] = max(out[-1][1], e)
            else:
                out.append([s, e])
        return out

    def seconds_active(intervals, n_sec):
        act = np.zeros(n_sec, bool)
        for s, e in intervals:
            act[max(0, int(np.floor(s))):min(n_sec, int(np.ceil(e)))] = True
        return act

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CLASSES = ["snoring", "talking", "coughing", "movement"]
SLEEPERS = R.SLEEPERS
DEFAULT_START = "2000-01-01T22:00:00.000Z"   # analyze's default --start (docs/json.md), when a session has none
TOLERANCE = 0.5          # seconds: a detected event matches a reference event it overlaps within this margin


def default_binary():
    return os.environ.get("SLEEPCYCLE_BIN") or os.path.join(REPO, ".build", "release", "sleepcycle")


# ------------------------------------------------------------------------------------------------ running the CLI
def analyze(binary, path, extra=()):
    cmd = [binary, "analyze", path, "--format", "json", "--no-progress"] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-2000:]))
    return json.loads(p.stdout)


def channel_file(scene_dir, ch):
    """Channel `ch` of stereo.wav as a mono WAV (cached next to it)."""
    path = os.path.join(scene_dir, "channel%d.wav" % ch)
    if not os.path.exists(path):
        x, sr = sf.read(os.path.join(scene_dir, "stereo.wav"), dtype="int16", always_2d=True)
        R.C.write_atomically(path, lambda tmp: sf.write(tmp, x[:, ch], sr, subtype="PCM_16", format="WAV"))
    return path


def parse_time(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def events_of(result, start=None):
    """[(type, start_s, end_s, probability, attributionConfidence or None)] of one result / session; times in
    seconds from its startTime (else `start`, the enclosing result's, else analyze's default). Events carry `start`
    / `end` (docs/json.md); `startTime` / `endTime` are accepted too."""
    t0 = parse_time(result.get("startTime") or start or DEFAULT_START)
    out = []
    for e in result.get("events", []):
        if e.get("source", "audio") != "audio":
            continue
        a = (parse_time(e.get("start") or e["startTime"]) - t0).total_seconds()
        b = (parse_time(e.get("end") or e["endTime"]) - t0).total_seconds()
        out.append((e["type"], a, b, e.get("probability"), e.get("attributionConfidence")))
    return out


def sessions_of(result):
    """{"primary": events, "secondary": events} of a stereo result: its `sessions` (one per channel), or, for a
    single result whose events carry `channel`, the events split by channel."""
    if "sessions" in result:
        out = {}
        for s in result["sessions"]:
            out[s["channel"]] = events_of(s, result.get("startTime"))
        missing = [k for k in SLEEPERS if k not in out]
        if missing:
            raise SystemExit("stereo result without a %s session" % missing[0])
        return out
    evs = result.get("events", [])
    if evs and all("channel" in e for e in evs):
        return {k: events_of(dict(result, events=[e for e in evs if e["channel"] == k])) for k in SLEEPERS}
    raise SystemExit("not a stereo result (no `sessions`, events without `channel`): keys %s" % sorted(result))


def run_scene(binary, meta, mode, preset, extra, out_dir):
    """Analyses one scene: the stereo sessions and the two mono references; raw JSON saved in out_dir."""
    d = R.scene_dir(meta["split"], meta["preset"], meta["index"], meta["minutes"])
    if mode == "separation":
        stereo = analyze(binary, os.path.join(d, "stereo.wav"), ["--channel-separation", preset] + list(extra))
        got = (stereo.get("channelSeparation") or {}).get("preset")
        if got != preset:
            print("warning: %s scene %02d: channelSeparation.preset is %r, not %r" % (meta["split"], meta["index"],
                                                                                     got, preset), flush=True)
    refs = {k: analyze(binary, os.path.join(d, "ref-%s.wav" % k), extra) for k in SLEEPERS}
    if mode == "per-channel":
        ch = [analyze(binary, channel_file(d, c), extra) for c in range(2)]
        stereo = {"source": ch[0]["source"], "channelSeparation": {"preset": "per-channel-baseline"},
                  "startTime": ch[0]["startTime"], "sessions": [dict(ch[c], channel=SLEEPERS[c]) for c in range(2)]}
    elif mode == "oracle":
        stereo = {"source": {}, "channelSeparation": {"preset": "oracle"}, "startTime": refs["primary"]["startTime"],
                  "sessions": [dict(refs[k], channel=k) for k in SLEEPERS]}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "scene-%02d.json" % meta["index"]), "w") as f:
        json.dump({"stereo": stereo, "refs": refs}, f)
    return sessions_of(stereo), {k: events_of(refs[k]) for k in SLEEPERS}


# ------------------------------------------------------------------------------------------------ metrics
def overlaps(a0, a1, b0, b1, tol=TOLERANCE):
    return b0 < a1 + tol and b1 > a0 - tol


def new_counts():
    return {
        "attribution": {"matched": 0, "correct": 0, "unambiguous": 0, "unambiguous_correct": 0,
                        "by_class": {c: [0, 0] for c in CLASSES}, "by_sleeper": {k: [0, 0] for k in SLEEPERS},
                        "unmatched": {k: 0 for k in SLEEPERS}, "confidence": []},
        "crosstalk": {"hours": 0.0, "events": 0, "crosstalk": 0, "merged": 0, "merged_crosstalk": 0,
                      "mono_events": 0, "by_class": {c: 0 for c in CLASSES}},
        "duplicates": {"detected": 0, "duplicates": 0, "by_class": {c: [0, 0] for c in CLASSES}},
        "segments": {k: {c: {"stereo": [0, 0, 0], "mono": [0, 0, 0]} for c in CLASSES} for k in SLEEPERS},
        "nothing": {"stereo": {c: 0 for c in CLASSES}, "mono": {c: 0 for c in CLASSES}},
        "hours": 0.0, "scenes": 0,
    }


def score_scene(meta, sessions, refs, counts):
    """Adds one scene's counts to `counts`. meta: scene.json (events, scenario, duration); sessions / refs:
    {sleeper: [(type, start, end, probability, attributionConfidence)]} of the stereo and the mono analyses."""
    truth = meta["events"]
    dur = meta["duration"]
    n_sec = int(math.ceil(dur))
    counts["hours"] += dur / 3600
    counts["scenes"] += 1
    # Attribution: a detected event that overlaps a reference event of its class is correct when it is in the
    # session of (one of) the sleeper(s) whose events it overlaps; unambiguous = it overlaps one sleeper's only.
    at = counts["attribution"]
    for k in SLEEPERS:
        for typ, a, b, _, conf in sessions[k]:
            who = {t["sleeper"] for t in truth if t["class"] == typ and overlaps(a, b, t["start"], t["end"])}
            if not who:
                at["unmatched"][k] += 1
                continue
            ok = k in who
            at["matched"] += 1
            at["correct"] += ok
            at["by_class"][typ][0] += 1
            at["by_class"][typ][1] += ok
            if len(who) == 1:
                at["unambiguous"] += 1
                at["unambiguous_correct"] += ok
                truth_owner = next(iter(who))
                at["by_sleeper"][truth_owner][0] += 1
                at["by_sleeper"][truth_owner][1] += ok
                if conf is not None:
                    at["confidence"].append((float(conf), bool(ok)))
    # Cross-talk: in a scene where one sleeper makes no event, every event in their session (and in their mono
    # reference); those that overlap (any class) an event of the other sleeper are cross-talk. Also counted after
    # merging per class as evaluate_nights does (snoring across < 10 s, others < 3 s).
    silent = {"primary-only": "secondary", "secondary-only": "primary"}.get(meta["scenario"])
    if silent:
        ct = counts["crosstalk"]
        ct["hours"] += dur / 3600
        evs = sessions[silent]
        ct["events"] += len(evs)
        ct["mono_events"] += len(refs[silent])
        for typ, a, b, _, _ in evs:
            if any(overlaps(a, b, t["start"], t["end"]) for t in truth):
                ct["crosstalk"] += 1
                ct["by_class"][typ] += 1
        for c in CLASSES:
            for a, b in merge([(e[1], e[2]) for e in evs if e[0] == c], MERGE_GAP[c]):
                ct["merged"] += 1
                ct["merged_crosstalk"] += any(overlaps(a, b, t["start"], t["end"]) for t in truth)
    # Events on nothing: detected events (either session; the mono references apart) that overlap no reference event
    # of either sleeper, of any class - sounds made of the sleepers' breathing and the bed alone.
    for name, by_sleeper in (("stereo", sessions), ("mono", refs)):
        for k in SLEEPERS:
            for typ, a, b, _, _ in by_sleeper[k]:
                if not any(overlaps(a, b, t["start"], t["end"]) for t in truth):
                    counts["nothing"][name][typ] += 1
    # Duplicates: a reference event found (its class, overlapping) in its own sleeper's session and also in the
    # other session, where the other sleeper has no overlapping event of that class.
    du = counts["duplicates"]
    for t in truth:
        k = t["sleeper"]
        o = SLEEPERS[1 - SLEEPERS.index(k)]

        def found(evs):
            return any(e[0] == t["class"] and overlaps(e[1], e[2], t["start"], t["end"]) for e in evs)
        if not found(sessions[k]):
            continue
        du["detected"] += 1
        du["by_class"][t["class"]][0] += 1
        legit = any(u["sleeper"] == o and u["class"] == t["class"] and overlaps(u["start"], u["end"], t["start"],
                                                                                 t["end"]) for u in truth)
        if not legit and found(sessions[o]):
            du["duplicates"] += 1
            du["by_class"][t["class"]][1] += 1
    # Segment F1 per sleeper and class: 1-s segments, reference and detected events merged first (evaluate_nights).
    for k in SLEEPERS:
        for c in CLASSES:
            ref = seconds_active(merge([(t["start"], t["end"]) for t in truth if t["sleeper"] == k and
                                        t["class"] == c], MERGE_GAP[c]), n_sec)
            for name, evs in (("stereo", sessions[k]), ("mono", refs[k])):
                sy = seconds_active(merge([(e[1], e[2]) for e in evs if e[0] == c], MERGE_GAP[c]), n_sec)
                cell = counts["segments"][k][c][name]
                cell[0] += int(np.sum(ref & sy))
                cell[1] += int(np.sum(~ref & sy))
                cell[2] += int(np.sum(ref & ~sy))
    return counts


def f1(tp, fp, fn):
    return 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else float("nan")


def wilson(k, n, z=1.96):
    if n == 0:
        return [float("nan"), float("nan")]
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return [round(c - h, 4), round(c + h, 4)]


def ratio(a, b):
    return a / b if b else float("nan")


def summarize(counts):
    at, ct, du = counts["attribution"], counts["crosstalk"], counts["duplicates"]
    conf = at["confidence"]
    bins = []
    for lo, hi in ((0.0, 0.5), (0.5, 0.8), (0.8, 0.95), (0.95, 1.01)):
        sel = [ok for c, ok in conf if lo <= c < hi]
        if sel:
            bins.append({"confidence": [lo, min(hi, 1.0)], "n": len(sel), "accuracy": round(float(np.mean(sel)), 4)})
    seg = {}
    for k in SLEEPERS:
        seg[k] = {}
        for c in CLASSES:
            s, m = counts["segments"][k][c]["stereo"], counts["segments"][k][c]["mono"]
            fs, fm = f1(*s), f1(*m)
            seg[k][c] = {"stereo_f1": round(fs, 4), "mono_f1": round(fm, 4), "difference": round(fs - fm, 4),
                         "stereo_tp_fp_fn": s, "mono_tp_fp_fn": m}
    return {
        "scenes": counts["scenes"], "hours": round(counts["hours"], 3),
        "attribution": {
            "accuracy": round(ratio(at["correct"], at["matched"]), 4), "matched": at["matched"],
            "ci95": wilson(at["correct"], at["matched"]),
            "unambiguous_accuracy": round(ratio(at["unambiguous_correct"], at["unambiguous"]), 4),
            "unambiguous": at["unambiguous"],
            "by_class": {c: {"n": v[0], "accuracy": round(ratio(v[1], v[0]), 4)} for c, v in at["by_class"].items()},
            "by_true_sleeper": {k: {"n": v[0], "accuracy": round(ratio(v[1], v[0]), 4)}
                                for k, v in at["by_sleeper"].items()},
            "unmatched_events": at["unmatched"], "by_confidence": bins},
        "crosstalk": {
            "silent_hours": round(ct["hours"], 3),
            "crosstalk_per_hour": round(ratio(ct["crosstalk"], ct["hours"]), 3), "crosstalk_events": ct["crosstalk"],
            "events_per_hour": round(ratio(ct["events"], ct["hours"]), 3), "events": ct["events"],
            "merged_crosstalk_per_hour": round(ratio(ct["merged_crosstalk"], ct["hours"]), 3),
            "merged_events_per_hour": round(ratio(ct["merged"], ct["hours"]), 3),
            "mono_reference_events_per_hour": round(ratio(ct["mono_events"], ct["hours"]), 3),
            "crosstalk_by_class": ct["by_class"]},
        "duplicates": {"detected_reference_events": du["detected"], "duplicates": du["duplicates"],
                       "share": round(ratio(du["duplicates"], du["detected"]), 4),
                       "by_class": {c: {"detected": v[0], "duplicates": v[1]} for c, v in du["by_class"].items()}},
        "segment_f1": seg,
        "on_nothing": {name: {"per_hour": round(ratio(sum(v.values()), counts["hours"]), 3), "events": sum(v.values()),
                              "by_class": dict(v)} for name, v in counts["nothing"].items()},
    }


# ------------------------------------------------------------------------------------------------ tables
def fmt(x, spec="%.3f"):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else spec % x


def markdown(split, entries):
    """entries: [(label, summary)]."""
    lines = ["### %s" % split, "",
             "| preset (mode) | scenes | h | attribution (n) | unambiguous | cross-talk/h | merged | silent session "
             "events/h (mono ref) | duplicates | events on nothing/h (mono ref) | snoring F1 P: stereo / mono / Δ | "
             "snoring F1 S: stereo / mono / Δ |",
             "|---|---:|---:|---|---:|---:|---:|---|---|---|---|---|"]
    for label, s in entries:
        a, c, d, g = s["attribution"], s["crosstalk"], s["duplicates"], s["segment_f1"]
        sn = ["%s / %s / %s" % (fmt(g[k]["snoring"]["stereo_f1"]), fmt(g[k]["snoring"]["mono_f1"]),
                                fmt(g[k]["snoring"]["difference"], "%+.3f")) for k in SLEEPERS]
        nothing = s.get("on_nothing", {})   # (absent from results written before it was measured)
        lines.append("| %s | %d | %.2f | %s (%d) | %s | %s | %s | %s (%s) | %d / %d | %s (%s) | %s | %s |" % (
            label, s["scenes"], s["hours"], fmt(a["accuracy"] * 100, "%.1f %%"), a["matched"],
            fmt(a["unambiguous_accuracy"] * 100, "%.1f %%"), fmt(c["crosstalk_per_hour"], "%.2f"),
            fmt(c["merged_crosstalk_per_hour"], "%.2f"), fmt(c["events_per_hour"], "%.1f"),
            fmt(c["mono_reference_events_per_hour"], "%.1f"), d["duplicates"], d["detected_reference_events"],
            fmt(nothing.get("stereo", {}).get("per_hour"), "%.1f"), fmt(nothing.get("mono", {}).get("per_hour"), "%.1f"),
            sn[0], sn[1]))
    lines += ["", "| preset (mode) | class | primary: stereo / mono / Δ | secondary: stereo / mono / Δ | attribution (n) |",
              "|---|---|---|---|---|"]
    for label, s in entries:
        for c in CLASSES:
            g = s["segment_f1"]
            cells = ["%s / %s / %s" % (fmt(g[k][c]["stereo_f1"]), fmt(g[k][c]["mono_f1"]),
                                       fmt(g[k][c]["difference"], "%+.3f")) for k in SLEEPERS]
            b = s["attribution"]["by_class"][c]
            lines.append("| %s | %s | %s | %s | %s (%d) |" % (label, c, cells[0], cells[1],
                                                            fmt(b["accuracy"] * 100, "%.1f %%"), b["n"]))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ self-test
def selftest():
    """The metrics on a hand-made two-scene case (a fake stereo JSON in the documented contract)."""
    def ts(sec):
        return "2000-01-01T22:%02d:%06.3fZ" % (sec // 60, sec % 60)

    def ev(typ, a, b, conf=None):
        e = {"type": typ, "start": ts(a), "end": ts(b), "probability": 0.9, "source": "audio"}
        if conf is not None:
            e["attributionConfidence"] = conf
        return e

    def session(channel, evs):
        return {"channel": channel, "sessionId": "x", "startTime": ts(0), "endTime": ts(120), "events": evs,
                "breathingRates": [], "sleepStageIntervals": [], "statistics": {}, "audioStatistics": {}}
    truth = [{"sleeper": "primary", "class": "snoring", "start": 10.0, "end": 11.5},
             {"sleeper": "primary", "class": "snoring", "start": 14.0, "end": 15.5},
             {"sleeper": "secondary", "class": "coughing", "start": 30.0, "end": 30.6},
             {"sleeper": "secondary", "class": "talking", "start": 50.0, "end": 53.0},
             {"sleeper": "primary", "class": "movement", "start": 51.0, "end": 52.0}]
    both = {"scenario": "both", "duration": 120.0, "events": truth}
    stereo = {"source": {}, "channelSeparation": {"preset": "bedside"}, "sessions": [
        session("primary", [ev("snoring", 10.1, 11.4, 0.99), ev("snoring", 14.2, 15.3, 0.6),
                            ev("coughing", 30.1, 30.5, 0.55), ev("movement", 51.2, 51.8, 0.9),
                            ev("talking", 80, 81, 0.7)]),
        session("secondary", [ev("snoring", 14.1, 15.4, 0.4), ev("talking", 50.2, 52.8, 0.95)])]}
    sess = sessions_of(json.loads(json.dumps(stereo)))
    refs = {"primary": [("snoring", 10.0, 11.6, 0.9, None), ("snoring", 14.0, 15.0, 0.9, None)],
            "secondary": [("coughing", 30.0, 30.7, 0.9, None)]}
    c = score_scene(both, sess, refs, new_counts())
    at = c["attribution"]
    # matched: P snore x2 ok, P cough wrong, P movement ok, S snore wrong, S talking ok -> 6 matched, 4 correct
    assert (at["matched"], at["correct"]) == (6, 4), at
    assert at["unmatched"] == {"primary": 1, "secondary": 0}, at["unmatched"]
    # found in the own session: both snores, the talking, the movement; the second snore also in the secondary's
    assert (c["duplicates"]["detected"], c["duplicates"]["duplicates"]) == (4, 1), c["duplicates"]
    # (the cough is detected only in the wrong session, so it is neither "detected" nor a duplicate)
    seg = c["segments"]["primary"]["snoring"]
    # reference 10-11.5 and 14-15.5 merged (gap 2.5 < 10) -> 10..15.5 = seconds 10..15 (6 s); detected 10.1..15.3
    # merged -> seconds 10..15 -> tp 6
    assert seg["stereo"] == [6, 0, 0] and seg["mono"] == [5, 0, 1], seg     # mono: 10..15 -> 5 s
    segc = c["segments"]["secondary"]["coughing"]
    assert segc["stereo"] == [0, 0, 1] and segc["mono"] == [1, 0, 0], segc
    # A primary-only scene: the secondary session has a leaked snore and an unrelated movement.
    only = {"scenario": "primary-only", "duration": 3600.0,
            "events": [{"sleeper": "primary", "class": "snoring", "start": 100.0, "end": 101.0}]}
    sess2 = {"primary": [("snoring", 100.0, 101.0, 0.9, 0.9)],
             "secondary": [("snoring", 100.1, 100.9, 0.6, 0.3), ("movement", 2000.0, 2001.0, 0.7, 0.8)]}
    c = score_scene(only, sess2, {"primary": [], "secondary": [("movement", 5, 6, 0.6, None)]}, c)
    s = summarize(c)
    assert s["crosstalk"]["crosstalk_events"] == 1 and s["crosstalk"]["events"] == 2, s["crosstalk"]
    assert abs(s["crosstalk"]["crosstalk_per_hour"] - 1.0) < 1e-9, s["crosstalk"]
    assert s["crosstalk"]["mono_reference_events_per_hour"] == 1.0
    assert s["attribution"]["matched"] == 8 and s["attribution"]["accuracy"] == 0.625, s["attribution"]
    assert s["duplicates"]["duplicates"] == 2, s["duplicates"]
    # On nothing: the primary's talking at 80 s and the secondary's movement at 2000 s (stereo), the mono
    # reference's movement at 5 s; 3720 s in all.
    assert s["on_nothing"]["stereo"]["events"] == 2 and s["on_nothing"]["mono"]["events"] == 1, s["on_nothing"]
    assert s["on_nothing"]["stereo"]["by_class"]["talking"] == 1 and s["on_nothing"]["stereo"]["by_class"]["movement"] == 1
    assert abs(s["on_nothing"]["stereo"]["per_hour"] - round(2 / (3720 / 3600), 3)) < 1e-9, s["on_nothing"]
    # Events split by `channel` in a single result (no `sessions`) give the same sessions.
    flat = {"startTime": ts(0), "events": [dict(e, channel=ss["channel"]) for ss in stereo["sessions"]
                                           for e in ss["events"]]}
    assert sessions_of(flat) == sess
    print(markdown("selftest", [("bedside (fake)", s)]))
    print("\nselftest passed")


# ------------------------------------------------------------------------------------------------ main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=sorted(R.SPLITS), nargs="+", default=["dev"])
    ap.add_argument("--preset", choices=R.PRESETS, nargs="+", default=R.PRESETS)
    ap.add_argument("--scenes", type=int, default=8, help="scenes per split and preset (default 8)")
    ap.add_argument("--minutes", type=float, default=10, help="minutes per scene (default 10)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel scenes (generation and analysis; default 2)")
    ap.add_argument("--mode", choices=["separation", "per-channel", "oracle"], default="separation",
                    help="separation: `analyze --channel-separation PRESET` on the stereo file (default); "
                         "per-channel: each channel analysed as a mono file (no separation: the baseline); "
                         "oracle: the mono references as the sessions (a perfect separator: the metrics' ceiling)")
    ap.add_argument("--binary", default=default_binary(), help="the CLI ($SLEEPCYCLE_BIN, else .build/release)")
    ap.add_argument("--analyze-option", action="append", default=[],
                    help="an extra option for every `analyze` call, e.g. --analyze-option=--start=... (repeatable)")
    ap.add_argument("--selftest", action="store_true", help="check the metrics on hand-made results and exit")
    ap.add_argument("--report", action="store_true",
                    help="print the tables of every entry (preset, mode) in $SEPARATION_WORK/results-<split>.json; "
                         "analyse nothing")
    args = ap.parse_args()
    if args.selftest:
        selftest()
        return
    if args.report:
        for split in args.split:
            path = os.path.join(R.WORK, "results-%s.json" % split)
            entries = json.load(open(path))["entries"] if os.path.exists(path) else {}
            rows = [(k.split("/")[0] if e["mode"] == "separation" else "%s (%s)" % (e["preset"], e["mode"]),
                     e["summary"]) for k, e in sorted(entries.items(), key=lambda kv: (kv[1]["mode"], kv[0]))
                    if e["preset"] in args.preset]
            print(markdown(split, rows) + "\n")
        return
    if not os.path.exists(args.binary):
        raise SystemExit("%s: no such binary (build it, or set $SLEEPCYCLE_BIN / --binary)" % args.binary)
    for split in args.split:
        entries = []
        path = os.path.join(R.WORK, "results-%s.json" % split)
        results = json.load(open(path)) if os.path.exists(path) else {"split": split, "entries": {}}
        for preset in args.preset:
            metas = R.ensure_scenes(split, preset, args.scenes, args.minutes, args.jobs)
            out_dir = os.path.join(R.WORK, "out", "%s-%gmin" % (split, args.minutes), preset, args.mode)
            counts = new_counts()
            per_scene = []

            def job(meta):
                return meta, run_scene(args.binary, meta, args.mode, preset, args.analyze_option, out_dir)
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                for meta, (sessions, refs) in pool.map(job, metas):
                    score_scene(meta, sessions, refs, counts)
                    oc = score_scene(meta, sessions, refs, new_counts())
                    one = summarize(oc)
                    per_scene.append({"index": meta["index"], "scenario": meta["scenario"],
                                      "rt60": meta["acoustics"]["rt60"],
                                      "level_difference_db": meta["level_difference_db"],
                                      "reference_events": {k: sum(e["sleeper"] == k for e in meta["events"])
                                                           for k in SLEEPERS},
                                      "detected": {k: len(sessions[k]) for k in SLEEPERS},
                                      "attribution": {"matched": oc["attribution"]["matched"],
                                                      "correct": oc["attribution"]["correct"]},
                                      "crosstalk_events": one["crosstalk"]["crosstalk_events"],
                                      "duplicates": one["duplicates"]["duplicates"]})
                    print("%s/%s scene %02d %-14s RT60 %.2f ILD %s dB | ref P %d S %d | detected P %d S %d | "
                          "attribution %s of %d | cross-talk %d | duplicates %d" % (
                              split, preset, meta["index"], meta["scenario"], meta["acoustics"]["rt60"],
                              "/".join("%.1f" % v for v in meta["level_difference_db"]),
                              per_scene[-1]["reference_events"]["primary"],
                              per_scene[-1]["reference_events"]["secondary"],
                              len(sessions["primary"]), len(sessions["secondary"]),
                              fmt(one["attribution"]["accuracy"] * 100, "%.1f %%"), one["attribution"]["matched"],
                              one["crosstalk"]["crosstalk_events"], one["duplicates"]["duplicates"]), flush=True)
            s = summarize(counts)
            label = preset if args.mode == "separation" else "%s (%s)" % (preset, args.mode)
            entries.append((label, s))
            results["entries"]["%s/%s" % (preset, args.mode)] = {
                "preset": preset, "mode": args.mode, "binary": args.binary, "minutes": args.minutes,
                "folds": R.SPLITS[split]["folds"], "generator_version": R.VERSION,
                "analyze_options": args.analyze_option, "summary": s, "scenes": per_scene}
        os.makedirs(R.WORK, exist_ok=True)
        R.C.write_cache(path, results)
        print()
        print(markdown(split, entries))
        print("\nwritten: %s" % path)


if __name__ == "__main__":
    main()
