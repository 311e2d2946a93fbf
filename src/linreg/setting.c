/* The setting shared by the simulation, the SDE and the ODE of linear regression: defaults,
 * the configurations built from it, and the check that configurations agree. The way back,
 * config -> setting (dpd_linreg_sim_config_setting_get, ..._sde_...), is beside each config
 * (sim.c, sde.c), which use it to record a result's setting: this file depends on them, not
 * they on it.
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/clip.h"
#include "dpdyn/linreg_setting.h"
#include "linreg/setting_impl.h"

/* Defaults of dpd_linreg_setting: those of dpd_linreg_sim_config_default,
 * dpd_linreg_sde_config_default and dpd_ode_config_default (tests/unit/test_setting.c). */
#define SETTING_N_DEFAULT 1000
#define SETTING_ZETA_DEFAULT 0.5
#define SETTING_NOISE_NU_DEFAULT 5.0

/* Relative tolerance of the ODE's gamma against d/n: a gamma computed as d/n in any order of
 * operations, or typed with 15 significant digits, passes. */
#define SETTING_GAMMA_RTOL 1e-12

dpd_linreg_setting dpd_linreg_setting_default(void) {
  dpd_linreg_setting s;
  memset(&s, 0, sizeof s);
  s.n = SETTING_N_DEFAULT;
  s.zeta = SETTING_ZETA_DEFAULT;
  s.noise = DPD_NOISE_GAUSSIAN;
  s.noise_nu = SETTING_NOISE_NU_DEFAULT;
  s.c = INFINITY;
  s.rho = INFINITY;
  return s;
}

dpd_linreg_sim_config dpd_linreg_sim_config_init(const dpd_linreg_setting *setting) {
  dpd_linreg_sim_config cfg = dpd_linreg_sim_config_default();
  cfg.n = setting->n;
  DPD__SETTING_COPY_COMMON(cfg, *setting);
  return cfg;
}

dpd_linreg_sde_config dpd_linreg_sde_config_init(const dpd_linreg_setting *setting) {
  dpd_linreg_sde_config cfg = dpd_linreg_sde_config_default();
  cfg.n = setting->n;
  DPD__SETTING_COPY_COMMON(cfg, *setting);
  return cfg;
}

dpd_ode_config dpd_ode_config_init(const dpd_linreg_setting *setting, size_t d) {
  dpd_ode_config cfg = dpd_ode_config_default();
  cfg.gamma = setting->n > 0 ? (double)d / (double)setting->n : INFINITY;
  DPD__SETTING_COPY_COMMON(cfg, *setting);
  return cfg;
}

/* Writes a and b with 15 significant digits, or 17 when 15 make them look equal. */
static void two_values(double a, double b, char *sa, char *sb, size_t size) {
  snprintf(sa, size, "%.15g", a);
  snprintf(sb, size, "%.15g", b);
  if (strcmp(sa, sb) == 0) {
    snprintf(sa, size, "%.17g", a);
    snprintf(sb, size, "%.17g", b);
  }
}

static int real_mismatch(const char *key, double a, const char *a_name, double b,
                         const char *b_name, dpd_err *err) {
  char sa[32], sb[32];
  two_values(a, b, sa, sb, sizeof sa);
  return DPD_FAIL(err, DPD_EINVAL,
                  "setting mismatch: '%s' is %s in the %s but %s in the %s (allowed: one value "
                  "in every configuration: build them from one dpd_linreg_setting)",
                  key, sa, a_name, sb, b_name);
}

/* Whether the law reads noise_nu (Student-t's NU, or a registered law's parameter). */
static int law_has_parameter(dpd_noise_law law) {
  const dpd_noise_law_type *t = dpd_noise_law_type_get(law);
  return t != NULL && t->parameter != NULL;
}

/* `got` (called got_name) against the reference `ref` (ref_name): every field but n when
 * with_n is 0 (an ODE config carries gamma instead). */
