/* The schedule families (schedule.h): each family is one block of formulas below and one line of
 * the table, and families registered at run time join the same lists.
 * SPDX-License-Identifier: MIT
 *
 * A family is a dpd_schedule_family: the name users type, the config fields it reads (the keys
 * of a model's table with the same names carry their ranges), its tunable parameters, one line
 * of help, and its behaviour: validation, eta~(t), d/dt eta~^2, its jumps, sup eta~ and whether
 * it never increases. The schedule object (schedule.c), `simulate`, `sde`, `ode`, `tune`, every
 * "allowed: ..." list and --help all learn the families from here.
 *
 * Formulas (t in [0, 1]; docs/math.md §1.4, §1.8):
 *   const       eta0
 *   sqrt        eta0 sqrt(1 - t)
 *   hyperbolic  eta0 / (1 + a t)
 *   optimal     c1 / (t + m),  m = gamma max(c2, c3/rho)  (c3/rho = 0 when rho = inf)
 *   file        linear interpolation of a table (t_k, eta_k) covering [0, 1]
 *   step        eta0 factor^j on [t_j, t_{j+1}), t_j = j/(drops+1), j = 1..drops
 *   cosine      eta_min + (eta0 - eta_min)(1 + cos(pi t))/2 */
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/schedule.h"

static const double pi = 3.14159265358979323846264338327950288;

static int check_positive(const char *name, double v, dpd_err *err) {
  if (!(v > 0.0) || !isfinite(v)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %g (allowed: finite, > 0)", name, v);
  }
  return DPD_OK;
}

static int never_increases(const dpd_schedule_config *c) {
  (void)c;
  return 1;
}

static double zero_dsq(const dpd_schedule_config *c, double t) {
  (void)c;
  (void)t;
  return 0.0;
}

static double eta0_sup(const dpd_schedule_config *c) { return c->eta0; }

static int eta0_validate(const dpd_schedule_config *c, dpd_err *err) {
  return check_positive("eta0", c->eta0, err);
}

/* ---- const: eta0 ---------------------------------------------------------------------------- */

static double const_eval(const dpd_schedule_config *c, double t) {
  (void)t;
  return c->eta0;
}

/* ---- sqrt: eta0 sqrt(1 - t) (constant calibrated noise) -------------------------------------- */

static double sqrt_eval(const dpd_schedule_config *c, double t) {
  return c->eta0 * sqrt(fmax(0.0, 1.0 - t));
}

/* Finite at t = 1, where it equals -eta0^2. */
static double sqrt_dsq(const dpd_schedule_config *c, double t) {
  (void)t;
  return -c->eta0 * c->eta0;
}

/* ---- hyperbolic: eta0 / (1 + a t) ----------------------------------------------------------- */

static int hyperbolic_validate(const dpd_schedule_config *c, dpd_err *err) {
  int status = check_positive("eta0", c->eta0, err);
  if (status < 0) {
    return status;
  }
  if (!(c->a > -1.0) || !isfinite(c->a)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'a': %g (allowed: finite, > -1)", c->a);
  }
  return DPD_OK;
}

static double hyperbolic_eval(const dpd_schedule_config *c, double t) {
  return c->eta0 / (1.0 + c->a * t);
}

static double hyperbolic_dsq(const dpd_schedule_config *c, double t) {
  double u = 1.0 + c->a * t;
  return -2.0 * c->eta0 * c->eta0 * c->a / (u * u * u);
}

static double hyperbolic_sup(const dpd_schedule_config *c) {
  return c->a >= 0.0 ? c->eta0 : c->eta0 / (1.0 + c->a);
}

static int hyperbolic_nonincreasing(const dpd_schedule_config *c) { return c->a >= 0.0; }

/* a < 0 increases: the sup is eta~(1). */
static double hyperbolic_sup_ratio(const dpd_schedule_config *c) {
  return c->a < 0.0 ? 1.0 / (1.0 + c->a) : 1.0;
}

/* ---- optimal: c1 / (t + gamma max(c2, c3/rho)) ---------------------------------------------- */

