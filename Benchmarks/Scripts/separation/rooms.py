#!/usr/bin/env python3
"""Simulated bedrooms for the two-sleeper ("channel separation") evaluation.

    python3 Benchmarks/Scripts/separation/rooms.py --split dev --preset bedside [--scenes 8] [--minutes 10]

Each scene: a shoebox bedroom (pyroomacoustics image-source method, RT60 0.2-0.6 s), two sleepers lying in a double
bed, a stereo microphone (preset `bedside`: one microphone on each nightstand; `centered`: a closely spaced pair at
the headboard centre), bedroom noise, quiet breathing of both sleepers, and events (snoring bouts, talking, coughs,
movement) from the development clips, emitted at the head of the primary (left, channel 0) or the secondary sleeper
(right, channel 1). Written for every scene (16 kHz, 16-bit WAV):

    stereo.wav          the two microphones (channel 0 = left = primary's side)
    ref-primary.wav     the primary's sounds alone (+ the same noise) at channel 0's microphone (mono)
    ref-secondary.wav   the secondary's sounds alone (+ the same noise) at channel 1's microphone (mono)
    scene.json          ground truth (events: sleeper, class, start, end) and the room (geometry, RT60, levels)

The scene's content (room, bed, sleepers, events, noise) depends on the split and the scene index only; the preset
changes only where the microphones are, so `bedside` and `centered` scenes of one index are the same night heard
through two microphone layouts. Deterministic: every draw comes from numpy generators seeded
[SEED, split, scene, purpose(, preset)]. Audio is cached under $SEPARATION_WORK (default
/tmp/sleepcycle-separation-work), never in the repository (the clips' licences forbid copying them).
"""
import os
os.environ.setdefault("OMP_NUM_THREADS", "1")
import argparse
import functools
import json
import multiprocessing
import sys

import numpy as np
import soundfile as sf
from scipy.signal import oaconvolve

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "detection"))
import common as C    # noqa: E402  (detection scripts: backgrounds, breathing, clip levels)
import dataset as D   # noqa: E402  (manifest items, clip audio)
import nights as N    # noqa: E402  (per-fold clip pools)

SR = C.SR
SEED = 20261203
VERSION = 1                       # bump when the generator changes: cached scenes of another version are not reused
WORK = os.environ.get("SEPARATION_WORK", "/tmp/sleepcycle-separation-work")
PRESETS = ["bedside", "centered"]
SLEEPERS = ["primary", "secondary"]
# Splits by cross-validation fold of the detection scripts (common.fold_of): dev scenes use only clips of folds 2-4,
# held-out scenes only clips of folds 0-1 (detection reports on folds 0 1 and tunes on 2 3), and other seeds.
SPLITS = {"dev": {"id": 0, "folds": [2, 3, 4]}, "heldout": {"id": 1, "folds": [0, 1]}}
SCENARIOS = ["both", "primary-only", "both", "secondary-only"]     # scene i has SCENARIOS[i % 4]
SPEC = {
    "room_x": (3.0, 5.0), "room_y": (3.5, 5.0), "room_z": (2.5, 2.8), "rt60": (0.2, 0.6),
    "bed_width": (1.4, 1.8), "head_spacing": (0.6, 0.9), "head_z": (0.5, 0.7), "head_y": (0.25, 0.45),
    "bedside_distance": (0.3, 0.7), "bedside_z": (0.45, 0.85),
    "centered_spacing": (0.08, 0.20), "centered_z": (0.55, 0.95), "centered_y": (0.03, 0.12),
    "background_db": (-70, -40), "piece_minutes": (3, 8), "breathing_db": (0, 10),
    "snore_period": (3.5, 5.0), "snore_count": (10, 31), "snore_snr": (12, 30), "talk_snr": (8, 30),
    "cough_snr": (10, 30), "movement_snr": (8, 25),
    # per active sleeper and 10 minutes
    "bouts": {"snoring": 2, "talking": 2, "coughing": 2, "movement": 2},
    "first_event": (10, 30), "event_gap": (4, 20), "tail": 20, "overlay_share": 0.3,
}


