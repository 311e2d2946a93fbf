/* The finite-size statistical test at d = 1000 and 2000 (label "slow"; the criteria and the setting
 * of test_finite_size.c).
 * SPDX-License-Identifier: MIT */
#define FS_SLOW 1
#include "test_finite_size.c"
