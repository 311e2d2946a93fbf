/* Unit tests for learning-rate schedules and the calibrated noise (docs/math.md §1.4, §1.8).
 * SPDX-License-Identifier: MIT
 *
 * References: the closed forms of include/dpdyn/schedule.h; d/dt[eta~^2] against centred finite
 * differences; the calibration rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 (eta_n = 0) checked
 * directly and through privacy amplification by iteration (dpd_privacy_rho_eff returns rho
 * exactly for a calibrated non-increasing schedule, docs/math.md §1.4). */
#include "dpd_test.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "dpdyn/privacy.h"
#include "dpdyn/schedule.h"

/* Table used throughout: knots inside (0, 1), non-increasing. */
static const double tab_t[] = {0.0, 0.2, 0.55, 1.0};
static const double tab_eta[] = {1.2, 0.9, 0.4, 0.25};

/* Parameters of the optimal family. */
#define OPT_C1 0.83
#define OPT_C2 0.29
#define OPT_C3 0.41
#define OPT_GAMMA 0.37
#define OPT_RHO 0.9

#define N_FAMILIES 6

static dpd_schedule_config family_config(int family) {
  dpd_schedule_config cfg = dpd_schedule_config_default();
  switch (family) {
  case 0:
    cfg.kind = DPD_SCHEDULE_CONST;
    cfg.eta0 = 0.713;
    break;
  case 1:
    cfg.kind = DPD_SCHEDULE_SQRT;
    cfg.eta0 = 1.37;
    break;
  case 2:
    cfg.kind = DPD_SCHEDULE_HYPERBOLIC;
    cfg.eta0 = 0.91;
    cfg.a = 3.7;
    break;
  case 3:
    cfg.kind = DPD_SCHEDULE_OPTIMAL;
    cfg.c1 = OPT_C1;
    cfg.c2 = OPT_C2;
    cfg.c3 = OPT_C3;
    cfg.gamma = OPT_GAMMA;
    cfg.rho = OPT_RHO;
    break;
  case 4: /* optimal without privacy: c3 / rho = 0 */
    cfg.kind = DPD_SCHEDULE_OPTIMAL;
    cfg.c1 = OPT_C1;
    cfg.c2 = OPT_C2;
    cfg.c3 = OPT_C3;
    cfg.gamma = OPT_GAMMA;
    cfg.rho = INFINITY;
    break;
  default:
    cfg.kind = DPD_SCHEDULE_TABLE;
    cfg.table_t = tab_t;
    cfg.table_eta = tab_eta;
    cfg.table_len = sizeof tab_t / sizeof tab_t[0];
    break;
  }
  return cfg;
}

/* The documented formula, written independently of the library. */
static double family_formula(int family, double t) {
  switch (family) {
  case 0:
    return 0.713;
  case 1:
    return 1.37 * sqrt(1.0 - t);
  case 2:
    return 0.91 / (1.0 + 3.7 * t);
  case 3:
    return OPT_C1 / (t + OPT_GAMMA * fmax(OPT_C2, OPT_C3 / OPT_RHO));
  case 4:
    return OPT_C1 / (t + OPT_GAMMA * OPT_C2);
  default: {
    size_t k = 0;
    while (k + 2 < sizeof tab_t / sizeof tab_t[0] && t >= tab_t[k + 1]) {
      k++;
    }
    return tab_eta[k] + (t - tab_t[k]) * (tab_eta[k + 1] - tab_eta[k]) / (tab_t[k + 1] - tab_t[k]);
  }
  }
}

static dpd_schedule *create_or_fail(const dpd_schedule_config *cfg) {
  dpd_schedule *s = NULL;
  dpd_err err;
  int status;
  dpd_err_reset(&err);
  status = dpd_schedule_create(cfg, &s, &err);
  if (status != DPD_OK) {
    print_error("dpd_schedule_create failed: %s (%s)\n", dpd_status_str(status), err.reason);
    fail();
  }
  assert_non_null(s);
  return s;
}

static const double t_points[] = {0.0, 0.0371, 0.137, 0.2, 0.3, 0.5, 0.55, 0.731, 0.9, 0.999, 1.0};

/* ------------------------------------------------------------------------------------------ */

