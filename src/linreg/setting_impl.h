/* Private: the fields a dpd_linreg_setting shares with the sim, SDE and ODE configurations
 * (setting.c, sim.c, sde.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_SETTING_IMPL_H
#define DPD_SETTING_IMPL_H

#include <math.h>

#include "core/error_impl.h"
#include "dpdyn/linreg_setting.h"

/* The fields of a setting that every configuration carries under the same names (n aside: the
 * ODE has gamma = d/n instead): one copy for the sim, SDE and ODE configs, both ways. */
#define DPD__SETTING_COPY_COMMON(dst, src)                                                         \
  do {                                                                                             \
    (dst).zeta = (src).zeta;                                                                       \
    (dst).noise = (src).noise;                                                                     \
    (dst).noise_nu = (src).noise_nu;                                                               \
    (dst).c = (src).c;                                                                             \
    (dst).rho = (src).rho;                                                                         \
  } while (0)

/* The clipping scale and the privacy every configuration (SDE, ODE) checks the same way: c > 0
 * or inf, rho > 0 or inf, and a finite c when rho is finite. */
static inline int dpd__setting_clip_privacy_check(double c, double rho, dpd_err *err) {
  if (!(c > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'c': %g (allowed: > 0 or inf)", c);
  }
  if (!(rho > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'rho': %g (allowed: > 0 or inf)", rho);
  }
  if (isinf(c) && !isinf(rho)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c': inf with rho = %g (allowed: finite when rho is "
                    "finite; the privacy noise scales with c^2)",
                    rho);
  }
  return DPD_OK;
}

#endif /* DPD_SETTING_IMPL_H */
