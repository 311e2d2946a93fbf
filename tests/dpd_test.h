/* Small helpers shared by the cmocka tests: tolerance checks that print the
 * values they compare.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_TEST_H
#define DPD_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

/* |got - want| <= rtol |want| (+ tiny absolute slack for want == 0). */
#define assert_rel(got, want, rtol) dpd_test_rel((got), (want), (rtol), #got, __FILE__, __LINE__)
/* |got - want| <= atol */
#define assert_abs(got, want, atol) dpd_test_abs((got), (want), (atol), #got, __FILE__, __LINE__)

static inline void dpd_test_rel(double got, double want, double rtol, const char *expr,
                                const char *file, int line) {
  double err = fabs(got - want);
  double lim = rtol * fabs(want) + 1e-300;
  if (!(err <= lim)) {
    print_error("%s:%d: %s = %.17g, want %.17g (rel err %.3g > %.3g)\n", file, line, expr, got,
                want, err / (fabs(want) > 0 ? fabs(want) : 1.0), rtol);
    fail();
  }
}

static inline void dpd_test_abs(double got, double want, double atol, const char *expr,
                                const char *file, int line) {
  double err = fabs(got - want);
  if (!(err <= atol)) {
    print_error("%s:%d: %s = %.17g, want %.17g (abs err %.3g > %.3g)\n", file, line, expr, got,
                want, err, atol);
    fail();
  }
}

#endif
