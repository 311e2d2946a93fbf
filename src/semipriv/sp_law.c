/* Semi-private learning: the law's list format and constraints, account's constants, the
 * theory's bound curves, and the memory model of a law run (sp_files_impl.h).
 * SPDX-License-Identifier: MIT
 *
 * References: Pinto, Hu, Yang & Sanyal (seed 003; arXiv:2306.03962), Theorem 1, Proposition 4,
 * notes C.2 (the default zeta); Bassily, Smith & Thakurta (arXiv:1405.7085), Noisy-SGD's sigma. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/text_impl.h"
#include "semipriv/sp_files_impl.h"

#define SP_MAX_ZMAX 1e150 /* the law's bound z_max: its square and the margins stay finite */

/* One entry of the list: a finite number > 0 (*v), else 0. */
static int lambda_entry(const char *p, const char *end, char *trimmed, size_t cap, double *v) {
  char tok[64];
  size_t len = (size_t)(end - p);
  if (len >= sizeof tok) {
    len = sizeof tok - 1;
  }
  memcpy(tok, p, len);
  tok[len] = '\0';
  return dpd__trim_copy(trimmed, cap, tok) >= 0 &&
         dpd__decimal_span(trimmed, trimmed + strlen(trimmed)) &&
         (*v = strtod(trimmed, NULL)) > 0.0 && isfinite(*v);
}

int dpd__sp_lambda_parse(const char *text, size_t want, double *lambda, size_t cap, size_t *count,
                         dpd_err *err) {
  const char *p = text != NULL ? text : "";
  *count = 0;
  while (*p == ' ') {
    p++;
  }
  for (int more = *p != '\0' && strcmp(p, "none") != 0; more;) {
    const char *end = strchr(p, ',');
    char trimmed[64];
    double v;
    end = end != NULL ? end : p + strlen(p);
    if (!lambda_entry(p, end, trimmed, sizeof trimmed, &v)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'lambda': '%s' (allowed: a comma list of k_true - 1 = "
                      "%zu finite numbers > 0; entry %zu is '%s')",
                      text, want, *count + 1, trimmed);
    }
    if (*count >= cap) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'lambda': more than %zu entries (allowed: k_true - 1 = "
                      "%zu)",
                      cap, want);
    }
    lambda[(*count)++] = v;
    more = *end != '\0';
    p = end + 1;
  }
  if (*count != want) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'lambda': '%s' has %zu entr%s (allowed: k_true - 1 = %zu "
                    "finite numbers > 0, comma-separated%s)",
                    text, *count, *count == 1 ? "y" : "ies", want,
                    want == 0 ? "; none for k_true = 1" : "");
  }
  return DPD_OK;
}

/* The law's bound z_max = sqrt((c + trunc s)^2 + trunc^2 sum(lambda) + tau^2 + trunc^2 nu^2 m),
 * m = d - k_true - 1, must stay below 1e150 (c = 1e300 made it inf, the margin 0, and the error
 * named 'zeta', a key the user never set). Names the key of the largest term, with the largest
 * value it may take with the other keys as given. */
static int zmax_check(const dpd_semipriv_gen_config *g, dpd_err *err) {
  const double T = g->trunc, m = (double)(g->d - g->k_true - 1);
  double lam_sum = 0.0, ta, tb, tc, td, top, limit;
  const char *key;
  for (size_t j = 0; j < g->n_lambda; j++) {
    lam_sum += g->lambda[j];
  }
  ta = g->c + T * g->s;
  tb = T * sqrt(lam_sum);
  tc = g->tau;
  td = T * g->nu * sqrt(m);
  if (sqrt(ta * ta + tb * tb + tc * tc + td * td) < SP_MAX_ZMAX) {
    return DPD_OK;
  }
  top = fmax(fmax(ta, tb), fmax(tc, td));
  if (top == ta && g->c >= T * g->s) {
    key = "c";
    limit = SP_MAX_ZMAX - T * g->s;
  } else if (top == ta && g->s >= T) {
    key = "s";
    limit = (SP_MAX_ZMAX - g->c) / T;
  } else if (top == tb && sqrt(lam_sum) >= T) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'lambda': sum %g (allowed: sum(lambda) <= (1e150 / "
                    "trunc)^2 = %g: the law's bound z_max must stay below 1e150)",
                    lam_sum, (SP_MAX_ZMAX / T) * (SP_MAX_ZMAX / T));
  } else if (top == tc) {
    key = "tau";
    limit = SP_MAX_ZMAX;
  } else if (top == td && g->nu * sqrt(m) >= T) {
    key = "nu";
    limit = SP_MAX_ZMAX / (T * sqrt(m));
  } else {
    key = "trunc";
    limit = SP_MAX_ZMAX / sqrt(g->s * g->s + lam_sum + g->nu * g->nu * m);
  }
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for '%s': %g (allowed: %s <= %g with the other keys as given: "
                  "the law's bound z_max = sqrt((c + trunc s)^2 + trunc^2 sum(lambda) + tau^2 + "
                  "trunc^2 nu^2 (d - k_true - 1)) must stay below 1e150)",
                  key,
                  key[0] == 'c'   ? g->c
                  : key[0] == 's' ? g->s
                  : key[1] == 'a' ? g->tau
                  : key[0] == 'n' ? g->nu
                                  : T,
                  key, limit);
}

