/* Plug-ins through the public API only: a test-only schedule family and a test-only label-noise
 * law, registered at run time, run through every linreg command of the model registry.
 * SPDX-License-Identifier: MIT
 *
 * This file includes nothing but dpdyn/ headers (and cmocka) and links the shared library, so it
 * sees exactly what a program outside the library sees (tests/CMakeLists.txt). It proves the
 * claim of docs/architecture.md: a family or a law is one block and one table entry, or one
 * register call from outside, and then simulate, sde, ode, compare, account and tune take it;
 * and a model is one dpd_model_type (setup, release, workspace_bytes, one run per command),
 * registered with dpd_model_register and run by the generic runner.
 *
 *  - Family "linear": eta~(t) = eta0 + (eta_min - eta0) t (the config fields eta0 and eta_min,
 *    the model's keys of those names), d/dt eta~^2 = 2 eta~(t) (eta_min - eta0), sup eta~ =
 *    max(eta0, eta_min), non-increasing iff eta_min <= eta0; tunables "c eta0".
 *  - Law "uniform": z uniform on [-w, w], w = sqrt(3) zeta (variance zeta^2), drawn from the
 *    simulator's Gaussian g as z = w erf(g / sqrt 2) = w (2 Phi(g) - 1). Its clipping moments in
 *    closed form: the residual r = s Z - z (s = sqrt(2R)) has the density
 *      p_r(x) = [Phi((x + w)/s) - Phi((x - w)/s)] / (2w),
 *      p_r'(x) = [phi((x + w)/s) - phi((x - w)/s)] / (2 w s),
 *    and with K(a) = a erf(a / sqrt 2) + 2 phi(a) (the antiderivative of Phi integrated once
 *    more, symmetrised), P(|r| <= c) = s [K((c + w)/s) - K((c - w)/s)] / (2w); E[min(r^2, c^2)]
 *    = int_{-c}^{c} x^2 p_r(x) dx + c^2 (1 - P(|r| <= c)), the integral by composite Simpson.
 *    The test checks them against Monte Carlo and their R-derivatives against differences. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpdyn/clip.h"
#include "dpdyn/linreg.h"
#include "dpdyn/model.h"
#include "dpdyn/noise.h"
#include "dpdyn/rng.h"
#include "dpdyn/schedule.h"
#include "dpdyn/tune.h"

/* 1: `tune` through the model registry runs with the registered family (the linreg adapter
 * takes the families' tunables from the table, dpd_tune_family_params_get); 0 checks the tuner
 * through tune.h only. */
#ifndef PLUGIN_TUNE_THROUGH_MODEL
#define PLUGIN_TUNE_THROUGH_MODEL 1
#endif

static const double inv_sqrt2 = 0.70710678118654752440084436210485;
static const double inv_sqrt_2pi = 0.39894228040143267793994605993438;

/* ---- The family: linear decay from eta0 to eta_min ------------------------------------------ */

#define LINEAR_KIND ((dpd_schedule_kind)(DPD_SCHEDULE_KIND_USER + 7))

static int linear_validate(const dpd_schedule_config *c, dpd_err *err) {
  if (!(c->eta0 > 0.0) || !isfinite(c->eta0)) {
    if (err != NULL) {
      err->status = DPD_EINVAL;
      snprintf(err->reason, sizeof err->reason,
               "invalid value for 'eta0': %g (allowed: finite, > 0)", c->eta0);
    }
    return DPD_EINVAL;
  }
  if (!(c->eta_min >= 0.0) || !isfinite(c->eta_min)) {
    if (err != NULL) {
      err->status = DPD_EINVAL;
      snprintf(err->reason, sizeof err->reason,
               "invalid value for 'eta_min': %g (allowed: finite, >= 0)", c->eta_min);
    }
    return DPD_EINVAL;
  }
  return DPD_OK;
}

static double linear_eval(const dpd_schedule_config *c, double t) {
  return c->eta0 + (c->eta_min - c->eta0) * t;
}

static double linear_dsq(const dpd_schedule_config *c, double t) {
  return 2.0 * linear_eval(c, t) * (c->eta_min - c->eta0);
}

static double linear_sup(const dpd_schedule_config *c) { return fmax(c->eta0, c->eta_min); }

static int linear_nonincreasing(const dpd_schedule_config *c) { return c->eta_min <= c->eta0; }

static const dpd_schedule_param linear_params[] = {
    {"eta0", offsetof(dpd_schedule_config, eta0), 0},
    {"eta_min", offsetof(dpd_schedule_config, eta_min), 0},
    {NULL, 0, 0}};

static const dpd_schedule_family linear_family = {
    "linear",        0,
    LINEAR_KIND,     linear_params,
    "eta0 + (eta_min - eta0) t (test only)",
    "c eta0",        "c eta0",
    linear_validate, linear_eval,
    linear_dsq,      NULL,
    linear_sup,      linear_nonincreasing,
    NULL};

/* ---- The law: uniform with variance zeta^2 ------------------------------------------------- */

#define UNIFORM_LAW ((dpd_noise_law)(DPD_NOISE_LAW_USER + 3))

