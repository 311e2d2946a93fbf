/* Private: the fields a dpd_linreg_setting shares with the sim, SDE and ODE configurations
 * (setting.c, sim.c, sde.c).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_SETTING_IMPL_H
#define DPD_SETTING_IMPL_H

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

#endif /* DPD_SETTING_IMPL_H */