int dpd__sp_law_check(const dpd_semipriv_gen_config *g, dpd_err *err) {
  if (g->d < g->k_true + 1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'd': %zu (allowed: k_true + 1 = %zu .. 46340)", g->d,
                    g->k_true + 1);
  }
  if (!(g->a * g->c - sqrt(1.0 - g->a * g->a) * g->tau > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'tau': %g (allowed: tau < a c / sqrt(1 - a^2) = %g, else "
                    "the law has no margin)",
                    g->tau, g->a * g->c / sqrt(1.0 - g->a * g->a));
  }
  return zmax_check(g, err);
}

/* Q and the generator's arrays, and per thread the library's workspace (about d^2 + (512 + 3 k +
 * 45) d + n (k + 1) doubles, semipriv.h). */
double dpd__sp_law_bytes(size_t d_, size_t k_, size_t n_, size_t seeds, int threads, int run) {
  const double d = (double)d_, k = (double)k_, n = (double)n_;
  double t = 1.0, bytes = 8.0 * (2.0 * d * d + 8.0 * d);
  if (run) {
    const int max = threads > 0 ? threads : omp_get_max_threads();
    t = (double)((size_t)max < seeds ? (size_t)max : seeds);
    bytes += 8.0 * t * (d * d + (512.0 + 3.0 * k + 45.0) * d + n * (k + 1.0)) +
             8.0 * (double)seeds * DPD_SEMIPRIV_METRIC_COUNT;
  }
  return bytes;
}

int dpd__sp_account_eval(const dpd_semipriv_gen *gen, const dpd_semipriv_run_config *cfg, size_t d,
                         dpd_semipriv_result *acc, dpd_err *err) {
  int status;
  memset(acc, 0, sizeof *acc);
  acc->k = cfg->k;
  acc->d = d;
  acc->steps = cfg->steps == 0 ? cfg->n * cfg->n : cfg->steps;
  if (gen != NULL) {
    acc->gamma0 = gen->margin_guaranteed;
    acc->xi0 = dpd_semipriv_gen_xi(gen, acc->k);
    acc->zeta = isnan(cfg->zeta) ? acc->gamma0 * (1.0 - acc->xi0 - 0.1 * acc->gamma0) : cfg->zeta;
  } else {
    acc->gamma0 = acc->xi0 = NAN;
    acc->zeta = cfg->zeta;
  }
  if (cfg->trainer == DPD_SEMIPRIV_TRAINER_DPSGD) { /* sp_dpsgd.c: z and T at n */
    dpd_dpsgd_config dp;
    acc->zeta = acc->L = NAN;
    return dpd__sp_dpsgd_prepare(cfg, cfg->n, 2, acc, &dp, err);
  }
  if (!(acc->zeta > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'zeta': %g = gamma0 (1 - xi0 - 0.1 gamma0) (allowed: > 0; "
                    "give 'zeta')",
                    acc->zeta);
  }
  acc->L = 1.0 / acc->zeta;
  if ((status = dpd__sp_calibrate(cfg, cfg->n, acc->L, acc->steps, acc, NULL, err)) < 0) {
    return status;
  }
  acc->eta1 = dpd_semipriv_sgd_eta(1, cfg->n, acc->L, acc->k, acc->sigma, 1.0);
  return DPD_OK;
}