static double std_cdf(double x) { return 0.5 * erfc(-x * inv_sqrt2); }
static double std_pdf(double x) { return inv_sqrt_2pi * exp(-0.5 * x * x); }

static double uniform_sample(const dpd_noise_spec *noise, double g, dpd_rng *rng) {
  (void)rng;
  return sqrt(3.0) * noise->zeta * erf(g * inv_sqrt2);
}

/* K(a) = int_{-inf}^{a} int_{-inf}^{u} phi + the same at -a: a erf(a/sqrt 2) + 2 phi(a). */
static double k_of(double a) { return a * erf(a * inv_sqrt2) + 2.0 * std_pdf(a); }

static double residual_density(double x, double w, double s) {
  return (std_cdf((x + w) / s) - std_cdf((x - w) / s)) / (2.0 * w);
}

#define SIMPSON_INTERVALS 4000 /* even */

static int uniform_clip_moments(const dpd_noise_spec *noise, double c, double R, int derivs,
                                double out[4], dpd_err *err) {
  const double w = sqrt(3.0) * noise->zeta, s = sqrt(2.0 * R);
  (void)err;
  if (s == 0.0) {
    /* r = -z: uniform on [-w, w]. */
    out[0] = fmin(c, w) / w;
    out[1] = c >= w ? w * w / 3.0 : (c * c * c / 3.0 + c * c * (w - c)) / w;
    out[2] = c < w ? 0.5 / w : (c == w ? 0.25 / w : 0.0);
    out[3] = 0.0;
    return DPD_OK;
  }
  {
    const double mu = fmin(fmax(s * (k_of((c + w) / s) - k_of((c - w) / s)) / (2.0 * w), 0.0), 1.0);
    const double h = c / SIMPSON_INTERVALS;
    double sum = 0.0;
    for (int k = 0; k <= SIMPSON_INTERVALS; k++) {
      const double x = k * h;
      const double f = x * x * residual_density(x, w, s);
      sum += (k == 0 || k == SIMPSON_INTERVALS) ? f : (k % 2 ? 4.0 * f : 2.0 * f);
    }
    out[0] = mu;
    out[1] = 2.0 * sum * h / 3.0 + c * c * (1.0 - mu); /* twice the half-range [0, c] */
  }
  if (derivs) {
    out[2] = residual_density(c, w, s);
    out[3] = (std_pdf((c + w) / s) - std_pdf((c - w) / s)) / (2.0 * w * s);
  }
  return DPD_OK;
}

static const dpd_noise_law_type uniform_law = {
    "uniform",      UNIFORM_LAW, NULL, "uniform on [-sqrt(3) zeta, sqrt(3) zeta] (test only)", NULL,
    NULL,           uniform_sample, uniform_clip_moments};

/* ---- A test-only model: the fraction of n uniforms below p, over seeds replicates ---------- */

/* Its context: the validated keys. */
typedef struct {
  size_t n, seeds;
  double p;
  uint64_t seed;
} coin_ctx;

static const dpd_key_desc coin_keys[] = {
    {"n", DPD_KEY_INT, "1000", 1, 1e7, 0, NULL, NULL, "draws per replicate"},
    {"p", DPD_KEY_REAL, "0.3", 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, NULL,
     "probability of a success"},
    {"seeds", DPD_KEY_INT, "16", 1, 1e6, 0, NULL, NULL, "replicates"},
    {"seed", DPD_KEY_INT, "1", 0, 18446744073709551615.0, 0, NULL, NULL, "master seed"},
    {NULL, DPD_KEY_REAL, NULL, 0, 0, 0, NULL, NULL, NULL}};

static int coin_setup(const dpd_model_command *c, dpd_keys *keys, const dpd_run_env *env,
                      void **ctx, dpd_err *err) {
  coin_ctx v;
  int status;
  (void)c;
  (void)env;
  *ctx = NULL;
  if ((status = dpd_keys_size_get(keys, "n", &v.n, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "p", &v.p, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "seeds", &v.seeds, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &v.seed, err)) < 0) {
    return status;
  }
  if ((*ctx = malloc(sizeof v)) == NULL) {
    return DPD_ENOMEM;
  }
  memcpy(*ctx, &v, sizeof v);
  return DPD_OK;
}

static void coin_release(void *ctx) { free(ctx); }

static double coin_workspace_bytes(const void *ctx, const dpd_model_command *c,
                                   const char **driver) {
  (void)c;
  *driver = "seeds";
  return 2.0 * (double)((const coin_ctx *)ctx)->seeds * sizeof(double);
}

