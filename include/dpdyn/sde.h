/* Homogenized DP-SGD (H-DP-SGD): the SDE of docs/math.md §1.6 by Euler-Maruyama.
 * SPDX-License-Identifier: MIT
 *
 *   dTheta = -eta~ mu_c(P) Sigma (Theta - theta*) dt + eta~ sqrt(2 nu_c(P) P / n) Sigma^{1/2} dB^s
 *            + (2 sqrt(d) / n) c sigma~ dB^p,          t in [0, 1),
 * in the eigenbasis of Sigma (diagonal: O(d) per step), P evaluated exactly
 * from Theta, plus the private last-step noise of docs/math.md §1.7 at t = 1. */
#ifndef DPD_SDE_H
#define DPD_SDE_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/linreg.h"
#include "dpdyn/replicate.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fields n, zeta, noise, noise_nu, c and rho are those of dpd_linreg_setting (linreg.h);
 * dpd_linreg_sde_config_init sets them from one. */
typedef struct {
  size_t n;    /* samples of the matching DP-SGD run (sets gamma = d/n and the SGD-noise scale) */
  double zeta; /* label-noise sd >= 0 */
  dpd_noise_law noise; /* label-noise law (mu_c, nu_c via dpd_clip_noise_factors_eval) */
  double noise_nu;     /* Student-t degrees of freedom */
  double c;            /* clipping scale > 0, INFINITY = none */
  double rho;          /* privacy > 0, INFINITY = none */
  size_t seeds;        /* replicates >= 1; replicate r uses stream (seed, r) */
  uint64_t seed;
  size_t grid;              /* recorded times t_j = j/(grid-1), grid >= 2 */
  double dt;                /* Euler-Maruyama step in (0, 1]; 0 = default 1/n. When 1/dt is not an
                               integer, t_k = k dt and the last step is shortened to end at t = 1 */
  int threads;              /* OpenMP threads (<= 0: all); results do not depend on it */
  dpd_progress_fn progress; /* replicates done, from the calling thread (replicate.h); NULL:
                               none (default). Returning non-zero stops the run (DPD_ECANCELLED) */
  void *progress_user;      /* passed to progress (borrowed; default NULL) */
  int finite_size; /* DPD_FINITE_OFF (0, default), DPD_FINITE_ON or DPD_FINITE_AUTO (ode.h):
                      the drift and diffusion with the finite-size-corrected factors of
                      docs/finite_size.md, per eigenvalue group, the rank-one term and
                      the self term in the diffusion (Euler-Maruyama at dt = 1/n is the
                      one-step map, so no one-step factor) */
} dpd_linreg_sde_config;

DPD_API dpd_linreg_sde_config dpd_linreg_sde_config_default(void);

/* dpd_linreg_sde_config_default() with n, zeta, noise, noise_nu, c and rho from `setting`
 * (borrowed for the call). Pure; validation happens in dpd_linreg_sde_run. */
DPD_API dpd_linreg_sde_config dpd_linreg_sde_config_init(const dpd_linreg_setting *setting);

/* The setting of an SDE configuration (its n, zeta, noise, noise_nu, c, rho). Pure. */
DPD_API dpd_linreg_setting dpd_linreg_sde_config_setting_get(const dpd_linreg_sde_config *cfg);

/* Integrates cfg->seeds replicates. The result has the layout and the release
 * convention of the simulator's (linreg.h): risk_mean/risk_se on the grid, the
 * row t = 1 being the value before the final noise (before_release; the
 * released value is final_risk, per replicate final_replicates), and
 * clip_fraction holding the mean of 1 - mu_c(P) over each grid interval (the
 * expected fraction of clipped samples). Bit-identical for any thread count.
 * Grid point j records the step time nearest to t_j (for a uniform step
 * 1/N: step round(j N / (grid - 1)), the simulator's rule). The release
 * noise at t = 1 is the simulator's last-step noise (sigma_{n-1} of
 * dpd_schedule_steps). *out is returned-owned (dpd_linreg_sim_result_free)
 * and NULL on failure. Returns DPD_EINVAL for a bad config (the reason names
 * the key, the value and the allowed range, e.g. "invalid value for 'dt': 2
 * (allowed: 0 < dt <= 1, ...)"), DPD_ENOMEM, DPD_ENONFINITE naming the
 * replicate and t when the state becomes non-finite, or the clipping factors'
 * failure, or DPD_ECANCELLED when cfg->progress asks for a stop. Prints
 * nothing. Thread-safe: uses OpenMP internally, shares nothing between calls. */
DPD_API int dpd_linreg_sde_run(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                               const dpd_linreg_sde_config *cfg, dpd_linreg_sim_result **out,
                               dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_SDE_H */
