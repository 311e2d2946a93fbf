/* Tests of the activations' derivatives and Hermite coefficients (include/dpdyn/rf.h) and of the
 * overparameterization studies (include/dpdyn/rf_overparam.h, docs/overparameterization.md).
 * SPDX-License-Identifier: MIT
 *
 * Independent code paths: the Hermite coefficients against composite Simpson quadrature written
 * here (the kinks at 0 are grid nodes), phi' against central finite differences of phi. */
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/rf.h"

#define PI 3.14159265358979323846
#define QUAD_HALF 6000 /* Simpson intervals on each side of 0 */
#define QUAD_RANGE 12.0

/* He_r(z), probabilists', by the explicit sum r! sum_m (-1)^m z^(r-2m) / (m! (r-2m)! 2^m). */
static double he_explicit(unsigned r, double z) {
  double sum = 0.0;
  for (unsigned m = 0; 2 * m <= r; m++) {
    double term = 1.0;
    for (unsigned k = r - 2 * m + 1; k <= r; k++) {
      term *= (double)k; /* r! / (r - 2m)! */
    }
    for (unsigned k = 1; k <= m; k++) {
      term /= 2.0 * (double)k; /* / (m! 2^m) */
    }
    sum += (m % 2 ? -term : term) * pow(z, (double)(r - 2 * m));
  }
  return sum;
}

/* E[phi(G) He_r(G)] / sqrt(r!) by Simpson's rule on [-12, 12]. */
static double hermite_simpson(dpd_rf_activation act, unsigned r) {
  const size_t m = 2 * QUAD_HALF;
  const double h = 2.0 * QUAD_RANGE / (double)m;
  double sum = 0.0, fact = 1.0;
  for (size_t i = 0; i <= m; i++) {
    const double z = -QUAD_RANGE + (double)i * h;
    const double v = dpd_rf_activation_eval(act, z) * he_explicit(r, z) * exp(-0.5 * z * z);
    sum += ((i == 0 || i == m) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0)) * v;
  }
  for (unsigned k = 2; k <= r; k++) {
    fact *= (double)k;
  }
  return sum * h / 3.0 / sqrt(2.0 * PI) / sqrt(fact);
}

static void hermite_coefficients_match_quadrature(void **state) {
  (void)state;
  for (int a = 0; a < DPD_RF_ACT_COUNT; a++) {
    for (unsigned r = 0; r <= 8; r++) {
      const double got = dpd_rf_activation_hermite((dpd_rf_activation)a, r);
      const double want = hermite_simpson((dpd_rf_activation)a, r);
      if (!(fabs(got - want) <= 1e-8)) {
        print_error("%s r = %u: %.15g vs Simpson %.15g\n",
                    dpd_rf_activation_name((dpd_rf_activation)a), r, got, want);
      }
      assert_abs(got, want, 1e-8);
    }
  }
  assert_true(isnan(dpd_rf_activation_hermite(DPD_RF_ACT_TANH, DPD_RF_HERMITE_MAX + 1)));
  assert_true(isnan(dpd_rf_activation_hermite((dpd_rf_activation)99, 1)));
}

static void hermite_coefficients_have_the_documented_structure(void **state) {
  (void)state;
  /* E tanh'(G) = 0.6057055096 (scipy quad) (mu_1 = E phi'(G), Stein's lemma) */
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_TANH, 1), 0.60570550960216, 1e-12);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_RELU, 0), 1.0 / sqrt(2.0 * PI), 1e-15);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_RELU, 1), 0.5, 1e-15);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_RELU, 3), 0.0, 1e-15);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_RELU, 2), 1.0 / sqrt(4.0 * PI), 1e-15);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_ABS_CENTERED, 0), 0.0, 1e-15);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_ABS_CENTERED, 1), 0.0, 0.0);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_ABS_CENTERED, 2), 1.0 / sqrt(PI), 1e-15);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_HERMITE134, 0), 0.0, 0.0);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_HERMITE134, 2), 0.0, 0.0);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_HERMITE134, 3), 1.0 / sqrt(6.0), 1e-15);
  assert_abs(dpd_rf_activation_hermite(DPD_RF_ACT_HERMITE134, 4), 1.0 / sqrt(24.0), 1e-15);
  /* Parseval for tanh: sum_r mu_r^2 = E tanh(G)^2 (tail beyond r = 16 is small) */
  double parseval = 0.0;
  for (unsigned r = 0; r <= DPD_RF_HERMITE_MAX; r++) {
    parseval += pow(dpd_rf_activation_hermite(DPD_RF_ACT_TANH, r), 2);
  }
  const size_t m = 2 * QUAD_HALF;
  const double h = 2.0 * QUAD_RANGE / (double)m;
  double e2 = 0.0;
  for (size_t i = 0; i <= m; i++) {
    const double z = -QUAD_RANGE + (double)i * h, t = tanh(z);
    e2 += ((i == 0 || i == m) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0)) * t * t * exp(-0.5 * z * z);
  }
  e2 *= h / 3.0 / sqrt(2.0 * PI);
  assert_true(parseval <= e2 + 1e-12);
  assert_abs(parseval, e2, 1e-4);
}

static void derivatives_match_finite_differences(void **state) {
  (void)state;
  const double zs[] = {-2.7, -1.1, -0.3, 0.2, 0.9, 1.7, 3.1};
  const double h = 1e-5;
  for (int a = 0; a < DPD_RF_ACT_COUNT; a++) {
    const dpd_rf_activation act = (dpd_rf_activation)a;
    for (size_t k = 0; k < sizeof zs / sizeof zs[0]; k++) {
      const double fd = (dpd_rf_activation_eval(act, zs[k] + h) -
                         dpd_rf_activation_eval(act, zs[k] - h)) /
                        (2.0 * h);
      assert_abs(dpd_rf_activation_deriv(act, zs[k]), fd, 1e-8 * (1.0 + fabs(fd)));
    }
  }
  assert_true(isnan(dpd_rf_activation_deriv((dpd_rf_activation)99, 0.0)));
}

static void new_activation_names_round_trip(void **state) {
  (void)state;
  static const char *const names[] = {"tanh", "relu_centered", "hermite13",
                                      "relu", "abs_centered",  "hermite134"};
  for (int a = 0; a < DPD_RF_ACT_COUNT; a++) {
    dpd_rf_activation act = DPD_RF_ACT_TANH;
    assert_int_equal(dpd_rf_activation_get(names[a], &act, NULL), DPD_OK);
    assert_int_equal((int)act, a);
    assert_string_equal(dpd_rf_activation_name(act), names[a]);
  }
  /* the existing activations keep their values */
  assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_RELU, -0.5), 0.0, 0.0);
  assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_RELU, 0.5), 0.5, 0.0);
  assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_ABS_CENTERED, -0.5), 0.5 - sqrt(2.0 / PI), 1e-15);
  const double z = 0.7;
  assert_abs(dpd_rf_activation_eval(DPD_RF_ACT_HERMITE134, z),
             z + (z * z * z - 3 * z) / 6.0 + (pow(z, 4) - 6 * z * z + 3) / 24.0, 1e-15);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hermite_coefficients_match_quadrature),
      cmocka_unit_test(hermite_coefficients_have_the_documented_structure),
      cmocka_unit_test(derivatives_match_finite_differences),
      cmocka_unit_test(new_activation_names_round_trip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
