#!/usr/bin/env python3
# NumPy baseline for bench/bench_semipriv.sh: Noisy-SGD of Bassily, Smith & Thakurta on the
# scaled hinge loss (include/dpdyn/semipriv.h, notes-rf-nc-sp.md C.3), written the way one
# would in NumPy. The loop over steps is sequential (each step needs the previous w), so it runs
# in Python; the noise of B steps is drawn at once (default_rng().standard_normal((B, k))) and
# the sample indices too (integers), as the C code does, so Python's per-step cost is only the
# small vector operations:
#   w_0 = 0;  for t = 1..T:  i ~ U{0..n-1};  g = -(n / zeta) y_i x_i if y_i <w, x_i> < zeta else 0
#             w <- w - eta(t) (g + sigma xi_t);  w <- w / max(1, |w|)
#   sigma = L n sqrt(32 log(n/delta) log(1/delta)) / epsilon,  L = 1/zeta,
#   eta(t) = 2 / sqrt(t (n^2 L^2 + k sigma^2)).
# Data: the rows of bench/bench_semipriv.c (P_ij = sin(0.37 (i k + j) + 1.1), unit rows,
# y_i = sign(P_i0)). One untimed warm-up of min(T, 2000) steps, then `reps` runs of T steps; the
# fastest run is reported.
# Usage: bench_semipriv_numpy.py [--n 500] [--k 5] [--epsilon 0.1] [--T n^2] [--reps 3]
# Prints key=value lines: numpy_seconds, numpy_steps_per_s, active_fraction.
# SPDX-License-Identifier: MIT
import argparse
import math
import time

import numpy as np


def data(n, k):
    idx = np.arange(n * k, dtype=np.float64).reshape(n, k)
    P = np.sin(0.37 * idx + 1.1)
    P /= np.sqrt((P * P).sum(axis=1))[:, None]
    y = np.where(P[:, 0] >= 0.0, 1.0, -1.0)
    return P, y


def noisy_sgd(P, y, zeta, epsilon, delta, T, seed, block=4096):
    n, k = P.shape
    L = 1.0 / zeta
    sigma = 0.0 if math.isinf(epsilon) else (
        L * n * math.sqrt(32.0 * math.log(n / delta) * math.log(1.0 / delta)) / epsilon)
    a_eta = 2.0 / math.sqrt((n * L) ** 2 + k * sigma ** 2)
    gscale = n * L
    rng = np.random.default_rng(seed)
    w = np.zeros(k)
    active = 0
    t = 0
    while t < T:
        m = min(block, T - t)
        idx = rng.integers(0, n, size=m)
        noise = rng.standard_normal((m, k)) if sigma > 0.0 else np.zeros((m, k))
        eta = a_eta / np.sqrt(np.arange(t + 1, t + m + 1, dtype=np.float64))
        for s in range(m):
            i = idx[s]
            x = P[i]
            e = eta[s]
            if y[i] * (w @ x) < zeta:
                w += (e * gscale * y[i]) * x
                active += 1
            w -= (e * sigma) * noise[s]
            nrm = math.sqrt(w @ w)
            if nrm > 1.0:
                w /= nrm
        t += m
    return w, active / T, sigma


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--T", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--zeta", type=float, default=0.18)
    ap.add_argument("--delta", type=float, default=1e-5)
    a = ap.parse_args()
    T = a.T if a.T > 0 else a.n * a.n
    P, y = data(a.n, a.k)
    noisy_sgd(P, y, a.zeta, a.epsilon, a.delta, min(T, 2000), 0)
    best = math.inf
    frac = 0.0
    for r in range(a.reps):
        t0 = time.perf_counter()
        w, frac, sigma = noisy_sgd(P, y, a.zeta, a.epsilon, a.delta, T, r + 1)
        best = min(best, time.perf_counter() - t0)
    print(f"# numpy {np.__version__} Noisy-SGD: n={a.n} k={a.k} epsilon={a.epsilon} T={T} "
          f"sigma={sigma:.6g}, fastest of {a.reps}")
    print(f"numpy_seconds={best:.6g}")
    print(f"numpy_steps_per_s={T / best:.6g}")
    print(f"active_fraction={frac:.4f}")


if __name__ == "__main__":
    main()