static void config_default_matches_header(void **state) {
  dpd_schedule_config cfg = dpd_schedule_config_default();
  (void)state;
  assert_int_equal(cfg.kind, DPD_SCHEDULE_CONST);
  assert_true(cfg.eta0 == 1.0 && cfg.a == 1.0 && cfg.c1 == 1.0 && cfg.c2 == 1.0);
  assert_true(cfg.c3 == 0.0 && cfg.gamma == 1.0 && isinf(cfg.rho) && cfg.rho > 0.0);
  assert_null(cfg.table_t);
  assert_null(cfg.table_eta);
  assert_int_equal(cfg.table_len, 0);
  dpd_schedule_free(NULL); /* accepted */
}

static void names_are_the_documented_family_names(void **state) {
  static const char *const names[N_FAMILIES] = {"const",   "sqrt",    "hyperbolic",
                                                "optimal", "optimal", "file"};
  (void)state;
  for (int f = 0; f < N_FAMILIES; f++) {
    dpd_schedule_config cfg = family_config(f);
    dpd_schedule *s = create_or_fail(&cfg);
    assert_string_equal(dpd_schedule_name(s), names[f]);
    dpd_schedule_free(s);
  }
}

static void eval_matches_the_formula_of_each_family(void **state) {
  (void)state;
  for (int f = 0; f < N_FAMILIES; f++) {
    dpd_schedule_config cfg = family_config(f);
    dpd_schedule *s = create_or_fail(&cfg);
    for (size_t i = 0; i < sizeof t_points / sizeof t_points[0]; i++) {
      double t = t_points[i];
      double want = family_formula(f, t);
      if (want == 0.0) {
        assert_true(dpd_schedule_eval(s, t) == 0.0);
      } else {
        assert_rel(dpd_schedule_eval(s, t), want, 4.0 * DBL_EPSILON);
      }
    }
    dpd_schedule_free(s);
  }
}

static void dsq_eval_matches_finite_difference_of_eta_squared(void **state) {
  static const double t_inner[] = {0.0371, 0.137, 0.3, 0.5, 0.731, 0.9};
  const double h = 1e-6;
  (void)state;
  for (int f = 0; f < N_FAMILIES; f++) {
    dpd_schedule_config cfg = family_config(f);
    dpd_schedule *s = create_or_fail(&cfg);
    for (size_t i = 0; i < sizeof t_inner / sizeof t_inner[0]; i++) {
      double t = t_inner[i];
      double ep = dpd_schedule_eval(s, t + h);
      double em = dpd_schedule_eval(s, t - h);
      double fd = (ep * ep - em * em) / (2.0 * h);
      /* Truncation ~ h^2 |f'''|, rounding ~ DBL_EPSILON |eta^2| / h ~ 1e-10. */
      assert_abs(dpd_schedule_dsq_eval(s, t), fd, 1e-8 * fmax(1.0, fabs(fd)));
    }
    dpd_schedule_free(s);
  }
}

static void sqrt_dsq_is_minus_eta0_squared_including_t_equal_one(void **state) {
  dpd_schedule_config cfg = family_config(1);
  dpd_schedule *s = create_or_fail(&cfg);
  (void)state;
  for (size_t i = 0; i < sizeof t_points / sizeof t_points[0]; i++) {
    assert_rel(dpd_schedule_dsq_eval(s, t_points[i]), -1.37 * 1.37, 4.0 * DBL_EPSILON);
  }
  assert_true(dpd_schedule_dsq_eval(s, 1.0) == -1.37 * 1.37);
  /* One-sided difference at t = 1 from the left: (eta~(1)^2 - eta~(1-h)^2) / h = -eta0^2. */
  {
    double h = 1e-6;
    double em = dpd_schedule_eval(s, 1.0 - h);
    double e1 = dpd_schedule_eval(s, 1.0);
    assert_true(e1 == 0.0);
    assert_rel((e1 * e1 - em * em) / h, -1.37 * 1.37, 1e-9);
  }
  dpd_schedule_free(s);
}

