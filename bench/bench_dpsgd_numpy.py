#!/usr/bin/env python3
# DP-SGD data and NumPy baselines for bench/bench_dpsgd.sh (issue 29 s4).
# SPDX-License-Identifier: MIT
#
# Two modes.
#
# export OUTDIR [--rows 54000] [--features 2000] [--seed 1]
#   Reads Fashion-MNIST's training images and labels (Debian dataset-fashion-mnist,
#   /usr/share/datasets/fashion-mnist/train-*-idx*-ubyte.gz) with gzip, keeps the first `rows`
#   rows, scales the pixels to [0, 1] and standardises every column (mean 0, sd 1; a constant
#   column stays 0), and writes raw little-endian files for dpd_bench_dpsgd:
#     OUTDIR/x784.f64    rows x 784 float64, row-major      OUTDIR/y.i32   rows int32 labels
#     OUTDIR/x<p>.f64    rows x p random features ReLU(X V^T / sqrt(784)), V ~ N(0, 1) (p x 784),
#                        standardised the same way (a stand-in for embeddings, issue 29)
#
# time X.f64 Y.i32 ROWS D [--classes 10] [--q ...] [--clip 1] [--z 1] [--lr 1] [--reps 5]
#                         [--variants einsum,normtrick] [--seed 1]
#   One epoch (T = ceil(1 / q) steps) of Poisson DP-SGD on softmax cross-entropy with a bias, as
#   include/dpdyn/dpsgd.h defines it (W_0 = 0; W <- W - lr / (q n) (sum_i c_i g_i + z clip xi)),
#   written as a library user would write it in NumPy, `reps` times from W = 0:
#     einsum:    per batch logits = Xb @ W.T + b, softmax, the per-sample gradients formed as
#                np.einsum('bk,bd->bkd', r, Xb) (and r for the bias), their norms, clip, sum, noise;
#     normtrick: the same without forming them: |g_i| = |r_i| sqrt(|x_i|^2 + 1) and the clipped
#                sum as one matmul (c r)^T Xb.
#   Batches by a Bernoulli(q) mask over the n rows per step (rng.random(n) < q). The random
#   numbers are NumPy's (PCG64), not dpdyn's: the timing depends on the shapes only.
#   Prints key=value lines: numpy_<variant>_seconds_median, numpy_<variant>_seconds_min,
#   numpy_<variant>_train_loss (the mean loss at the last W of the last repeat), the BLAS loaded.
import argparse
import gzip
import math
import os
import statistics
import sys
import time

import numpy as np

FMNIST = "/usr/share/datasets/fashion-mnist"


def idx_read(path):
    """An IDX file (the MNIST format): big-endian dims, then unsigned bytes."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def standardise(a):
    a = a - a.mean(axis=0)
    sd = a.std(axis=0)
    sd[sd == 0] = 1.0
    return np.ascontiguousarray(a / sd, dtype=np.float64)


def export(args):
    os.makedirs(args.outdir, exist_ok=True)
    x = idx_read(os.path.join(FMNIST, "train-images-idx3-ubyte.gz"))[: args.rows]
    y = idx_read(os.path.join(FMNIST, "train-labels-idx1-ubyte.gz"))[: args.rows]
    x = standardise(x.reshape(len(x), -1).astype(np.float64) / 255.0)
    x.astype("<f8").tofile(os.path.join(args.outdir, "x784.f64"))
    y.astype("<i4").tofile(os.path.join(args.outdir, "y.i32"))
    if args.features > 0:
        rng = np.random.default_rng(args.seed)
        v = rng.standard_normal((args.features, x.shape[1]))
        f = standardise(np.maximum(x @ v.T / math.sqrt(x.shape[1]), 0.0))
        f.astype("<f8").tofile(os.path.join(args.outdir, "x%d.f64" % args.features))
    print("exported rows=%d d=784 features=%d classes=%d" % (len(y), args.features,
                                                             int(y.max()) + 1))


def softmax_residual(xb, yb, w, b):
    s = xb @ w.T + b
    s -= s.max(axis=1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(yb)), yb] -= 1.0
    return p


def epoch(x, y, k, q, clip, z, lr, rng, variant):
    n, d = x.shape
    w = np.zeros((k, d))
    b = np.zeros(k)
    steps = math.ceil(1.0 / q)
    scale = lr / (q * n)
    sq = None
    if variant == "normtrick":
        sq = np.einsum("ij,ij->i", x, x) + 1.0  # |x_i|^2 + 1 (bias), once per data set
    for _ in range(steps):
        idx = np.flatnonzero(rng.random(n) < q)
        xb, yb = x[idx], y[idx]
        r = softmax_residual(xb, yb, w, b)
        if variant == "einsum":
            g = np.einsum("bk,bd->bkd", r, xb)
            norms = np.sqrt(np.einsum("bkd,bkd->b", g, g) + np.einsum("bk,bk->b", r, r))
            c = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
            gw = np.einsum("b,bkd->kd", c, g)
        else:
            norms = np.sqrt(np.einsum("bk,bk->b", r, r) * sq[idx])
            c = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
            gw = (r * c[:, None]).T @ xb
        gb = (r * c[:, None]).sum(axis=0)
        noise = rng.standard_normal((k, d + 1))
        w -= scale * (gw + z * clip * noise[:, :d])
        b -= scale * (gb + z * clip * noise[:, d])
    s = x @ w.T + b
    m = s.max(axis=1, keepdims=True)
    lse = (m[:, 0] + np.log(np.exp(s - m).sum(axis=1)))
    return float(np.mean(lse - s[np.arange(n), y]))


def loaded_blas():
    names = set()
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.split()[-1]
                if path.startswith("/") and "blas" in os.path.basename(path).lower():
                    names.add(path)
    except OSError:
        pass
    return ",".join(sorted(names)) or "unknown"


def time_epochs(args):
    x = np.fromfile(args.x, dtype="<f8").reshape(args.rows, args.d)
    y = np.fromfile(args.y, dtype="<i4")[: args.rows].astype(np.int64)
    for variant in args.variants.split(","):
        times, loss = [], math.nan
        for rep in range(args.reps):
            rng = np.random.default_rng([args.seed, rep])
            t0 = time.perf_counter()
            loss = epoch(x, y, args.classes, args.q, args.clip, args.z, args.lr, rng, variant)
            times.append(time.perf_counter() - t0)
        print("numpy_%s_seconds_median=%.6g" % (variant, statistics.median(times)))
        print("numpy_%s_seconds_min=%.6g" % (variant, min(times)))
        print("numpy_%s_train_loss=%.6g" % (variant, loss))
    print("numpy_blas=%s" % loaded_blas())


def main():
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="mode", required=True)
    e = sub.add_parser("export")
    e.add_argument("outdir")
    e.add_argument("--rows", type=int, default=54000)
    e.add_argument("--features", type=int, default=2000)
    e.add_argument("--seed", type=int, default=1)
    t = sub.add_parser("time")
    t.add_argument("x")
    t.add_argument("y")
    t.add_argument("rows", type=int)
    t.add_argument("d", type=int)
    t.add_argument("--classes", type=int, default=10)
    t.add_argument("--q", type=float, default=256 / 54000)
    t.add_argument("--clip", type=float, default=1.0)
    t.add_argument("--z", type=float, default=1.0)
    t.add_argument("--lr", type=float, default=1.0)
    t.add_argument("--reps", type=int, default=5)
    t.add_argument("--variants", default="einsum,normtrick")
    t.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if args.mode == "export":
        export(args)
    else:
        time_epochs(args)


if __name__ == "__main__":
    sys.exit(main())
