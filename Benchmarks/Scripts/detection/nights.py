"""Synthetic nights: clips of ONE cross-validation fold laid on long, changing bedroom backgrounds.

Used twice, with different seeds and different settings:
* evaluate_nights.py (EVAL_SPEC, seeds [SEED, 100 + fold, night]) - held-out evaluation nights;
* dataset.night_scenes (TRAIN_SPEC, seeds [SEED, 500 + fold, night]) - night-like TRAINING scenes, so the model
  sees segments cut the way long recordings cut them (noise-floor state after background changes, snores in a
  row with breathing between them, distractors overlapping events). A training night of fold k uses only fold k's
  clips, so its segments belong to fold k in cross-validation and never leak into another fold's held-out nights.
"""
import os

import numpy as np

import common as C
import dataset as D

# The evaluation nights (unchanged since the first measurement; do not tune these).
EVAL_SPEC = {"piece_minutes": (5, 15), "background_db": (-70, -40), "breathing_db": (0, 10), "snore_bouts": 5, "others": 8,
             "first_event": (20, 60), "tail": 150, "snore_period": (3.5, 5.0), "snore_count": (10, 31),
             "snore_snr": (12, 30), "talk_snr": (8, 30), "cough_snr": (10, 30), "movement_snr": (8, 25),
             "event_gap": (20, 90), "distractors": 12, "distractor_snr": (5, 25)}
# Training nights: wider ranges than the evaluation (generalisation, not a copy of the test conditions), denser
# events (more material per minute), more distractors and louder breathing (more hard negatives), and shorter
# background pieces (more background types and more noise-floor transitions per training minute).
TRAIN_SPEC = {"piece_minutes": (1.5, 6), "background_db": (-75, -35), "breathing_db": (-3, 14), "snore_bouts": 8, "others": 12,
              "first_event": (5, 40), "tail": 60, "snore_period": (2.5, 6.5), "snore_count": (4, 30),
              "snore_snr": (5, 32), "talk_snr": (4, 32), "cough_snr": (5, 32), "movement_snr": (5, 28),
              "event_gap": (6, 60), "distractors": 30, "distractor_snr": (0, 28)}
# DETECT_NIGHT_SNR_FLOORS="snoring,talking,coughing": lower ends of those SNR ranges (issue 31's mixes used 2,0,2).
if os.environ.get("DETECT_NIGHT_SNR_FLOORS"):
    for _key, _floor in zip(("snore_snr", "talk_snr", "cough_snr"), os.environ["DETECT_NIGHT_SNR_FLOORS"].split(",")):
        TRAIN_SPEC[_key] = (float(_floor), TRAIN_SPEC[_key][1])


def trimmed(x, max_sec):
    a, b = C.active_extent(x)
    return x[a:min(b, a + int(max_sec * C.SR))]


