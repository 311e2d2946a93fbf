/* The law of s^2 = |x|^2/d behind the finite-size correction (docs/finite_size.md §3).
 * SPDX-License-Identifier: MIT
 *
 *  - moments: the 16-node Gauss rule of the inverted law reproduces the exact cumulants of
 *    s^2 = sum lambda_i g_i^2/d (mean 1, variance m2 = 2 sum lambda^2/d^2, third cumulant
 *    8 sum lambda^3/d^3) to 1e-6 relative, and each size-biased rule those of s^2 + beta chi^2_2,
 *    both for the inverted characteristic function and for the Gamma chain of few groups (d = 1,
 * 3);
 *  - against brute-force Monte Carlo (200000 draws of s^2, fixed seed): E erf(k/s) and E 1/s^2
 *    within 4 SE, where the asymptotic point mass s = 1 is rejected (> 4 SE: negative control);
 *  - the spectrally compressed problem gives the same rule as the full one (1e-6);
 *  - the Jacobian of the corrected system (diagonal plus the rank-one terms in P and in the
 *    residual's mean eigenvalue lbar, and the one-step factor rho_j) against central finite
 *    differences of its right-hand side, with a large step where rho_j and lbar matter. */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dpd_test.h"
#include "dpdyn/isa.h"
#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"
#include "dpdyn/rng.h"
#include "linreg/finite_impl.h"

static dpd_linreg_problem *problem(size_t d, dpd_spectrum_kind kind, double alpha) {
  static const double values[] = {4.0, 0.5};
  static const size_t mult400[] = {40, 360};
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  dpd_err err;
  pc.d = d;
  pc.spectrum = kind;
  pc.alpha = alpha;
  pc.values = values;
  pc.mult = mult400;
  pc.nvalues = 2;
  assert_int_equal(dpd_linreg_problem_create(&pc, &p, &err), DPD_OK);
  return p;
}

static double power_sum(const dpd_linreg_problem *p, int k) {
  double s = 0.0;
  for (size_t i = 0; i < p->d; i++) {
    s += pow(p->lambda[i] / (double)p->d, k);
  }
  return s;
}

static void rule_moments(const dpd__fs_rule *r, double *mean, double *var, double *k3) {
  double m = 0.0, v = 0.0, t = 0.0;
  for (int k = 0; k < r->n; k++) {
    m += r->w[k] * r->x[k];
  }
  for (int k = 0; k < r->n; k++) {
    const double e = r->x[k] - m;
    v += r->w[k] * e * e;
    t += r->w[k] * e * e * e;
  }
  *mean = m;
  *var = v;
  *k3 = t;
}

static void check_law(dpd_spectrum_kind kind, size_t d, double alpha) {
  dpd_linreg_problem *p = problem(d, kind, alpha);
  dpd__fs_law *law = NULL;
  dpd_err err;
  double mean, var, k3;
  const double p2 = power_sum(p, 2), p3 = power_sum(p, 3);
  assert_int_equal(dpd__fs_law_create(p, &law, &err), DPD_OK);
  assert_rel(law->m2, 2.0 * p2, 1e-12);
  rule_moments(&law->base, &mean, &var, &k3);
  print_message("d = %zu kind %d alpha %g: m2 = %.4g, lmax/d = %.3g, %zu tilted groups, %zu "
                "exact directions\n",
                d, (int)kind, alpha, law->m2, law->lmax_over_d, law->ntilt, law->nexact);
  assert_rel(mean, 1.0, 1e-6);
  assert_rel(var, 2.0 * p2, 1e-6);
  assert_rel(k3, 8.0 * p3, 1e-5);
  for (size_t k = 0; k < law->ntilt; k++) {
    const double b = law->tilt_beta[k];
    rule_moments(&law->tilt[k], &mean, &var, &k3);
    assert_rel(mean, 1.0 + 2.0 * b, 1e-6);
    assert_rel(var, 2.0 * p2 + 4.0 * b * b, 1e-6);
    assert_rel(k3, 8.0 * p3 + 16.0 * b * b * b, 1e-5);
  }
  for (size_t e = 0; e < law->nexact; e++) { /* s^2 without an exact direction: - beta chi^2_1 */
    const double b = law->exact_beta[e];
    rule_moments(&law->minus[e], &mean, &var, &k3);
    assert_abs(mean, 1.0 - b, 1e-6);
    assert_abs(var, 2.0 * p2 - 2.0 * b * b, 1e-6 * 2.0 * p2);
    assert_abs(k3, 8.0 * p3 - 8.0 * b * b * b, 1e-5 * 8.0 * p3);
  }
  dpd__fs_law_free(law);
  dpd_linreg_problem_free(p);
}