static void sup_is_the_maximum_over_the_unit_interval(void **state) {
  (void)state;
  for (int f = 0; f < N_FAMILIES; f++) {
    dpd_schedule_config cfg = family_config(f);
    dpd_schedule *s = create_or_fail(&cfg);
    double grid_max = 0.0;
    for (int i = 0; i <= 10000; i++) {
      grid_max = fmax(grid_max, dpd_schedule_eval(s, (double)i / 10000.0));
    }
    /* All test families are non-increasing: the sup is eta~(0) (the grid contains t = 0). */
    assert_rel(dpd_schedule_sup(s), grid_max, 4.0 * DBL_EPSILON);
    assert_rel(dpd_schedule_sup(s), family_formula(f, 0.0), 4.0 * DBL_EPSILON);
    dpd_schedule_free(s);
  }
  /* A table with an interior peak, and one extending beyond [0, 1]. */
  {
    static const double t[] = {0.0, 0.4, 1.0};
    static const double eta[] = {0.3, 1.7, 0.2};
    static const double t_wide[] = {-0.5, 0.5, 1.5};
    static const double eta_wide[] = {3.0, 1.0, 2.0};
    dpd_schedule_config cfg = dpd_schedule_config_default();
    dpd_schedule *s;
    cfg.kind = DPD_SCHEDULE_TABLE;
    cfg.table_t = t;
    cfg.table_eta = eta;
    cfg.table_len = 3;
    s = create_or_fail(&cfg);
    assert_rel(dpd_schedule_sup(s), 1.7, 4.0 * DBL_EPSILON);
    assert_int_equal(dpd_schedule_is_nonincreasing(s), 0);
    dpd_schedule_free(s);
    cfg.table_t = t_wide;
    cfg.table_eta = eta_wide;
    s = create_or_fail(&cfg);
    /* On [0, 1]: eta~(0) = 2, eta~(1) = 1.5; the knots outside [0, 1] do not count. */
    assert_rel(dpd_schedule_sup(s), 2.0, 4.0 * DBL_EPSILON);
    assert_rel(dpd_schedule_eval(s, 0.0), 2.0, 4.0 * DBL_EPSILON);
    assert_rel(dpd_schedule_eval(s, 1.0), 1.5, 4.0 * DBL_EPSILON);
    assert_int_equal(dpd_schedule_is_nonincreasing(s), 0);
    dpd_schedule_free(s);
  }
}

static void is_nonincreasing_for_decaying_families_and_not_for_rising_tables(void **state) {
  static const double t_up[] = {0.0, 1.0};
  static const double eta_up[] = {0.5, 0.6};
  static const double t_flat[] = {0.0, 0.3, 1.0};
  static const double eta_flat[] = {0.5, 0.5, 0.5};
  dpd_schedule_config cfg;
  dpd_schedule *s;
  (void)state;
  for (int f = 0; f < N_FAMILIES; f++) {
    cfg = family_config(f);
    s = create_or_fail(&cfg);
    assert_int_equal(dpd_schedule_is_nonincreasing(s), 1);
    dpd_schedule_free(s);
  }
  cfg = dpd_schedule_config_default();
  cfg.kind = DPD_SCHEDULE_HYPERBOLIC;
  cfg.eta0 = 0.4;
  cfg.a = 0.0; /* constant: non-increasing */
  s = create_or_fail(&cfg);
  assert_int_equal(dpd_schedule_is_nonincreasing(s), 1);
  dpd_schedule_free(s);

  cfg = dpd_schedule_config_default();
  cfg.kind = DPD_SCHEDULE_TABLE;
  cfg.table_t = t_up;
  cfg.table_eta = eta_up;
  cfg.table_len = 2;
  s = create_or_fail(&cfg);
  assert_int_equal(dpd_schedule_is_nonincreasing(s), 0);
  dpd_schedule_free(s);
  cfg.table_t = t_flat;
  cfg.table_eta = eta_flat;
  cfg.table_len = 3;
  s = create_or_fail(&cfg);
  assert_int_equal(dpd_schedule_is_nonincreasing(s), 1);
  dpd_schedule_free(s);
}

