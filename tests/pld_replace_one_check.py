#!/usr/bin/python3
"""Numerical check of the Poisson replace-one dominating pair used by src/core/pld.c
(dpd_pld_step_create, DPD_SAMPLING_POISSON + DPD_NEIGHBOURS_REPLACE_ONE): for one step the
neighbours' outputs are (1-q)N(0, s^2 I) + qN(g, s^2 I) vs (1-q)N(0, s^2 I) + qN(g', s^2 I) with
|g|, |g'| <= 1 (the other records cancel: they enter both batches with the same law). Rotation
invariance leaves a 2-D problem; this integrates the hockey-stick divergence H_eps on a 2-D grid
over norms r, r' in {0, 0.5, 1} and the angle between g and g', for several q, s and eps
(negative eps included: domination at every real eps is what survives composition), and reports
any configuration above g' = -g, |g| = 1 (the pair the library uses) beyond the grid's
integration error (~1e-8). Slow (minutes). Usage: pld_replace_one_check.py"""
import numpy as np
from scipy.stats import norm


def hockey(q, s, g, gp, eps, n=2401):
    R = 1 + 9 * s
    x = np.linspace(-R, R, n)
    X, Y = np.meshgrid(x, x)
    dx = x[1] - x[0]

    def dens(m):
        return norm.pdf(X, m[0], s) * norm.pdf(Y, m[1], s)

    p = (1 - q) * dens([0, 0]) + q * dens(g)
    qq = (1 - q) * dens([0, 0]) + q * dens(gp)
    return np.sum(np.maximum(p - np.exp(eps) * qq, 0)) * dx * dx


bad = 0
for q in (0.05, 0.3, 0.8):
    for s in (0.5, 1.0, 2.0):
        for eps in (-1.5, -0.5, 0.0, 0.5, 1.5):
            ref = hockey(q, s, [1, 0], [-1, 0], eps)
            best, arg = 0.0, None
            for r in (0, 0.5, 1.0):
                for rp in (0, 0.5, 1.0):
                    for th in np.linspace(0, np.pi, 7):
                        v = hockey(q, s, [r, 0], [rp * np.cos(th), rp * np.sin(th)], eps)
                        if v > best:
                            best, arg = v, (r, rp, th)
            if best > ref + 5e-8:
                bad += 1
                print("above g' = -g:", q, s, eps, ref, best, arg, flush=True)
print("configurations above g' = -g:", bad)
