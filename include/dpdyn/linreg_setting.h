/* One setting for the simulation, the SDE and the ODE of linear regression: the check.
 * SPDX-License-Identifier: MIT
 *
 * A dpd_linreg_setting (linreg.h) holds what the three descriptions of DP-SGD on one problem
 * must share: n (gamma = d/n), zeta, the label-noise law, c and rho. Configurations built from
 * one setting agree by construction:
 *
 *   dpd_linreg_setting s = dpd_linreg_setting_default();
 *   s.n = 800; s.c = 1.0; s.rho = 2.0;
 *   dpd_linreg_sim_config sc = dpd_linreg_sim_config_init(&s);
 *   dpd_ode_config oc = dpd_ode_config_init(&s, problem->d);
 *
 * Configurations built separately (or edited after init) are checked here, and so are
 * results, which record what they were computed with (dpd_linreg_sim_result.setting,
 * dpd_ode_result.config). */
#ifndef DPD_LINREG_SETTING_H
#define DPD_LINREG_SETTING_H

#include <stddef.h>

#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/sde.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Checks that the configurations given describe one setting. Any of `setting`, `sim`, `sde`
 * and `ode` may be NULL (all borrowed for the call); the reference is `setting`, or when it is
 * NULL the first of sim, sde given. Compared: n, zeta, noise, c and rho exactly (an infinite
 * value equals only itself), noise_nu when the law has a parameter (student:NU; the others ignore
 * it), and the ODE's gamma against d/n within a relative 1e-12 (d: the problem's dimension;
 * only read when an ODE config is compared with an n). Checks agreement only, not validity
 * (the run functions validate). Returns DPD_OK, or DPD_EINVAL whose reason names the field and
 * both values, e.g. "setting mismatch: 'zeta' is 0.5 in the simulation config but 0.6 in the
 * ODE config (allowed: one value in every configuration: build them from one
 * dpd_linreg_setting)"; d = 0 with an ODE config to compare is DPD_EINVAL naming 'd'. Pure,
 * thread-safe. */
DPD_API int dpd_linreg_setting_check(const dpd_linreg_setting *setting, size_t d,
                                     const dpd_linreg_sim_config *sim,
                                     const dpd_linreg_sde_config *sde, const dpd_ode_config *ode,
                                     dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_LINREG_SETTING_H */
