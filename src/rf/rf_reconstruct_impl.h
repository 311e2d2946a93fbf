/* The command `reconstruct` of model=rf (internal; src/rf/rf_reconstruct_run.c,
 * docs/overparameterization.md "Reconstruction"): its keys, their validation, and its run.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RF_RECONSTRUCT_IMPL_H
#define DPD_RF_RECONSTRUCT_IMPL_H

#include <stddef.h>

#include "dpdyn/keys.h"
#include "dpdyn/model.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_reconstruct.h"
#include "dpdyn/rf_sim.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* A Hermite coefficient below this (absolute) counts as zero in the (B2) check (the quadrature
 * of tanh's is accurate to 1e-12, rf.h). */
#define DPD_RF_RECONSTRUCT_HERMITE_ZERO 1e-9

/* The keys of reconstruct (the end of the rf key table). */
#define DPD__RF_RECONSTRUCT_KEY_LINES                                                              \
  {"theta", DPD_KEY_TEXT, "auto", 0, 0, 0, NULL, "reconstruct",                                    \
   "released parameters the attack reads: star = theta* = Phi^+ y (no privacy); dpgd = DP-GD's "  \
   "last iterate (eta, steps, clip and one of epsilon, sigma, mu, zcdp; none: plain GD); "         \
   "file:PATH = p values (.npy or text) for the problem of seed, draw 0; auto = dpgd when a "      \
   "privacy budget is given, else star"},                                                         \
      {"restarts", DPD_KEY_INT, "8", 1, 1048576, 0, NULL, "reconstruct",                           \
       "reconstruct: random starts of the minimiser per replicate (the best is kept; it stops "    \
       "early once the loss is below 1e-8)"},                                                      \
      {"attack_iterations", DPD_KEY_INT, "2000", 1, 1e9, 0, NULL, "reconstruct",                   \
       "reconstruct: BFGS iterations per start at most"},                                          \
      {"cosine", DPD_KEY_REAL, "0.9", 0, 1, DPD_KEY_LO_OPEN, NULL, "reconstruct",                  \
       "reconstruct: a training point counts as recovered at |cosine| >= this"},                   \
      {"ridge", DPD_KEY_REAL, "1e-10", 0, 1, DPD_KEY_LO_OPEN, NULL, "reconstruct",                 \
       "reconstruct: lambda = ridge p added to the n x n Gram matrix of the reconstruction's "     \
       "features (keeps the Cholesky solve defined when two rows coincide)"},                      \
      {"require_b2", DPD_KEY_TEXT, "off", 0, 0, 0, "off|on", "reconstruct",                        \
       "reconstruct: on = refuse an activation that fails the slides' assumption (B2) (phi_0 = "   \
       "phi_2 = 0, phi_1 != 0, non-zero coefficients of order >= 3 of both parities); off = a "    \
       "warning in the summary"}

/* The numbers of reconstruct's summary besides the privacy numbers (dpd_model_command.numbers). */
#define DPD__RF_RECONSTRUCT_NUMBERS                                                                \
  "reconstructed_fraction reconstructed_fraction_se matched_fraction matched_fraction_se "         \
  "matching_error matching_error_se sign_flip_fraction sign_flip_fraction_se cosine_mean "         \
  "cosine_mean_se loss loss_se residual residual_se loss_at_truth loss_at_truth_se theta_norm "    \
  "theta_norm_se restarts_run iterations evaluations seeds p_over_nd b2_holds hermite_mu0 "        \
  "hermite_mu1 hermite_mu2 hermite_mu3 hermite_mu4"

/* The command's table line (dpd_model_command). */
#define DPD__RF_RECONSTRUCT_COMMAND(run_fn, uses_bits, model_numbers)                              \
  {.name = "reconstruct",                                                                          \
   .summary = "data-reconstruction attack on the released parameters (theta*, DP-GD or a file): "  \
              "fraction of training inputs recovered (its defaults: n = 8, d = 10, p = 2000, "    \
              "seeds = 8)",                                                                       \
   .files = "reconstruct.tsv summary.json",                                                        \
   .example = "dpdyn reconstruct --model=rf --n=4 --d=5 --p=400 --activation=hermite134",          \
   .numbers = model_numbers,                                                                       \
   .run = run_fn,                                                                                  \
   .uses = uses_bits}

/* The defaults of reconstruct for the keys it shares with the other commands, set as effective
 * values when not given (before the problem's keys are read): d = 10, n = 8, p = 2000 (p / (n d)
 * = 25; the other commands' d = 100, n = 2000 would mean 2 10^5 unknowns), seeds = 8. */
DPD_HIDDEN_FN int dpd__rf_reconstruct_defaults(dpd_keys *keys, dpd_err *err);

/* Validates the keys of reconstruct once pc holds the problem (setup, before the privacy keys):
 * theta (auto: dpgd with a privacy budget, else star; star or file with a budget given: DPD_EINVAL naming 'theta'; file:PATH read
 * now, its size must be p), p >= n, the activation's (B2) conditions (DPD_EINVAL naming
 * 'activation' and the coefficient when require_b2 = on, or when every coefficient of order
 * >= 2 vanishes: a linear activation). */
DPD_HIDDEN_FN int dpd__rf_reconstruct_keys(const dpd_keys *keys, const dpd_rf_config *pc,
                                           dpd_err *err);
/* Bytes the command allocates: min(seeds, threads) replicates at once (problem, theta*, the
 * attack's workspace) and the table; the key that drives it is n (n d unknowns, n p features). */
DPD_HIDDEN_FN double dpd__rf_reconstruct_bytes(const dpd_rf_config *pc,
                                               const dpd_rf_sim_config *sc);

/* The run: replicates (keys seeds, threads), each its own problem draw (pc->draw + r; theta =
 * file: draw pc->draw for all), its released theta, the attack, the score; the summary's numbers,
 * reconstruct.tsv and the (B2) notes added to `out`. */
DPD_HIDDEN_FN int dpd__rf_reconstruct_output(dpd_output *out, const dpd_rf_config *pc,
                                             const dpd_rf_sim_config *sc, const dpd_keys *keys,
                                             const dpd_run_env *env, dpd_err *err);

#endif