static int optimal_validate(const dpd_schedule_config *c, dpd_err *err) {
  int status;
  if ((status = check_positive("c1", c->c1, err)) < 0 ||
      (status = check_positive("c2", c->c2, err)) < 0 ||
      (status = check_positive("gamma", c->gamma, err)) < 0) {
    return status;
  }
  if (!(c->c3 >= 0.0) || !isfinite(c->c3)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'c3': %g (allowed: finite, >= 0)", c->c3);
  }
  if (!(c->rho > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'rho': %g (allowed: > 0 or inf)", c->rho);
  }
  return DPD_OK;
}

/* The offset gamma max(c2, c3/rho). */
static double optimal_offset(const dpd_schedule_config *c) {
  double c3_over_rho = isinf(c->rho) ? 0.0 : c->c3 / c->rho;
  return c->gamma * fmax(c->c2, c3_over_rho);
}

static double optimal_eval(const dpd_schedule_config *c, double t) {
  return c->c1 / (t + optimal_offset(c));
}

static double optimal_dsq(const dpd_schedule_config *c, double t) {
  double u = t + optimal_offset(c);
  return -2.0 * c->c1 * c->c1 / (u * u * u);
}

static double optimal_sup(const dpd_schedule_config *c) { return c->c1 / optimal_offset(c); }

/* ---- file: linear interpolation of a table (t_k, eta_k) ------------------------------------- */

static int table_validate(const dpd_schedule_config *c, dpd_err *err) {
  if (c->table_len < 2 || c->table_t == NULL || c->table_eta == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': table with %zu rows (allowed: >= 2 rows)",
                    c->table_len);
  }
  for (size_t k = 0; k < c->table_len; k++) {
    double tk = c->table_t[k], ek = c->table_eta[k];
    if (!isfinite(tk) || !isfinite(ek)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'schedule': row %zu has a non-finite entry", k + 1);
    }
    if (ek < 0.0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'schedule': eta = %g at row %zu (allowed: >= 0)", ek,
                      k + 1);
    }
    if (k > 0 && !(tk > c->table_t[k - 1])) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'schedule': t = %g at row %zu is not above the "
                      "previous t = %g (allowed: strictly increasing t)",
                      tk, k + 1, c->table_t[k - 1]);
    }
  }
  if (c->table_t[0] > 0.0 || c->table_t[c->table_len - 1] < 1.0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': table covers [%g, %g] (allowed: a range "
                    "containing [0, 1])",
                    c->table_t[0], c->table_t[c->table_len - 1]);
  }
  return DPD_OK;
}

/* Segment k of the table with t in [t_k, t_{k+1}] (binary search). */
static size_t table_segment(const dpd_schedule_config *c, double t) {
  size_t lo = 0, hi = c->table_len - 1;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->table_t[mid] <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

static double table_eval(const dpd_schedule_config *c, double t) {
  size_t k = table_segment(c, t);
  double w = (t - c->table_t[k]) / (c->table_t[k + 1] - c->table_t[k]);
  return c->table_eta[k] + w * (c->table_eta[k + 1] - c->table_eta[k]);
}

static double table_dsq(const dpd_schedule_config *c, double t) {
  size_t k = table_segment(c, t);
  double slope = (c->table_eta[k + 1] - c->table_eta[k]) / (c->table_t[k + 1] - c->table_t[k]);
  return 2.0 * table_eval(c, t) * slope;
}

/* The interpolant is piecewise linear: its maximum on [0, 1] is at a node inside [0, 1] or at
 * an end point. */
static double table_sup(const dpd_schedule_config *c) {
  double m = fmax(table_eval(c, 0.0), table_eval(c, 1.0));
  for (size_t k = 0; k < c->table_len; k++) {
    if (c->table_t[k] > 0.0 && c->table_t[k] < 1.0) {
      m = fmax(m, c->table_eta[k]);
    }
  }
  return m;
}

static int table_nonincreasing(const dpd_schedule_config *c) {
  double prev = table_eval(c, 0.0);
  for (size_t k = 0; k < c->table_len; k++) {
    if (c->table_t[k] > 0.0 && c->table_t[k] < 1.0) {
      if (c->table_eta[k] > prev) {
        return 0;
      }
      prev = c->table_eta[k];
    }
  }
  return table_eval(c, 1.0) <= prev;
}

/* ---- step: eta0 factor^j after the j-th of `drops` equally spaced drops ---------------------- */

static int step_validate(const dpd_schedule_config *c, dpd_err *err) {
  int status;
  if ((status = check_positive("eta0", c->eta0, err)) < 0 ||
      (status = check_positive("factor", c->factor, err)) < 0) {
    return status;
  }
  if (c->drops < 1 || c->drops > 1000000) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'drops': %zu (allowed: 1 <= drops <= 1e6)",
                    c->drops);
  }
  return DPD_OK;
}

