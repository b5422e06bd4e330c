#!/usr/bin/env python3
"""How well 16-d snore signatures separate snorers, on real snores.

    python3 Benchmarks/Scripts/detection/evaluate_signatures.py [--threshold 0.75]

Khan clips carry no snorer id; consecutive file numbers tend to come from one source recording, so the proxy
identity is the 20-number block (`common.group_of`) - a noisy proxy (a block may hold two recordings, and one
recording may span blocks). Uses copy 0 of the training scenes (segments inside the clip, raw signatures from the
Swift extractor), normalised with the committed constants exactly as `SnoreSignature.normalise` does. Reports
the ROC AUC of cosine distance for same-block vs different-block pairs, and, for random nights made of 2 or 3
blocks, how often `SnorerClustering` (re-implemented here line by line: average linkage, cosine distance,
stop at `threshold`) finds the right number of snorers and its purity.
"""
import argparse
import json

import numpy as np

import common as C
import dataset as D
import train as T


def normalise(raw, mean, scale):
    z = (raw - mean) / scale
    return z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)


def cluster(S, threshold):
    n = len(S)
    if n < 2:
        return [0] * n
    dist = 1 - S @ S.T
    members = [[i] for i in range(n)]
    alive = [True] * n
    while True:
        best, bi, bj = np.inf, -1, -1
        for i in range(n):
            if not alive[i]:
                continue
            for j in range(i + 1, n):
                if alive[j] and dist[i, j] < best:
                    best, bi, bj = dist[i, j], i, j
        if bi < 0 or best > threshold:
            break
        ni, nj = len(members[bi]), len(members[bj])
        for k in range(n):
            if alive[k] and k not in (bi, bj):
                d = (ni * dist[k, bi] + nj * dist[k, bj]) / (ni + nj)
                dist[k, bi] = dist[bi, k] = d
        members[bi] += members[bj]
        alive[bj] = False
    label = [0] * n
    for c, i in enumerate([i for i in range(n) if alive[i]]):
        for m in members[i]:
            label[m] = c
    return label


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threshold", type=float, default=0.9)
    args = ap.parse_args()
    its = D.items()
    model = json.load(open(T.MODEL_PATH))
    mean, scale = np.array(model["signature"]["mean"]), np.array(model["signature"]["scale"])
    data = D.segments(0)
    X, y, sc, sig = D.label_segments(data, its)
    keep = y == 1
    S = normalise(sig[keep], mean, scale)
    groups = np.array([its[k]["group"] for k in sc[keep]])
    # Pairwise AUC.
    G = S @ S.T
    iu = np.triu_indices(len(S), 1)
    same = (groups[:, None] == groups[None, :])[iu]
    d = 1 - G[iu]
    order = np.argsort(d)
    ranks = np.empty(len(d)); ranks[order] = np.arange(1, len(d) + 1)
    n_pos, n_neg = same.sum(), (~same).sum()
    auc = 1 - (ranks[same].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    print("snore signatures: %d from %d blocks; mean cosine distance same block %.3f, different %.3f; "
          "AUC(same < different) %.3f" % (len(S), len(set(groups)), d[same].mean(), d[~same].mean(), auc))
    # Simulated nights with 1, 2 or 3 snorers (blocks with >= 8 snores).
    rng = np.random.default_rng(D.SEED)
    ug = sorted(g for g in set(groups) if (groups == g).sum() >= 8)
    for k in (1, 2, 3):
        right, purity = 0, []
        for _ in range(40):
            pick = rng.choice(len(ug), k, replace=False)
            idx = np.concatenate([np.nonzero(groups == ug[p])[0][:12] for p in pick])
            lab = cluster(S[idx], args.threshold)
            right += len(set(lab)) == k
            truth = groups[idx]
            purity.append(sum(max(np.sum(truth[np.array(lab) == c] == t) for t in set(truth))
                              for c in set(lab)) / len(lab))
        print("%d snorer(s): right number of clusters in %d/40 nights, mean purity %.3f" % (k, right, np.mean(purity)))


if __name__ == "__main__":
    main()