static void rules_reproduce_the_cumulants(void **state) {
  (void)state;
  check_law(DPD_SPECTRUM_POWERLAW, 400, 1.0);
  check_law(DPD_SPECTRUM_POWERLAW, 1000, 1.0);
  check_law(DPD_SPECTRUM_POWERLAW, 1000, 1.5);
  check_law(DPD_SPECTRUM_POWERLAW, 100000, 1.0);
  check_law(DPD_SPECTRUM_ISO, 1, 1.0); /* few groups: the Gamma chain, not the inversion */
  check_law(DPD_SPECTRUM_POWERLAW, 3, 2.0);
  check_law(DPD_SPECTRUM_ISO, 50, 1.0);
  check_law(DPD_SPECTRUM_ISO, 100000, 1.0);
  check_law(DPD_SPECTRUM_LEVELS, 400, 1.0);
}

static double h_erf(double x, void *arg) {
  return erf(*(const double *)arg / sqrt(x));
}

static double h_inv(double x, void *arg) {
  (void)arg;
  return 1.0 / x;
}

static void rule_matches_monte_carlo(void **state) {
  enum { DRAWS = 200000 };
  static const double alphas[] = {1.0, 1.5};
  (void)state;
  for (int a = 0; a < 2; a++) {
    const size_t d = 400;
    dpd_linreg_problem *p = problem(d, DPD_SPECTRUM_POWERLAW, alphas[a]);
    dpd__fs_law *law = NULL;
    dpd_err err;
    dpd_rng rng;
    double *g = malloc(d * sizeof *g), kappa = 0.35;
    double s1[2] = {0, 0}, s2[2] = {0, 0};
    assert_non_null(g);
    assert_int_equal(dpd__fs_law_create(p, &law, &err), DPD_OK);
    dpd_rng_init(&rng, 2026, (uint64_t)a);
    for (int k = 0; k < DRAWS; k++) { /* s^2 = sum lambda_i g_i^2 / d */
      double q = 0.0, h[2];
      dpd_rng_gaussian_fill(&rng, g, d);
      for (size_t i = 0; i < d; i++) {
        q += p->lambda[i] * g[i] * g[i];
      }
      q /= (double)d;
      h[0] = h_erf(q, &kappa);
      h[1] = h_inv(q, NULL);
      for (int m = 0; m < 2; m++) {
        s1[m] += h[m];
        s2[m] += h[m] * h[m];
      }
    }
    for (int m = 0; m < 2; m++) {
      const double mean = s1[m] / DRAWS;
      const double se = sqrt((s2[m] / DRAWS - mean * mean) / (DRAWS - 1));
      const double rule = dpd__fs_rule_expect(&law->base, m == 0 ? h_erf : h_inv, &kappa);
      const double point = m == 0 ? erf(kappa) : 1.0; /* s = 1: the asymptotic equivalent */
      print_message("alpha %g, %s: rule %.6f, MC %.6f +- %.1e (%.2f SE); s = 1: %.2f SE\n",
                    alphas[a], m == 0 ? "E erf(k/s)" : "E 1/s^2", rule, mean, se,
                    (rule - mean) / se, (point - mean) / se);
      assert_true(fabs(rule - mean) <= 4.0 * se);
      assert_true(fabs(point - mean) > 4.0 * se); /* negative control */
    }
    free(g);
    dpd__fs_law_free(law);
    dpd_linreg_problem_free(p);
  }
}