# ------------------------------------------------------------------------------------------------ clip pools
@functools.lru_cache(maxsize=None)
def split_pools(split):
    """The clips of the split's folds (nights.pools_for_fold, merged over the folds)."""
    its = D.items()
    out = None
    for k in SPLITS[split]["folds"]:
        p = N.pools_for_fold(its, k)
        out = p if out is None else {key: out[key] + p[key] for key in out}
    return out


# ------------------------------------------------------------------------------------------------ geometry
def draw_room(rng):
    """Room, bed and heads (the same for every preset). The headboard is against the wall y = 0; x runs from the
    primary's (left) side to the secondary's."""
    s = SPEC
    L, W, H = rng.uniform(*s["room_x"]), rng.uniform(*s["room_y"]), rng.uniform(*s["room_z"])
    bw = min(rng.uniform(*s["bed_width"]), L - 1.2)
    cx = rng.uniform(bw / 2 + 0.6, L - bw / 2 - 0.6)
    d = rng.uniform(*s["head_spacing"])
    heads = []
    for side in (-1, 1):
        x = cx + side * d / 2 + rng.uniform(-0.03, 0.03)
        heads.append([x, rng.uniform(*s["head_y"]), rng.uniform(*s["head_z"])])
    corner = int(rng.integers(4))                      # noise source (fan, air conditioner, ...) near a corner
    nx = rng.uniform(0.2, 0.5) if corner in (0, 2) else L - rng.uniform(0.2, 0.5)
    ny = rng.uniform(0.2, 0.5) if corner in (0, 1) else W - rng.uniform(0.2, 0.5)
    if corner in (0, 1):                               # a corner on the headboard wall: keep it off the nightstands
        nx = min(nx, cx - bw / 2 - 0.5) if corner == 0 else max(nx, cx + bw / 2 + 0.5)
        nx = float(np.clip(nx, 0.1, L - 0.1))
    noise = [nx, ny, rng.uniform(0.3, 2.2)]
    return {"dims": [L, W, H], "bed": {"centre_x": cx, "width": bw}, "heads": heads, "noise_source": noise,
            "rt60_target": rng.uniform(*s["rt60"])}


def draw_mics(rng, room, preset):
    """Microphone positions [channel 0, channel 1] for `preset` (channel 0 = left = toward the primary)."""
    s = SPEC
    L, W, H = room["dims"]
    heads = np.array(room["heads"])
    cx, bw = room["bed"]["centre_x"], room["bed"]["width"]
    if preset == "bedside":
        mics = []
        for i, side in enumerate((-1, 1)):
            edge = cx + side * bw / 2                  # the bed's edge on this side: the nightstand is beyond it
            for _ in range(10000):
                r = rng.uniform(*s["bedside_distance"])
                z = rng.uniform(*s["bedside_z"])
                dz = z - heads[i][2]
                if abs(dz) >= r:
                    continue
                rh = np.sqrt(r * r - dz * dz)
                phi = np.radians(rng.uniform(-70, 70))
                m = heads[i] + np.array([side * rh * np.cos(phi), rh * np.sin(phi), dz])
                if side * (m[0] - edge) >= 0.03 and 0.05 <= m[1] <= W - 0.05 and 0.05 <= m[0] <= L - 0.05:
                    mics.append(m.tolist())
                    break
            else:
                raise RuntimeError("no nightstand position")
        return mics
    mid = heads.mean(axis=0)
    u = heads[0] - heads[1]
    u[2] = 0
    u /= np.linalg.norm(u)
    c = np.array([mid[0] + rng.uniform(-0.05, 0.05), rng.uniform(*s["centered_y"]), rng.uniform(*s["centered_z"])])
    sp = rng.uniform(*s["centered_spacing"])
    return [(c + u * sp / 2).tolist(), (c - u * sp / 2).tolist()]


def _shoebox(room, mics, rt60):
    import pyroomacoustics as pra
    e_abs, max_order = pra.inverse_sabine(rt60, room["dims"])
    r = pra.ShoeBox(room["dims"], fs=SR, materials=pra.Material(float(e_abs)), max_order=max_order,
                    air_absorption=True)
    for p in room["heads"] + [room["noise_source"]]:
        r.add_source(p)
    r.add_microphone_array(np.array(mics).T)
    r.compute_rir()
    return r, float(e_abs), int(max_order)


