#!/usr/bin/env python3
# NumPy baseline of `dpdyn sde` (homogenized DP-SGD, docs/math.md §1.6, by Euler-Maruyama with
# dt = 1/n), batched over replicates: the state is an array of shape (seeds, d) and every step
# is a handful of whole-array operations. Same scheme, same law, different random numbers.
# SPDX-License-Identifier: MIT
#
#   de_i = -eta~ mu_c(P) lambda_i e_i dt + eta~ sqrt(2 nu_c(P) P / n) sqrt(lambda_i) dB^s_i
#          + (2 sqrt(d) / n) c sigma~ dB^p_i,   R = (1/2) sum lambda_i e_i^2,  P = R + zeta^2/2,
# with the clipping factors of Gaussian residuals (docs/math.md §1.5), and at t = 1 the release noise
# 2 C sigma_{n-1} xi (sigma_{n-1} = eta~((n-1)/n) / (n rho)).
#
# Usage: bench_sde_numpy.py [--d 1000] [--n 4000] [--seeds 64] [--c 1] [--rho 1]
#                           [--eta0 1] [--schedule sqrt|const] [--zeta 0.5] [--seed 1]
# Prints key=value lines: seconds (the integration loop only), steps, steps_per_second,
# final_risk, final_risk_se, before_release, clip_fraction_total (time average of 1 - mu).
import argparse
import math
import os
import time

# The only BLAS call is a (seeds x d) by d product per step; OpenBLAS threads make it several
# times slower (spinning and waking threads costs more than the product), so the baseline is
# given its best single-threaded BLAS unless the caller chose otherwise.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the BLAS setting)

ERF = np.frompyfunc(math.erf, 1, 1)
ERFC = np.frompyfunc(math.erfc, 1, 1)


def clip_factors(c, P):
    """mu_c(P) = erf(k), nu_c(P) = erf(k) - (2k/sqrt(pi)) e^{-k^2} + 2 k^2 erfc(k), k = c/(2 sqrt P)."""
    if math.isinf(c):
        one = np.ones_like(P)
        return one, one
    k = c / (2.0 * np.sqrt(P))
    erf = ERF(k).astype(float)
    mu = erf
    nu = erf - 2.0 * k / math.sqrt(math.pi) * np.exp(-k * k) + 2.0 * k * k * ERFC(k).astype(float)
    return mu, nu


def schedule(kind, eta0, t):
    """eta~(t) and -d/dt[eta~(t)^2]."""
    if kind == "const":
        return eta0, 0.0
    if kind == "sqrt":
        return eta0 * math.sqrt(max(0.0, 1.0 - t)), eta0 * eta0
    raise SystemExit(f"unknown schedule {kind}")


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
    lam = np.ones(d)  # isotropic spectrum (Tr Sigma = d)
    sqrt_lam = np.sqrt(lam)
    theta_star = rng.standard_normal(d)
    theta_star /= np.linalg.norm(theta_star)  # uniform direction, |theta*| = 1
    private = math.isfinite(a.rho)
    priv_scale = 2.0 * math.sqrt(d) / n * a.c if private else 0.0
    eta_last = schedule(a.schedule, a.eta0, (n - 1) / n)[0] / n
    release_sd = 2.0 * a.c * math.sqrt(d) * eta_last / a.rho if private else 0.0
    h = 1.0 / n

    # Preallocated buffers and in-place updates (no temporaries of shape (S, d) in the loop).
    e = np.tile(-theta_star, (S, 1))
    z = np.empty((S, d))
    v = np.empty((S, d))
    tmp = np.empty((S, d))
    R = 0.5 * (e * e) @ lam
    clip = 0.0
    t0 = time.perf_counter()
    for k in range(n):
        t = k / n
        eta, dsq = schedule(a.schedule, a.eta0, t)
        P = R + 0.5 * a.zeta * a.zeta
        mu, nu = clip_factors(a.c, P)
        clip += float(np.sum(1.0 - mu)) * h
        p = priv_scale * math.sqrt(dsq) / a.rho if private else 0.0
        rng.standard_normal(out=z)
        drift = (-eta * h) * mu
        diff = eta * np.sqrt(2.0 * nu * P * h / n)
        np.multiply(e, lam, out=tmp)
        tmp *= drift[:, None]
        z *= sqrt_lam
        z *= diff[:, None]
        e += tmp
        e += z
        if p > 0.0:
            rng.standard_normal(out=v)
            v *= p * math.sqrt(h)
            e += v
        np.multiply(e, e, out=tmp)
        R = 0.5 * (tmp @ lam)
    before = R.copy()
    if release_sd > 0.0:
        rng.standard_normal(out=v)
        e += release_sd * v
        R = 0.5 * (e * e) @ lam
    seconds = time.perf_counter() - t0
    if not np.all(np.isfinite(R)):
        raise SystemExit("numpy baseline diverged")
    steps = n * S
    print(f"seconds={seconds:.6f}")
    print(f"steps={steps:.6e}")
    print(f"steps_per_second={steps / seconds:.6e}")
    print(f"final_risk={R.mean():.10g}")
    print(f"final_risk_se={R.std(ddof=1) / math.sqrt(S) if S > 1 else 0.0:.10g}")
    print(f"before_release={before.mean():.10g}")
    print(f"clip_fraction_total={clip / S:.6f}")


if __name__ == "__main__":
    main()
