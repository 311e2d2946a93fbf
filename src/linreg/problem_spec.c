/* The text forms of a linreg problem and the memory models of its kernels (problem_spec_impl.h).
 * SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/table_impl.h"
#include "linreg/problem_spec_impl.h"

void dpd__linreg_inputs_free(dpd__linreg_inputs *in) {
  free(in->spec_cols[0]);
  free(in->spec_cols[1]);
  free(in->mult);
  free(in->theta_cols[0]);
  memset(in, 0, sizeof *in);
}

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int levels_bad(const char *spec, dpd_err *err) {
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for 'spectrum': '%s' (allowed: levels:L1*M1,L2*M2,... with "
                  "eigenvalues L > 0 and integer multiplicities M >= 1)",
                  spec);
}

/* Parses "levels:L1*M1,L2*M2,..." into values/mult. */
static int parse_levels(const char *spec, dpd__linreg_inputs *in, size_t *count, size_t *total,
                        dpd_err *err) {
  const char *s = spec + strlen("levels:");
  size_t cap = 1;
  for (const char *q = s; *q; q++) {
    cap += *q == ',';
  }
  in->spec_cols[0] = malloc(cap * sizeof *in->spec_cols[0]);
  in->mult = malloc(cap * sizeof *in->mult);
  if (in->spec_cols[0] == NULL || in->mult == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  *count = 0;
  *total = 0;
  while (*s) {
    char *end;
    double value = strtod(s, &end);
    unsigned long long m = 1;
    if (end == s || !isfinite(value) || value <= 0.0) {
      return levels_bad(spec, err);
    }
    s = end;
    if (*s == '*') {
      s++;
      if (*s < '0' || *s > '9') {
        return levels_bad(spec, err);
      }
      errno = 0;
      m = strtoull(s, &end, 10);
      if (end == s || m == 0) {
        return levels_bad(spec, err);
      }
      if (errno == ERANGE || m > LINREG_MAX_DIM - *total) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': '%s' has multiplicities summing to more "
                        "than %zu (allowed: d = sum of multiplicities <= %zu)",
                        spec, LINREG_MAX_DIM, LINREG_MAX_DIM);
      }
      s = end;
    }
    *total += (size_t)m;
    in->spec_cols[0][*count] = value;
    in->mult[(*count)++] = (size_t)m;
    if (*s == ',') {
      if (*++s == '\0') {
        return levels_bad(spec, err);
      }
    } else if (*s != '\0') {
      return levels_bad(spec, err);
    }
  }
  return *count == 0 ? levels_bad(spec, err) : DPD_OK;
}

/* Reads a spectrum file: one eigenvalue per row and an optional integer multiplicity. */
static int read_spectrum_file(const char *path, size_t max_memory, dpd__linreg_inputs *in,
                              size_t *rows, size_t *total, dpd_err *err) {
  size_t ncols;
  int status =
      dpd__read_table("spectrum", path, 1, 2, max_memory, in->spec_cols, rows, &ncols, err);
  if (status < 0) {
    return status;
  }
  if ((in->mult = malloc(*rows * sizeof *in->mult)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  *total = 0;
  for (size_t k = 0; k < *rows; k++) {
    double lam = in->spec_cols[0][k];
    double m = ncols == 2 ? in->spec_cols[1][k] : 1.0;
    if (!(lam > 0.0)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': eigenvalue %g on data row %zu of '%s' "
                      "(allowed: > 0)",
                      lam, k + 1, path);
    }
    if (!(m >= 1.0) || m != floor(m)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': multiplicity %g on data row %zu of '%s' "
                      "(allowed: integer >= 1)",
                      m, k + 1, path);
    }
    if (m > (double)(LINREG_MAX_DIM - *total)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': multiplicities in '%s' sum to more than "
                      "%zu by data row %zu (allowed: d = sum of multiplicities <= %zu)",
                      path, LINREG_MAX_DIM, k + 1, LINREG_MAX_DIM);
    }
    in->mult[k] = (size_t)m;
    *total += in->mult[k];
  }
  return DPD_OK;
}

int dpd__linreg_spectrum_parse(const char *spec, size_t max_memory, dpd__linreg_inputs *in,
                               dpd_linreg_problem_config *pc, size_t *spectrum_d, dpd_err *err) {
  int status = DPD_OK;
  size_t nvalues = 0;
  *spectrum_d = 0;
  if (starts_with(spec, "file:")) {
    status = read_spectrum_file(spec + 5, max_memory, in, &nvalues, spectrum_d, err);
    pc->spectrum = DPD_SPECTRUM_LIST;
  } else if (starts_with(spec, "levels:")) {
    status = parse_levels(spec, in, &nvalues, spectrum_d, err);
    pc->spectrum = DPD_SPECTRUM_LEVELS;
  } else if (starts_with(spec, "powerlaw:")) {
    char *end;
    pc->alpha = strtod(spec + 9, &end);
    if (end == spec + 9 || *end != '\0' || !(pc->alpha > 0.0) || !isfinite(pc->alpha)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': '%s' (allowed: powerlaw:ALPHA with finite "
                      "ALPHA > 0)",
                      spec);
    }
    pc->spectrum = DPD_SPECTRUM_POWERLAW;
  } else if (strcmp(spec, "iso") == 0) {
    pc->spectrum = DPD_SPECTRUM_ISO;
  } else {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': '%s' (allowed: iso, levels:L1*M1,..., "
                    "powerlaw:ALPHA, file:PATH)",
                    spec);
  }
  pc->values = in->spec_cols[0];
  pc->mult = in->mult;
  pc->nvalues = nvalues;
  return status;
}