static void steps_are_calibrated_and_tie_with_rho_eff(void **state) {
  static const size_t lengths[] = {1, 2, 3, 17, 1000};
  static const double rhos[] = {0.37, OPT_RHO, 2.385, INFINITY};
  (void)state;
  for (int f = 0; f < N_FAMILIES; f++) {
    dpd_schedule_config cfg = family_config(f);
    dpd_schedule *s = create_or_fail(&cfg);
    for (size_t il = 0; il < sizeof lengths / sizeof lengths[0]; il++) {
      size_t n = lengths[il];
      double *eta = malloc(n * sizeof *eta);
      double *sigma = malloc(n * sizeof *sigma);
      assert_non_null(eta);
      assert_non_null(sigma);
      for (size_t ir = 0; ir < sizeof rhos / sizeof rhos[0]; ir++) {
        double rho = rhos[ir];
        dpd_schedule_steps(s, n, rho, eta, sigma);
        for (size_t k = 0; k < n; k++) {
          double next = (k + 1 < n) ? eta[k + 1] : 0.0;
          assert_rel(eta[k], dpd_schedule_eval(s, (double)k / (double)n) / (double)n,
                     4.0 * DBL_EPSILON);
          if (isinf(rho)) {
            assert_true(sigma[k] == 0.0);
          } else {
            /* rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 up to rounding on the scale eta_k^2. */
            assert_abs(rho * rho * sigma[k] * sigma[k], eta[k] * eta[k] - next * next,
                       1e-14 * eta[k] * eta[k]);
            assert_true(sigma[k] >= 0.0);
          }
        }
        if (isinf(rho)) {
          /* No noise: a positive last step is unprotected. */
          assert_true(isinf(dpd_privacy_rho_eff(eta, sigma, n)));
        } else {
          double got = dpd_privacy_rho_eff(eta, sigma, n);
          if (!(fabs(got - rho) <= 1e-12 * rho)) {
            print_error("family %s, n = %zu, rho = %g: rho_eff = %.17g\n", dpd_schedule_name(s), n,
                        rho, got);
            fail();
          }
          /* The last step carries sigma_{n-1} = eta_{n-1} / rho. */
          assert_rel(sigma[n - 1], eta[n - 1] / rho, 4.0 * DBL_EPSILON);
        }
      }
      free(sigma);
      free(eta);
    }
    dpd_schedule_free(s);
  }
}

static void const_schedule_puts_all_noise_on_the_last_step(void **state) {
  dpd_schedule_config cfg = family_config(0);
  dpd_schedule *s = create_or_fail(&cfg);
  double eta[5];
  double sigma[5];
  (void)state;
  dpd_schedule_steps(s, 5, 2.385, eta, sigma);
  for (size_t k = 0; k < 4; k++) {
    assert_true(sigma[k] == 0.0);
    assert_true(eta[k] == 0.713 / 5.0);
  }
  assert_rel(sigma[4], 0.713 / 5.0 / 2.385, 4.0 * DBL_EPSILON);
  dpd_schedule_free(s);
}

static void table_interpolates_linearly_and_copies_its_input(void **state) {
  double t[] = {0.0, 0.2, 0.55, 1.0};
  double eta[] = {1.2, 0.9, 0.4, 0.25};
  dpd_schedule_config cfg = dpd_schedule_config_default();
  dpd_schedule *s;
  (void)state;
  cfg.kind = DPD_SCHEDULE_TABLE;
  cfg.table_t = t;
  cfg.table_eta = eta;
  cfg.table_len = 4;
  s = create_or_fail(&cfg);
  /* Knots are reproduced exactly. */
  for (size_t k = 0; k < 4; k++) {
    assert_rel(dpd_schedule_eval(s, t[k]), eta[k], 4.0 * DBL_EPSILON);
  }
  /* Midpoints are averages; an arbitrary point by hand: 0.9 + (0.3-0.2)/0.35 (0.4-0.9). */
  assert_rel(dpd_schedule_eval(s, 0.1), 1.05, 4.0 * DBL_EPSILON);
  assert_rel(dpd_schedule_eval(s, 0.775), 0.325, 4.0 * DBL_EPSILON);
  assert_rel(dpd_schedule_eval(s, 0.3), 0.9 - 0.5 / 3.5, 4.0 * DBL_EPSILON);
  /* d/dt eta~^2 = 2 eta~ slope inside a segment. */
  assert_rel(dpd_schedule_dsq_eval(s, 0.3), 2.0 * (0.9 - 0.5 / 3.5) * (-0.5 / 0.35), 1e-14);
  /* The caller's arrays may change or go away after create. */
  t[1] = 0.9;
  eta[1] = 100.0;
  assert_rel(dpd_schedule_eval(s, 0.1), 1.05, 4.0 * DBL_EPSILON);
  assert_rel(dpd_schedule_sup(s), 1.2, 4.0 * DBL_EPSILON);
  dpd_schedule_free(s);
}