def impulse_responses(room, mics):
    """RIRs h[source][mic] (sources: primary head, secondary head, noise source) by the image-source method with
    frequency-independent wall absorption and air absorption. Sabine's formula overestimates the absorption an
    image-source shoebox needs, so the absorption is set once from the target RT60, the RT60 measured (Schroeder
    backward integration, median over the six responses), and set again for target^2 / measured."""
    target = room["rt60_target"]
    r, _, _ = _shoebox(room, mics, target)
    first = float(np.median(r.measure_rt60()))
    r, e_abs, order = _shoebox(room, mics, min(1.5, target * target / first))
    measured = float(np.median(r.measure_rt60()))
    h = [[np.asarray(r.rir[m][s], np.float64) for m in range(2)] for s in range(3)]
    return h, {"rt60": round(measured, 3), "absorption": round(e_abs, 4), "max_order": order}


# ------------------------------------------------------------------------------------------------ the scene
def scene_dir(split, preset, index, minutes):
    return os.path.join(WORK, "scenes", "v%d-%s-%gmin" % (VERSION, split, minutes), preset, "scene-%02d" % index)


def scenario_of(index):
    return SCENARIOS[index % len(SCENARIOS)]


def _convolve(x, h, n):
    return oaconvolve(x, h.astype(np.float32))[:n].astype(np.float32)