/* theta* from a file: d components in the eigenbasis, each small enough to square. */
static int read_theta_file(const char *path, size_t d, size_t max_memory, dpd__linreg_inputs *in,
                           dpd_err *err) {
  size_t rows, ncols;
  int status =
      dpd__read_table("theta_star", path, 1, 1, max_memory, in->theta_cols, &rows, &ncols, err);
  if (status < 0) {
    return status;
  }
  if (rows != d) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'theta_star': '%s' has %zu values but d = %zu (allowed: "
                    "exactly d values, one per line, in the eigenbasis)",
                    path, rows, d);
  }
  for (size_t i = 0; i < rows; i++) {
    /* the squared norm and the ODE's theta_i^2 terms must stay finite (1e200 gave a CVode
     * error, exit 2) */
    if (!(fabs(in->theta_cols[0][i]) <= 1e150)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'theta_star': %g on data line %zu of '%s' (allowed: "
                      "|theta_i| <= 1e150, so that the squares the run forms stay finite)",
                      in->theta_cols[0][i], i + 1, path);
    }
  }
  return DPD_OK;
}

int dpd__linreg_theta_parse(const char *theta, size_t d, size_t max_memory, int keep_norm,
                            dpd__linreg_inputs *in, dpd_linreg_problem_config *pc,
                            double *file_norm, dpd_err *err) {
  int status;
  double norm2 = 0.0;
  *file_norm = NAN;
  if (strcmp(theta, "random") == 0 || strcmp(theta, "flat") == 0) {
    pc->theta = theta[0] == 'r' ? DPD_THETA_RANDOM : DPD_THETA_FLAT;
    return DPD_OK;
  }
  if (!starts_with(theta, "file:")) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'theta_star': '%s' (allowed: random, flat, file:PATH)",
                    theta);
  }
  if ((status = read_theta_file(theta + 5, d, max_memory, in, err)) < 0) {
    return status;
  }
  pc->theta = DPD_THETA_GIVEN;
  pc->theta_given = in->theta_cols[0];
  if (!keep_norm) {
    return DPD_OK;
  }
  /* One rule: theta_norm given rescales the file's vector to that norm; not given, the
   * components are used as they are and theta_norm records their norm. */
  for (size_t i = 0; i < d; i++) {
    norm2 += in->theta_cols[0][i] * in->theta_cols[0][i];
  }
  if (!(norm2 > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'theta_star': every component in '%s' is 0 (allowed: a "
                    "nonzero theta*: the initial excess risk would be 0)",
                    theta + 5);
  }
  pc->theta_norm = 0.0;
  *file_norm = sqrt(norm2);
  return DPD_OK;
}

int dpd__linreg_spectral_direct(const dpd_linreg_problem_config *pc) {
  if (pc->spectrum == DPD_SPECTRUM_POWERLAW && pc->alpha * log10((double)pc->d) > 250.0) {
    return 0; /* eigenvalues that underflow: the full problem handles them */
  }
  return pc->spectrum != DPD_SPECTRUM_LIST &&
         (pc->theta == DPD_THETA_RANDOM || pc->theta == DPD_THETA_FLAT);
}

/* The distinct eigenvalues of the spectrum (groups of the full problem). */
static double spectrum_groups(const dpd_linreg_problem_config *pc) {
  return pc->spectrum == DPD_SPECTRUM_ISO        ? 1.0
         : pc->spectrum == DPD_SPECTRUM_POWERLAW ? (double)pc->d
                                                 : (double)pc->nvalues;
}

double dpd__linreg_ode_groups(const dpd_linreg_problem_config *pc, int compress,
                              int bands_per_decade) {
  const double groups = spectrum_groups(pc);
  if (compress && pc->spectrum == DPD_SPECTRUM_POWERLAW) {
    /* at most 2 x 32 nodes per band, bands_per_decade per decade of d^alpha */
    const double bands = bands_per_decade * pc->alpha * log10((double)pc->d) + 2.0;
    return fmin(groups, 64.0 * bands);
  }
  return groups;
}

double dpd__linreg_problem_bytes(const dpd_linreg_problem_config *pc, int full, double ode_groups) {
  if (!full) {
    return 8.0 * 4.0 * ode_groups + (pc->theta == DPD_THETA_RANDOM ? 8.0 * 4096.0 : 0.0);
  }
  return 8.0 * (3.0 * (double)pc->d + 2.0 * (double)pc->nvalues) + 24.0 * spectrum_groups(pc);
}

double dpd__linreg_ode_bytes(double ode_groups) {
  return 8.0 * 20.0 * ode_groups;
}

void dpd__linreg_sim_bytes(size_t d, size_t n, size_t seeds, size_t grid, double threads,
                           int with_sde, double *by_d, double *by_n, double *by_seeds) {
  const double g = (double)grid;
  *by_d += 8.0 * threads * (2.0 * (double)d + 16.0) * (with_sde ? 2.0 : 1.0);
  *by_n += 16.0 * (double)n * (with_sde ? 2.0 : 1.0);
  /* per replicate: its risk row and clipping row on the grid, three numbers (clip total,
   * before release, released) and the driver's record of it (sim 4, sde 6 doubles) */
  *by_seeds += 8.0 * (double)seeds * ((2.0 * g + 7.0) + (with_sde ? 2.0 * g + 9.0 : 0.0));
}
