#!/usr/bin/python3
"""Small-tilt prediction of Algorithm 1's test accuracy (docs/semipriv.md, "Does PCA help?").

In the regime k sigma^2 >> n^2 L^2 and kappa = rho sqrt(k) << k, the last Noisy-SGD iterate is
w = c u + v with c = (rho + Z) / sqrt(k), Z ~ N(0, 1) across replicates, v ~ isotropic in the
k - 1 directions orthogonal to u, |v| ~ 1, and
    rho = m eps sqrt(T) / sqrt(32 log(n/delta) log(1/delta)),   m = E[y <u, x>],
so that the score of a test point is y <w, x> ~ [(rho + Z) y <u, x> + sqrt(tau_k) G] / sqrt(k),
G ~ N(0, 1), tau_k = E|A_k^T x|^2 - E<u, x>^2 (the retained energy off the signal direction).
The accuracy E Phi((rho + Z) y<u, x> / sqrt(tau_k)) depends on k only through tau_k.
This script samples the generator of notes C.5 in Q coordinates (u = q_1 there; A_k = the first
k coordinates, ordered as the population eigenvalues of the defaults) and prints m, tau_k and
the predicted accuracy for given d, nu, eps, k.
Usage: /usr/bin/python3 bench/semipriv_snr_predict.py d nu n eps k [k ...]
"""
import math
import sys

import numpy as np


def trunc_normal(rng, shape, t=3.0):
    g = rng.standard_normal(shape)
    bad = np.abs(g) > t
    while bad.any():
        g[bad] = rng.standard_normal(bad.sum())
        bad = np.abs(g) > t
    return g


def main():
    d, nu, n, eps = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    ks = [int(v) for v in sys.argv[5:]]
    K, c, s, tau, lam = 5, 1.0, 0.3, 0.3, np.array([0.6, 0.5, 0.4, 0.3])
    rng = np.random.default_rng(1)
    N = 20000
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    z = np.empty((N, d))
    z[:, 0] = y * (c + s * np.abs(trunc_normal(rng, N)))
    z[:, 1:K] = np.sqrt(lam) * trunc_normal(rng, (N, K - 1))
    z[:, K] = tau * (2 * rng.random(N) - 1)
    z[:, K + 1:] = nu * trunc_normal(rng, (N, d - K - 1))
    x = z / np.linalg.norm(z, axis=1, keepdims=True)
    share = (x ** 2).mean(axis=0)
    order = np.argsort(-share, kind="stable")
    yu = y * x[:, 0]
    m = yu.mean()
    T = n * n
    delta = 1e-5
    rho = m * eps * math.sqrt(T) / math.sqrt(32 * math.log(n / delta) * math.log(1 / delta))
    Z = np.random.default_rng(2).standard_normal(4000)
    print("# d=%d nu=%g n=%d eps=%g: m=%.4f E<u,x>^2=%.4f rho=%.3f energy outside top %d: %.4f"
          % (d, nu, n, eps, m, share[0], rho, K, 1 - share[:K].sum()))
    print("k tau_k predicted_acc")
    for k in ks:
        tau_k = share[order[:k]].sum() - share[0]
        if tau_k <= 0:
            acc = float(np.mean((rho + Z) > 0))
        else:
            arg = np.outer(rho + Z, yu[:4000]) / math.sqrt(tau_k)
            acc = float(np.mean(0.5 * (1 + np.vectorize(math.erf)(arg / math.sqrt(2)))))
        print("%d %.4f %.4f" % (k, tau_k, acc))


if __name__ == "__main__":
    main()