static int compare(const dpd_linreg_setting *ref, const char *ref_name,
                   const dpd_linreg_setting *got, const char *got_name, int with_n, dpd_err *err) {
  if (with_n && ref->n != got->n) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "setting mismatch: 'n' is %zu in the %s but %zu in the %s (allowed: one value "
                    "in every configuration: build them from one dpd_linreg_setting)",
                    ref->n, ref_name, got->n, got_name);
  }
  if (!(ref->zeta == got->zeta)) {
    return real_mismatch("zeta", ref->zeta, ref_name, got->zeta, got_name, err);
  }
  if (ref->noise != got->noise) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "setting mismatch: 'noise' is %s in the %s but %s in the %s (allowed: one "
                    "value in every configuration: build them from one dpd_linreg_setting)",
                    dpd_noise_law_name(ref->noise), ref_name, dpd_noise_law_name(got->noise), got_name);
  }
  if (law_has_parameter(ref->noise) && !(ref->noise_nu == got->noise_nu)) {
    return real_mismatch("noise_nu", ref->noise_nu, ref_name, got->noise_nu, got_name, err);
  }
  if (!(ref->c == got->c)) {
    return real_mismatch("c", ref->c, ref_name, got->c, got_name, err);
  }
  if (!(ref->rho == got->rho)) {
    return real_mismatch("rho", ref->rho, ref_name, got->rho, got_name, err);
  }
  return DPD_OK;
}

int dpd_linreg_setting_check(const dpd_linreg_setting *setting, size_t d,
                             const dpd_linreg_sim_config *sim, const dpd_linreg_sde_config *sde,
                             const dpd_ode_config *ode, dpd_err *err) {
  dpd_linreg_setting ref, s;
  const char *ref_name;
  int status;
  if (setting != NULL) {
    ref = *setting;
    ref_name = "setting";
  } else if (sim != NULL) {
    ref = dpd_linreg_sim_config_setting_get(sim);
    ref_name = "simulation config";
  } else if (sde != NULL) {
    ref = dpd_linreg_sde_config_setting_get(sde);
    ref_name = "SDE config";
  } else {
    return DPD_OK; /* at most an ODE config: nothing to compare it with */
  }
  if (sim != NULL && setting != NULL) {
    s = dpd_linreg_sim_config_setting_get(sim);
    if ((status = compare(&ref, ref_name, &s, "simulation config", 1, err)) < 0) {
      return status;
    }
  }
  if (sde != NULL && (setting != NULL || sim != NULL)) {
    s = dpd_linreg_sde_config_setting_get(sde);
    if ((status = compare(&ref, ref_name, &s, "SDE config", 1, err)) < 0) {
      return status;
    }
  }
  if (ode != NULL) {
    if (d == 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'd': 0 (allowed: the problem's dimension d >= 1, for "
                      "the ODE's gamma = d/n)");
    }
    s = ref;
    s.zeta = ode->zeta;
    s.noise = ode->noise;
    s.noise_nu = ode->noise_nu;
    s.c = ode->c;
    s.rho = ode->rho;
    if ((status = compare(&ref, ref_name, &s, "ODE config", 0, err)) < 0) {
      return status;
    }
    const double want = ref.n > 0 ? (double)d / (double)ref.n : INFINITY;
    if (!(fabs(ode->gamma - want) <= SETTING_GAMMA_RTOL * want) && !(ode->gamma == want)) {
      char sa[32], sb[32];
      two_values(ode->gamma, want, sa, sb, sizeof sa);
      return DPD_FAIL(err, DPD_EINVAL,
                      "setting mismatch: 'gamma' is %s in the ODE config but d/n = %zu/%zu = %s "
                      "in the %s (allowed: gamma = d/n within a relative %g: build the "
                      "configurations from one dpd_linreg_setting)",
                      sa, d, ref.n, sb, ref_name, SETTING_GAMMA_RTOL);
    }
  }
  return DPD_OK;
}
