/* model=rf, commands interpolate and sensitivity (internal): their keys, what setup validates,
 * and the runs the adapter (src/models/rf) hands the problem's config to
 * (docs/overparameterization.md).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RF_OVERPARAM_IMPL_H
#define DPD_RF_OVERPARAM_IMPL_H

#include "core/model_impl.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"
#include "rf/rf_run_impl.h"

/* Sizes one run may list (p_over_n, n_list, p_list). */
#define DPD__RF_OVP_SIZES_MAX 32

/* The keys of interpolate and sensitivity (rows of the model's key table). */
/* clang-format off */
#define DPD__RF_OVP_KEY_LINES                                                                      \
  {"p_over_n", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, "interpolate sensitivity",                       \
   "p/n: a list a,b,... (p = round(a n) each; interpolate [0.5,1,2,4,8], or p when p is "          \
   "given) or, for sensitivity, one value [4] (p = round(a n) for each n of n_list); both "        \
   "commands default to n = 200, n_test = 200, seeds = 4"},                                        \
  {"n_list", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, "sensitivity",                                     \
   "sensitivity: training sizes n1,n2,... at fixed p/n (the growth exponent in n) [n]"},           \
  {"p_list", DPD_KEY_TEXT, NULL, 0, 0, 0, NULL, "sensitivity",                                     \
   "sensitivity: feature counts p1,p2,... at fixed n (the growth exponent in p)"},                 \
  {"d_exponent", DPD_KEY_REAL, "0", -4, 4, 0, NULL, "sensitivity",                                 \
   "sensitivity: d = round(d (n/n1)^e) along n_list (e = 2/3: the slides' n^(1/6) regime)"},       \
  {"dpgd", DPD_KEY_TEXT, "on", 0, 0, 0, "on|off", "sensitivity",                                   \
   "sensitivity: also the DP-GD last iterate (eta, steps, clip and the privacy keys)"},            \
  {"predict", DPD_KEY_TEXT, "auto", 0, 0, 0, "auto|theorem", "sensitivity",                        \
   "sensitivity: theorem = refuse an activation outside the slides' theorem (mu_1 = "              \
   "E phi'(G) = 0); auto = report the prediction only where it applies"}
/* clang-format on */

/* The two commands (rows of the model's command table). */
#define DPD__RF_OVP_COMMANDS(interp_fn, sens_fn, uses_interp, uses_sens)                           \
  {.name = "interpolate",                                                                          \
   .summary = "interpolation: lambda_min / lambda_max of Phi Phi^T / p across p/n against the "    \
              "Hermite bound, |theta*| and the residual",                                          \
   .files = "interpolate.tsv hermite.tsv summary.json rf_interpolate.png",                         \
   .example = "dpdyn interpolate --model=rf --n=200 --p_over_n=0.5,1,2,4,8 --activation=relu",     \
   .numbers = DPD__RF_INTERP_NUMBERS,                                                              \
   .run = interp_fn,                                                                               \
   .uses = uses_interp,                                                                            \
   .plot_default = 1},                                                                             \
  {                                                                                                \
    .name = "sensitivity",                                                                         \
    .summary = "sensitivity |x| |grad_x f| of theta* and of DP-GD at test points, its growth "     \
               "exponent in n or p",                                                               \
    .files = "sensitivity.tsv summary.json rf_sensitivity.png",                                    \
    .example = "dpdyn sensitivity --model=rf --n_list=25,50,100 --p=2000 --d=200 --zeta=0.5",      \
    .numbers = DPD__RF_SENS_NUMBERS, .run = sens_fn, .uses = uses_sens, .plot_default = 1          \
  }

#define DPD__RF_INTERP_NUMBERS                                                                     \
  "seed seeds lambda_min lambda_min_se lambda_max lambda_max_se lambda_min_centred "               \
  "lambda_max_centred residual theta_star_norm theta_star_norm_se theta_star_test_risk "           \
  "bound hermite_sum kernel_lambda_min kernel_lambda_max mu_1 p p_over_n"
#define DPD__RF_SENS_NUMBERS                                                                       \
  "seeds sensitivity_mean sensitivity_se sensitivity_q10 sensitivity_q50 sensitivity_q90 "         \
  "sensitivity_dpgd_mean sensitivity_dpgd_se sensitivity_dpgd_q50 exponent exponent_se "           \
  "exponent_se_fit exponent_dpgd exponent_dpgd_se predicted_exponent mu_1 "                        \
  "theta_star_test_risk dpgd_test_risk n p d sigma epsilon delta eta steps"

/* What setup validated for interpolate / sensitivity. */
typedef struct {
  int sens;     /* 1: sensitivity, 0: interpolate */
  size_t count; /* sizes */
  size_t n[DPD__RF_OVP_SIZES_MAX], p[DPD__RF_OVP_SIZES_MAX], d[DPD__RF_OVP_SIZES_MAX];
  double ratio[DPD__RF_OVP_SIZES_MAX]; /* p/n as given (NAN: p given) */
  int vary_p;                          /* sensitivity: the sizes vary p (p_list), else n */
  double d_exponent;
  int dpgd, theorem;
  size_t seeds;
  uint64_t seed;
  int threads;
  /* DP-GD (sensitivity): 0 = the default of each size (eta = 1/p, T = 5 d, delta = 1/n) */
  double eta, delta;
  size_t steps;
  double clip;
  dpd__rf_budget budget;
  double budget_value;
  int moments;
} dpd__rf_ovp;

/* Setup of interpolate (sens = 0) and sensitivity (sens = 1) once the problem's keys are in pc
 * and DP-GD's in sc: the commands' own defaults (n = 200, n_test = 200, seeds = 4 unless given;
 * the sizes' lists), every size checked as a problem (dpd__rf_config_check: 'p' for sizes too
 * large), the hypothesis of predict = theorem, the memory of the largest size into *memory and
 * the key that drives it into *driver. DPD_EINVAL naming the key. */
DPD_HIDDEN_FN int dpd__rf_ovp_keys(dpd_keys *keys, int sens, dpd_rf_config *pc,
                                   const dpd_rf_sim_config *sc, const dpd__rf_privacy_plan *plan,
                                   dpd__rf_ovp *o, double *memory, const char **driver,
                                   dpd_err *err);

/* The runs: a new output (plot flag `plot`), the tables, the summary and the figure. */
DPD_HIDDEN_FN int dpd__rf_interp_run(const dpd_rf_config *pc, const dpd__rf_ovp *o,
                                     const dpd_keys *keys, const dpd_run_env *env, int plot,
                                     dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__rf_sens_run(const dpd_rf_config *pc, const dpd__rf_ovp *o,
                                   const dpd_keys *keys, const dpd_run_env *env, int plot,
                                   dpd_output **out, dpd_err *err);

#endif
