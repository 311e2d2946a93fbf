/* Tests of the activations' derivatives and Hermite coefficients (include/dpdyn/rf.h) and of the
 * overparameterization studies (include/dpdyn/rf_overparam.h, docs/overparameterization.md).
 * SPDX-License-Identifier: MIT
 *
 * Independent code paths: the Hermite coefficients against composite Simpson quadrature written
 * here (the kinks at 0 are grid nodes), phi' against central finite differences of phi,
 * lambda_min / lambda_max of Phi Phi^T / p against the singular values of Phi (LAPACK dgesvd of
 * a copy, not the Gram's dsyevd), the input gradient (two GEMMs) against central finite
 * differences of f(x) = phi(V x)^T theta summed here in plain loops, the regenerated inputs
 * against the features they must reproduce, and the Hermite kernel limit against the Gram at
 * large p. Seeds are fixed. */
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "dpd_test.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_overparam.h"
#include "dpdyn/rf_sim.h"

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
      const double fd =
          (dpd_rf_activation_eval(act, zs[k] + h) - dpd_rf_activation_eval(act, zs[k] - h)) /
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

static dpd_rf_problem *make(dpd_rf_activation act, size_t n, size_t p, size_t d,
                            dpd_rf_input input) {
  dpd_rf_config cfg = dpd_rf_config_default();
  dpd_rf_problem *pr = NULL;
  dpd_err err;
  cfg.n = n;
  cfg.p = p;
  cfg.d = d;
  cfg.n_test = 20;
  cfg.activation = act;
  cfg.input = input;
  cfg.seed = 77;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_problem_create(&cfg, &pr, &err), DPD_OK);
  return pr;
}

/* lambda_min, lambda_max of Phi Phi^T / p = (sigma_min^2, sigma_max^2) / p from dgesvd of Phi;
 * |theta*| against sum_k (u_k^T y / s_k)^2 built here. */
static void interp_matches_svd(dpd_rf_activation act, size_t n, size_t p) {
  dpd_rf_problem *pr = make(act, n, p, 30, DPD_RF_INPUT_GAUSSIAN);
  dpd_rf_interp_result r;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_rf_interp_eval(pr, &r, &err), DPD_OK);
  double *a = malloc(n * p * sizeof *a), *s = malloc(n * sizeof *s), *u = malloc(n * n * sizeof *u);
  double *vt = malloc(n * p * sizeof *vt), *sup = malloc(n * sizeof *sup);
  memcpy(a, pr->phi, n * p * sizeof *a);
  assert_int_equal(LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'S', 'S', (lapack_int)n, (lapack_int)p, a,
                                  (lapack_int)p, s, u, (lapack_int)n, vt, (lapack_int)p, sup),
                   0);
  const double lmax = s[0] * s[0] / (double)p, lmin = s[n - 1] * s[n - 1] / (double)p;
  assert_rel(r.lambda_max, lmax, 1e-10);
  assert_abs(r.lambda_min, lmin, 1e-10 * lmax);
  assert_true(r.lambda_min > 0.0);
  double norm2 = 0.0;
  for (size_t k = 0; k < n; k++) {
    double c = 0.0;
    for (size_t i = 0; i < n; i++) {
      c += u[i * n + k] * pr->y[i];
    }
    norm2 += (c / s[k]) * (c / s[k]);
  }
  assert_rel(r.theta_star_norm, sqrt(norm2), 1e-8);
  assert_true(r.residual < 1e-10);
  assert_true(r.lambda_min_centred > 0.0 && r.lambda_max_centred <= r.lambda_max * (1 + 1e-12));
  free(a);
  free(s);
  free(u);
  free(vt);
  free(sup);
  dpd_rf_problem_free(pr);
}

static void lambda_min_matches_dgesvd(void **state) {
  (void)state;
  interp_matches_svd(DPD_RF_ACT_TANH, 40, 160);
  interp_matches_svd(DPD_RF_ACT_RELU, 50, 120);
  interp_matches_svd(DPD_RF_ACT_ABS_CENTERED, 30, 300);
  interp_matches_svd(DPD_RF_ACT_HERMITE134, 40, 90);
}

/* f(x) = sum_j phi(v_j^T x) theta_j in plain loops. */
static double f_plain(dpd_rf_activation act, const double *V, size_t p, size_t d,
                      const double *theta, const double *x) {
  double f = 0.0;
  for (size_t j = 0; j < p; j++) {
    double z = 0.0;
    for (size_t k = 0; k < d; k++) {
      z += V[j * d + k] * x[k];
    }
    f += dpd_rf_activation_eval(act, z) * theta[j];
  }
  return f;
}

/* The closed-form gradient against central differences (h = 1e-5; a kink of relu or abs within h
 * of a pre-activation would break it, improbable at these seeds: the differences of a smooth f
 * err by O(h^2 f'''), here below 1e-5 relative). */
