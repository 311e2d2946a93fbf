/* Umbrella header of libdpdyn.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_DPD_H
#define DPD_DPD_H

#include "dpdyn/status.h"
#include "dpdyn/isa.h"
#include "dpdyn/rng.h"
#include "dpdyn/noise.h"
#include "dpdyn/clip.h"
#include "dpdyn/schedule.h"
#include "dpdyn/privacy.h"
#include "dpdyn/pld.h"
#include "dpdyn/rdp.h"
#include "dpdyn/account.h"
#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/sde.h"
#include "dpdyn/linreg_setting.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"
#include "dpdyn/tune.h"
#include "dpdyn/volterra.h"
#include "dpdyn/rf_privacy.h"
#include "dpdyn/ou.h"
#include "dpdyn/nc.h"
#include "dpdyn/nc_theory.h"
#include "dpdyn/pca.h"
#include "dpdyn/nc_pca.h"
#include "dpdyn/nc_features.h"
#include "dpdyn/semipriv.h"
#include "dpdyn/replicate.h"
#include "dpdyn/keys.h"
#include "dpdyn/model.h"
#include "dpdyn/io.h"

#endif
