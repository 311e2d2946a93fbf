/* Private: helpers shared by the semi-private learning sources (not installed).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_SP_IMPL_H
#define DPD_SP_IMPL_H

#include <stdint.h>

#include "dpdyn/rng.h"

/* Region tags of a replicate's stream (semipriv.h); tag 3 is Noisy-SGD's. */
#define DPD__SP_TAG_SGD UINT64_C(3)
/* Points or SGD groups per set: index < 2^30. */
#define DPD__SP_INDEX_MAX (UINT64_C(1) << 30)
/* Steps per noise group of Noisy-SGD (one region each). */
#define DPD__SP_GROUP_STEPS 1024

/* Positions rng at block tag 2^62 + index 2^32 of stream (seed, stream). */
__attribute__((visibility("hidden"))) void
dpd__semipriv_region(dpd_rng *rng, uint64_t seed, uint64_t stream, uint64_t tag, uint64_t index);

#endif /* DPD_SP_IMPL_H */
