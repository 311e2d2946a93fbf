/* The configuration of the risk ODE: its defaults and the validation every entry point shares
 * (dpd_ode_solve, dpd_ode_rhs_eval, dpd_ode_jtimes_eval, the Volterra plan).
 * SPDX-License-Identifier: MIT
 *
 * This file depends on no solver and on no method table: the solvers (ode.c, volterra.c) and
 * the method table (ode_method.c) call it, and the method, when the caller knows it, comes in
 * as an argument. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "linreg/setting_impl.h"
#include "core/noise_impl.h"
#include "dpdyn/ode.h"
#include "linreg/ode_impl.h"

/* Defaults (STYLE 25: one place). */
static const double ode_gamma_default = 0.5;
static const double ode_zeta_default = 0.5;
static const size_t ode_grid_default = 101;
static const double ode_rtol_default = 1e-10;
static const double ode_atol_default = 1e-14;
static const long ode_max_steps_default = 100000;
static const int ode_krylov_maxl_default = 5;
static const double ode_noise_nu_default = 5.0;

dpd_ode_config dpd_ode_config_default(void) {
  dpd_ode_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gamma = ode_gamma_default;
  cfg.zeta = ode_zeta_default;
  cfg.noise = DPD_NOISE_GAUSSIAN;
  cfg.noise_nu = ode_noise_nu_default;
  cfg.c = INFINITY;
  cfg.rho = INFINITY;
  cfg.grid = ode_grid_default;
  cfg.method = DPD_ODE_BDF;
  cfg.rtol = ode_rtol_default;
  cfg.atol = ode_atol_default;
  cfg.max_steps = ode_max_steps_default;
  cfg.bounds = 0;
  cfg.krylov_maxl = ode_krylov_maxl_default;
  cfg.linsol = DPD_ODE_LINSOL_SM;
  cfg.sigma2_const = NAN;
  cfg.mu_frozen = NAN;
  cfg.nu_frozen = NAN;
  cfg.factors = NULL;
  cfg.factors_user = NULL;
  return cfg;
}

/* ---- Validation ---------------------------------------------------------------------------- */

int dpd__ode_validate(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                      const dpd_ode_config *cfg, const dpd_ode_method_type *type,
                      const char *method_names, dpd_err *err) {
  int status;
  if (problem == NULL || schedule == NULL || cfg == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': NULL (allowed: a created object)",
                    problem == NULL ? "problem" : (schedule == NULL ? "schedule" : "config"));
  }
  if (!(cfg->gamma > 0.0) || !isfinite(cfg->gamma)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'gamma': %g (allowed: finite, > 0)",
                    cfg->gamma);
  }
  if (!(cfg->zeta >= 0.0) || !isfinite(cfg->zeta)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'zeta': %g (allowed: finite, >= 0)",
                    cfg->zeta);
  }
  if ((status = dpd__noise_law_check(cfg->noise, cfg->noise_nu, "", "noise_nu", NULL, err)) < 0) {
    return status;
  }
  if ((status = dpd__setting_clip_privacy_check(cfg->c, cfg->rho, err)) < 0) {
    return status;
  }
  if (cfg->grid < 2 || cfg->grid > SIZE_MAX / sizeof(double)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'grid': %zu (allowed: integer >= 2)",
                    cfg->grid);
  }
  if (method_names != NULL && type == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'method': %d (allowed: %s)",
                    (int)cfg->method, method_names);
  }
  if (!(cfg->rtol > 0.0) || !isfinite(cfg->rtol)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'rtol': %g (allowed: finite, > 0)",
                    cfg->rtol);
  }
  if (!(cfg->atol > 0.0) || !isfinite(cfg->atol)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'atol': %g (allowed: finite, > 0)",
                    cfg->atol);
  }
  if (cfg->max_steps < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'max_steps': %ld (allowed: integer >= 1)",
                    cfg->max_steps);
  }
  if (cfg->krylov_maxl < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'krylov_maxl': %d (allowed: integer >= 1)",
                    cfg->krylov_maxl);
  }
  if (cfg->linsol != DPD_ODE_LINSOL_SM && cfg->linsol != DPD_ODE_LINSOL_SPGMR) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'linsol': %d (allowed: sm, spgmr)",
                    (int)cfg->linsol);
  }
  if (cfg->bounds != 0 && cfg->bounds != 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'bounds': %d (allowed: 0 or 1)",
                    cfg->bounds);
  }
  if (!isnan(cfg->sigma2_const) && (!(cfg->sigma2_const >= 0.0) || !isfinite(cfg->sigma2_const) ||
                                    (cfg->sigma2_const > 0.0 && isinf(cfg->c)))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'sigma2_const': %g with c = %g (allowed: NAN, or finite "
                    ">= 0, and 0 unless c is finite: the privacy noise scales with c^2)",
                    cfg->sigma2_const, cfg->c);
  }
  if (!isnan(cfg->mu_frozen) && !(cfg->mu_frozen > 0.0 && cfg->mu_frozen <= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'mu_frozen': %g (allowed: NAN or (0, 1])",
                    cfg->mu_frozen);
  }
  if (!isnan(cfg->nu_frozen) && !(cfg->nu_frozen >= 0.0 && cfg->nu_frozen <= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'nu_frozen': %g (allowed: NAN or [0, 1])",
                    cfg->nu_frozen);
  }
  if (cfg->finite_size != DPD_FINITE_OFF && cfg->finite_size != DPD_FINITE_ON &&
      cfg->finite_size != DPD_FINITE_AUTO) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'finite_size': %d (allowed: off, on, auto)",
                    cfg->finite_size);
  }
  if (cfg->finite_size == DPD_FINITE_ON &&
      (cfg->method == DPD_ODE_VOLTERRA || !isnan(cfg->mu_frozen) || !isnan(cfg->nu_frozen))) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'finite_size': on with method %s%s (allowed: off with the "
                    "volterra method or frozen clipping factors)",
                    type != NULL ? type->name : "(unchecked)",
                    isnan(cfg->mu_frozen) && isnan(cfg->nu_frozen) ? "" : " and frozen factors");
  }
  if (cfg->factors != NULL && (cfg->method == DPD_ODE_VOLTERRA || !isnan(cfg->mu_frozen) ||
                               !isnan(cfg->nu_frozen) || cfg->finite_size == DPD_FINITE_ON)) {
    return DPD_FAIL(
        err, DPD_EINVAL,
        "invalid value for 'factors': a function with %s (allowed: NULL, or a "
        "function with method bdf or adams, no frozen clipping factors and "
        "finite_size off or auto)",
        cfg->method == DPD_ODE_VOLTERRA
            ? "method volterra"
            : (cfg->finite_size == DPD_FINITE_ON ? "finite_size on" : "frozen clipping factors"));
  }
  if (!isinf(cfg->rho) && !dpd_schedule_is_nonincreasing(schedule)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': %s increases somewhere on [0, 1] with rho = %g "
                    "(allowed: non-increasing when rho is finite)",
                    dpd_schedule_name(schedule), cfg->rho);
  }
  return DPD_OK;
}