/* ------------------------------------------------------------------------------------------ */
/* Errors */

/* create() must fail with DPD_EINVAL, NULL *out, and a reason containing `name`. */
/* Step: eta0 factor^j after the j-th drop at t = j/(drops+1); its drops are
 * the only discontinuities and carry all of the calibrated noise. Cosine:
 * eta_min + (eta0 - eta_min)(1 + cos(pi t))/2 with a smooth d/dt eta^2. */
static void step_and_cosine_follow_their_formulas(void **state) {
  dpd_schedule_config cfg = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  dpd_err err;
  double jt[8], jdsq[8], eta[600], sigma[600];
  const double pi = 3.14159265358979323846;
  (void)state;
  cfg.kind = DPD_SCHEDULE_STEP;
  cfg.eta0 = 1.7;
  cfg.factor = 0.35;
  cfg.drops = 3;
  assert_int_equal(dpd_schedule_create(&cfg, &s, &err), DPD_OK);
  assert_string_equal(dpd_schedule_name(s), "step");
  assert_rel(dpd_schedule_eval(s, 0.0), 1.7, 1e-15);
  assert_rel(dpd_schedule_eval(s, 0.2499), 1.7, 1e-15);
  assert_rel(dpd_schedule_eval(s, 0.25), 1.7 * 0.35, 1e-15);
  assert_rel(dpd_schedule_eval(s, 0.74), 1.7 * 0.35 * 0.35, 1e-15);
  assert_rel(dpd_schedule_eval(s, 1.0), 1.7 * 0.35 * 0.35 * 0.35, 1e-15);
  assert_true(dpd_schedule_dsq_eval(s, 0.4) == 0.0);
  assert_int_equal(dpd_schedule_jumps(s, NULL, NULL, 0), 3);
  assert_int_equal(dpd_schedule_jumps(s, jt, jdsq, 8), 3);
  for (size_t j = 0; j < 3; j++) {
    double before = dpd_schedule_eval(s, jt[j] - 1e-9), after = dpd_schedule_eval(s, jt[j]);
    assert_rel(jt[j], (double)(j + 1) / 4.0, 1e-15);
    assert_rel(jdsq[j], before * before - after * after, 1e-12);
  }
  assert_true(dpd_schedule_is_nonincreasing(s));
  assert_rel(dpd_schedule_sup(s), 1.7, 1e-15);
  dpd_schedule_steps(s, 600, 1.3, eta, sigma);
  assert_rel(dpd_privacy_rho_eff(eta, sigma, 600), 1.3, 1e-12);
  for (size_t k = 0; k + 1 < 600; k++) {
    /* noise only on the step before a drop */
    assert_true((sigma[k] > 0.0) == (eta[k + 1] < eta[k]));
  }
  dpd_schedule_free(s);

  cfg = dpd_schedule_config_default();
  cfg.kind = DPD_SCHEDULE_COSINE;
  cfg.eta0 = 2.3;
  cfg.eta_min = 0.4;
  assert_int_equal(dpd_schedule_create(&cfg, &s, &err), DPD_OK);
  assert_string_equal(dpd_schedule_name(s), "cosine");
  for (double t = 0.0; t <= 1.0; t += 0.0625) {
    double want = 0.4 + 1.9 * 0.5 * (1.0 + cos(pi * t)), h = 1e-6;
    double tl = fmax(0.0, t - h), tr = fmin(1.0, t + h);
    double el = dpd_schedule_eval(s, tl), er = dpd_schedule_eval(s, tr);
    assert_rel(dpd_schedule_eval(s, t), want, 1e-14);
    assert_abs(dpd_schedule_dsq_eval(s, t), (er * er - el * el) / (tr - tl), 1e-4);
  }
  assert_int_equal(dpd_schedule_jumps(s, NULL, NULL, 0), 0);
  assert_true(dpd_schedule_is_nonincreasing(s));
  dpd_schedule_free(s);
  cfg.eta_min = 3.0; /* rising cosine */
  assert_int_equal(dpd_schedule_create(&cfg, &s, &err), DPD_OK);
  assert_false(dpd_schedule_is_nonincreasing(s));
  assert_rel(dpd_schedule_sup(s), 3.0, 1e-15);
  dpd_schedule_free(s);
}