static void gradient_matches_finite_differences(void **state) {
  (void)state;
  const size_t n = 30, p = 300, d = 12, m = 20;
  for (int a = 0; a < DPD_RF_ACT_COUNT; a++) {
    const dpd_rf_activation act = (dpd_rf_activation)a;
    dpd_rf_problem *pr = make(act, n, p, d, DPD_RF_INPUT_GAUSSIAN);
    double *theta = malloc(p * sizeof *theta), *X = malloc(m * d * sizeof *X);
    double *grad = malloc(m * d * sizeof *grad), *f = malloc(m * sizeof *f);
    double *S = malloc(m * sizeof *S);
    dpd_err err;
    dpd_err_reset(&err);
    assert_int_equal(dpd_rf_theta_star_get(pr, -1.0, theta, NULL, NULL, &err), DPD_OK);
    dpd_rf_problem_inputs_get(pr, 1, X);
    assert_int_equal(dpd_rf_input_gradient_eval(act, pr->V, p, d, theta, X, m, grad, f, &err),
                     DPD_OK);
    assert_int_equal(dpd_rf_sensitivity_eval(act, pr->V, p, d, theta, X, m, S, &err), DPD_OK);
    const double h = 1e-5;
    for (size_t i = 0; i < m; i++) {
      double *x = X + i * d, gnorm = 0.0, xnorm = 0.0;
      assert_rel(f[i], f_plain(act, pr->V, p, d, theta, x), 1e-9);
      for (size_t k = 0; k < d; k++) {
        const double keep = x[k];
        x[k] = keep + h;
        const double up = f_plain(act, pr->V, p, d, theta, x);
        x[k] = keep - h;
        const double down = f_plain(act, pr->V, p, d, theta, x);
        x[k] = keep;
        const double fd = (up - down) / (2 * h);
        assert_abs(grad[i * d + k], fd, 1e-5 * (1.0 + fabs(fd)));
        gnorm += grad[i * d + k] * grad[i * d + k];
        xnorm += x[k] * x[k];
      }
      assert_rel(S[i], sqrt(xnorm) * sqrt(gnorm), 1e-12);
    }
    free(theta);
    free(X);
    free(grad);
    free(f);
    free(S);
    dpd_rf_problem_free(pr);
  }
}

/* The regenerated inputs reproduce the problem's features (training and test; the sphere's
 * rescaling included). */
static void inputs_reproduce_the_features(void **state) {
  (void)state;
  enum { N = 20, P = 40, D = 9, NT = 20 }; /* N = NT: one loop checks both */
  for (int in = 0; in < 2; in++) {
    dpd_rf_problem *pr = make(DPD_RF_ACT_TANH, N, P, D, (dpd_rf_input)in);
    double X[N * D], Xt[NT * D];
    dpd_rf_problem_inputs_get(pr, 0, X);
    dpd_rf_problem_inputs_get(pr, 1, Xt);
    for (size_t i = 0; i < N; i++) {
      double norm = 0.0;
      for (size_t k = 0; k < D; k++) {
        norm += X[i * D + k] * X[i * D + k];
      }
      if (in == DPD_RF_INPUT_SPHERE) {
        assert_rel(norm, (double)D, 1e-12);
      }
      for (size_t j = 0; j < P; j++) {
        double z = 0.0, zt = 0.0;
        for (size_t k = 0; k < D; k++) {
          z += X[i * D + k] * pr->V[j * D + k];
          zt += Xt[i * D + k] * pr->V[j * D + k];
        }
        assert_abs(pr->phi[i * P + j], tanh(z), 1e-12);
        assert_abs(pr->phi_test[i * P + j], tanh(zt), 1e-12);
      }
    }
    dpd_rf_problem_free(pr);
  }
}

/* On the sphere Phi Phi^T / p -> K = sum_r mu_r^2 (X X^T/d)^(r) as p grows: at p = 20000 its
 * largest eigenvalue agrees within 5 %, its smallest within 25 % (fluctuations of order
 * sqrt(n/p) lambda_max), and lambda_min of the Gram is above the slides' bound. */
static void hermite_bound_is_below_the_kernel(void **state) {
  (void)state;
  enum { N = 40, P = 20000, D = 20 };
  for (int a = 0; a < DPD_RF_ACT_COUNT; a++) {
    dpd_rf_problem *pr = make((dpd_rf_activation)a, N, P, D, DPD_RF_INPUT_SPHERE);
    double X[N * D];
    dpd_rf_hermite_bound b;
    dpd_rf_interp_result r;
    dpd_err err;
    dpd_err_reset(&err);
    dpd_rf_problem_inputs_get(pr, 0, X);
    assert_int_equal(dpd_rf_hermite_bound_eval(pr->cfg.activation, X, N, D, &b, &err), DPD_OK);
    assert_int_equal(dpd_rf_interp_eval(pr, &r, &err), DPD_OK);
    if (!(r.lambda_min >= b.bound) || fabs(r.lambda_min / b.kernel_lambda_min - 1) > 0.25) {
      print_error("%s: lambda_min %g, kernel %g, bound %g, hermite_sum %g\n",
                  dpd_rf_activation_name(pr->cfg.activation), r.lambda_min, b.kernel_lambda_min,
                  b.bound, b.hermite_sum);
    }
    assert_true(b.bound <= b.hermite_sum && b.hermite_sum <= b.kernel_lambda_min * (1 + 1e-9));
    assert_true(r.lambda_min >= b.bound);
    assert_rel(r.lambda_max, b.kernel_lambda_max, 0.05);
    assert_rel(r.lambda_min, b.kernel_lambda_min, 0.25);
    dpd_rf_problem_free(pr);
  }
  dpd_rf_hermite_bound b;
  double X[2] = {1.0, -1.0};
  assert_int_equal(dpd_rf_hermite_bound_eval(DPD_RF_ACT_TANH, X, 1, 2, &b, NULL), DPD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hermite_coefficients_match_quadrature),
      cmocka_unit_test(hermite_coefficients_have_the_documented_structure),
      cmocka_unit_test(derivatives_match_finite_differences),
      cmocka_unit_test(new_activation_names_round_trip),
      cmocka_unit_test(lambda_min_matches_dgesvd),
      cmocka_unit_test(gradient_matches_finite_differences),
      cmocka_unit_test(inputs_reproduce_the_features),
      cmocka_unit_test(hermite_bound_is_below_the_kernel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
