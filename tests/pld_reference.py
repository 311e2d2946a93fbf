#!/usr/bin/python3
"""Independent reference for tests/unit/test_pld.c (b): epsilon of T-fold Poisson-subsampled
Gaussian (add/remove neighbours) by a fine-grid numerical composition in numpy, written apart
from src/core/pld.c (different discretisation code, numpy FFT, no truncation tricks).

For each order (remove: P = (1-q)N(1,s^2)+... see below) the privacy loss L(x) is discretised on a
grid of step h by rounding up (upper bound) and down (lower bound), composed T times by a numpy
FFT power on a window [lo, hi] wide enough that the wrapped mass is negligible (checked: the mass
outside is printed), and eps(delta) read from delta(eps) = sum_{L>eps} (1 - e^{eps-L}) p.

  remove: x ~ (1-q) N(0,s^2) + q N(1,s^2),  L = log((1-q) + q exp((2x-1)/(2 s^2)))
  add:    x ~ N(0,s^2),                      L = -log((1-q) + q exp((2x-1)/(2 s^2)))
Usage: pld_reference.py q sigma T delta h"""
import sys
import numpy as np
from scipy.special import ndtr
from scipy.optimize import brentq

q, s, T, delta, h = (float(a) for a in sys.argv[1:6])
T = int(T)


def x_of_loss(l, sign):
    # inverse of L(x) = sign * log((1-q) + q exp((2x-1)/(2s^2)))
    v = np.expm1(sign * l) + q
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(v > 0, s * s * np.log(v / q) + 0.5, -np.inf)


def cdf(l, order):
    if order == "remove":
        x = x_of_loss(l, 1.0)
        return (1 - q) * ndtr(x / s) + q * ndtr((x - 1) / s)
    x = x_of_loss(l, -1.0)  # L decreasing in x: P(L <= l) = P(X >= x)
    return np.where(np.isfinite(x), ndtr(-x / s), 1.0)


def eps_of(p, lo_index, delta):
    L = (lo_index + np.arange(p.size)) * h
    def d(e):
        m = L > e
        return np.sum(-np.expm1(e - L[m]) * p[m]) - delta
    if d(0.0) <= 0:
        return 0.0
    return brentq(d, 0.0, L[-1], xtol=1e-12)


def run(order, up):
    lmin, lmax = (np.log1p(-q), 12.0) if order == "remove" else (-12.0, -np.log1p(-q))
    i0, i1 = int(np.floor(lmin / h)) - 1, int(np.ceil(lmax / h)) + 1
    grid = np.arange(i0, i1 + 1) * h
    F = cdf(grid, order)
    p = np.diff(F)  # mass of (grid[k], grid[k+1]]
    lo_index = i0 + 1 if up else i0  # round up: to grid[k+1]; down: to grid[k]
    W0, W1 = int(-20 / h), int(40 / h)  # composed window in grid indices
    N = 1 << int(np.ceil(np.log2(W1 - W0)))
    buf = np.zeros(N)
    buf[: p.size] = p
    c = np.fft.irfft(np.fft.rfft(buf) ** T, N)
    # position k <-> index T*lo_index + k (mod N), placed in [W0, W0 + N)
    start = T * lo_index
    shift = (W0 - start) % N
    c = np.roll(c, -shift)
    c = np.maximum(c, 0.0)
    return eps_of(c, W0, delta)


res = {}
for up in (True, False):
    res[up] = max(run("remove", up), run("add", up))
print("q=%g sigma=%g T=%d delta=%g h=%g eps_low=%.6f eps_up=%.6f" % (q, s, T, delta, h, res[False], res[True]))