def build_scene(split, preset, index, minutes):
    """Renders one scene into scene_dir(...) (see the module doc) and returns its scene.json content."""
    sid = SPLITS[split]["id"]
    s = SPEC
    n = int(minutes * 60 * SR)
    room = draw_room(np.random.default_rng([SEED, sid, index, 1]))
    mics = draw_mics(np.random.default_rng([SEED, sid, index, 2, PRESETS.index(preset)]), room, preset)
    h, acoustics = impulse_responses(room, mics)
    # Gains: a sleeper's responses scaled so that the one to their own microphone (channel 0 for the primary,
    # 1 for the secondary) has unit energy, so a level set "at the own microphone" is what that microphone hears
    # (the other microphone gets what the room gives); the noise source's so that the mean over both is 1.
    energy = [[float(np.sum(h[src][m] ** 2)) for m in range(2)] for src in range(3)]
    for src in range(2):
        g = 1 / np.sqrt(energy[src][src])
        h[src] = [x * g for x in h[src]]
    g = 1 / np.sqrt(np.mean(energy[2]))
    h[2] = [x * g for x in h[2]]
    dist = [[float(np.linalg.norm(np.subtract(room["heads"][i], mics[m]))) for m in range(2)] for i in range(2)]

    rng = np.random.default_rng([SEED, sid, index, 3])
    # ---- background: pieces of 3-8 min, 2-s crossfades, -70 to -40 dBFS at the microphones. Each piece is either
    # diffuse (independent noise of the same kind and level on each microphone) or a point source near a room
    # corner (fan, air conditioner, ...) heard through the room, with an independent diffuse floor 12 dB lower.
    noise = np.zeros((2, n), np.float32)
    level = np.zeros(n, np.float32)
    corner = np.zeros(n, np.float32)
    pieces = []
    pos = 0
    while pos < n:
        ln = min(n - pos, int(rng.uniform(*s["piece_minutes"]) * 60 * SR))
        db = rng.uniform(*s["background_db"])
        kind = ["pink", "brown", "fan", "ac", "white"][int(rng.integers(5))]
        point = bool(rng.random() < 0.5)
        seed = int(rng.integers(2 ** 31))
        fade = min(ln, 2 * SR)
        env = np.ones(ln, np.float32)
        env[:fade] = np.linspace(0, 1, fade)
        if pos + ln < n:
            env[-fade:] = np.linspace(1, 0, fade)
        amp = 10 ** (db / 20)
        diffuse_amp = amp * (10 ** (-12 / 20) if point else 1.0)
        for m in range(2):
            x, _ = C.background(np.random.default_rng([seed, m]), ln, kind)
            noise[m, pos:pos + ln] += x * env * diffuse_amp
        if point:
            x, _ = C.background(np.random.default_rng([seed, 2]), ln, kind)
            corner[pos:pos + ln] += x * env * amp
        level[pos:pos + ln] = db
        pieces.append({"start": pos / SR, "end": (pos + ln) / SR, "kind": kind, "db": round(db, 1),
                       "render": "corner source" if point else "diffuse"})
        pos += ln - (fade if pos + ln < n else 0)
    if np.any(corner):
        for m in range(2):
            noise[m] += _convolve(corner, h[2][m], n)
    del corner

    # ---- dry tracks of the two sleepers: quiet breathing all night, events at their head
    dry = np.zeros((2, n), np.float32)
    for i in range(2):
        br = C.breathing(rng, n / SR)
        dry[i] += br / C.active_rms(br) * 10 ** ((level + rng.uniform(*s["breathing_db"])) / 20)
    pools = split_pools(split)
    snore_ids = rng.choice(len(pools["snore_groups"]), 2, replace=False)
    speaker_ids = rng.choice(len(pools["speakers"]), 2, replace=False)
    coughs = [pools["coughs"][0::2], pools["coughs"][1::2]]
    truth = []

    def place(i, clip, t, cls, snr):
        a = int(t * SR)
        b = min(n, a + len(clip))
        if b <= a:
            return
        g = 10 ** ((level[a] + snr) / 20) / C.active_rms(clip)
        dry[i, a:b] += clip[:b - a] * g
        st, en = C.active_extent(clip[:b - a])
        truth.append({"sleeper": SLEEPERS[i], "class": cls, "start": round((a + st) / SR, 3),
                      "end": round((a + en) / SR, 3), "bout": len(bouts_placed)})

    scenario = scenario_of(index)
    active = {"both": [0, 1], "primary-only": [0], "secondary-only": [1]}[scenario]
    per = minutes / 10.0
    wanted = [(i, cls) for i in active for cls, k in s["bouts"].items() for _ in range(max(1, int(round(k * per))))]
    wanted = [wanted[j] for j in rng.permutation(len(wanted))]
    bouts_placed = []
    cursor = rng.uniform(*s["first_event"])
    for i, cls in wanted:
        start = cursor
        overlay = False
        if (scenario == "both" and bouts_placed and bouts_placed[-1]["sleeper"] != SLEEPERS[i]
                and rng.random() < s["overlay_share"]):
            prev = bouts_placed[-1]
            start = prev["start"] + rng.uniform(0.1, 0.7) * (prev["end"] - prev["start"])
            overlay = True
        if start > minutes * 60 - s["tail"]:
            break
        t = start
        if cls == "snoring":
            group = pools["snore_groups"][snore_ids[i]]
            period, count = rng.uniform(*s["snore_period"]), int(rng.integers(*s["snore_count"]))
            snr0 = rng.uniform(*s["snore_snr"])
            for k in range(count):
                place(i, group[k % len(group)], start + k * period * rng.uniform(0.95, 1.05), "snoring",
                      snr0 + rng.uniform(-3, 3))
            t = start + count * period
        elif cls == "talking":
            spk = pools["speakers"][speaker_ids[i]]
            snr = rng.uniform(*s["talk_snr"])
            for _ in range(int(rng.integers(1, 4))):
                clip = spk[rng.integers(len(spk))]
                place(i, clip, t, "talking", snr + rng.uniform(-2, 2))
                t += len(clip) / SR + rng.uniform(0.3, 0.8)
        elif cls == "coughing":
            snr = rng.uniform(*s["cough_snr"])
            for _ in range(int(rng.integers(1, 4))):
                clip = coughs[i][rng.integers(len(coughs[i]))]
                place(i, clip, t, "coughing", snr + rng.uniform(-3, 3))
                t += len(clip) / SR + rng.uniform(0.2, 0.6)
        else:
            clip = pools["movement"][rng.integers(len(pools["movement"]))]
            place(i, clip, t, "movement", rng.uniform(*s["movement_snr"]))
            t += len(clip) / SR
        t = min(t, n / SR)
        bouts_placed.append({"sleeper": SLEEPERS[i], "class": cls, "start": round(start, 3), "end": round(t, 3),
                             "overlay": overlay})
        cursor = max(cursor, t) + rng.uniform(*s["event_gap"])
    for e in truth:
        e["overlap"] = any(o["sleeper"] != e["sleeper"] and o["start"] < e["end"] + 0.5 and o["end"] > e["start"] - 0.5
                           for o in truth)

    # ---- through the room
    wet = np.zeros((2, 2, n), np.float32)              # [sleeper][mic]
    for i in range(2):
        for m in range(2):
            wet[i, m] = _convolve(dry[i], h[i][m], n)
    del dry
    stereo = np.stack([wet[0, 0] + wet[1, 0] + noise[0], wet[0, 1] + wet[1, 1] + noise[1]], axis=1)
    refs = {"primary": wet[0, 0] + noise[0], "secondary": wet[1, 1] + noise[1]}
    clipped = float(np.mean(np.abs(stereo) >= 1.0))
    out = scene_dir(split, preset, index, minutes)
    os.makedirs(out, exist_ok=True)

    def wav(name, x):
        C.write_atomically(os.path.join(out, name), lambda tmp: sf.write(tmp, np.clip(x, -1, 1), SR,
                                                                        subtype="PCM_16", format="WAV"))
    wav("stereo.wav", stereo)
    for k, x in refs.items():
        wav("ref-%s.wav" % k, x)
    # Level differences between the microphones (energy of the responses before scaling): how much louder a
    # sleeper is on their own microphone than on the other (reverberant field included).
    ild = [round(10 * np.log10(energy[i][i] / energy[i][1 - i]), 2) for i in range(2)]
    meta = {"version": VERSION, "split": split, "preset": preset, "index": index, "minutes": minutes,
            "scenario": scenario, "duration": n / SR, "sampleRate": SR,
            "room": {k: v for k, v in room.items()}, "mics": mics, "acoustics": acoustics,
            "distances": {"primary": dist[0], "secondary": dist[1]}, "level_difference_db": ild,
            "background": pieces, "snore_groups": [int(x) for x in snore_ids],
            "speakers": [int(x) for x in speaker_ids], "clipped_share": clipped,
            "bouts": bouts_placed, "events": truth}
    C.write_cache(os.path.join(out, "scene.json"), meta)      # last: its presence marks a complete scene
    return meta


