#!/usr/bin/python3
"""Fits and report of the power-law scaling study (scripts/scaling.sh; docs/scaling.md).

SPDX-License-Identifier: MIT

usage: scaling_fit.py OUTDIR REPORT.md ELAPSED_SECONDS
Reads OUTDIR/scaling.tsv (by column name), writes OUTDIR/scaling_slopes.tsv (local slopes),
OUTDIR/scaling_fit.tsv (fitted exponents with their windows and the predicted exponents) and the
markdown report.

Fits: ordinary least squares of log R_out on log gamma over a window of the grid, with the
standard error of the slope from the residuals (the tuned R_out is accurate to ~1e-5 relative, so
this SE measures the curvature of log R_out over the window, not noise). Windows: the smallest
decade of gamma (the 3 smallest grid points) and the 3 decades below 0.03 (7 points). The local
slope between consecutive gammas shows whether the slope has converged.

Predicted exponents (docs/scaling.md, "Heuristic theory"): with a = 1 - 1/alpha, in the power-law
window d^(1-alpha) << gamma << 1 of a fixed d (alpha > 1):
  const   a/(1+a) (non-private balance; 2a/(2+a) where the release jump dominates)
  sqrt    a for alpha <= 1.5; a/(5/3 - 1/alpha) for alpha > 1.5 (privacy-dominated: a)
  optimal a/(1+a) (the c1/(t + gamma m) family), up to logarithms
  minimax a (any schedule)
For alpha <= 1 (and for alpha > 1 once lambda_min T >> 1, every direction learned) the isotropic
shapes of docs/math.md 1.8 apply with spectrum-dependent constants: their local slope over the
window (with the privacy term weighted by K_ISO, below) is the prediction.
"""
import math
import sys

import numpy as np

FAMILIES = ("const", "sqrt", "optimal")


def read_tsv(path):
    lines = [l.rstrip("\n") for l in open(path) if not l.startswith("#") and l.strip()]
    head = lines[0].split("\t")
    rows = []
    for l in lines[1:]:
        f = l.split("\t")
        r = {}
        for k, v in zip(head, f):
            try:
                r[k] = float(v)
            except ValueError:
                r[k] = v
        rows.append(r)
    return rows


def write_tsv(path, note, cols, rows):
    with open(path, "w") as f:
        f.write("# dpdyn scripts/scaling_fit.py\n# figure: scaling\n# %s\n" % note)
        f.write("\t".join(cols) + "\n")
        for r in rows:
            f.write("\t".join(v if isinstance(v, str) else "%.10g" % v for v in r) + "\n")


def fit(g, R):
    x, y = np.log(g), np.log(R)
    A = np.column_stack([x, np.ones_like(x)])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    if len(x) > 2:
        res = y - A @ coef
        s2 = float(res @ res) / (len(x) - 2)
        se = math.sqrt(s2 / float(((x - x.mean()) ** 2).sum()))
    else:
        se = float("nan")
    return float(coef[0]), se


def lam_min(alpha, d):
    """Smallest eigenvalue of powerlaw:alpha at dimension d (mean 1)."""
    i = np.arange(1, d + 1, dtype=float)
    return d ** (-alpha) / float(np.mean(i ** (-alpha)))


def horizon(r):
    """T = integral of the tuned eta~ over [0, 1]."""
    if r["family"] == "const":
        return r["eta_at_0"]
    if r["family"] == "sqrt":
        return 2.0 * r["eta_at_0"] / 3.0
    gm = r["gamma"] * r["offset_scale"]
    return r["c1"] * math.log((1.0 + gm) / gm)


# Ratio of the privacy to the statistical constant of the isotropic rates: the two-constant fit
# of docs/rates.md gives R_out ~ A gamma + B gamma^2/rho^2 with B/A = 68 (rho = 1) and 46
# (rho = 0.1) for the optimal family; 60 is used for every family.
K_ISO = 60.0


def iso_shape(fam, g, rho):
    L = np.log(1.0 / g)
    if fam == "optimal":
        return g + K_ISO * g**2 / rho**2
    if fam == "const":
        return g * L + K_ISO * g**2 * L**2 / rho**2
    return g * L ** (2.0 / 3.0) + K_ISO * g**2 * L ** (4.0 / 3.0) / rho**2


def theory(alpha, fam):
    """(window exponent, text) of the heuristic for alpha > 1; None for alpha <= 1."""
    if alpha <= 1:
        return None
    a = 1.0 - 1.0 / alpha
    if fam == "const":
        return a / (1 + a), "a/(1+a)"
    if fam == "optimal":
        return a / (1 + a), "a/(1+a) (+log)"
    if alpha <= 1.5:
        return a, "a" + (" (+log)" if alpha == 1.5 else "")
    return a / (5.0 / 3.0 - 1.0 / alpha), "a/(5/3-1/α) (np); a (private)"