static void expect_einval(const dpd_schedule_config *cfg, const char *name, const char *also) {
  dpd_schedule *s = (dpd_schedule *)&s; /* any non-NULL value */
  dpd_err err;
  int status;
  dpd_err_reset(&err);
  status = dpd_schedule_create(cfg, &s, &err);
  if (status != DPD_EINVAL || err.status != DPD_EINVAL || s != NULL ||
      strstr(err.reason, name) == NULL || (also != NULL && strstr(err.reason, also) == NULL)) {
    print_error("create: status %d (%s), out %p, reason '%s'; wanted DPD_EINVAL naming '%s'%s%s\n",
                status, dpd_status_str(status), (void *)s, err.reason, name,
                also != NULL ? " and " : "", also != NULL ? also : "");
    if (status == DPD_OK) {
      dpd_schedule_free(s);
    }
    fail();
  }
}

static void create_rejects_bad_eta0(void **state) {
  static const double bad[] = {0.0, -0.5, NAN, INFINITY};
  static const dpd_schedule_kind kinds[] = {DPD_SCHEDULE_CONST, DPD_SCHEDULE_SQRT,
                                            DPD_SCHEDULE_HYPERBOLIC};
  (void)state;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
      dpd_schedule_config cfg = dpd_schedule_config_default();
      cfg.kind = kinds[i];
      cfg.eta0 = bad[j];
      expect_einval(&cfg, "eta0", NULL);
    }
  }
  {
    dpd_schedule_config cfg = dpd_schedule_config_default();
    cfg.eta0 = -2.75;
    expect_einval(&cfg, "eta0", "-2.75"); /* the value is in the reason */
  }
}

static void create_rejects_bad_optimal_parameters(void **state) {
  static const double bad_pos[] = {0.0, -0.3, NAN, INFINITY};
  (void)state;
  for (size_t j = 0; j < sizeof bad_pos / sizeof bad_pos[0]; j++) {
    dpd_schedule_config cfg = family_config(3);
    cfg.c1 = bad_pos[j];
    expect_einval(&cfg, "c1", NULL);
    cfg = family_config(3);
    cfg.c2 = bad_pos[j];
    expect_einval(&cfg, "c2", NULL);
    cfg = family_config(3);
    cfg.gamma = bad_pos[j];
    expect_einval(&cfg, "gamma", NULL);
  }
  {
    dpd_schedule_config cfg = family_config(3);
    cfg.c3 = -0.1;
    expect_einval(&cfg, "c3", NULL);
    cfg.c3 = NAN;
    expect_einval(&cfg, "c3", NULL);
    cfg = family_config(3);
    cfg.rho = 0.0;
    expect_einval(&cfg, "rho", NULL);
    cfg.rho = -1.0;
    expect_einval(&cfg, "rho", NULL);
    cfg.rho = NAN;
    expect_einval(&cfg, "rho", NULL);
  }
}

