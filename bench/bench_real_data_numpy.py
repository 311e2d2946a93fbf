#!/usr/bin/env python3
# NumPy baseline of `dpdyn simulate features=file: targets=file:` (one-pass DP-SGD with per-sample
# clipping on the rows of a dataset, docs/real_data.md), batched over replicates: the state is an
# array of shape (seeds, d), each replicate draws its rows without replacement, and every step is a
# handful of whole-array operations. The same algorithm and law as dpdyn, other random numbers.
# SPDX-License-Identifier: MIT
#
# Usage: bench_real_data_numpy.py FEATURES.npy TARGETS.npy [--seeds 64] [--c 1] [--rho 2]
#                                 [--eta0 1] [--n N] [--seed 1]
# (schedule sqrt; rho = inf and c = inf: no noise, no clipping). Prints key=value lines: seconds
# (the loop only), final_risk, final_risk_se, setup_seconds (preprocessing and Sigma^).
import argparse
import math
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("features")
    ap.add_argument("targets")
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=2.0)
    ap.add_argument("--eta0", type=float, default=1.0)
    ap.add_argument("--n", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    t0 = time.perf_counter()
    x = np.load(a.features, mmap_mode="r")
    y = np.load(a.targets).astype(np.float64).ravel()
    big_n, d = x.shape
    mean = np.asarray(x.mean(axis=0, dtype=np.float64))
    xc = np.asarray(x, dtype=np.float64) - mean
    scale = math.sqrt(d / ((xc * xc).sum() / big_n))
    xp = (xc * scale).astype(np.float32)  # rows kept in float32, as dpdyn keeps them
    del xc
    yc = y - y.mean()
    yp = yc / math.sqrt((yc * yc).mean())
    sigma = (xp.T.astype(np.float64) @ xp.astype(np.float64)) / big_n
    theta_hat = np.linalg.lstsq(xp.astype(np.float64), yp, rcond=None)[0]
    setup = time.perf_counter() - t0

    n = a.n or big_n
    S = a.seeds
    t = np.arange(n + 1) / n
    eta = a.eta0 * np.sqrt(np.maximum(1.0 - t, 0.0)) / n
    eta[n] = 0.0
    sig = np.sqrt(eta[:n] ** 2 - eta[1:] ** 2) / a.rho if math.isfinite(a.rho) else np.zeros(n)
    big_c = a.c * math.sqrt(d) if math.isfinite(a.c) else math.inf
    rng = np.random.default_rng(a.seed)
    t0 = time.perf_counter()
    order = np.stack([rng.permutation(big_n)[:n] for _ in range(S)])
    theta = np.zeros((S, d))
    xi = np.empty((S, d))
    for k in range(n):
        rows = order[:, k]
        xk = xp[rows].astype(np.float64)
        r = np.einsum("sd,sd->s", xk, theta) - yp[rows]
        g = np.abs(r) * np.sqrt(np.einsum("sd,sd->s", xk, xk))
        s = np.minimum(1.0, big_c / np.maximum(g, 1e-300))
        xk *= (eta[k] * s * r)[:, None]
        theta -= xk
        if sig[k] > 0.0:
            rng.standard_normal(out=xi)
            xi *= 2.0 * big_c * sig[k]
            theta += xi
    seconds = time.perf_counter() - t0
    e = theta - theta_hat
    risk = 0.5 * np.einsum("si,ij,sj->s", e, sigma, e)
    if not np.all(np.isfinite(risk)):
        sys.exit("numpy baseline diverged")
    print(f"setup_seconds={setup:.4f}")
    print(f"seconds={seconds:.4f}")
    print(f"final_risk={risk.mean():.6g}")
    print(f"final_risk_se={risk.std(ddof=1) / math.sqrt(S) if S > 1 else 0.0:.2g}")


if __name__ == "__main__":
    main()