static int coin_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                         dpd_output **outp, dpd_err *err) {
  const coin_ctx *v = ctx;
  dpd_output *out = NULL;
  dpd_table_builder *b = NULL;
  double *rep, *est, mean = 0.0, ss = 0.0;
  int status;
  (void)env;
  if ((status = dpd_output_create(&out, err)) < 0 ||
      (status = dpd_table_builder_create(v->seeds, &b, err)) < 0) {
    dpd_output_free(out);
    return status;
  }
  rep = dpd_table_builder_column(b, "replicate", err);
  est = rep != NULL ? dpd_table_builder_column(b, "estimate", err) : NULL;
  if (est == NULL) {
    dpd_table_builder_free(b);
    dpd_output_free(out);
    return err->status;
  }
  for (size_t r = 0; r < v->seeds; r++) {
    dpd_rng rng;
    size_t hits = 0;
    dpd_rng_init(&rng, v->seed, r);
    for (size_t k = 0; k < v->n; k++) {
      hits += dpd_rng_uniform(&rng) < v->p;
    }
    rep[r] = (double)r;
    est[r] = (double)hits / (double)v->n;
    mean += est[r];
  }
  mean /= (double)v->seeds;
  for (size_t r = 0; r < v->seeds; r++) {
    ss += (est[r] - mean) * (est[r] - mean);
  }
  dpd_output_number_set(out, "estimate", mean);
  dpd_output_number_set(out, "estimate_se",
                        v->seeds > 1 ? sqrt(ss / (double)(v->seeds - 1) / (double)v->seeds) : 0.0);
  if ((status = dpd_output_table_add_built(out, "replicates.tsv", NULL, b, err)) < 0 ||
      (status = dpd_output_params_set(out, keys, err)) < 0) {
    dpd_output_free(out);
    return status;
  }
  *outp = out;
  return DPD_OK;
}

static const dpd_model_command coin_commands[] = {
    {.name = "simulate",
     .summary = "the fraction of n uniforms below p",
     .files = "summary.json replicates.tsv",
     .example = "dpdyn simulate model=coin p=0.3",
     .numbers = "estimate estimate_se",
     .run = coin_simulate},
    {.name = NULL}};

static const char *const coin_small[] = {"n", "100", "seeds", "3", NULL};

static const dpd_model_type coin_model = {"coin",
                                          "test only: Bernoulli frequencies",
                                          coin_keys,
                                          coin_commands,
                                          coin_small,
                                          coin_setup,
                                          coin_release,
                                          coin_workspace_bytes};

static int register_plugins(void **state) {
  dpd_err err;
  (void)state;
  if (dpd_schedule_family_register(&linear_family, &err) != DPD_OK ||
      dpd_noise_law_register(&uniform_law, &err) != DPD_OK ||
      dpd_model_register(&coin_model, &err) != DPD_OK) {
    print_error("registration: %s\n", err.reason);
    return -1;
  }
  return 0;
}

/* ---- Registration and the tables ----------------------------------------------------------- */

