#!/usr/bin/python3
"""NumPy baseline for bench/bench_pld.sh: the reference's algorithm (tests/pld_highres.py: exact
lattice masses, mean-preserving spread, tilted FFT power, eps from the upper bound) at the same
grid step h as dpdyn, both orders (add/remove), T homogeneous steps: median and min wall time of
`repeats` runs (lattice + tilt choice + composition + eps), the composed window's points, eps_up.
Prints key=value lines numpy_T<T>_seconds_median=..., numpy_T<T>_seconds_min=...,
numpy_T<T>_points=..., numpy_T<T>_eps_up=...
Usage: bench_pld_numpy.py q sigma delta h repeats T [T ...]
SPDX-License-Identifier: MIT"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import pld_highres as ref  # noqa: E402


def eps_up_at(q, s, T, delta, h):
    eps, points = 0.0, 0
    for kind in ("remove", "add"):
        o = ref.Order(kind, q, s)
        lmin, lmax = ref.body_bounds(o, T, delta)
        lam, eps0, _, _ = ref.saddle_lambda(o, T, delta, max((lmax - lmin) / 2e5, 1e-9))
        ob = ref.OrderBounds(o, T, delta, h, lam, lower=False)
        eps = max(eps, ref.solve(ob.log_delta_up, delta, 0.0, max(2 * eps0, 1.0)))
        points = max(points, ob.N)
    return eps, points


def main():
    q, s, delta, h = (float(v) for v in sys.argv[1:5])
    repeats = int(sys.argv[5])
    for T in (int(float(v)) for v in sys.argv[6:]):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            eps, points = eps_up_at(q, s, T, delta, h)
            times.append(time.perf_counter() - t0)
        print("numpy_T%d_seconds_median=%.6g" % (T, statistics.median(times)))
        print("numpy_T%d_seconds_min=%.6g" % (T, min(times)))
        print("numpy_T%d_points=%d" % (T, points))
        print("numpy_T%d_eps_up=%.10g" % (T, eps))


if __name__ == "__main__":
    main()
