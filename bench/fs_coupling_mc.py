#!/usr/bin/env python3
"""Monte Carlo of one DP-SGD step at t = 0 (docs/finite_size.md §4, "Its cause").

Power law alpha, dimension d, theta* flat, clipping c (per-sample threshold c sqrt(d) on
|x| |r|), Gaussian label noise zeta, no privacy noise, step eta~/n with eta~ = 1. Prints
  - E R_1 - R_0 for one step (n = 4d), to compare with `dpdyn ode --grid=n+1` at t = 1/n;
  - per coordinate i: mu_i = E[g_i psi]/(sqrt(lambda_i) e_i) and M2_i = E[g_i^2 psi^2] with their
    SE, next to the model's values when the output of dpd_fs_coupling is given;
  - E psi^2 and P(|r| < T) when only the top K directions of s^2 are coupled to the residual.
Every draw is independent (data and label noise); SE = sd / sqrt(draws).
usage: fs_coupling_mc.py [--alpha=1.5] [--d=400] [--c=0.5] [--zeta=0.5] [--draws=4000000]
                         [--model=FILE (dpd_fs_coupling's output)] [--seed=1]
SPDX-License-Identifier: MIT
"""
import sys

import numpy as np


def main():
    o = {"alpha": 1.5, "d": 400, "c": 0.5, "zeta": 0.5, "draws": 4000000, "model": "", "seed": 1}
    for a in sys.argv[1:]:
        k, _, v = a.lstrip("-").partition("=")
        if k not in o:
            sys.exit("fs_coupling_mc.py: unknown argument '%s' (allowed: %s)" % (a, ", ".join(o)))
        o[k] = type(o[k])(v) if not isinstance(o[k], str) else v
    d, c, zeta = o["d"], o["c"], o["zeta"]
    n = 4 * d
    eta = 1.0 / n
    lam = np.arange(1, d + 1, dtype=float) ** -o["alpha"]
    lam /= lam.mean()
    sl = np.sqrt(lam)
    e = np.full(d, 1.0 / np.sqrt(d))
    R0 = 0.5 * np.sum(lam * e * e)
    P = R0 + 0.5 * zeta * zeta
    rng = np.random.default_rng(o["seed"])
    K = 40
    tops = [0, 1, 3, 12]
    acc = {"dR": [0.0, 0.0], "mu": [np.zeros(K), np.zeros(K)], "m2": [np.zeros(K), np.zeros(K)]}
    cpl = {k: [0.0, 0.0, 0.0, 0.0] for k in tops + [d]}
    done = 0
    while done < o["draws"]:
        m = min(50000, o["draws"] - done)
        g = rng.standard_normal((m, d))
        r = (g * sl) @ e + zeta * rng.standard_normal(m)
        s2 = (g * g) @ lam / d
        T = c / np.sqrt(s2)
        psi = np.clip(r, -T, T)
        x_psi = (g * sl) * psi[:, None]  # x_i psi
        dR = -eta * (x_psi @ (lam * e)) + 0.5 * eta * eta * ((x_psi * x_psi) @ lam)
        acc["dR"][0] += dR.sum()
        acc["dR"][1] += (dR * dR).sum()
        a = g[:, :K] * psi[:, None]
        b = a * a
        for key, v in (("mu", a), ("m2", b)):
            acc[key][0] += v.sum(0)
            acc[key][1] += (v * v).sum(0)
        gi = rng.standard_normal((m, d))
        for k in cpl:  # the top k of s^2 coupled to r, the rest drawn independently
            sk = (g[:, :k] ** 2) @ lam[:k] / d + (gi[:, k:] ** 2) @ lam[k:] / d
            Tk = c / np.sqrt(sk)
            p2 = np.clip(r, -Tk, Tk) ** 2
            inside = (np.abs(r) < Tk).astype(float)
            cpl[k][0] += p2.sum()
            cpl[k][1] += (p2 * p2).sum()
            cpl[k][2] += inside.sum()
            cpl[k][3] += inside.sum()
        done += m

    def mean_se(s, q):
        mu = s / done
        return mu, np.sqrt(np.maximum(q / done - mu * mu, 0.0) / done)

    print("# power law %g, d = %d, theta* flat, c = %g, zeta = %g, %d draws; R0 = %.6f, "
          "kappa = %.4f" % (o["alpha"], d, c, zeta, done, R0,
                            np.sum(lam / d * lam * e * e) / (2 * P)))
    m, s = mean_se(*acc["dR"])
    print("one step (n = %d): E R_1 - R_0 = %.6e +- %.1e" % (n, m, s))
    model = None
    if o["model"]:
        rows = [l for l in open(o["model"]) if not l.startswith("#")]
        model = np.genfromtxt(rows, delimiter="\t", names=True)
    mu, mus = mean_se(*acc["mu"])
    m2, m2s = mean_se(*acc["m2"])
    den = sl[:K] * e[:K]
    print("i\tlambda\tmu_mc\tmu_se\tM2_mc\tM2_se" + ("\tmu_model\tmu_z\tM2_model\tM2_z" if model is not None else ""))
    for i in range(K):
        line = "%d\t%.6g\t%.5f\t%.5f\t%.5f\t%.5f" % (i, lam[i], mu[i] / den[i], mus[i] / den[i], m2[i], m2s[i])
        if model is not None:
            line += "\t%.5f\t%+.1f\t%.5f\t%+.1f" % (
                model["mu_model"][i], (model["mu_model"][i] - mu[i] / den[i]) / (mus[i] / den[i]),
                model["M2_model"][i], (model["M2_model"][i] - m2[i]) / m2s[i])
        print(line)
    print("coupled_top\tE_psi2\tE_psi2_se\tP_in\tP_in_se")
    for k in cpl:
        a, sa = mean_se(cpl[k][0], cpl[k][1])
        b, sb = mean_se(cpl[k][2], cpl[k][3])
        print("%s\t%.5f\t%.5f\t%.5f\t%.5f" % ("all" if k == d else str(k), a, sa, b, sb))


if __name__ == "__main__":
    main()