def main():
    outdir, report, elapsed = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = read_tsv("%s/scaling.tsv" % outdir)
    curves = {}
    for r in rows:
        curves.setdefault((r["alpha"], r["rho"], r["family"], int(r["d"])), []).append(r)
    for k in curves:
        curves[k].sort(key=lambda r: r["gamma"])
    # the main dimension: the one with the most tuned points (the check at 2d has only the
    # smallest gammas, so it never wins even where it has more curves, e.g. with ALPHAS set)
    dmain = max(sorted(set(k[3] for k in curves)),
                key=lambda d: sum(len(c) for k, c in curves.items() if k[3] == d))
    lmin = {}
    slopes, fits = [], []
    for (alpha, rho, fam, d), c in sorted(curves.items()):
        g = np.array([r["gamma"] for r in c])
        R = np.array([r["R_out"] for r in c])
        if (alpha, d) not in lmin:
            lmin[(alpha, d)] = lam_min(alpha, d)
        for j in range(len(c) - 1):
            s = math.log(R[j + 1] / R[j]) / math.log(g[j + 1] / g[j])
            slopes.append([alpha, rho, fam, d, g[j], g[j + 1], math.sqrt(g[j] * g[j + 1]), s])
        wins = [("smallest_decade", g[:3])]
        if len(g[g <= 0.0317]) >= 4:
            wins.append(("three_decades", g[g <= 0.0317][:7]))
        th = theory(alpha, fam)
        for name, gw in wins:
            if len(gw) < 2:
                continue
            sel = np.isin(g, gw)
            s, se = fit(g[sel], R[sel])
            iso = np.polyfit(np.log(g[sel]), np.log(iso_shape(fam, g[sel], rho)), 1)[0]
            lT = lmin[(alpha, d)] * horizon(c[0])
            fits.append([alpha, rho, fam, d, name, float(g[sel].min()), float(g[sel].max()),
                         float(sel.sum()), s, se, th[0] if th else float("nan"), float(iso),
                         lT, th[1] if th else "iso"])
    write_tsv("%s/scaling_slopes.tsv" % outdir,
              "local slope d log R_out / d log gamma between consecutive gammas",
              ["alpha", "rho", "family", "d", "gamma_lo", "gamma_hi", "gamma_mid", "slope"], slopes)
    write_tsv("%s/scaling_fit.tsv" % outdir,
              "OLS slope of log R_out on log gamma over the window (slope_se from the residuals); "
              "theory_window: heuristic exponent of the power-law window (nan: alpha <= 1); "
              "theory_iso: local slope of the isotropic rate shape over the window; "
              "lambda_min_T: lambda_min times the tuned integral of eta~ at the smallest gamma",
              ["alpha", "rho", "family", "d", "window", "gamma_lo", "gamma_hi", "points", "slope",
               "slope_se", "theory_window", "theory_iso", "lambda_min_T", "theory_form"], fits)
    write_report(report, outdir, rows, curves, fits, slopes, dmain, elapsed, lmin)