static void registered_entries_join_every_list(void **state) {
  char list[1024];
  dpd_noise_spec spec = {DPD_NOISE_GAUSSIAN, 0.5, 0.0};
  dpd_err err;
  int seen = 0;
  const dpd_schedule_family *f;
  (void)state;
  assert_ptr_equal(dpd_schedule_family_lookup("linear"), &linear_family);
  assert_ptr_equal(dpd_schedule_family_get(LINEAR_KIND), &linear_family);
  for (size_t i = 0; (f = dpd_schedule_family_at(i)) != NULL; i++) {
    seen += f == &linear_family;
  }
  assert_int_equal(seen, 1);
  dpd_schedule_family_list(list, sizeof list);
  assert_non_null(strstr(list, ", linear"));
  assert_true(dpd_schedule_family_reads(&linear_family, "eta_min"));
  assert_false(dpd_schedule_family_reads(&linear_family, "a"));
  assert_string_equal(dpd_schedule_family_tunables_get(&linear_family), "c eta0");

  assert_ptr_equal(dpd_noise_law_type_lookup("uniform"), &uniform_law);
  assert_ptr_equal(dpd_noise_law_type_get(UNIFORM_LAW), &uniform_law);
  assert_string_equal(dpd_noise_law_name(UNIFORM_LAW), "uniform");
  dpd_noise_law_list(list, sizeof list);
  assert_non_null(strstr(list, "student:NU, uniform"));
  assert_int_equal(dpd_noise_spec_parse("uniform", &spec, &err), DPD_OK);
  assert_int_equal(spec.law, UNIFORM_LAW);
  assert_int_equal(dpd_noise_spec_parse("uniform:3", &spec, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "uniform"));

  /* What registration refuses: a name or id in use, an id among the built-in ones, no hooks. */
  assert_int_equal(dpd_schedule_family_register(&linear_family, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'name'"));
  {
    dpd_schedule_family bad = linear_family;
    bad.name = "linear2";
    assert_int_equal(dpd_schedule_family_register(&bad, &err), DPD_EINVAL); /* kind in use */
    assert_non_null(strstr(err.reason, "'kind'"));
    bad.kind = DPD_SCHEDULE_COSINE;
    assert_int_equal(dpd_schedule_family_register(&bad, &err), DPD_EINVAL);
    bad.kind = (dpd_schedule_kind)(DPD_SCHEDULE_KIND_USER + 8);
    bad.eval = NULL;
    assert_int_equal(dpd_schedule_family_register(&bad, &err), DPD_EINVAL);
    assert_non_null(strstr(err.reason, "eval"));
    bad.eval = linear_eval;
    bad.name = "file";
    assert_int_equal(dpd_schedule_family_register(&bad, &err), DPD_EINVAL);
    bad.name = "lin:ear";
    assert_int_equal(dpd_schedule_family_register(&bad, &err), DPD_EINVAL);
  }
  {
    dpd_noise_law_type bad = uniform_law;
    assert_int_equal(dpd_noise_law_register(&bad, &err), DPD_EINVAL); /* name in use */
    bad.name = "uniform2";
    assert_int_equal(dpd_noise_law_register(&bad, &err), DPD_EINVAL); /* id in use */
    bad.law = DPD_NOISE_STUDENT;
    assert_int_equal(dpd_noise_law_register(&bad, &err), DPD_EINVAL);
    bad.law = (dpd_noise_law)(DPD_NOISE_LAW_USER + 4);
    bad.clip_moments = NULL;
    assert_int_equal(dpd_noise_law_register(&bad, &err), DPD_EINVAL);
    assert_non_null(strstr(err.reason, "clip_moments"));
  }
  assert_null(dpd_schedule_family_lookup("linear2"));
  assert_null(dpd_noise_law_type_lookup("uniform2"));
}

/* ---- The family through the schedule object ------------------------------------------------ */

/* The help and "allowed" texts of linreg's keys name the registered family and law: they are
 * built from the tables (dpd_key_desc_help_get), not written by hand. */
static const dpd_key_desc *linreg_key(const char *name) {
  const dpd_model_type *m = dpd_model_lookup("linreg");
  assert_non_null(m);
  for (const dpd_key_desc *d = m->keys; d->name != NULL; d++) {
    if (strcmp(d->name, name) == 0) {
      return d;
    }
  }
  fail_msg("linreg has no key '%s'", name);
  return NULL;
}

static void help_names_the_registered_family_and_law(void **state) {
  char help[1024], small[16];
  size_t len;
  (void)state;
  len = dpd_key_desc_help_get(linreg_key("schedule"), help, sizeof help);
  assert_int_equal(len, strlen(help));
  assert_non_null(strstr(help, "const | sqrt | "));
  assert_non_null(strstr(help, "file:PATH | linear"));
  assert_null(strchr(help, '{'));
  dpd_key_desc_allowed(linreg_key("schedule"), help, sizeof help);
  assert_non_null(strstr(help, "| linear"));
  /* eta0 names the families that read it: linear does, optimal does not */
  dpd_key_desc_help_get(linreg_key("eta0"), help, sizeof help);
  assert_non_null(strstr(help, "cosine, linear"));
  assert_null(strstr(help, "optimal"));
  dpd_key_desc_help_get(linreg_key("noise"), help, sizeof help);
  assert_non_null(strstr(help, "gaussian | laplace | "));
  assert_non_null(strstr(help, "student:NU (NU > 2) | uniform"));
  assert_null(strchr(help, '{'));
  /* cut to the buffer, terminated, with the whole length returned */
  assert_int_equal(dpd_key_desc_help_get(linreg_key("noise"), small, sizeof small), strlen(help));
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, help, sizeof small - 1);
}

static void registered_family_follows_its_formula(void **state) {
  dpd_schedule_config cfg = dpd_schedule_config_default();
  dpd_schedule *s = NULL;
  dpd_err err;
  double eta[50], sigma[50];
  (void)state;
  cfg.kind = LINEAR_KIND;
  cfg.eta0 = 2.385;
  cfg.eta_min = 0.417;
  assert_int_equal(dpd_schedule_create(&cfg, &s, &err), DPD_OK);
  assert_string_equal(dpd_schedule_name(s), "linear");
  for (int k = 0; k <= 20; k++) {
    const double t = k / 20.0, h = 1e-6;
    const double want = 2.385 + (0.417 - 2.385) * t;
    assert_true(dpd_schedule_eval(s, t) == want);
    if (k > 0 && k < 20) {
      const double fd = (pow(dpd_schedule_eval(s, t + h), 2) - pow(dpd_schedule_eval(s, t - h), 2)) /
                        (2.0 * h);
      assert_true(fabs(dpd_schedule_dsq_eval(s, t) - fd) < 1e-7);
    }
  }
  assert_true(dpd_schedule_sup(s) == 2.385);
  assert_true(dpd_schedule_is_nonincreasing(s));
  assert_int_equal(dpd_schedule_jumps(s, NULL, NULL, 0), 0);
  /* The calibrated noise of n = 50 steps: rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2. */
  dpd_schedule_steps(s, 50, 1.7, eta, sigma);
  for (size_t k = 0; k < 50; k++) {
    const double next = k + 1 < 50 ? eta[k + 1] : 0.0;
    assert_true(fabs(eta[k] - dpd_schedule_eval(s, (double)k / 50.0) / 50.0) < 1e-15);
    assert_true(fabs(1.7 * 1.7 * sigma[k] * sigma[k] - (eta[k] * eta[k] - next * next)) < 1e-15);
  }
  dpd_schedule_free(s);
  /* Its own validation runs, and increasing is seen. */
  cfg.eta0 = -1.0;
  assert_int_equal(dpd_schedule_create(&cfg, &s, &err), DPD_EINVAL);
  assert_null(s);
  assert_non_null(strstr(err.reason, "'eta0'"));
  cfg.eta0 = 0.3;
  assert_int_equal(dpd_schedule_create(&cfg, &s, &err), DPD_OK);
  assert_false(dpd_schedule_is_nonincreasing(s));
  assert_true(dpd_schedule_sup(s) == 0.417);
  dpd_schedule_free(s);
}

/* ---- The law: its draws and its clipping factors ------------------------------------------- */

static void uniform_draws_have_the_law_moments(void **state) {
  const dpd_noise_spec noise = {UNIFORM_LAW, 0.613, 0.0};
  const size_t n = 200000;
  const double w = sqrt(3.0) * noise.zeta, var = noise.zeta * noise.zeta;
  double m1 = 0.0, m2 = 0.0, m4 = 0.0, below = 0.0;
  dpd_rng rng;
  (void)state;
  dpd_rng_init(&rng, 2385, 0);
  for (size_t i = 0; i < n; i++) {
    const double z = uniform_law.sample(&noise, dpd_rng_gaussian(&rng), &rng);
    assert_true(fabs(z) <= w);
    m1 += z;
    m2 += z * z;
    m4 += z * z * z * z;
    below += z < -0.5 * w;
  }
  m1 /= (double)n;
  m2 /= (double)n;
  m4 /= (double)n;
  below /= (double)n;
  print_message("uniform draws: mean %.3g, var %.5g (zeta^2 %.5g), E z^4 %.5g (9/5 zeta^4 %.5g), "
                "P(z < -w/2) %.4f (1/4)\n",
                m1, m2, var, m4, 1.8 * var * var, below);
  /* SE: sqrt(var/n), sqrt((E z^4 - var^2)/n), sqrt((E z^8 - (E z^4)^2)/n), sqrt(p(1-p)/n). */
  assert_true(fabs(m1) < 4.0 * sqrt(var / (double)n));
  assert_true(fabs(m2 - var) < 4.0 * sqrt(0.8 * var * var / (double)n));
  assert_true(fabs(m4 - 1.8 * var * var) < 4.0 * sqrt((81.0 / 9.0 - 3.24) * pow(var, 4) / (double)n));
  assert_true(fabs(below - 0.25) < 4.0 * sqrt(0.1875 / (double)n));
}

static void uniform_factors_match_monte_carlo_and_their_derivatives(void **state) {
  const dpd_noise_spec noise = {UNIFORM_LAW, 0.5, 0.0};
  const double cs[] = {0.31, 0.5, 0.87, 1.9};
  const double Rs[] = {0.0, 0.013, 0.21, 1.37};
  const size_t n = 200000;
  dpd_err err;
  (void)state;
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    for (size_t j = 0; j < sizeof Rs / sizeof Rs[0]; j++) {
      const double c = cs[i], R = Rs[j], s = sqrt(2.0 * R);
      const double second = 2.0 * R + noise.zeta * noise.zeta;
      double mu, nu, dmu, dnu, in = 0.0, clipped = 0.0, clipped2 = 0.0;
      dpd_rng rng;
      assert_int_equal(
          dpd_clip_noise_factors_eval(&noise, c, R, &mu, &nu, &dmu, &dnu, &err), DPD_OK);
      dpd_rng_init(&rng, 1000 + 10 * i + j, 1);
      for (size_t k = 0; k < n; k++) {
        const double z = uniform_law.sample(&noise, dpd_rng_gaussian(&rng), &rng);
        const double r = s * dpd_rng_gaussian(&rng) - z;
        const double q = fmin(r * r, c * c) / second;
        in += fabs(r) <= c;
        clipped += q;
        clipped2 += q * q;
      }
      in /= (double)n;
      clipped /= (double)n;
      clipped2 /= (double)n;
      {
        const double se_mu = sqrt(fmax(in * (1.0 - in), 1e-12) / (double)n);
        const double se_nu = sqrt(fmax(clipped2 - clipped * clipped, 1e-24) / (double)n);
        if (!(fabs(mu - in) < 4.0 * se_mu + 1e-12) || !(fabs(nu - clipped) < 4.0 * se_nu + 1e-12)) {
          print_error("c %g R %g: mu %.6g vs MC %.6g +- %.2g, nu %.6g vs MC %.6g +- %.2g\n", c, R,
                      mu, in, se_mu, nu, clipped, se_nu);
          fail();
        }
      }
      if (R > 0.0) {
        /* The R-derivatives (heat equation of clip.h) against central differences. */
        const double h = 1e-5 * R;
        double mup, mum, nup, num;
        assert_int_equal(
            dpd_clip_noise_factors_eval(&noise, c, R + h, &mup, &nup, NULL, NULL, &err), DPD_OK);
        assert_int_equal(
            dpd_clip_noise_factors_eval(&noise, c, R - h, &mum, &num, NULL, NULL, &err), DPD_OK);
        if (!(fabs(dmu - (mup - mum) / (2.0 * h)) < 1e-5 * (1.0 + fabs(dmu))) ||
            !(fabs(dnu - (nup - num) / (2.0 * h)) < 1e-5 * (1.0 + fabs(dnu)))) {
          print_error("c %g R %g: dmu %.8g vs %.8g, dnu %.8g vs %.8g\n", c, R, dmu,
                      (mup - mum) / (2.0 * h), dnu, (nup - num) / (2.0 * h));
          fail();
        }
      }
    }
  }
  /* The law's factors are its own: with clipping at c = zeta they are not the Gaussian ones. */
  {
    double mu_u, mu_g;
    const dpd_noise_spec gauss = {DPD_NOISE_GAUSSIAN, 0.5, 0.0};
    assert_int_equal(dpd_clip_noise_factors_eval(&noise, 0.5, 0.013, &mu_u, NULL, NULL, NULL, &err),
                     DPD_OK);
    assert_int_equal(dpd_clip_noise_factors_eval(&gauss, 0.5, 0.013, &mu_g, NULL, NULL, NULL, &err),
                     DPD_OK);
    print_message("mu at c = zeta = 0.5, R = 0.013: uniform %.4f, Gaussian %.4f\n", mu_u, mu_g);
    assert_true(fabs(mu_u - mu_g) > 0.05);
  }
}