static void compressed_problem_gives_the_same_rule(void **state) {
  dpd_linreg_problem *p = problem(20000, DPD_SPECTRUM_POWERLAW, 1.0), *cp = NULL;
  dpd_linreg_compress_config cc = dpd_linreg_compress_config_default();
  dpd__fs_law *a = NULL, *b = NULL;
  dpd_err err;
  double ma, va, ka, mb, vb, kb;
  (void)state;
  assert_int_equal(dpd_linreg_problem_compress(p, &cc, &cp, &err), DPD_OK);
  assert_true(cp->ngroups < p->ngroups);
  assert_int_equal(dpd__fs_law_create(p, &a, &err), DPD_OK);
  assert_int_equal(dpd__fs_law_create(cp, &b, &err), DPD_OK);
  rule_moments(&a->base, &ma, &va, &ka);
  rule_moments(&b->base, &mb, &vb, &kb);
  assert_rel(mb, ma, 1e-6);
  assert_rel(vb, va, 1e-6);
  assert_rel(kb, ka, 1e-5);
  assert_int_equal((int)b->ntilt, (int)a->ntilt);
  for (int k = 0; k < a->base.n; k++) {
    assert_rel(b->base.x[k], a->base.x[k], 1e-5);
  }
  dpd__fs_law_free(a);
  dpd__fs_law_free(b);
  dpd_linreg_problem_free(cp);
  dpd_linreg_problem_free(p);
}

/* Without clipping the second moments of one-pass SGD close exactly: per step
 *   E v_i'^2 = v_i^2 (1 - 2 eta lambda_i + 2 eta^2 lambda_i^2) + eta^2 lambda_i (2R + zeta^2),
 * a deterministic recursion. The corrected ODE (the self term and the one-step factor of
 * docs/finite_size.md §2) must follow it on a steep spectrum far better than the asymptotic one,
 * whose fixed point of each direction is off by the factor 1 - eta lambda_i (4 % for the top one).
 */
