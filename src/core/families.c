/* The tables of schedule families (schedule.h) and label-noise laws (noise.h).
 * SPDX-License-Identifier: MIT
 *
 * One line per family or law: the names users type, the parameters each reads, one line of help.
 * Every "allowed: ..." of the keys `schedule` and `noise`, the keys that apply to a schedule
 * family and the parsing of `noise` come from here. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/text_impl.h"
#include "dpdyn/noise.h"
#include "dpdyn/schedule.h"

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

static const dpd_schedule_family families[] = {
    {"const", 0, DPD_SCHEDULE_CONST, eta0_only, "eta0 (output perturbation when private)"},
    {"sqrt", 0, DPD_SCHEDULE_SQRT, eta0_only, "eta0 sqrt(1 - t) (constant noise)"},
    {"hyperbolic", 0, DPD_SCHEDULE_HYPERBOLIC, hyperbolic, "eta0 / (1 + a t)"},
    {"optimal", 0, DPD_SCHEDULE_OPTIMAL, optimal, "c1 / (t + gamma max(c2, c3/rho))"},
    {"step", 0, DPD_SCHEDULE_STEP, step, "eta0 factor^j after the j-th of `drops` drops"},
    {"cosine", 0, DPD_SCHEDULE_COSINE, cosine, "eta_min + (eta0 - eta_min)(1 + cos(pi t))/2"},
    {"file", 1, DPD_SCHEDULE_TABLE, none, "linear interpolation of a table (columns t eta)"},
    {NULL, 0, DPD_SCHEDULE_CONST, NULL, NULL}};

const dpd_schedule_family *dpd_schedule_family_at(size_t i) {
  return i < sizeof families / sizeof families[0] - 1 ? &families[i] : NULL;
}

const dpd_schedule_family *dpd_schedule_family_lookup(const char *spec) {
  for (const dpd_schedule_family *f = families; f->name != NULL; f++) {
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
  size_t len = 0;
  buf[0] = '\0';
  for (const dpd_schedule_family *f = families; f->name != NULL && len < cap; f++) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%s%s", len ? ", " : "", f->name,
                            f->takes_path ? ":PATH" : "");
  }
}

static const dpd_noise_law_type laws[] = {
    {"gaussian", DPD_NOISE_GAUSSIAN, NULL, "N(0, zeta^2)"},
    {"laplace", DPD_NOISE_LAPLACE, NULL, "Laplace with scale zeta / sqrt(2)"},
    {"rademacher", DPD_NOISE_RADEMACHER, NULL, "+-zeta with probability 1/2 each"},
    {"student", DPD_NOISE_STUDENT, "NU", "Student-t, NU > 2 degrees of freedom, variance zeta^2"},
    {NULL, DPD_NOISE_GAUSSIAN, NULL, NULL}};

const dpd_noise_law_type *dpd_noise_law_type_at(size_t i) {
  return i < sizeof laws / sizeof laws[0] - 1 ? &laws[i] : NULL;
}

int dpd_noise_spec_parse(const char *text, dpd_noise_spec *spec, dpd_err *err) {
  char allowed[256];
  size_t len = 0;
  spec->nu = 0.0;
  for (const dpd_noise_law_type *t = laws; t->name != NULL; t++) {
    size_t n = strlen(t->name);
    if (strncmp(text, t->name, n) != 0) {
      continue;
    }
    if (t->parameter == NULL && text[n] == '\0') {
      spec->law = t->law;
      return DPD_OK;
    }
    if (t->parameter != NULL && text[n] == ':') {
      const char *v = text + n + 1;
      double nu = dpd__decimal_span(v, v + strlen(v)) ? strtod(v, NULL) : NAN;
      if (!(nu > 2.0) || !isfinite(nu)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'noise': '%s' (allowed: %s:%s with finite %s > 2, so "
                        "that the variance is finite)",
                        text, t->name, t->parameter, t->parameter);
      }
      spec->law = t->law;
      spec->nu = nu;
      return DPD_OK;
    }
  }
  allowed[0] = '\0';
  for (const dpd_noise_law_type *t = laws; t->name != NULL && len < sizeof allowed; t++) {
    len +=
        (size_t)snprintf(allowed + len, sizeof allowed - len, "%s%s%s%s", len ? ", " : "", t->name,
                         t->parameter != NULL ? ":" : "", t->parameter != NULL ? t->parameter : "");
  }
  return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'noise': '%s' (allowed: %s)", text, allowed);
}