/* ---- Every linreg command through the model registry --------------------------------------- */

/* The common keys of the runs: d = 400, n = 1600 (gamma = 1/4), the linear family from 3 to 1/2,
 * uniform label noise of zeta = 1/2, aggressive clipping c = 1/2, rho = 1. */
static const char *const run_keys[] = {"d",       "400",     "n",        "1600",     "zeta",
                                       "0.5",     "noise",   "uniform",  "schedule", "linear",
                                       "eta0",    "3",       "eta_min",  "0.5",     "c",
                                       "0.5",     "rho",     "1",        "seeds",   "64",
                                       "grid",    "21",      "seed",     "2385",    NULL};

static dpd_output *run(const char *command, const char *const *extra) {
  const dpd_model_type *m = dpd_model_lookup("linreg");
  dpd_keys *keys = NULL;
  dpd_output *out = NULL;
  dpd_run_env env = dpd_run_env_default();
  dpd_err err;
  assert_non_null(m);
  assert_int_equal(dpd_model_keys_create(m, command, &keys, &err), DPD_OK);
  for (const char *const *kv = run_keys; *kv != NULL; kv += 2) {
    if (dpd_model_key_set(m, keys, kv[0], kv[1], &err) != DPD_OK &&
        strstr(err.reason, "does not apply") == NULL) {
      /* (a key the command does not take, seeds for ode, is left out) */
      print_error("%s: key %s: %s\n", command, kv[0], err.reason);
      fail();
    }
  }
  for (const char *const *kv = extra; kv != NULL && *kv != NULL; kv += 2) {
    assert_int_equal(dpd_model_key_set(m, keys, kv[0], kv[1], &err), DPD_OK);
  }
  if (dpd_model_run(m, command, keys, &env, &out, &err) != DPD_OK) {
    print_error("%s: %s\n", command, err.reason);
    fail();
  }
  dpd_keys_free(keys);
  return out;
}

