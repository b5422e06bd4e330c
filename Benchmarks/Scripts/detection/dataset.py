"""Training/evaluation scenes: every labelled clip (and synthetic movement / quiet breathing) laid on a generated
bedroom background, in two augmented copies, and the Swift segment features of each scene (cached)."""
import json
import os

import numpy as np

import common as C

SEED = 20261121
PRE_SEC, POST_SEC = 1.5, 1.0
N_MOVEMENT, N_BREATHING, N_NIGHT_BACKGROUND = 400, 150, 150
# Real breathing (Coswara deep breathing, label "breathing" = none): every recording cut into pieces of up to
# BREATHING_PIECE_SEC (a last piece under 3 s is dropped), each piece in BREATHING_VARIANTS scenes (different
# backgrounds and SNRs). 0 variants: none (the model before 2026-11-21, session 5).
BREATHING_PIECE_SEC = 10.0
BREATHING_VARIANTS = int(os.environ.get("DETECT_BREATHING_VARIANTS", "2"))
# Share of the hard copy's clips placed in a synthetic room (C.room_impulse, RT60 0.2-1.0 s, DRR -6 to +10 dB).
REVERB_SHARE = float(os.environ.get("DETECT_REVERB_SHARE", "0.5"))
# Synthetic tonal sounds (C.tonal: beeps, bells, sirens, bird chirps, animal-like calls), labelled none, appended
# after every other item so that no other item's index (and seed) changes. 0: none (the model before session 6).
N_TONAL = int(os.environ.get("DETECT_TONAL", "300"))
# The training mix for unseen conditions (issue 31). The defaults are the committed model's mix; the knobs give the
# mixes that were measured against it (docs/0005-event-detection-log.md, "Unseen conditions in training"): they
# gained snoring and coughs through band-limited microphones and lost talking, so none is the default.
# Quiet talk: every speech clip once more, mumbled (C.mumble) or, with probability WHISPER_SHARE, whispered
# (C.whisper), labelled talking, in its speaker's group (so its fold); appended after the tonal sounds. 0: none.
VOICE_VARIANTS = int(os.environ.get("DETECT_VOICE_VARIANTS", "0"))
WHISPER_SHARE = float(os.environ.get("DETECT_WHISPER_SHARE", "0"))
# Household impacts (C.impact: knocks, drops, doors, footsteps), labelled none, appended last. 0: none.
N_IMPACT = int(os.environ.get("DETECT_IMPACTS", "0"))
# Share of each copy's scenes heard through a random microphone response (C.microphone; the whole scene, clip and
# background).
MIC_SHARE = tuple(float(v) for v in os.environ.get("DETECT_MIC_SHARE", "0,0").split(","))
# Share of the hard copy's clips (the clip only) band-limited by C.band_limit (telephone band, 4 kHz, high-passed).
CLIP_BAND_LIMIT = float(os.environ.get("DETECT_CLIP_BAND_LIMIT", "0.5"))
# The hard copy's SNR range (dB over the background).
HARD_SNR = tuple(float(v) for v in os.environ.get("DETECT_HARD_SNR", "5,20").split(","))