def build_night(rng, kind, minutes, pools, spec=None, reverb_rng=None, placed=None, background=None, convolve=None,
                event_gain_db=None, convolve_breathing=None, partner=None):
    """One synthetic night; `spec` (default EVAL_SPEC) sets the event spacing, levels and distractor rate. With
    `reverb_rng` every placed clip (events and distractors) is first convolved with its own synthetic room impulse
    response (`C.room_impulse`) drawn from that generator, so the night is otherwise identical to the dry one.
    With a list `placed`, every distractor is appended to it as (label, start_s, end_s) (`false_events.py`); the
    audio and the random draws do not change.
    Hooks of `conditions.py` (None: the behaviour above, draw for draw): `background(rng, n)` returns every
    background piece (unit RMS) in place of the generated / rain bed, which is drawn first all the same (a hook that
    draws from its own generator leaves the rest of the night unchanged); `convolve(clip, cls)` (cls None for a
    distractor) replaces the room of `reverb_rng`; `convolve_breathing(breathing)` puts the sleeper's all-night
    breathing in the room too (its level over the bed is then that of the reverberant breathing, as an event's is);
    `event_gain_db(t_sec)` is added to the level of an event (not a distractor) placed at t. `partner` = (generator,
    convolve or None) adds a second sleeper's all-night breathing, drawn from that generator (so the rest of the night
    is unchanged) at its own level over the bed, through `convolve` (e.g. another head position of the room)."""
    sp = dict(EVAL_SPEC, **(spec or {}))
    n = int(minutes * 60 * C.SR)
    x = np.zeros(n, np.float32)
    # Background pieces (5-15 min), 2-s crossfades; the level of each piece is recorded for event levels.
    level = np.zeros(n, np.float32)
    pos = 0
    while pos < n:
        ln = min(n - pos, int(rng.uniform(*sp["piece_minutes"]) * 60 * C.SR))
        db = rng.uniform(*sp["background_db"])
        if rng.random() < 0.2 and pools["rain"]:
            # Rain: 50 %-overlapped Hann-windowed excerpts of random held-out rain clips at random offsets
            # (no clicks, no fixed loop period).
            w_len = 2 * C.SR
            w = np.hanning(w_len).astype(np.float32)
            piece = np.zeros(ln + w_len, np.float32)
            for p0 in range(0, ln, w_len // 2):
                clip = pools["rain"][rng.integers(len(pools["rain"]))]
                o = int(rng.integers(0, max(1, len(clip) - w_len)))
                seg = clip[o:o + w_len]
                piece[p0:p0 + len(seg)] += seg * w[:len(seg)]
            piece = piece[:ln]
            piece = piece / (np.sqrt(np.mean(piece ** 2)) + 1e-12)
        else:
            piece, _ = C.background(rng, ln)
        if background is not None:
            piece = background(rng, ln)   # after the default draws, so the rest of the night does not change
        fade = min(ln, 2 * C.SR)
        env = np.ones(ln, np.float32)
        env[:fade] = np.linspace(0, 1, fade)
        if pos + ln < n:
            env[-fade:] = np.linspace(1, 0, fade)
        x[pos:pos + ln] += piece * env * 10 ** (db / 20)
        level[pos:pos + ln] = db
        pos += ln - (fade if pos + ln < n else 0)
    # Quiet breathing all night, 0-10 dB over the background (and the partner's, from its own generator).
    def add_breathing(gen, room):
        br = C.breathing(gen, n / C.SR)
        if room is not None:
            br = room(br)
        x[:] += br / C.active_rms(br) * 10 ** ((level + gen.uniform(*sp["breathing_db"])) / 20)
    add_breathing(rng, convolve_breathing)
    if partner is not None:
        add_breathing(*partner)

    truth = []

    def place(clip, t, cls, snr):
        a = int(t * C.SR)
        b = min(n, a + len(clip))
        if b <= a:
            return None
        if convolve is not None:
            clip = convolve(clip, cls)
            b = min(n, a + len(clip))
        elif reverb_rng is not None:
            clip = C.reverberate(reverb_rng, clip)
            b = min(n, a + len(clip))
        if cls and event_gain_db is not None:
            snr = snr + event_gain_db(t)
        g = 10 ** ((level[a] + snr) / 20) / C.active_rms(clip)
        x[a:b] += clip[: b - a] * g
        if cls:
            s, e = C.active_extent(clip[: b - a])
            truth.append((cls, (a + s) / C.SR, (a + e) / C.SR))
        return a / C.SR, b / C.SR

    # Event schedule: non-overlapping slots.
    wanted = []
    per30 = minutes / 30.0
    if kind == "mixed":
        wanted += ["snoring"] * int(round(sp["snore_bouts"] * per30))
    if kind in ("mixed", "no-snore"):
        wanted += ["talking"] * int(round(sp["others"] * per30)) + ["coughing"] * int(round(sp["others"] * per30)) \
            + ["movement"] * int(round(sp["others"] * per30))
    rng.shuffle(wanted)
    t = rng.uniform(*sp["first_event"])
    for cls in wanted:
        if t > minutes * 60 - sp["tail"]:
            break
        if cls == "snoring":
            group = pools["snore_groups"][rng.integers(len(pools["snore_groups"]))]
            period, count = rng.uniform(*sp["snore_period"]), int(rng.integers(*sp["snore_count"]))
            snr0 = rng.uniform(*sp["snore_snr"])
            for i in range(count):
                clip = group[i % len(group)]
                place(clip, t + i * period * rng.uniform(0.95, 1.05), "snoring", snr0 + rng.uniform(-3, 3))
            t += count * period
        elif cls == "talking":
            spk = pools["speakers"][rng.integers(len(pools["speakers"]))]
            snr = rng.uniform(*sp["talk_snr"])
            for _ in range(int(rng.integers(1, 4))):
                clip = spk[rng.integers(len(spk))]
                place(clip, t, "talking", snr + rng.uniform(-2, 2))
                t += len(clip) / C.SR + rng.uniform(0.3, 0.8)
        elif cls == "coughing":
            snr = rng.uniform(*sp["cough_snr"])
            for _ in range(int(rng.integers(1, 4))):
                clip = pools["coughs"][rng.integers(len(pools["coughs"]))]
                place(clip, t, "coughing", snr + rng.uniform(-3, 3))
                t += len(clip) / C.SR + rng.uniform(0.2, 0.6)
        else:
            clip = pools["movement"][rng.integers(len(pools["movement"]))]
            place(clip, t, "movement", rng.uniform(*sp["movement_snr"]))
            t += len(clip) / C.SR
        t += rng.uniform(*sp["event_gap"])
    # Distractors anywhere (they may overlap events): ~12 per 30 min.
    for _ in range(int(round(sp["distractors"] * per30)) if pools["distractors"] else 0):
        i = rng.integers(len(pools["distractors"]))
        span = place(pools["distractors"][i], rng.uniform(5, minutes * 60 - 10), None,
                     rng.uniform(*sp["distractor_snr"]))
        if placed is not None and span:
            placed.append((pools["distractor_labels"][i],) + span)
    np.clip(x, -1, 1, out=x)
    return x, truth


def pools_for_fold(its, k, training=False, khan=False):
    """Fold k's clips by role. With `training` or `khan`, Khan `other` clips (talking, TV news, household sounds) of
    fold k are distractors too (folds 3-4 have no ESC-10 clips; fold 3 has no Khan `other` clip either); the standard evaluation pools are ESC-10 only
    (`evaluate_nights.py --khan-distractors` adds Khan `other`)."""
    pools = {"snore_groups": [], "speakers": [], "coughs": [], "movement": [], "distractors": [],
             "distractor_labels": [], "rain": []}
    groups, speakers = {}, {}
    for idx, it in enumerate(its):
        if it["fold"] != k or (it.get("variant") and not training):
            continue
        if it["cls"] == "snoring":
            groups.setdefault(it["group"], []).append(trimmed(D.clip_audio(it, idx), 2.5))
        elif it["cls"] == "talking":
            speakers.setdefault(it["group"], []).append(trimmed(D.clip_audio(it, idx), 4))
        elif it["cls"] == "coughing":
            pools["coughs"].append(trimmed(D.clip_audio(it, idx), 4))
        elif it["cls"] == "movement":
            pools["movement"].append(D.clip_audio(it, idx))
        elif it["label"] == "rain":
            pools["rain"].append(D.clip_audio(it, idx))
        elif it["source"] == "esc10_ccby" or ((training or khan) and it["source"] == "snoring_khan") \
                or (training and it["label"] == "impact"):
            pools["distractors"].append(trimmed(D.clip_audio(it, idx), 5))
            pools["distractor_labels"].append(it["label"])
    pools["snore_groups"] = [groups[g] for g in sorted(groups)]
    # Mycroft files have no speaker id (one group each): pool them in blocks of 5 "speakers".
    sp = [speakers[g] for g in sorted(speakers)]
    singles = [s for s in sp if len(s) == 1]
    pools["speakers"] = [s for s in sp if len(s) > 1] + [sum(singles[i:i + 5], []) for i in range(0, len(singles), 5)]
    return pools
