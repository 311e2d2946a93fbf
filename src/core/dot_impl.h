/* Fixed-order dot product shared by the random-features code (not installed).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_RF_DOT_IMPL_H
#define DPD_RF_DOT_IMPL_H

#include <stddef.h>

/* x . y with eight interleaved partial sums combined pairwise in a fixed order: the same bits
 * for any caller, thread and (without FMA contraction) instruction set. Always inlined, so a
 * caller compiled for AVX2 or AVX-512 gets a vectorised copy. */
static inline __attribute__((always_inline)) double dpd__dot8(const double *restrict x,
                                                              const double *restrict y, size_t m) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= m; i += 8) {
    for (size_t j = 0; j < 8; j++) {
      acc[j] += x[i + j] * y[i + j];
    }
  }
  for (size_t j = 0; i + j < m; j++) {
    acc[j] += x[i + j] * y[i + j];
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

#endif