def write_report(report, outdir, rows, curves, fits, slopes, dmain, elapsed, lmin):
    out = []
    w = out.append
    w("# Scaling laws of tuned DP-SGD on power-law spectra\n")
    w("Generated by `scripts/scaling.sh` (which runs `dpdyn tune`) and `scripts/scaling_fit.py`; "
      "data `docs/figures/scaling.tsv` (every tuned point), `scaling_slopes.tsv` (local slopes), "
      "`scaling_fit.tsv` (fitted exponents); figure `docs/figures/scaling.png`. Do not edit by "
      "hand: the text comes from `scripts/scaling_prose.md`, the tables from the data.\n")
    w("![Tuned R_out against gamma on power-law spectra](figures/scaling.png)\n")
    w("@@PROSE@@\n")
    w("## Fitted exponents against the predictions (d = %d)\n" % dmain)
    w("Slope of log R_out against log γ (± standard error from the fit residuals, i.e. the "
      "curvature over the window: the tuned values themselves are accurate to ~10⁻⁵). "
      "*window*: the heuristic exponent of the power-law window (α > 1; a = 1 − 1/α); *iso*: the "
      "local slope of the isotropic rate shape of docs/math.md §1.8, its γ²/ρ² term weighted by "
      "60 (the ratio of the two constants fitted on the isotropic spectrum in docs/rates.md), over "
      "the same window (the prediction once every direction is learned); λ_min·T: smallest eigenvalue times the tuned "
      "∫η̃ at the smallest γ (≫ 1: the whole spectrum is learned, the window is closed).\n")
    w("| α | ρ | family | slope, 3 smallest γ [window] | slope, γ ≤ 0.032 (up to 3 decades) "
      "[window, points] | window prediction | iso prediction (3 smallest γ) | λ_min·T |")
    w("|---|---|---|---|---|---|---|---|")
    by = {}
    for f in fits:
        by[(f[0], f[1], f[2], int(f[3]), f[4])] = f
    keys = sorted(set((f[0], f[1], f[2]) for f in fits if int(f[3]) == dmain),
                  key=lambda k: (k[0], k[1], FAMILIES.index(k[2])))
    for (alpha, rho, fam) in keys:
        s1 = by.get((alpha, rho, fam, dmain, "smallest_decade"))
        s3 = by.get((alpha, rho, fam, dmain, "three_decades"))
        th = "%.3f (%s)" % (s1[10], s1[13]) if s1[13] != "iso" else "—"
        w("| %g | %g | %s | %.3f ± %.3f [%.2g, %.2g] | %s | %s | %.3f | %.3g |" % (
            alpha, rho, fam, s1[8], s1[9], s1[5], s1[6],
            "%.3f ± %.3f [%.2g, %.2g, %d]" % (s3[8], s3[9], s3[5], s3[6], s3[7]) if s3 else "—",
            th, s1[11], s1[12]))
    others = sorted(set(int(f[3]) for f in fits) - {dmain})
    if others:
        d2 = others[0]
        w("\n## Does the exponent move with d? (d = %d against d = %d, ρ = 1)\n" % (dmain, d2))
        w("Same γ points at both d (the smallest ones); slope fitted over the points present at "
          "both, and the ratio of the risks at the smallest γ.\n")
        w("| α | family | slope at d = %d | slope at d = %d | shift | R_out(2d)/R_out(d) at "
          "γ = 3.2e-5 | 2^(−p), p the window prediction |" % (dmain, d2))
        w("|---|---|---|---|---|---|---|")
        for (alpha, rho, fam, d), c in sorted(curves.items()):
            if d != d2:
                continue
            c1 = curves.get((alpha, rho, fam, dmain))
            if not c1:
                continue
            sel1 = [r for r in c1 if any(abs(r["gamma"] / x["gamma"] - 1) < 1e-3 for x in c)]
            sel2 = [r for r in c if any(abs(r["gamma"] / x["gamma"] - 1) < 1e-3 for x in c1)]
            if len(sel1) < 2 or len(sel1) != len(sel2):
                continue
            s_a, _ = fit(np.array([r["gamma"] for r in sel1]), np.array([r["R_out"] for r in sel1]))
            s_b, _ = fit(np.array([r["gamma"] for r in sel2]), np.array([r["R_out"] for r in sel2]))
            c = sel2
            th = theory(alpha, fam)
            w("| %g | %s | %.3f | %.3f | %+.3f | %.3f | %s |" % (
                alpha, fam, s_a, s_b, s_b - s_a, c[0]["R_out"] / sel1[0]["R_out"],
                "%.3f" % 2 ** (-th[0]) if th else "—"))
    w("\n## Local slopes (convergence)\n")
    w("d log R_out / d log γ between consecutive grid points (γ at their geometric mean), "
      "d = %d. Columns: γ from large to small.\n" % dmain)
    gm = sorted(set(s[6] for s in slopes if int(s[3]) == dmain), reverse=True)
    w("| α | ρ | family | " + " | ".join("%.2g" % x for x in gm) + " |")
    w("|---|---|---|" + "---|" * len(gm))
    sl = {}
    for s in slopes:
        if int(s[3]) == dmain:
            sl[(s[0], s[1], s[2], round(math.log10(s[6]), 3))] = s[7]
    for (alpha, rho, fam) in keys:
        w("| %g | %g | %s | " % (alpha, rho, fam) + " | ".join(
            "%.3f" % sl[(alpha, rho, fam, round(math.log10(x), 3))]
            if (alpha, rho, fam, round(math.log10(x), 3)) in sl else "—" for x in gm) + " |")
    w("\n## Tuned values\n")
    w("R_out of each family (d = %d) and which family wins; c and T = ∫η̃ of the winner.\n" % dmain)
    w("| α | ρ | γ | R_out const | R_out sqrt | R_out optimal | best | c (best) | T (best) | "
      "at a box edge |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    pts = {}
    for r in rows:
        if int(r["d"]) == dmain:
            pts.setdefault((r["alpha"], r["rho"], round(math.log10(r["gamma"]), 2)), {})[
                r["family"]] = r
    for (alpha, rho, lg) in sorted(pts, key=lambda k: (k[0], k[1], -k[2])):
        p = pts[(alpha, rho, lg)]
        best = min(p, key=lambda f: p[f]["R_out"])
        edge = ",".join(f for f in FAMILIES if f in p and p[f]["at_bound"] > 0) or "—"
        w("| %g | %g | %.3g | %s | %s | %s | %s | %.3g | %.3g | %s |" % (
            alpha, rho, 10 ** lg,
            *["%.4g" % p[f]["R_out"] if f in p else "—" for f in FAMILIES],
            best, p[best]["c"], horizon(p[best]), edge))
    w("\nRun time of the tunes: %s s (the sum of their wall times, one thread each, on a shared machine)." % elapsed)
    text = "\n".join(out) + "\n"
    prose = prose_text(lmin, dmain)
    text = text.replace("@@PROSE@@\n", prose)
    with open(report, "w") as f:
        f.write(text)


def prose_text(lmin, dmain):
    try:
        import os
        p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scaling_prose.md")
        return open(p).read()
    except OSError:
        return ""


if __name__ == "__main__":
    main()
