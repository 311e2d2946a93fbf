#!/usr/bin/env python3
# NumPy baseline of `dpdyn simulate` (one-pass DP-SGD with clipping, docs/math.md §1.3), batched
# over replicates: the state is an array of shape (seeds, d) and every step is a handful of
# whole-array operations. Same algorithm, same law, different random numbers.
# SPDX-License-Identifier: MIT
#
# Usage: bench_linreg_numpy.py [--d 1000] [--n 4000] [--seeds 64] [--c 1] [--rho 1]
#                              [--eta0 1] [--schedule sqrt|const] [--zeta 0.5] [--seed 1]
# Prints key=value lines: seconds (the simulation loop only), final_risk, final_risk_se,
# clip_fraction_total.
import argparse
import math
import time

import numpy as np


def schedule_steps(kind, eta0, n, rho):
    """eta_k = eta~(k/n)/n and rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 (docs/math.md §1.4)."""
    t = np.arange(n) / n
    if kind == "const":
        eta = np.full(n, eta0) / n
    elif kind == "sqrt":
        eta = eta0 * np.sqrt(1.0 - t) / n
    else:
        raise SystemExit(f"unknown schedule {kind}")
    nxt = np.append(eta[1:], 0.0)
    if math.isinf(rho):
        sigma = np.zeros(n)
    else:
        sigma = np.sqrt(np.maximum(0.0, (eta - nxt) * (eta + nxt))) / rho
    return eta, sigma


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=1.0)
    ap.add_argument("--eta0", type=float, default=1.0)
    ap.add_argument("--schedule", default="sqrt")
    ap.add_argument("--zeta", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    d, n, S = a.d, a.n, a.seeds
    rng = np.random.Generator(np.random.PCG64(a.seed))
    sqrt_lambda = np.ones(d)  # isotropic spectrum (Tr Sigma = d)
    lam = sqrt_lambda**2
    theta_star = rng.standard_normal(d)
    theta_star /= np.linalg.norm(theta_star)  # uniform direction, |theta*| = 1
    eta, sigma = schedule_steps(a.schedule, a.eta0, n, a.rho)
    C = a.c * math.sqrt(d) if math.isfinite(a.c) else math.inf

    e = np.tile(-theta_star, (S, 1))
    x = np.empty((S, d))
    xi = np.empty((S, d))
    z = np.empty(S)
    clipped = 0
    t0 = time.perf_counter()
    for k in range(n):
        rng.standard_normal(out=x)
        x *= sqrt_lambda
        rng.standard_normal(out=z)
        r = np.einsum("ij,ij->i", x, e) - a.zeta * z
        xx = np.einsum("ij,ij->i", x, x)
        gnorm = np.abs(r) * np.sqrt(xx)
        s = np.minimum(1.0, C / np.maximum(gnorm, 1e-300))
        clipped += int(np.count_nonzero(gnorm > C))
        x *= (eta[k] * r * s)[:, None]
        e -= x
        if sigma[k] > 0.0:
            rng.standard_normal(out=xi)
            xi *= 2.0 * C * sigma[k]
            e += xi
    seconds = time.perf_counter() - t0
    risk = 0.5 * (e * e) @ lam
    if not np.all(np.isfinite(risk)):
        raise SystemExit("numpy baseline diverged")
    print(f"seconds={seconds:.6f}")
    print(f"final_risk={risk.mean():.10g}")
    print(f"final_risk_se={risk.std(ddof=1) / math.sqrt(S) if S > 1 else 0.0:.10g}")
    print(f"clip_fraction_total={clipped / (n * S):.6f}")


if __name__ == "__main__":
    main()