/* Number of drops at or before t: drop j sits at t_j = j/(drops+1). */
static size_t step_index(const dpd_schedule_config *c, double t) {
  double u = t * (double)(c->drops + 1);
  size_t j;
  if (!(u > 0.0)) {
    return 0;
  }
  j = u >= (double)c->drops ? c->drops : (size_t)u;
  /* (size_t)u can be one short when j/(drops+1) rounds above t*(drops+1); check exactly. */
  while (j < c->drops && (double)(j + 1) / (double)(c->drops + 1) <= t) {
    j++;
  }
  while (j > 0 && (double)j / (double)(c->drops + 1) > t) {
    j--;
  }
  return j;
}

static double step_eval(const dpd_schedule_config *c, double t) {
  return c->eta0 * pow(c->factor, (double)step_index(c, t));
}

/* Between drops d/dt eta~^2 = 0; the drops themselves are the jumps. */
static size_t step_jumps(const dpd_schedule_config *c, double *t, double *dsq, size_t cap) {
  for (size_t j = 1; j <= c->drops && j <= cap; j++) {
    double before = c->eta0 * pow(c->factor, (double)(j - 1));
    double after = before * c->factor;
    t[j - 1] = (double)j / (double)(c->drops + 1);
    dsq[j - 1] = (before - after) * (before + after);
  }
  return c->drops;
}

static double step_sup(const dpd_schedule_config *c) {
  return c->factor <= 1.0 ? c->eta0 : c->eta0 * pow(c->factor, (double)c->drops);
}

static int step_nonincreasing(const dpd_schedule_config *c) { return c->factor <= 1.0; }

/* factor > 1 increases: the sup is the last plateau. */
static double step_sup_ratio(const dpd_schedule_config *c) {
  return c->factor > 1.0 ? pow(c->factor, (double)c->drops) : 1.0;
}

/* ---- cosine: eta_min + (eta0 - eta_min)(1 + cos(pi t))/2 ------------------------------------ */

static int cosine_validate(const dpd_schedule_config *c, dpd_err *err) {
  int status = check_positive("eta0", c->eta0, err);
  if (status < 0) {
    return status;
  }
  if (!(c->eta_min >= 0.0) || !isfinite(c->eta_min)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'eta_min': %g (allowed: finite, >= 0)",
                    c->eta_min);
  }
  return DPD_OK;
}

static double cosine_eval(const dpd_schedule_config *c, double t) {
  return c->eta_min + (c->eta0 - c->eta_min) * 0.5 * (1.0 + cos(pi * t));
}

static double cosine_dsq(const dpd_schedule_config *c, double t) {
  return -2.0 * cosine_eval(c, t) * (c->eta0 - c->eta_min) * 0.5 * pi * sin(pi * t);
}

static double cosine_sup(const dpd_schedule_config *c) { return fmax(c->eta0, c->eta_min); }

static int cosine_nonincreasing(const dpd_schedule_config *c) { return c->eta_min <= c->eta0; }

/* ---- The table ------------------------------------------------------------------------------ */

#define P(key, field, integer)                                                                     \
  { key, offsetof(dpd_schedule_config, field), integer }
