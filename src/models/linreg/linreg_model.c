/* model=linreg: one-pass DP-SGD for linear regression (docs/math.md §1) as a model type.
 * SPDX-License-Identifier: MIT
 *
 * The keys of the model; its commands are in linreg_run.c and linreg_tune.c. */
#include <math.h>
#include <stddef.h>

#include "models/linreg/linreg_impl.h"

#define LR_SIM "simulate sde compare tune"
#define LR_ALL "simulate sde ode compare account tune"
#define LR_THEORY "ode compare tune"

static const dpd_key_desc linreg_keys[] = {
    {"d", DPD_KEY_INT, NULL, 1, 2147483648.0, 0, NULL, LR_ALL, "dimension d"},
    {"n", DPD_KEY_INT, NULL, 1, 1099511627776.0, 0, NULL, LR_ALL,
     "samples = steps n (or give gamma)"},
    {"gamma", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "d/n (replaces n)"},
    {"zeta", DPD_KEY_REAL, "0.5", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "label-noise standard deviation"},
    {"noise", DPD_KEY_TEXT, "gaussian", 0, 0, 0, NULL, LR_ALL,
     "label-noise law (variance zeta^2): gaussian | laplace | rademacher | student:NU (NU > 2)"},
    {"spectrum", DPD_KEY_TEXT, "iso", 0, 0, 0, NULL, LR_ALL,
     "iso | levels:L1*M1,L2*M2,... | powerlaw:ALPHA | file:PATH (renormalised to mean 1)"},
    {"theta_star", DPD_KEY_TEXT, "random", 0, 0, 0, NULL, LR_ALL,
     "random | flat | file:PATH (eigenbasis components)"},
    {"theta_norm", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "|theta*|"},
    {"c", DPD_KEY_REAL, "inf", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, LR_ALL,
     "clipping scale, C = c sqrt(d); inf = no clipping"},
    {"rho", DPD_KEY_REAL, "inf", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_INF, NULL, LR_ALL,
     "privacy rho: the noise is calibrated so that the whole run (every sample used once, the "
     "last iterate released) is rho^2/2-zCDP (alias of zcdp = rho^2/2); inf = non-private"},
    {"zcdp", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_INF, NULL, LR_ALL,
     "privacy of the whole run as zCDP rho_z (instead of rho = sqrt(2 rho_z)); inf = none"},
    {"epsilon", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "target epsilon (with delta) instead of rho"},
    {"delta", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "delta in (0, 1) for (epsilon, delta) conversions"},
    {"schedule", DPD_KEY_TEXT, "const", 0, 0, 0, NULL, LR_ALL,
     "learning-rate schedule eta~(t) on t = k/n in [0, 1] (sample k's step is eta~(k/n)/n): "
     "const | sqrt | hyperbolic | optimal | step | cosine | file:PATH (columns t eta)"},
    {"eta0", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "eta~(0) for const, sqrt, hyperbolic, step, cosine (eta0 = 1: a step of 1/n per sample; "
     "stable below 2/gamma)"},
    {"a", DPD_KEY_REAL, "1", -1, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "hyperbolic decay: eta~(t) = eta0/(1 + a t)"},
    {"c1", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "optimal: eta~(t) = c1/(t + gamma max(c2, c3/rho))"},
    {"c2", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "optimal schedule constant c2"},
    {"c3", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "optimal schedule constant c3"},
    {"factor", DPD_KEY_REAL, "0.5", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "step: multiplier of eta~ at each drop"},
    {"drops", DPD_KEY_INT, "1", 1, 1e6, 0, NULL, LR_ALL, "step: number of equally spaced drops"},
    {"eta_min", DPD_KEY_REAL, "0", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "cosine: eta~(t) = eta_min + (eta0 - eta_min)(1 + cos(pi t))/2"},
    {"dt", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN, NULL, "sde compare",
     "Euler-Maruyama step (default 1/n)"},
    {"sde", DPD_KEY_INT, "0", 0, 1, 0, NULL, "compare",
     "1 = also integrate the SDE (three-way comparison)"},
    {"sequence", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, "account",
     "file of (eta_k, sigma_k) rows; reports rho_eff of that sequence"},
    {"seeds", DPD_KEY_INT, "16", 1, 16777216.0, 0, NULL, LR_SIM, "replicates"},
    {"save_replicates", DPD_KEY_INT, "0", 0, 2, 0, NULL, "simulate sde compare",
     "per-replicate values: 0 = none, 1 = replicates.tsv (each replicate's final values), 2 = "
     "also replicates_trajectory.tsv (each replicate on the grid)"},
    {"seed", DPD_KEY_INT, "1", 0, 18446744073709551615.0, 0, NULL, LR_ALL, "master seed"},
    {"threads", DPD_KEY_INT, "0", 0, 4096, 0, NULL, LR_ALL,
     "worker threads (0 = all cores); results do not depend on it"},
    {"grid", DPD_KEY_INT, "101", 2, 16777216.0, 0, NULL, LR_ALL, "recorded time points on [0, 1]"},
    {"method", DPD_KEY_TEXT, "bdf", 0, 0, 0, NULL, LR_THEORY,
     "ODE method: bdf | adams | volterra (FFT, constant schedules without clipping)"},
    {"rtol", DPD_KEY_REAL, "1e-10", 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_THEORY,
     "ODE relative tolerance (the global error of R is about 5-50 rtol)"},
    {"atol", DPD_KEY_REAL, "1e-14", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_THEORY,
     "ODE absolute tolerance on the risk"},
    {"compress", DPD_KEY_TEXT, "auto", 0, 0, 0, "auto|on|off", LR_THEORY,
     "spectral compression of the ODE: Gauss nodes per band of the spectrum (auto: when it "
     "at least halves the groups)"},
    {"finite_size", DPD_KEY_TEXT, "auto", 0, 0, 0, "off|on|auto", "ode sde compare tune",
     "finite-size correction of the clipping factors for steep spectra (docs/finite_size.md; "
     "auto, the default: on when the relative sd of |x|^2/d exceeds 0.1 and lambda_max/d 0.03)"},
    {"compress_tol", DPD_KEY_REAL, "1e-9", 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_THEORY,
     "target of the a-posteriori compression error (max relative change of R with 2 "
     "more nodes per band)"},
    {"compress_nodes", DPD_KEY_INT, "6", 1, 30, 0, NULL, LR_THEORY,
     "first Gauss nodes per band and measure (raised by 2 until compress_tol is met)"},
    {"compress_bands", DPD_KEY_INT, "3", 1, 100, 0, NULL, LR_THEORY,
     "bands per decade of the spectrum"},
    {"tune", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, "tune",
     "what to optimise (default c,eta0; optimal: c,c1,c2,c3)"},
    {"c_min", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, "tune",
     "smallest clipping scale searched (default 0.01)"},
    {"c_max", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, "tune",
     "largest clipping scale searched (default 100)"},
    {"heatmap", DPD_KEY_INT, NULL, 0, 1001, 0, NULL, "tune",
     "(c, eta~(0)) surface points per axis, 0 = none (default 41)"},
    {"heatmap_eta", DPD_KEY_TEXT, NULL, 0, 0, 0, "log|linear", "tune",
     "eta~(0) axis of the surface (default log)"},
    {"confirm_seeds", DPD_KEY_INT, NULL, 0, 16777216.0, 0, NULL, "tune",
     "replicates of the confirmation simulation, 0 = skip (default 64)"},
    {"xtol", DPD_KEY_REAL, NULL, 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, "tune",
     "simplex size at which a local search stops, in the search's logistic coordinates "
     "(default 1e-8)"},
    {"restarts", DPD_KEY_INT, NULL, 0, 100, 0, NULL, "tune",
     "restarts of each simplex search while they improve the risk by > 1e-10 relative "
     "(default 3)"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

static const char *const linreg_small[] = {"d",  "20", "n", "80",  "seeds", "3", "grid",
                                           "11", "c",  "1", "rho", "2",     NULL};

const dpd_model_type dpd__model_linreg = {
    "linreg", "linear regression, one-pass DP-SGD with clipping (docs/math.md section 1)",
    linreg_keys, dpd__linreg_commands, linreg_small};
