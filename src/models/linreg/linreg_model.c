/* model=linreg: one-pass DP-SGD for linear regression (docs/math.md §1) as a model type.
 * SPDX-License-Identifier: MIT
 *
 * The keys of the model and its command table: the set-up is in linreg_setup.c, the runs in
 * linreg_run.c and linreg_tune.c. */
#include <math.h>
#include <stddef.h>

#include "linreg/numbers_impl.h"
#include "models/linreg/linreg_impl.h"

#define LR_SIM "simulate sde compare tune"
#define LR_ALL "simulate sde ode compare account tune audit"
#define LR_THEORY "ode compare tune"
#define LR_DATA "simulate ode compare tune"

static const dpd_key_desc linreg_keys[] = {
    {"d", DPD_KEY_INT, NULL, 1, 2147483648.0, 0, NULL, LR_ALL, "dimension d"},
    {"n", DPD_KEY_INT, NULL, 1, 1099511627776.0, 0, NULL, LR_ALL,
     "samples = steps n (or give gamma)"},
    {"gamma", DPD_KEY_REAL, NULL, 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "d/n (replaces n)"},
    {"zeta", DPD_KEY_REAL, "0.5", 0, INFINITY, DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "label-noise standard deviation"},
    {"noise", DPD_KEY_TEXT, "gaussian", 0, 0, 0, NULL, LR_ALL,
     "label-noise law (variance zeta^2): {noise_laws}"},
    {"spectrum", DPD_KEY_TEXT, "iso", 0, 0, 0, NULL, LR_ALL,
     "iso | levels:L1*M1,L2*M2,... | powerlaw:ALPHA | file:PATH (renormalised to mean 1)"},
    {"theta_star", DPD_KEY_TEXT, "random", 0, 0, 0, NULL, LR_ALL,
     "random | flat | file:PATH (eigenbasis components)"},
    {"theta_norm", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "|theta*|"},
    {"features", DPD_KEY_TEXT, "gaussian", 0, 0, 0, NULL, LR_DATA,
     "gaussian (the model of docs/math.md) | file:PATH (an N x d dataset: .npy or text)"},
    {"targets", DPD_KEY_TEXT, "model", 0, 0, 0, NULL, LR_DATA,
     "with features=file: model (y = <x, theta*> + noise) | file:PATH (N values)"},
    {"center", DPD_KEY_TEXT, "yes", 0, 0, 0, "no|yes", LR_DATA, "centre features and targets"},
    {"scale", DPD_KEY_TEXT, "trace", 0, 0, 0, "trace|none", LR_DATA, "one factor: tr Sigma^ = d"},
    {"target_scale", DPD_KEY_TEXT, "unit", 0, 0, 0, "unit|none", LR_DATA, "unit-variance targets"},
    {"replacement", DPD_KEY_INT, "0", 0, 1, 0, NULL, LR_DATA,
     "1 = rows drawn i.i.d. (with replacement; n may exceed the rows), 0 = n distinct rows"},
    {"test_fraction", DPD_KEY_REAL, "0", 0, 0.9, 0, NULL, LR_DATA, "rows held out (seeded)"},
    {"factors", DPD_KEY_TEXT, "gaussian", 0, 0, 0, "gaussian|data", LR_DATA,
     "clipping factors of the theory: the published closed forms or the rows' own"},
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
     "{schedules} (PATH: columns t eta)"},
    {"eta0", DPD_KEY_REAL, "1", 0, INFINITY, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, LR_ALL,
     "eta~(0) for {schedules:eta0} (eta0 = 1: a step of 1/n per sample; stable below 2/gamma)"},
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
    {"grid", DPD_KEY_INT, "101", 2, 16777216.0, 0, NULL, "simulate sde ode compare account tune",
     "recorded time points on [0, 1]"},
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
    DPD__AUDIT_KEY_LINES,
    {"canary", DPD_KEY_TEXT, "last", 0, 0, 0, "last|first", "audit",
     "audit: the canary's step (last: no later step shrinks it; first: the largest step)"},
    {NULL, DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, NULL, NULL}};

static const char *const linreg_small[] = {"d",  "20", "n", "80",  "seeds", "3", "grid",
                                           "11", "c",  "1", "rho", "2",     NULL};

/* The numbers every command's summary holds first. */
#define LR_BASE_NUMBERS                                                                            \
  "seed d n gamma initial_excess_risk privacy.zcdp privacy.delta privacy.epsilon "                 \
  "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke rho zcdp gdp_mu epsilon_gdp "            \
  "epsilon_tight_over_gdp gdp_norm2_bound gdp_max_row_norm2 gdp_row_tail gdp_run_tail "