static const dpd_schedule_param eta0_only[] = {P("eta0", eta0, 0), {NULL, 0, 0}};
static const dpd_schedule_param hyperbolic[] = {P("eta0", eta0, 0), P("a", a, 0), {NULL, 0, 0}};
static const dpd_schedule_param optimal[] = {
    P("c1", c1, 0), P("c2", c2, 0), P("c3", c3, 0), {NULL, 0, 0}};
static const dpd_schedule_param step[] = {
    P("eta0", eta0, 0), P("factor", factor, 0), P("drops", drops, 1), {NULL, 0, 0}};
static const dpd_schedule_param cosine[] = {
    P("eta0", eta0, 0), P("eta_min", eta_min, 0), {NULL, 0, 0}};
static const dpd_schedule_param none[] = {{NULL, 0, 0}};
#undef P

/* name, takes_path, kind, params, summary, tunables, tune_default,
 * validate, eval, dsq_eval, jumps, sup, is_nonincreasing, sup_ratio */
static const dpd_schedule_family families[] = {
    {"const", 0, DPD_SCHEDULE_CONST, eta0_only, "eta0 (output perturbation when private)",
     "c eta0", "c eta0", eta0_validate, const_eval, zero_dsq, NULL, eta0_sup, never_increases,
     NULL},
    {"sqrt", 0, DPD_SCHEDULE_SQRT, eta0_only, "eta0 sqrt(1 - t) (constant noise)", "c eta0",
     "c eta0", eta0_validate, sqrt_eval, sqrt_dsq, NULL, eta0_sup, never_increases, NULL},
    {"hyperbolic", 0, DPD_SCHEDULE_HYPERBOLIC, hyperbolic, "eta0 / (1 + a t)", "c eta0 a",
     "c eta0", hyperbolic_validate, hyperbolic_eval, hyperbolic_dsq, NULL, hyperbolic_sup,
     hyperbolic_nonincreasing, hyperbolic_sup_ratio},
    {"optimal", 0, DPD_SCHEDULE_OPTIMAL, optimal, "c1 / (t + gamma max(c2, c3/rho))",
     "c c1 c2 c3", "c c1 c2 c3", optimal_validate, optimal_eval, optimal_dsq, NULL, optimal_sup,
     never_increases, NULL},
    {"step", 0, DPD_SCHEDULE_STEP, step, "eta0 factor^j after the j-th of `drops` drops",
     "c eta0", "c eta0", step_validate, step_eval, zero_dsq, step_jumps, step_sup,
     step_nonincreasing, step_sup_ratio},
    {"cosine", 0, DPD_SCHEDULE_COSINE, cosine, "eta_min + (eta0 - eta_min)(1 + cos(pi t))/2",
     "c eta0", "c eta0", cosine_validate, cosine_eval, cosine_dsq, NULL, cosine_sup,
     cosine_nonincreasing, NULL},
    {"file", 1, DPD_SCHEDULE_TABLE, none, "linear interpolation of a table (columns t eta)", NULL,
     NULL, table_validate, table_eval, table_dsq, NULL, table_sup, table_nonincreasing, NULL}};
enum { NFAMILIES = sizeof families / sizeof families[0] };

/* ---- The registry --------------------------------------------------------------------------- */

/* Families registered at run time: the process-wide state of the table (schedule.h). Writers
 * serialise on `registering`; readers see the first `nregistered` slots, each written before the
 * count that publishes it (release/acquire). */
#define FAMILIES_REGISTERED_MAX 32
static const dpd_schedule_family *registered[FAMILIES_REGISTERED_MAX];
static atomic_size_t nregistered;
static atomic_flag registering = ATOMIC_FLAG_INIT;

const dpd_schedule_family *dpd_schedule_family_at(size_t i) {
  if (i < NFAMILIES) {
    return &families[i];
  }
  return i - NFAMILIES < atomic_load_explicit(&nregistered, memory_order_acquire)
             ? registered[i - NFAMILIES]
             : NULL;
}

const dpd_schedule_family *dpd_schedule_family_get(dpd_schedule_kind kind) {
  const dpd_schedule_family *f;
  for (size_t i = 0; (f = dpd_schedule_family_at(i)) != NULL; i++) {
    if (f->kind == kind) {
      return f;
    }
  }
  return NULL;
}