def load_scene(split, preset, index, minutes):
    p = os.path.join(scene_dir(split, preset, index, minutes), "scene.json")
    if os.path.exists(p):
        meta = json.load(open(p))
        if meta.get("version") == VERSION:
            return meta
    return None


def _build(args):
    split, preset, index, minutes = args
    meta = load_scene(*args) or build_scene(*args)
    return meta


def ensure_scenes(split, preset, scenes, minutes, jobs=2, verbose=True):
    """scene.json contents of scenes 0..scenes-1 (generated where missing, `jobs` processes)."""
    todo = [(split, preset, i, minutes) for i in range(scenes)]
    missing = [t for t in todo if load_scene(*t) is None]
    if missing and verbose:
        print("generating %d %s/%s scene(s) of %g min in %s ..." % (len(missing), split, preset, minutes, WORK),
              flush=True)
    if missing:
        if jobs > 1 and len(missing) > 1:
            with multiprocessing.get_context("fork").Pool(min(jobs, len(missing))) as pool:
                for meta in pool.imap_unordered(_build, missing):
                    if verbose:
                        print("  " + describe(meta), flush=True)
        else:
            for t in missing:
                meta = _build(t)
                if verbose:
                    print("  " + describe(meta), flush=True)
    return [load_scene(*t) for t in todo]


def describe(m):
    ev = m["events"]
    return ("%s/%s scene %02d %-14s room %.1fx%.1fx%.1f m RT60 %.2f s | head-mic %s / %s m | ILD %s dB | "
            "events P %d S %d (overlapping %d)" % (
                m["split"], m["preset"], m["index"], m["scenario"], *m["room"]["dims"], m["acoustics"]["rt60"],
                "/".join("%.2f" % d for d in m["distances"]["primary"]),
                "/".join("%.2f" % d for d in m["distances"]["secondary"]),
                "/".join("%.1f" % d for d in m["level_difference_db"]),
                sum(e["sleeper"] == "primary" for e in ev), sum(e["sleeper"] == "secondary" for e in ev),
                sum(e["overlap"] for e in ev)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=sorted(SPLITS), nargs="+", default=["dev"])
    ap.add_argument("--preset", choices=PRESETS, nargs="+", default=PRESETS)
    ap.add_argument("--scenes", type=int, default=8)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    for split in args.split:
        for preset in args.preset:
            for m in ensure_scenes(split, preset, args.scenes, args.minutes, args.jobs, verbose=True):
                print(describe(m))


if __name__ == "__main__":
    main()
