/* The finite-size statistical test on isotropic and two-level spectra (the criteria and the
 * setting of test_finite_size.c).
 * SPDX-License-Identifier: MIT */
#define FS_FLAT 1
#include "test_finite_size.c"