static void corrected_jacobian_matches_finite_differences(void **state) {
  dpd_linreg_problem *p = problem(60, DPD_SPECTRUM_POWERLAW, 2.0);
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  dpd_ode_config oc = dpd_ode_config_default();
  dpd_err err;
  const size_t m = p->ngroups;
  double *S = malloc(6 * m * sizeof *S), *v = S + m, *Jv = v + m, *fp = Jv + m, *fm = fp + m,
         *Sh = fm + m;
  (void)state;
  assert_non_null(S);
  sc.kind = DPD_SCHEDULE_SQRT;
  sc.eta0 = 1.6; /* gamma eta lambda_1/d = 0.4 (0.61 d): rho_1 = 1.3 */
  sc.gamma = 0.5;
  assert_int_equal(dpd_schedule_create(&sc, &s, &err), DPD_OK);
  oc.gamma = 0.5;
  oc.zeta = 0.5;
  oc.c = 0.4;
  oc.rho = 1.0;
  oc.finite_size = DPD_FINITE_ON;
  for (int trial = 0; trial < 3; trial++) {
    const double t = 0.1 + 0.3 * trial, h = 1e-6;
    double worst = 0.0;
    for (size_t j = 0; j < m; j++) {
      /* a state off the trajectory: the top groups hold most of the risk in one trial */
      S[j] = p->group_S0[j] * (0.05 + 0.9 * (double)((j * 7 + (size_t)trial * 3) % 11) / 10.0) +
             (trial == 2 && j < 2 ? 3.0 : 0.0);
      v[j] = ((j * 5 + (size_t)trial) % 7 == 0 ? 1.0 : 0.1) * (j % 2 ? 1.0 : -0.6) * (1.0 + S[j]);
    }
    assert_int_equal(dpd_ode_jtimes_eval(p, s, &oc, t, S, v, Jv), 0);
    for (size_t j = 0; j < m; j++) {
      Sh[j] = S[j] + h * v[j];
    }
    assert_int_equal(dpd_ode_rhs_eval(p, s, &oc, t, Sh, fp), 0);
    for (size_t j = 0; j < m; j++) {
      Sh[j] = S[j] - h * v[j];
    }
    assert_int_equal(dpd_ode_rhs_eval(p, s, &oc, t, Sh, fm), 0);
    for (size_t j = 0; j < m; j++) {
      const double fd = (fp[j] - fm[j]) / (2.0 * h);
      worst = fmax(worst, fabs(Jv[j] - fd) / (fabs(fd) + 1e-3 * p->lambda[j]));
      assert_abs(Jv[j], fd, 1e-6 * fabs(fd) + 1e-9 * p->lambda[j]);
    }
    print_message("corrected Jacobian, power law 2, d = 60, t = %.1f: worst relative error %.1e\n",
                  t, worst);
  }
  free(S);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

static void unclipped_sgd_is_reproduced(void **state) {
  dpd_linreg_problem *p = problem(400, DPD_SPECTRUM_POWERLAW, 1.0);
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  dpd_ode_config oc = dpd_ode_config_default();
  dpd_ode_result *on = NULL, *off = NULL;
  dpd_err err;
  const size_t d = p->d, n = 4 * d;
  const double eta = 1.0 / (double)n, zeta = 0.5;
  double *v2 = malloc(d * sizeof *v2), R = 0.0, err_on = 0.0, err_off = 0.0;
  (void)state;
  assert_non_null(v2);
  sc.kind = DPD_SCHEDULE_CONST;
  sc.eta0 = 1.0;
  sc.gamma = 0.25;
  assert_int_equal(dpd_schedule_create(&sc, &s, &err), DPD_OK);
  oc.gamma = 0.25;
  oc.zeta = zeta;
  oc.grid = 5;
  oc.rtol = 1e-11;
  assert_int_equal(dpd_ode_solve(p, s, &oc, &off, &err), DPD_OK);
  oc.finite_size = DPD_FINITE_ON;
  assert_int_equal(dpd_ode_solve(p, s, &oc, &on, &err), DPD_OK);
  for (size_t i = 0; i < d; i++) {
    v2[i] = p->theta_star[i] * p->theta_star[i];
    R += 0.5 * p->lambda[i] * v2[i];
  }
  for (size_t k = 1; k <= n; k++) {
    const double forcing = eta * eta * (2.0 * R + zeta * zeta);
    double Rn = 0.0;
    for (size_t i = 0; i < d; i++) {
      const double l = p->lambda[i];
      v2[i] = v2[i] * (1.0 - 2.0 * eta * l + 2.0 * eta * eta * l * l) + forcing * l;
      Rn += 0.5 * l * v2[i];
    }
    R = Rn;
    if (k % (n / 4) == 0) {
      const size_t j = k / (n / 4);
      err_on = fmax(err_on, fabs(on->risk[j] / R - 1.0));
      err_off = fmax(err_off, fabs(off->risk[j] / R - 1.0));
    }
  }
  print_message("unclipped SGD, power law 1, d = 400: max relative error of the ODE %.2e "
                "(asymptotic) and %.2e (corrected)\n",
                err_off, err_on);
  assert_true(err_on < 1e-3);
  assert_true(err_off > 5.0 * err_on); /* the asymptotic ODE misses the lambda_i/d terms */
  free(v2);
  dpd_ode_result_free(on);
  dpd_ode_result_free(off);
  dpd_schedule_free(s);
  dpd_linreg_problem_free(p);
}

/* The node loops run on every instruction-set path (scalar, AVX2, AVX-512: gcc's vectorised
 * clones) with the same bits: the conditioned factors of every group and the exact directions'
 * joint integrals, at states where clipping is mild, strong and where the top direction holds
 * most of the residual. */
static void node_loops_same_bits_on_every_isa(void **state) {
  dpd_linreg_problem *p = problem(400, DPD_SPECTRUM_POWERLAW, 1.5);
  dpd__fs_law *law = NULL;
  const dpd_noise_spec noise = {.law = DPD_NOISE_GAUSSIAN, .zeta = 0.5};
  const dpd_isa paths[] = {DPD_ISA_AVX2, DPD_ISA_AVX512};
  static const double cs[] = {0.05, 0.5, 3.0}, Rs[] = {0.02, 0.3, 2.0}, shares[] = {0.1, 0.9};
  dpd_err err;
  int compared = 0;
  (void)state;
  assert_int_equal(dpd__fs_law_create(p, &law, &err), 0);
  assert_true(law->cond && law->nexact >= 2);
  for (size_t ic = 0; ic < 3; ic++) {
    for (size_t ir = 0; ir < 3; ir++) {
      for (size_t is = 0; is < 2; is++) {
        const double c = cs[ic], R = Rs[ir], P = R + 0.5 * noise.zeta * noise.zeta;
        const double a1 = sqrt(2.0 * P * shares[is]), a = sqrt(0.05 * P);
        dpd__fs_coef ref, got;
        dpd__fs_exact_k kref, kgot;
        memset(&ref, 0, sizeof ref);
        assert_int_equal(dpd__fs_coef_eval_isa(law, &noise, c, R, 0.3, a1, 0.7, 0.25, 1,
                                               DPD_ISA_SCALAR, &ref, &err),
                         0);
        for (size_t q = 0; q < 2; q++) {
          if (!dpd_isa_available(paths[q])) {
            continue;
          }
          memset(&got, 0, sizeof got);
          assert_int_equal(
              dpd__fs_coef_eval_isa(law, &noise, c, R, 0.3, a1, 0.7, 0.25, 1, paths[q], &got, &err),
              0);
          assert_memory_equal(&ref, &got, sizeof ref);
          compared++;
        }
        for (size_t e = 0; e < law->nexact; e++) {
          /* the partner's share: direction 1's (small) for e = 0, direction 0's otherwise */
          const double ap = e == 0 ? sqrt(0.04 * P) : sqrt(P * shares[is]);
          memset(&kref, 0, sizeof kref);
          if (dpd__fs_exact_eval_isa(law, e, c, P, a, ap, DPD_ISA_SCALAR, &kref) != 0) {
            continue;
          }
          for (size_t q = 0; q < 2; q++) {
            if (!dpd_isa_available(paths[q])) {
              continue;
            }
            memset(&kgot, 0, sizeof kgot);
            assert_int_equal(dpd__fs_exact_eval_isa(law, e, c, P, a, ap, paths[q], &kgot), 0);
            assert_memory_equal(&kref, &kgot, sizeof kref);
            compared++;
          }
        }
      }
    }
  }
  print_message("finite-size node loops: %d comparisons with the scalar path, all the same bits "
                "(AVX2 %s, AVX-512 %s on this CPU)\n",
                compared, dpd_isa_available(DPD_ISA_AVX2) ? "run" : "not available",
                dpd_isa_available(DPD_ISA_AVX512) ? "run" : "not available");
  dpd__fs_law_free(law);
  dpd_linreg_problem_free(p);
}

int main(void) {
  gsl_set_error_handler_off();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rules_reproduce_the_cumulants),
      cmocka_unit_test(rule_matches_monte_carlo),
      cmocka_unit_test(compressed_problem_gives_the_same_rule),
      cmocka_unit_test(unclipped_sgd_is_reproduced),
      cmocka_unit_test(corrected_jacobian_matches_finite_differences),
      cmocka_unit_test(node_loops_same_bits_on_every_isa),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