const dpd_schedule_family *dpd_schedule_family_lookup(const char *spec) {
  const dpd_schedule_family *f;
  for (size_t i = 0; spec != NULL && (f = dpd_schedule_family_at(i)) != NULL; i++) {
    size_t len = strlen(f->name);
    if (strncmp(spec, f->name, len) == 0 &&
        (f->takes_path ? spec[len] == ':' && spec[len + 1] != '\0' : spec[len] == '\0')) {
      return f;
    }
  }
  return NULL;
}

int dpd_schedule_family_reads(const dpd_schedule_family *f, const char *key) {
  for (const dpd_schedule_param *p = f->params; p->key != NULL; p++) {
    if (strcmp(p->key, key) == 0) {
      return 1;
    }
  }
  return 0;
}

void dpd_schedule_family_list(char *buf, size_t cap) {
  const dpd_schedule_family *f;
  size_t len = 0;
  if (cap == 0) {
    return;
  }
  buf[0] = '\0';
  for (size_t i = 0; (f = dpd_schedule_family_at(i)) != NULL && len < cap; i++) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%s%s", len ? ", " : "", f->name,
                            f->takes_path ? ":PATH" : "");
  }
}

const char *dpd_schedule_family_tunables_get(const dpd_schedule_family *f) {
  return f != NULL && f->tunables != NULL ? f->tunables : "";
}

/* Whether a family of the table is called `name` (a path family too). */
static int name_taken(const char *name) {
  const dpd_schedule_family *g;
  for (size_t i = 0; (g = dpd_schedule_family_at(i)) != NULL; i++) {
    if (strcmp(g->name, name) == 0) {
      return 1;
    }
  }
  return 0;
}

int dpd_schedule_family_register(const dpd_schedule_family *f, dpd_err *err) {
  int status = DPD_OK;
  size_t n;
  if (f == NULL || f->name == NULL || f->name[0] == '\0' || strchr(f->name, ':') != NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'name': '%s' (allowed: a non-empty name without ':')",
                    f == NULL || f->name == NULL ? "(null)" : f->name);
  }
  if ((int)f->kind < DPD_SCHEDULE_KIND_USER) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'kind': %d of family '%s' (allowed: DPD_SCHEDULE_KIND_USER "
                    "= %d or above)",
                    (int)f->kind, f->name, DPD_SCHEDULE_KIND_USER);
  }
  if (f->params == NULL || f->validate == NULL || f->eval == NULL || f->dsq_eval == NULL ||
      f->sup == NULL || f->is_nonincreasing == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'family': '%s' lacks %s (allowed: params, validate, eval, "
                    "dsq_eval, sup and is_nonincreasing all given)",
                    f->name,
                    f->params == NULL     ? "params"
                    : f->validate == NULL ? "validate"
                    : f->eval == NULL     ? "eval"
                    : f->dsq_eval == NULL ? "dsq_eval"
                    : f->sup == NULL      ? "sup"
                                          : "is_nonincreasing");
  }
  while (atomic_flag_test_and_set_explicit(&registering, memory_order_acquire)) {
  }
  n = atomic_load_explicit(&nregistered, memory_order_relaxed);
  if (name_taken(f->name)) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'name': '%s' (allowed: a name no other family has)",
                      f->name);
  } else if (dpd_schedule_family_get(f->kind) != NULL) {
    status = DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'kind': %d of family '%s' (allowed: a kind no other "
                      "family has)",
                      (int)f->kind, f->name);
  } else if (n == FAMILIES_REGISTERED_MAX) {
    status = DPD_FAIL(err, DPD_ENOMEM,
                      "registering family '%s': the registry holds %d families already", f->name,
                      FAMILIES_REGISTERED_MAX);
  } else {
    registered[n] = f;
    atomic_store_explicit(&nregistered, n + 1, memory_order_release);
  }
  atomic_flag_clear_explicit(&registering, memory_order_release);
  return status;
}