static double number(const dpd_output *out, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(out->summary, key);
  if (!cJSON_IsNumber(v)) {
    print_error("summary lacks the number '%s'\n", key);
    fail();
  }
  return v->valuedouble;
}

static const char *text(const dpd_output *out, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(out->summary, key);
  if (!cJSON_IsString(v)) {
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(out->summary, "params");
    v = cJSON_GetObjectItemCaseSensitive(params, key);
  }
  return cJSON_IsString(v) ? v->valuestring : "";
}

static const double *column(const dpd_output *out, const char *table, const char *name,
                            size_t *rows) {
  const dpd_table *t = dpd_output_table_get(out, table);
  const double *col;
  assert_non_null(t);
  col = dpd_table_column_get(t, name);
  if (col == NULL) {
    print_error("%s lacks the column '%s'\n", table, name);
    fail();
  }
  *rows = t->rows;
  return col;
}

static void linreg_commands_run_with_the_registered_family_and_law(void **state) {
  static const char *const compare_sde[] = {"sde", "1", NULL};
  dpd_output *sim, *ode, *sde, *cmp, *acc;
  size_t rows, rows_ode;
  const double *t, *risk, *se, *ode_risk, *sde_risk;
  double worst = 0.0;
  (void)state;

  sim = run("simulate", NULL);
  assert_string_equal(text(sim, "noise_law"), "uniform");
  assert_string_equal(text(sim, "schedule"), "linear");
  assert_true(number(sim, "final_excess_risk") > 0.0);
  assert_true(number(sim, "clipped_fraction") > 0.1); /* c = zeta: clipping is active */

  ode = run("ode", NULL);
  assert_string_equal(text(ode, "noise_law"), "uniform");
  t = column(sim, "trajectory.tsv", "t", &rows);
  risk = column(sim, "trajectory.tsv", "excess_risk", &rows);
  se = column(sim, "trajectory.tsv", "excess_risk_se", &rows);
  ode_risk = column(ode, "trajectory.tsv", "excess_risk", &rows_ode);
  assert_int_equal(rows, rows_ode);
  /* simulate and ode agree: within max(3 SE, 3 %) on the grid (the criterion of
   * tests/stat/test_noise_laws.c) and within 4 SE on the released risk. */
  for (size_t j = 0; j < rows; j++) {
    const double tol = fmax(3.0 * se[j], 0.03 * ode_risk[j]);
    worst = fmax(worst, fabs(ode_risk[j] - risk[j]) / tol);
    if (fabs(ode_risk[j] - risk[j]) > tol) {
      print_error("t = %.2f: ode %.6g, simulate %.6g +- %.3g\n", t[j], ode_risk[j], risk[j],
                  se[j]);
      fail();
    }
  }
  print_message("simulate vs ode: final %.6g +- %.3g vs %.6g; worst grid gap %.2f of tolerance\n",
                number(sim, "final_excess_risk"), number(sim, "final_excess_risk_se"),
                number(ode, "final_excess_risk"), worst);
  assert_true(fabs(number(sim, "final_excess_risk") - number(ode, "final_excess_risk")) <
              4.0 * number(sim, "final_excess_risk_se"));

  /* sde: the diffusion with the law's factors follows the ODE (its mean within max(3 SE, 5 %)). */
  sde = run("sde", NULL);
  assert_string_equal(text(sde, "noise_law"), "uniform");
  sde_risk = column(sde, "trajectory.tsv", "excess_risk", &rows);
  se = column(sde, "trajectory.tsv", "excess_risk_se", &rows);
  for (size_t j = 0; j < rows; j++) {
    const double tol = fmax(3.0 * se[j], 0.05 * ode_risk[j]);
    if (fabs(ode_risk[j] - sde_risk[j]) > tol) {
      print_error("t = %.2f: ode %.6g, sde %.6g +- %.3g\n", t[j], ode_risk[j], sde_risk[j], se[j]);
      fail();
    }
  }

  /* compare (with the SDE): the shared gap statistics say the same. */
  cmp = run("compare", compare_sde);
  print_message("compare: final_gap_in_se %.3g, sup_gap_in_se %.3g\n",
                number(cmp, "final_gap_in_se"), number(cmp, "sup_gap_in_se"));
  assert_true(number(cmp, "final_gap_in_se") < 4.0);
  assert_true(number(cmp, "final_excess_risk") == number(sim, "final_excess_risk"));
  (void)column(cmp, "trajectory.tsv", "sde_excess_risk", &rows);

  /* account: the calibration of the linear family spends exactly rho. */
  acc = run("account", NULL);
  print_message("account: rho_eff %.15g for rho 1\n", number(acc, "rho_eff"));
  assert_true(fabs(number(acc, "rho_eff") - 1.0) < 1e-9);

  dpd_output_free(acc);
  dpd_output_free(cmp);
  dpd_output_free(sde);
  dpd_output_free(ode);
  dpd_output_free(sim);
}