static void create_rejects_bad_tables(void **state) {
  static const double t_repeat[] = {0.0, 0.5, 0.5, 1.0};
  static const double t_decrease[] = {0.0, 0.6, 0.4, 1.0};
  static const double t_late[] = {0.1, 0.5, 0.7, 1.0};
  static const double t_short[] = {0.0, 0.5, 0.7, 0.95};
  static const double t_ok[] = {0.0, 0.5, 0.7, 1.0};
  static const double t_nan[] = {0.0, NAN, 0.7, 1.0};
  static const double eta_ok[] = {1.0, 0.8, 0.6, 0.4};
  static const double eta_neg[] = {1.0, -0.1, 0.6, 0.4};
  static const double eta_nan[] = {1.0, 0.8, NAN, 0.4};
  dpd_schedule_config cfg = dpd_schedule_config_default();
  (void)state;
  cfg.kind = DPD_SCHEDULE_TABLE;
  cfg.table_len = 4;
  cfg.table_eta = eta_ok;

  /* t not strictly increasing: the reason names t (and the offending value). */
  cfg.table_t = t_repeat;
  expect_einval(&cfg, "t = 0.5", "increasing");
  cfg.table_t = t_decrease;
  expect_einval(&cfg, "t = 0.4", "increasing");
  /* Not covering [0, 1]. */
  cfg.table_t = t_late;
  expect_einval(&cfg, "[0, 1]", "0.1");
  cfg.table_t = t_short;
  expect_einval(&cfg, "[0, 1]", "0.95");
  cfg.table_t = t_nan;
  expect_einval(&cfg, "schedule", "non-finite");
  /* Negative or non-finite eta. */
  cfg.table_t = t_ok;
  cfg.table_eta = eta_neg;
  expect_einval(&cfg, "eta = -0.1", ">= 0");
  cfg.table_eta = eta_nan;
  expect_einval(&cfg, "schedule", "non-finite");
  /* Fewer than two rows, or missing arrays. */
  cfg.table_eta = eta_ok;
  cfg.table_len = 1;
  expect_einval(&cfg, "rows", ">= 2");
  cfg.table_len = 0;
  expect_einval(&cfg, "rows", ">= 2");
  cfg.table_len = 4;
  cfg.table_t = NULL;
  expect_einval(&cfg, "schedule", NULL);
  cfg.table_t = t_ok;
  cfg.table_eta = NULL;
  expect_einval(&cfg, "schedule", NULL);
  /* Unknown family. */
  cfg = dpd_schedule_config_default();
  cfg.kind = (dpd_schedule_kind)99;
  expect_einval(&cfg, "kind", NULL);
}

/* The family table: every family is found by its name (file by file:PATH), each kind once, its
 * parameters are fields of the config, and the list names every family. */
static void family_table_is_consistent(void **state) {
  const dpd_schedule_family *f;
  char list[256];
  int seen[16] = {0};
  (void)state;
  dpd_schedule_family_list(list, sizeof list);
  for (size_t i = 0; (f = dpd_schedule_family_at(i)) != NULL; i++) {
    char spec[64];
    snprintf(spec, sizeof spec, f->takes_path ? "%s:/some/path" : "%s", f->name);
    assert_ptr_equal(dpd_schedule_family_lookup(spec), f);
    assert_int_equal(seen[f->kind]++, 0);
    assert_non_null(strstr(list, f->name));
    for (const dpd_schedule_param *q = f->params; q->key != NULL; q++) {
      assert_true(q->offset + (q->integer ? sizeof(size_t) : sizeof(double)) <=
                  sizeof(dpd_schedule_config));
      assert_true(dpd_schedule_family_reads(f, q->key));
    }
  }
  assert_null(dpd_schedule_family_lookup("Const"));
  assert_null(dpd_schedule_family_lookup("file:"));
  assert_null(dpd_schedule_family_lookup("sqrtx"));
  assert_false(dpd_schedule_family_reads(dpd_schedule_family_lookup("sqrt"), "a"));
  assert_true(dpd_schedule_family_reads(dpd_schedule_family_lookup("hyperbolic"), "a"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(config_default_matches_header),
      cmocka_unit_test(names_are_the_documented_family_names),
      cmocka_unit_test(eval_matches_the_formula_of_each_family),
      cmocka_unit_test(dsq_eval_matches_finite_difference_of_eta_squared),
      cmocka_unit_test(sqrt_dsq_is_minus_eta0_squared_including_t_equal_one),
      cmocka_unit_test(sup_is_the_maximum_over_the_unit_interval),
      cmocka_unit_test(is_nonincreasing_for_decaying_families_and_not_for_rising_tables),
      cmocka_unit_test(steps_are_calibrated_and_tie_with_rho_eff),
      cmocka_unit_test(const_schedule_puts_all_noise_on_the_last_step),
      cmocka_unit_test(table_interpolates_linearly_and_copies_its_input),
      cmocka_unit_test(step_and_cosine_follow_their_formulas),
      cmocka_unit_test(create_rejects_bad_eta0),
      cmocka_unit_test(create_rejects_bad_optimal_parameters),
      cmocka_unit_test(create_rejects_bad_tables),
      cmocka_unit_test(family_table_is_consistent),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