def items():
    """Manifest clips + synthetic items, in a fixed order."""
    out = C.load_manifest()
    for i in range(N_MOVEMENT):
        g = "synth-movement-%d" % (i // 20)
        out.append({"id": "synth/movement-%03d" % i, "path": None, "label": "movement", "cls": "movement",
                    "source": "synthetic", "group": g, "fold": C.fold_of(g)})
    for i in range(N_BREATHING):
        g = "synth-breathing-%d" % (i // 10)
        out.append({"id": "synth/breathing-%03d" % i, "path": None, "label": "quiet_breathing", "cls": "none",
                    "source": "synthetic", "group": g, "fold": C.fold_of(g)})
    for i in range(N_NIGHT_BACKGROUND):
        g = "synth-background-%d" % (i // 10)
        out.append({"id": "synth/background-%03d" % i, "path": None, "label": "night_background", "cls": "none",
                    "source": "synthetic", "group": g, "fold": C.fold_of(g)})
    for r in C.load_breathing() if BREATHING_VARIANTS else []:
        pieces = max(1, int(np.ceil((r["duration"] - 3.0) / BREATHING_PIECE_SEC)))
        for p in range(pieces):
            for v in range(BREATHING_VARIANTS):
                out.append(dict(r, id="%s#%d.%d" % (r["id"], p, v), offset=p * BREATHING_PIECE_SEC,
                                max_sec=BREATHING_PIECE_SEC))
    for i in range(N_TONAL):
        g = "synth-tonal-%d" % (i // 10)
        out.append({"id": "synth/tonal-%03d" % i, "path": None, "label": "tonal", "cls": "none",
                    "source": "synthetic", "group": g, "fold": C.fold_of(g)})
    speech = [it for it in out if it["cls"] == "talking" and it["path"]] if VOICE_VARIANTS else []
    for j, it in enumerate(speech):
        voice = "whisper" if np.random.default_rng([SEED, 9, j]).random() < WHISPER_SHARE else "mumble"
        out.append(dict(it, id="%s#%s" % (it["id"], voice), label={"whisper": "whispered_talking", "mumble": "mumbled_talking"}[voice], source="synthetic-voice",
                        variant=voice))
    for i in range(N_IMPACT):
        g = "synth-impact-%d" % (i // 10)
        out.append({"id": "synth/impact-%03d" % i, "path": None, "label": "impact", "cls": "none",
                    "source": "synthetic", "group": g, "fold": C.fold_of(g)})
    return out


def night_background(rng, dur):
    """20 s of changing bedroom background (none): 2-4 pieces of different noise types and levels (-70 to
    -40 dBFS) joined by 0.3-3 s crossfades, with quiet breathing half of the time."""
    n = int(dur * C.SR)
    cuts = np.sort(rng.uniform(0, n, int(rng.integers(1, 4)))).astype(int)
    bounds = [0] + cuts.tolist() + [n]
    x = np.zeros(n, np.float32)
    for a, b in zip(bounds[:-1], bounds[1:]):
        fade = int(rng.uniform(0.3, 3.0) * C.SR)
        a0, b1 = max(0, a - fade // 2), min(n, b + fade // 2)
        piece, _ = C.background(rng, b1 - a0)
        env = np.ones(b1 - a0, np.float32)
        f = min(fade, (b1 - a0) // 2)
        if a0 > 0:
            env[:f] = np.linspace(0, 1, f)
        if b1 < n:
            env[-f:] = np.linspace(1, 0, f)
        x[a0:b1] += piece * env * 10 ** (rng.uniform(-70, -40) / 20)
    if rng.random() < 0.5:
        br = C.breathing(rng, dur)
        x += br / C.active_rms(br) * C.active_rms(x) * 10 ** (rng.uniform(0, 10) / 20)
    return x


def clip_audio(item, index):
    rng = np.random.default_rng([SEED, 7, index])
    if item.get("variant"):
        x = C.read_audio(item["path"], item.get("max_sec", 10.0), item.get("offset", 0.0))
        return C.whisper(rng, x) if item["variant"] == "whisper" else C.mumble(rng, x)
    if item["path"]:
        return C.read_audio(item["path"], item.get("max_sec", 10.0), item.get("offset", 0.0))
    if item["label"] == "impact":
        return C.impact(rng)
    if item["label"] == "movement":
        return C.rustle(rng, rng.uniform(0.3, 3.0))
    if item["label"] == "tonal":
        return C.tonal(rng)
    return C.breathing(rng, 12.0)


def scene(item, index, copy):
    """Copy 0: moderate conditions (SNR 12-35 dB; MIC_SHARE[0] of the scenes through a random microphone). Copy 1:
    hard (SNR HARD_SNR, 5-20 dB; CLIP_BAND_LIMIT of the clips band-limited, REVERB_SHARE of them in a synthetic room,
    MIC_SHARE[1] of the scenes through a random microphone).
    Returns (samples, (clip_start, clip_end) of the clip's active part)."""
    rng = np.random.default_rng([SEED, copy, index])
    if item["label"] == "night_background":
        return night_background(rng, 20.0).astype(np.float32), (0, 0)
    clip = clip_audio(item, index)
    if copy == 1 and rng.random() < CLIP_BAND_LIMIT:
        clip = C.band_limit(rng, clip)
    rrng = np.random.default_rng([SEED, 30 + copy, index])
    if copy == 1 and rrng.random() < REVERB_SHARE:
        clip = C.reverberate(rrng, clip, rt60=(0.2, 1.0), drr_db=(-6.0, 10.0))
    pre, post = int(PRE_SEC * C.SR), int(POST_SEC * C.SR)
    n = pre + len(clip) + post
    bg, _ = C.background(rng, n)
    bg_db = rng.uniform(-70, -40)
    bg *= 10 ** (bg_db / 20)
    if item["label"] == "quiet_breathing":
        snr = rng.uniform(0, 15)
    else:
        snr = rng.uniform(12, 35) if copy == 0 else rng.uniform(*HARD_SNR)
    gain = 10 ** ((bg_db + snr) / 20) / C.active_rms(clip)
    x = bg.copy()
    x[pre:pre + len(clip)] += clip * gain
    a, b = C.active_extent(clip)
    mrng = np.random.default_rng([SEED, 40 + copy, index])
    if mrng.random() < MIC_SHARE[copy]:
        x = C.through_microphone(C.microphone(mrng), x)
    np.clip(x, -1, 1, out=x)
    return x.astype(np.float32), (pre + a, pre + b)


def segments(copy, binary=None):
    """Swift segment features of every scene of one copy (cached in $DETECT_WORK; recomputed when the items or
    the binary's feature names change)."""
    os.makedirs(C.WORK, exist_ok=True)
    cache = os.path.join(C.WORK, "segments-copy%d.json" % copy)
    its = items()
    if os.path.exists(cache):
        data = json.load(open(cache))
        if data["ids"] == [i["id"] for i in its] and C.cache_matches_binary(data["names"], None, binary):
            return data
    extents = []

    def gen():
        for k, it in enumerate(its):
            x, ext = scene(it, k, copy)
            extents.append(ext)
            yield x
    lines = C.run_scenes("segment-features", gen(), binary=binary)
    names = lines[0]["features"]
    data = {"ids": [i["id"] for i in its], "extents": extents, "names": names, "segments": lines[1:]}
    C.write_cache(cache, data)
    return data


def label_segments(data, its):
    """Segment label = the clip's class if at least half of the segment lies inside the clip's active part,
    else none (background)."""
    X, y, scene_idx, sig = [], [], [], []
    for s in data["segments"]:
        k = s["scene"]
        a, b = data["extents"][k]
        overlap = max(0, min(b, s["end"]) - max(a, s["start"]))
        inside = overlap >= 0.5 * (s["end"] - s["start"])
        X.append(s["features"])
        sig.append(s["signature"])
        y.append(C.CLASSES.index(its[k]["cls"]) if inside else 0)
        scene_idx.append(k)
    return (np.array(X, dtype=np.float32).astype(np.float64), np.array(y), np.array(scene_idx),
            np.array(sig, dtype=np.float32).astype(np.float64))


# ---------------------------------------------------------------- night-like training scenes
N_TRAIN_NIGHTS_PER_FOLD, TRAIN_NIGHT_MINUTES = int(os.environ.get("DETECT_TRAIN_NIGHTS", "64")), 10.0
TRAIN_NIGHT_KINDS = ["mixed", "no-snore", "mixed", "quiet"]
# Night segment labels: the event if it covers >= AMBIGUOUS[1] of the segment, none below AMBIGUOUS[0], left out
# of training in between.
AMBIGUOUS = tuple(float(v) for v in os.environ.get("DETECT_NIGHT_LABEL", "0.2,0.5").split(","))
# Snoring: a snore inside a bout shares its segment with the breaths around it (the segmenter bridges them), so a
# segment counts as snoring from 30 % snore on (under 10 %: none). Chosen on the nights of folds 2-3, not 0-1.
AMBIGUOUS_SNORING = tuple(float(v) for v in os.environ.get("DETECT_SNORE_LABEL", "0.1,0.3").split(","))
# Share of the training nights in a synthetic room / through a random microphone (issue 31's mixes; 0: dry, flat).
NIGHT_REVERB_SHARE = float(os.environ.get("DETECT_NIGHT_REVERB_SHARE", "0"))
NIGHT_MIC_SHARE = float(os.environ.get("DETECT_NIGHT_MIC_SHARE", "0"))
# Share of the training nights with a second sleeper's all-night breathing (in the night's room when it has one: an
# image room's second head position, else a tail of its own), drawn from a generator of its own.
NIGHT_PARTNER_SHARE = float(os.environ.get("DETECT_NIGHT_PARTNER_SHARE", "0"))
# The reverberant nights' rooms: "tail" (C.room_impulse, a fresh exponential noise tail per clip) or "image" (one
# image-source bedroom per night, C.image_room: the sleeper's sounds from 4 head positions at one distance of 1-4 m,
# the distractors from elsewhere in the room).
NIGHT_ROOM = os.environ.get("DETECT_NIGHT_ROOM", "tail")
# The microphone nights' snore bouts: their SNR range ("lo,hi" dB; unset: nights.TRAIN_SPEC's) and the random
# microphone's high-pass range ("lo,hi" Hz; C.microphone's 60-450 by default). Issue 31: a laptop's 300-Hz high-pass
# on snores 10 dB over the bed is what the detector misses (docs/0005 log, "Image-method rooms").
NIGHT_MIC_SNORE_SNR = tuple(float(v) for v in os.environ["DETECT_NIGHT_MIC_SNORE_SNR"].split(",")) \
    if os.environ.get("DETECT_NIGHT_MIC_SNORE_SNR") else None
NIGHT_MIC_HIGHPASS = tuple(float(v) for v in os.environ.get("DETECT_NIGHT_MIC_HIGHPASS", "60,450").split(","))
# Processes that build the training nights' segment cache (each runs its own detect-dev).
NIGHT_WORKERS = int(os.environ.get("DETECT_WORKERS", str(os.cpu_count() or 1)))
AMBIGUOUS_TALKING = tuple(float(v) for v in os.environ.get("DETECT_TALK_LABEL", "0.2,0.5").split(","))


def night_segments(binary=None):
    """Swift segment features of the night-like training scenes (nights.TRAIN_SPEC), cached in $DETECT_WORK
    (recomputed when the nights or the binary's feature names change).

    Night j of fold k is built from fold k's clips only, seeded [SEED, 500 + k, j] (the evaluation nights use
    [SEED, 100 + k, j] and nights.EVAL_SPEC). Returns {"folds": [...], "truth": [[(cls, start_s, end_s)]],
    "segments": [...]} with one entry per night."""
    import nights as N
    os.makedirs(C.WORK, exist_ok=True)
    key = "%d-%g-%s-%s-%g-%g-%d-%d" % (N_TRAIN_NIGHTS_PER_FOLD, TRAIN_NIGHT_MINUTES, TRAIN_NIGHT_KINDS,
                                       json.dumps(N.TRAIN_SPEC, sort_keys=True), NIGHT_REVERB_SHARE,
                                       NIGHT_MIC_SHARE, VOICE_VARIANTS, N_IMPACT) + "-w%g" % WHISPER_SHARE \
        + ("-rb" if NIGHT_REVERB_SHARE > 0 else "") \
        + ("-" + NIGHT_ROOM if NIGHT_REVERB_SHARE > 0 and NIGHT_ROOM != "tail" else "") \
        + ("-ms%g,%g" % NIGHT_MIC_SNORE_SNR if NIGHT_MIC_SNORE_SNR else "") \
        + ("-hp%g,%g" % NIGHT_MIC_HIGHPASS if NIGHT_MIC_HIGHPASS != (60, 450) else "") \
        + ("-pa%g" % NIGHT_PARTNER_SHARE if NIGHT_PARTNER_SHARE > 0 else "")
    cache = os.path.join(C.WORK, "segments-nights.json")
    if os.path.exists(cache):
        data = json.load(open(cache))
        first = data["segments"][0]["features"] if data["segments"] else None
        if data["key"] == key and C.cache_matches_binary(data.get("names"), first, binary):
            return data
    plan = [(k, j) for k in range(C.N_FOLDS) for j in range(N_TRAIN_NIGHTS_PER_FOLD)]
    workers = max(1, min(NIGHT_WORKERS, len(plan)))
    parts = [plan[i * len(plan) // workers:(i + 1) * len(plan) // workers] for i in range(workers)]
    if workers == 1:
        results = [_night_part(parts[0], binary)]
    else:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = pool.starmap(_night_part, [(p, binary) for p in parts])
    # One scene numbering over the parts, in plan order (the cache is the same for any number of workers).
    folds, truths, lines, offset = [], [], None, 0
    for f, t, ls in results:
        if lines is None:
            lines = [ls[0]]
        for seg in ls[1:]:
            seg["scene"] += offset
            lines.append(seg)
        folds += f
        truths += t
        offset += len(f)
    data = {"key": key, "names": lines[0]["features"], "folds": folds, "truth": truths, "segments": lines[1:]}
    C.write_cache(cache, data)
    return data


def _night_part(plan, binary):
    """Segment features of the training nights (fold, night) of `plan`: (folds, truths, detect-dev lines)."""
    import nights as N
    its = items()
    pools = {}
    folds, truths = [], []

    def gen():
        for k, j in plan:
            if k not in pools:
                pools[k] = N.pools_for_fold(its, k, training=True)
            rng = np.random.default_rng([SEED, 500 + k, j])
            kind = TRAIN_NIGHT_KINDS[j % len(TRAIN_NIGHT_KINDS)]
            # The night's room and microphone come from generators of their own, so its events, levels and
            # distractors are those of the dry night: NIGHT_REVERB_SHARE of the nights in a synthetic room (every
            # clip convolved, and the sleeper's all-night breathing in a room of its own generator, so that a tail
            # of reverberation is not evidence of an event), NIGHT_MIC_SHARE of them through a random microphone.
            arng = np.random.default_rng([SEED, 700 + k, j])
            reverb = np.random.default_rng([SEED, 800 + k, j]) if arng.random() < NIGHT_REVERB_SHARE else None
            breathing_room, convolve, partner_room = None, None, None
            if reverb is not None and NIGHT_ROOM == "image":
                hs = C.image_room(reverb)
                convolve, breathing_room = C.room_hooks(hs, reverb)
                partner_room = C.partner_hook(hs)
            elif reverb is not None:
                brng = np.random.default_rng([SEED, 850 + k, j])
                breathing_room = lambda br: C.reverberate(brng, br)[:len(br)]
                partner_room = breathing_room
            prng = np.random.default_rng([SEED, 900 + k, j])
            partner = (prng, partner_room) if prng.random() < NIGHT_PARTNER_SHARE else None
            mic_night = arng.random() < NIGHT_MIC_SHARE    # (build_night draws nothing from arng)
            spec = dict(N.TRAIN_SPEC, snore_snr=NIGHT_MIC_SNORE_SNR) if mic_night and NIGHT_MIC_SNORE_SNR \
                else N.TRAIN_SPEC
            x, truth = N.build_night(rng, kind, TRAIN_NIGHT_MINUTES, pools[k], spec, reverb_rng=reverb,
                                     convolve=convolve, convolve_breathing=breathing_room, partner=partner)
            if mic_night:
                x = np.clip(C.through_microphone(C.microphone(arng, NIGHT_MIC_HIGHPASS), x), -1, 1)
            folds.append(k)
            truths.append([(c, float(s), float(e)) for c, s, e in truth])
            yield x
    lines = C.run_scenes("segment-features", gen(), binary=binary)
    return folds, truths, lines


def night_labels(data):
    """Label of every night segment: the class of the reference events covering the largest part of it if that is at
    least AMBIGUOUS[1] (snoring, talking: their own pair) of the segment, none (0) under AMBIGUOUS[0], -1 (left out
    of training) in between."""
    y = []
    for s in data["segments"]:
        k = s["scene"]
        a, b = s["start"] / C.SR, s["end"] / C.SR
        cover = {}
        for cls, ts, te in data["truth"][k]:
            cover[cls] = cover.get(cls, 0.0) + max(0.0, min(b, te) - max(a, ts))
        cls, ov = max(cover.items(), key=lambda kv: (kv[1], kv[0])) if cover else ("none", 0.0)
        frac = ov / max(b - a, 1e-9)
        lo, hi = {"snoring": AMBIGUOUS_SNORING, "talking": AMBIGUOUS_TALKING}.get(cls, AMBIGUOUS)
        y.append(C.CLASSES.index(cls) if frac >= hi else (0 if frac < lo else -1))
    return np.array(y, dtype=int)


def label_night_segments(data):
    """The labelled night segments (`night_labels` >= 0). Returns X, y, fold, signature."""
    y = night_labels(data)
    keep = y >= 0
    segs = data["segments"]
    X = np.array([s["features"] for s in segs], dtype=np.float32).astype(np.float64)[keep]
    sig = np.array([s["signature"] for s in segs], dtype=np.float32).astype(np.float64)[keep]
    fold = np.array([data["folds"][s["scene"]] for s in segs], dtype=int)[keep]
    return X, y[keep], fold, sig