/* tune: the registered family's tunables (the table's "c eta0") drive the search. */
static void tune_takes_the_registered_family_tunables(void **state) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_problem *p = NULL;
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_tune_config tc = dpd_tune_config_default();
  dpd_tune_result res;
  dpd_schedule_kind kind;
  int params = 0, defaults = 0;
  char allowed[64];
  dpd_err err;
  (void)state;
  assert_int_equal(dpd_tune_family_params_get("linear", &kind, &params, &defaults, allowed,
                                              sizeof allowed, &err),
                   DPD_OK);
  assert_int_equal(kind, LINEAR_KIND);
  assert_int_equal(params, DPD_TUNE_C | DPD_TUNE_ETA0);
  assert_int_equal(defaults, DPD_TUNE_C | DPD_TUNE_ETA0);
  assert_string_equal(allowed, "c, eta0");
  assert_int_equal(dpd_tune_params_get(LINEAR_KIND), DPD_TUNE_C | DPD_TUNE_ETA0);
  assert_int_equal(dpd_tune_family_params_get("file:x.tsv", NULL, NULL, NULL, NULL, 0, &err),
                   DPD_EINVAL);
  assert_non_null(strstr(err.reason, "cosine, linear)"));

  pc.d = 200;
  pc.seed = 2385;
  assert_int_equal(dpd_linreg_problem_create(&pc, &p, &err), DPD_OK);
  sc.kind = LINEAR_KIND;
  sc.eta_min = 0.0;
  tc.ode.gamma = 0.25;
  tc.ode.zeta = 0.5;
  tc.ode.noise = UNIFORM_LAW;
  tc.ode.rho = 1.0;
  tc.ode.c = 0.5;
  tc.ode.rtol = 1e-8;
  tc.prescan = 5;
  tc.starts = 1;
  tc.threads = 1;
  if (dpd_tune_run(p, &sc, &tc, &res, &err) != DPD_OK) {
    print_error("tune: %s\n", err.reason);
    fail();
  }
  print_message("tune (linear, uniform): c %.4g eta0 %.4g risk %.6g, params %d\n", res.c,
                res.eta0, res.risk, res.params);
  assert_int_equal(res.params, DPD_TUNE_C | DPD_TUNE_ETA0);
  assert_int_equal(res.schedule.kind, LINEAR_KIND);
  assert_true(res.eta_sup < 2.0 / 0.25);
  assert_true(res.risk > 0.0 && isfinite(res.risk));
  {
    /* the optimum is no worse than the family's defaults at the same point */
    double risk_default;
    dpd_schedule_config at = res.schedule;
    at.eta0 = 1.0;
    assert_int_equal(dpd_tune_risk_eval(p, &at, res.c, &tc, &risk_default, &err), DPD_OK);
    assert_true(res.risk <= risk_default * (1.0 + 1e-9));
  }
  dpd_linreg_problem_free(p);
