#!/usr/bin/python3
"""Exports one class pair of the handwritten digits bundled with scikit-learn (python3-sklearn,
sklearn.datasets.load_digits: 1797 8x8 images, 64 features, UCI "Optical Recognition of
Handwritten Digits") as the three sets of semi-private learning (docs/semipriv.md, issue 12):

  priv_X.npy, priv_y.npy   the labelled private set (labels +1 for the first class, -1 else)
  pub_X.npy                the unlabelled public set (its labels are dropped)
  test_X.npy, test_y.npy   the test set
  split.txt                what was done (pair, seed, sizes, indices of each set)

Split: the images of the two classes, permuted by numpy.random.default_rng(seed), the first 50%
private, the next 20% public, the last 30% test (documented, seeded, not stratified).
Features: centred by the PUBLIC set's mean (the only statistic taken from data, and from public
data, so it costs no privacy), then every row scaled to unit Euclidean norm (the unit sphere of
the setting; Noisy-SGD's sigma assumes |x| <= 1). Without centring the pixel vectors share a large
positive mean and no halfspace through the origin separates the classes well.

Pair 3 vs 8 (default): a pair the eye confuses (both are loops), still separable by a halfspace
through the origin after this scaling (hard margin 0.094 on all 357 images, linear SVM), with
xi_k = 1 - |A_k A_k^T w_svm| = 0.33, 0.27, 0.17, 0.01 at k = 2, 10, 20, 40: the low-rank
assumption holds only loosely, which is what a real feature set looks like.

Usage: /usr/bin/python3 scripts/semipriv_digits.py OUTDIR [--pair 3,8] [--seed 20261124]
"""
import argparse
import os

import numpy as np
from sklearn.datasets import load_digits


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--pair", default="3,8", help="two digits a,b (label +1 for a)")
    ap.add_argument("--seed", type=int, default=20261124)
    args = ap.parse_args()
    a, b = (int(v) for v in args.pair.split(","))
    if a == b or not (0 <= a <= 9 and 0 <= b <= 9):
        raise SystemExit("semipriv_digits: --pair needs two different digits 0..9")
    digits = load_digits()
    keep = np.flatnonzero((digits.target == a) | (digits.target == b))
    perm = np.random.default_rng(args.seed).permutation(keep.size)
    idx = keep[perm]
    n_priv = keep.size // 2
    n_pub = keep.size // 5
    sets = {"priv": idx[:n_priv], "pub": idx[n_priv:n_priv + n_pub], "test": idx[n_priv + n_pub:]}
    X = digits.data.astype(np.float64)
    y = np.where(digits.target == a, 1.0, -1.0)
    mu = X[sets["pub"]].mean(axis=0)

    def feats(rows):
        Z = X[rows] - mu
        nrm = np.linalg.norm(Z, axis=1, keepdims=True)
        nrm[nrm == 0.0] = 1.0
        return Z / nrm

    os.makedirs(args.outdir, exist_ok=True)
    np.save(os.path.join(args.outdir, "priv_X.npy"), feats(sets["priv"]))
    np.save(os.path.join(args.outdir, "priv_y.npy"), y[sets["priv"]])
    np.save(os.path.join(args.outdir, "pub_X.npy"), feats(sets["pub"]))
    np.save(os.path.join(args.outdir, "test_X.npy"), feats(sets["test"]))
    np.save(os.path.join(args.outdir, "test_y.npy"), y[sets["test"]])
    with open(os.path.join(args.outdir, "split.txt"), "w") as f:
        f.write("# sklearn load_digits, pair %d (+1) vs %d (-1), seed %d, numpy %s\n"
                % (a, b, args.seed, np.__version__))
        f.write("# features: minus the public mean, rows scaled to unit norm; d = 64\n")
        for name, rows in sets.items():
            f.write("%s n=%d positives=%d indices=%s\n"
                    % (name, rows.size, int((y[rows] > 0).sum()), " ".join(map(str, rows))))
    print("semipriv_digits: %d vs %d: private %d, public %d, test %d -> %s"
          % (a, b, sets["priv"].size, sets["pub"].size, sets["test"].size, args.outdir))


if __name__ == "__main__":
    main()
