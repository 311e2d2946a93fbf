#!/usr/bin/env python3
# NumPy baseline for bench/bench_rf.sh: full-batch DP-GD with per-sample clipping on random
# features (docs/math.md §2.2, include/dpdyn/rf_sim.h), written the way one would in NumPy: two
# matrix-vector products per step on a C-contiguous float64 Phi (n x p), precomputed row norms,
# the clipping weights as whole-vector operations, and one standard_normal(p) draw per step.
# SPDX-License-Identifier: MIT
#
#   theta_0 = 0,   r = Phi theta - y,   C = clip sqrt(p),   w_i = min(1, C / (2 |r_i| ||phi_i||)),
#   g = (1/n) Phi^T (2 w r),   theta <- theta - eta g + sqrt(eta) (2 C / n) sigma xi,  xi ~ N(0, I_p)
#
# Phi = tanh(X V^T) with X ~ N(0, 1) (n x d) and V ~ N(0, 1/d) (p x d), y = X u + zeta z: the
# same shapes and distribution as dpd_rf_problem_create, different random numbers (the timing
# depends on the shapes only). One untimed warm-up step, then `reps` runs of T steps from
# theta = 0; the fastest run is reported, as dpd_bench_rf does.
#
# Usage: bench_rf_numpy.py [--n 2000] [--p 5000] [--d 200] [--T 50] [--reps 3] [--eta 0.05]
#                          [--clip 0.5] [--sigma 1] [--zeta 0.5] [--seed 1]
# Prints key=value lines: numpy_s_per_step (fastest run), numpy_s_per_step_median, numpy_GBps
# (bytes of Phi read per step, twice, over the time), the BLAS that NumPy loaded, and checks.
import argparse
import math
import os
import time

import numpy as np


def loaded_blas():
    """Shared libraries in this process whose names look like a BLAS (Linux /proc)."""
    names = set()
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.split()[-1]
                base = os.path.basename(path).lower()
                if path.startswith("/") and any(
                    k in base for k in ("blas", "mkl", "blis", "accelerate", "armpl")
                ):
                    names.add(path)
    except OSError:
        pass
    return sorted(names) or ["unknown"]


def build_blas():
    """The BLAS NumPy was built against, as np.show_config reports it (NumPy >= 1.25 has
    mode='dicts'; older releases keep the distutils info dictionaries)."""
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{deps.get('name', '?')} {deps.get('version', '')}".strip()
    except (TypeError, KeyError):
        try:
            info = np.__config__.get_info("blas_opt_info")
            return ",".join(info.get("libraries", [])) or "unknown"
        except AttributeError:
            return "unknown"


def threadpool_summary():
    """BLAS thread pools as threadpoolctl sees them, when it is installed."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    return ";".join(
        f"{d.get('internal_api')}:{d.get('version')}:threads={d.get('num_threads')}"
        for d in threadpool_info()
        if d.get("user_api") == "blas"
    )


def main():
    ap = argparse.ArgumentParser(description="NumPy DP-GD on random features (timing)")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--p", type=int, default=5000)
    ap.add_argument("--d", type=int, default=200)
    ap.add_argument("--T", type=int, default=50)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--eta", type=float, default=0.05)
    ap.add_argument("--clip", type=float, default=0.5)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--zeta", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    n, p, d = a.n, a.p, a.d

    # Problem: Phi is C-contiguous (row-major) float64, tanh applied in place.
    rng = np.random.default_rng(a.seed)
    X = rng.standard_normal((n, d))
    V = rng.standard_normal((p, d)) / math.sqrt(d)
    Phi = X @ V.T
    np.tanh(Phi, out=Phi)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    y = X @ u + a.zeta * rng.standard_normal(n)
    del X, V
    assert Phi.flags.c_contiguous and Phi.dtype == np.float64 and Phi.shape == (n, p)
    row_norm = np.sqrt(np.einsum("ij,ij->i", Phi, Phi))

    C = a.clip * math.sqrt(p)
    noise_scale = math.sqrt(a.eta) * (2.0 * C / n) * a.sigma

    def run(steps, seed):
        """`steps` DP-GD steps from theta = 0; returns theta, the last train risk and the
        number of clipped samples."""
        noise = np.random.default_rng(seed)
        theta = np.zeros(p)
        risk, clipped = math.nan, 0
        for _ in range(steps):
            r = Phi @ theta
            r -= y
            risk = float(r @ r) / n
            gnorm = 2.0 * np.abs(r) * row_norm
            with np.errstate(divide="ignore"):
                w = np.minimum(1.0, C / gnorm)
            clipped += int(np.count_nonzero(gnorm > C))
            g = Phi.T @ ((2.0 / n) * w * r)
            theta -= a.eta * g
            if noise_scale > 0.0:
                theta += noise_scale * noise.standard_normal(p)
        return theta, risk, clipped

    run(1, a.seed + 1)  # warm-up: BLAS threads started, pages touched
    times = []
    for rep in range(a.reps):
        t0 = time.perf_counter()
        theta, risk, clipped = run(a.T, a.seed + 1 + rep)
        times.append((time.perf_counter() - t0) / a.T)
    if not (np.all(np.isfinite(theta)) and math.isfinite(risk)):
        raise SystemExit("bench_rf_numpy: the iterate diverged")

    best = min(times)
    phi_bytes = 8.0 * n * p
    print(f"numpy_version={np.__version__}")
    print(f"numpy_blas_build={build_blas()}")
    print(f"numpy_blas_loaded={','.join(loaded_blas())}")
    pools = threadpool_summary()
    if pools is not None:
        print(f"numpy_threadpools={pools}")
    print(
        f"numpy_env_threads=OPENBLAS_NUM_THREADS:{os.environ.get('OPENBLAS_NUM_THREADS', '-')},"
        f"OMP_NUM_THREADS:{os.environ.get('OMP_NUM_THREADS', '-')}"
    )
    print(f"numpy_n={n} numpy_p={p} numpy_T={a.T} numpy_reps={a.reps}")
    print(f"numpy_s_per_step={best:.6g}")
    print(f"numpy_s_per_step_median={float(np.median(times)):.6g}")
    print(f"numpy_GBps={2.0 * phi_bytes / best / 1e9:.3g}")
    print(f"numpy_check_train_risk={risk:.6g} numpy_check_clip_fraction={clipped / (n * a.T):.4f}")


if __name__ == "__main__":
    main()