#if PLUGIN_TUNE_THROUGH_MODEL
  {
    static const char *const tune_keys[] = {"confirm_seeds", "0", NULL};
    dpd_output *out = run("tune", tune_keys);
    const cJSON *tuned = cJSON_GetObjectItemCaseSensitive(out->summary, "tuned");
    char *names = cJSON_PrintUnformatted(tuned);
    print_message("tune through the model: tuned %s\n", names != NULL ? names : "?");
    assert_string_equal(text(out, "schedule"), "linear");
    assert_non_null(names);
    assert_string_equal(names, "[\"c\",\"eta0\"]");
    free(names);
    dpd_output_free(out);
  }
#endif
}

/* The test-only model runs through the generic runner: setup, workspace_bytes, run, release. */
static void registered_model_runs_through_the_registry(void **state) {
  const dpd_model_type *m = dpd_model_lookup("coin");
  dpd_keys *keys = NULL;
  dpd_output *out = NULL;
  dpd_run_env env = dpd_run_env_default();
  dpd_err err;
  char list[256];
  size_t rows;
  const double *est;
  double mean, se, want;
  (void)state;
  assert_ptr_equal(m, &coin_model);
  dpd_model_list(list, sizeof list);
  assert_non_null(strstr(list, "coin"));
  assert_int_equal(dpd_model_register(&coin_model, &err), DPD_EINVAL); /* the name is taken */
  assert_int_equal(dpd_model_keys_create(m, "simulate", &keys, &err), DPD_OK);
  assert_int_equal(dpd_model_key_set(m, keys, "p", "0.2385", &err), DPD_OK);
  assert_int_equal(dpd_model_key_set(m, keys, "n", "4000", &err), DPD_OK);
  assert_int_equal(dpd_model_key_set(m, keys, "seeds", "40", &err), DPD_OK);
  assert_int_equal(dpd_model_key_set(m, keys, "zeta", "1", &err), DPD_EINVAL); /* linreg's */
  assert_int_equal(dpd_model_run(m, "ode", keys, &env, &out, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "simulate"));
  /* validate only: setup and the memory check, nothing run */
  env.validate_only = 1;
  assert_int_equal(dpd_model_run(m, "simulate", keys, &env, &out, &err), DPD_OK);
  assert_null(out);
  /* the memory estimate is the model's own, refused naming its driver */
  env.validate_only = 0;
  env.max_memory = 100;
  assert_int_equal(dpd_model_run(m, "simulate", keys, &env, &out, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'seeds'"));
  env.max_memory = 0;
  assert_int_equal(dpd_model_run(m, "simulate", keys, &env, &out, &err), DPD_OK);
  assert_non_null(out);
  est = column(out, "replicates.tsv", "estimate", &rows);
  assert_int_equal(rows, 40);
  mean = number(out, "estimate");
  se = number(out, "estimate_se");
  want = sqrt(0.2385 * (1.0 - 0.2385) / (4000.0 * 40.0));
  print_message("coin: estimate %.5f +- %.2g (p 0.2385, binomial SE %.2g)\n", mean, se, want);
  assert_true(fabs(mean - 0.2385) < 4.0 * want);
  assert_true(se > 0.6 * want && se < 1.5 * want);
  assert_true(est[0] >= 0.0 && est[0] <= 1.0);
  {
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(out->summary, "params");
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(params, "p")));
  }
  dpd_output_free(out);
  /* setup validates through the key table: p outside (0, 1) is refused naming it */
  assert_int_equal(dpd_model_key_set(m, keys, "p", "1.5", &err), DPD_OK);
  assert_int_equal(dpd_model_run(m, "simulate", keys, &env, &out, &err), DPD_EINVAL);
  assert_non_null(strstr(err.reason, "'p'"));
  assert_null(out);
  dpd_keys_free(keys);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(registered_entries_join_every_list),
      cmocka_unit_test(help_names_the_registered_family_and_law),
      cmocka_unit_test(registered_family_follows_its_formula),
      cmocka_unit_test(uniform_draws_have_the_law_moments),
      cmocka_unit_test(uniform_factors_match_monte_carlo_and_their_derivatives),
      cmocka_unit_test(linreg_commands_run_with_the_registered_family_and_law),
      cmocka_unit_test(tune_takes_the_registered_family_tunables),
      cmocka_unit_test(registered_model_runs_through_the_registry),
  };
  return cmocka_run_group_tests(tests, register_plugins, NULL);
}