/* The numbers each command's summary can hold, as dpdyn sweep names them
 * (dpd_model_command.numbers): the union over the command's configurations, checked by
 * tests/cli/test_sweep_plot_y.sh. */
static const char linreg_account_numbers[] = LR_BASE_NUMBERS
    "rho_target rho_eff zcdp_eff delta epsilon_bun_steinke epsilon_tight "
    "epsilon_bun_steinke_eff epsilon_tight_eff epsilon rho_bun_steinke noise_nu steps";

#define LR_FILES                                                                                   \
  "trajectory.tsv release.tsv [replicates.tsv replicates_trajectory.tsv] summary.json"

static const dpd_model_command linreg_commands[] = {
    {.name = "simulate",
     .summary = "one-pass DP-SGD over `seeds` replicates: excess risk with standard errors",
     .files = LR_FILES,
     .example = "dpdyn simulate --d=200 --n=800 --c=1 --rho=2",
     .numbers = LR_BASE_NUMBERS DPD__LINREG_SIMULATE_NUMBERS,
     .run = dpd__linreg_simulate,
     .uses = LR_USES_SIM},
    {.name = "sde",
     .summary = "homogenized SDE (H-DP-SGD) by Euler-Maruyama over `seeds` replicates",
     .files = LR_FILES,
     .example = "dpdyn sde --d=200 --n=800 --c=1 --rho=2",
     .numbers = LR_BASE_NUMBERS DPD__LINREG_SDE_NUMBERS,
     .run = dpd__linreg_sde,
     .uses = LR_USES_SDE},
    {.name = "ode",
     .summary = "deterministic equivalent: coupled risk ODEs, bounds, last-iterate jump",
     .files = "trajectory.tsv release.tsv summary.json",
     .example = "dpdyn ode --d=1000 --n=4000 --c=1 --rho=2",
     .numbers = LR_BASE_NUMBERS DPD__LINREG_ODE_NUMBERS,
     .run = dpd__linreg_ode,
     .uses = LR_USES_ODE | LR_USES_ODE_ONLY},
    {.name = "compare",
     .summary = "simulation against the ODE (+ the SDE with --sde=1): gaps, figure",
     .files = LR_FILES " compare.png",
     .example = "dpdyn compare --d=200 --n=800 --c=1 --rho=2",
     .numbers = LR_BASE_NUMBERS DPD__LINREG_COMPARE_NUMBERS,
     .run = dpd__linreg_compare,
     .uses = LR_USES_SIM | LR_USES_ODE | LR_USES_SDE_KEY,
     .plot_default = 1},
    {.name = "account",
     .summary = "privacy of the schedule (or of a sequence): rho_eff, (epsilon, delta)",
     .files = "summary.json",
     .example = "dpdyn account --d=1000 --n=4000 --epsilon=2 --delta=1e-6 --schedule=sqrt",
     .numbers = linreg_account_numbers,
     .run = dpd__linreg_account,
     .uses = LR_USES_SEQUENCE},
    {.name = "tune",
     .summary = "optimise c and the schedule on the ODE; heat map; confirm by simulation",
     .files = "trajectory.tsv release.tsv heatmap.tsv summary.json tune.png",
     .example = "dpdyn tune --d=1000 --n=4000 --rho=2 --schedule=sqrt",
     .numbers = LR_BASE_NUMBERS DPD__LINREG_TUNE_NUMBERS,
     .run = dpd__linreg_tune,
     .uses = LR_USES_ODE | LR_USES_TUNE,
     .replicates_key = "confirm_seeds",
     .plot_default = 1},
    DPD__AUDIT_COMMAND(dpd__linreg_audit, LR_USES_AUDIT, LR_BASE_NUMBERS DPD__LINREG_AUDIT_NUMBERS,
                       "dpdyn audit --d=20 --n=200 --c=1 --rho=1"),
    {.name = NULL}};

const dpd_model_type dpd__model_linreg = {
    .name = "linreg",
    .summary = "linear regression, one-pass DP-SGD with clipping (docs/math.md section 1)",
    .keys = linreg_keys,
    .commands = linreg_commands,
    .small = linreg_small,
    .setup = dpd__linreg_setup,
    .release = dpd__linreg_release,
    .workspace_bytes = dpd__linreg_workspace_bytes};
