/* dpdyn simulate | ode | compare | account for model=linreg.
 * SPDX-License-Identifier: MIT
 *
 * Validates every parameter before anything runs or is written, then calls
 * the library and writes summary.json, trajectory.tsv (the training
 * trajectory on the grid; the row at t = 1 is the iterate before the release
 * noise), release.tsv (before/after the last-iterate noise) and, when asked,
 * a gnuplot figure. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/error_impl.h"
#include "dpdyn/sde.h"

typedef struct linreg_run {
  size_t d, n;
  double gamma, zeta, c, rho, delta, epsilon;
  int have_delta, have_epsilon;
  dpd_noise_spec noise;
  double dt; /* sde step (0 = 1/n) */
  int with_sde;
  size_t seeds, grid;
  unsigned long long seed;
  int threads;
  int plot;
  dpd_ode_method method;
  double rtol, atol;
  dpd_linreg_problem *problem;
  dpd_schedule *schedule;
  dpd_schedule_config schedule_cfg; /* as created (table pointers into sched_cols) */
  /* storage for file inputs (borrowed by the configs during create) */
  double *spec_cols[2];
  double *theta_cols[1];
  double *sched_cols[2];
  size_t *mult;
  dpd_linreg_problem_config pc; /* validated, built once every key has been checked */
  double memory_estimate;       /* bytes the command is expected to need (check_memory) */
  int d_from_spectrum;          /* d implied by a levels:/file: spectrum (not given) */
} linreg_run;

static void run_free(linreg_run *r) {
  dpd_linreg_problem_free(r->problem);
  dpd_schedule_free(r->schedule);
  for (int k = 0; k < 2; k++) {
    free(r->spec_cols[k]);
    free(r->sched_cols[k]);
  }
  free(r->theta_cols[0]);
  free(r->mult);
  memset(r, 0, sizeof *r);
}

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Parses "levels:L1*M1,L2*M2,..." into values/mult. */
static int parse_levels(const char *spec, linreg_run *r, size_t *count, dpd_err *err) {
  const char *s = spec + strlen("levels:");
  size_t cap = 1, total = 0;
  for (const char *q = s; *q; q++) {
    cap += *q == ',';
  }
  r->spec_cols[0] = malloc(cap * sizeof *r->spec_cols[0]);
  r->mult = malloc(cap * sizeof *r->mult);
  if (r->spec_cols[0] == NULL || r->mult == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  *count = 0;
  while (*s) {
    char *end;
    double value = strtod(s, &end);
    unsigned long long m = 1;
    if (end == s || !isfinite(value) || value <= 0.0) {
      goto bad;
    }
    s = end;
    if (*s == '*') {
      s++;
      if (*s < '0' || *s > '9') {
        goto bad;
      }
      errno = 0;
      m = strtoull(s, &end, 10);
      if (end == s || m == 0) {
        goto bad;
      }
      if (errno == ERANGE || m > CLI_MAX_DIM - total) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': '%s' has multiplicities summing to more "
                        "than %zu (allowed: d = sum of multiplicities <= %zu)",
                        spec, CLI_MAX_DIM, CLI_MAX_DIM);
      }
      s = end;
    }
    total += (size_t)m;
    r->spec_cols[0][*count] = value;
    r->mult[*count] = (size_t)m;
    (*count)++;
    if (*s == ',') {
      s++;
      if (*s == '\0') {
        goto bad;
      }
    } else if (*s != '\0') {
      goto bad;
    }
  }
  if (*count == 0) {
    goto bad;
  }
  return DPD_OK;
bad:
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for 'spectrum': '%s' (allowed: levels:L1*M1,L2*M2,... with "
                  "eigenvalues L > 0 and integer multiplicities M >= 1)",
                  spec);
}

static int parse_problem(cli_params *p, linreg_run *r, dpd_err *err) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  const char *spec = cli_get_text(p, "spectrum");
  const char *theta = cli_get_text(p, "theta_star");
  int status;
  size_t nvalues = 0, spectrum_d = 0;

  if (starts_with(spec, "file:")) {
    size_t rows, ncols;
    if ((status = cli_read_table("spectrum", spec + 5, 1, 2, p->max_memory, r->spec_cols, &rows,
                                 &ncols, err)) < 0) {
      return status;
    }
    r->mult = malloc(rows * sizeof *r->mult);
    if (r->mult == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < rows; k++) {
      double lam = r->spec_cols[0][k];
      double m = ncols == 2 ? r->spec_cols[1][k] : 1.0;
      if (!(lam > 0.0)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': eigenvalue %g on data row %zu of '%s' "
                        "(allowed: > 0)",
                        lam, k + 1, spec + 5);
      }
      if (!(m >= 1.0) || m != floor(m)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': multiplicity %g on data row %zu of '%s' "
                        "(allowed: integer >= 1)",
                        m, k + 1, spec + 5);
      }
      if (m > (double)(CLI_MAX_DIM - spectrum_d)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': multiplicities in '%s' sum to more than "
                        "%zu by data row %zu (allowed: d = sum of multiplicities <= %zu)",
                        spec + 5, CLI_MAX_DIM, k + 1, CLI_MAX_DIM);
      }
      r->mult[k] = (size_t)m;
      spectrum_d += r->mult[k];
    }
    nvalues = rows;
    pc.spectrum = DPD_SPECTRUM_LIST;
  } else if (starts_with(spec, "levels:")) {
    if ((status = parse_levels(spec, r, &nvalues, err)) < 0) {
      return status;
    }
    for (size_t k = 0; k < nvalues; k++) {
      spectrum_d += r->mult[k];
    }
    pc.spectrum = DPD_SPECTRUM_LEVELS;
  } else if (starts_with(spec, "powerlaw:")) {
    char *end;
    pc.alpha = strtod(spec + 9, &end);
    if (end == spec + 9 || *end != '\0' || !(pc.alpha > 0.0) || !isfinite(pc.alpha)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': '%s' (allowed: powerlaw:ALPHA with finite "
                      "ALPHA > 0)",
                      spec);
    }
    pc.spectrum = DPD_SPECTRUM_POWERLAW;
  } else if (strcmp(spec, "iso") == 0) {
    pc.spectrum = DPD_SPECTRUM_ISO;
  } else {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'spectrum': '%s' (allowed: iso, levels:L1*M1,..., "
                    "powerlaw:ALPHA, file:PATH)",
                    spec);
  }

  /* d: given, or implied by a levels/file spectrum. */
  if (cli_is_given(p, "d") || spectrum_d == 0) {
    if ((status = cli_get_size(p, "d", 1, CLI_MAX_DIM, &r->d, err)) < 0) {
      return status;
    }
    if (spectrum_d != 0 && spectrum_d != r->d) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'spectrum': multiplicities sum to %zu but d = %zu "
                      "(allowed: sum equal to d)",
                      spectrum_d, r->d);
    }
  } else {
    r->d = spectrum_d;
    r->d_from_spectrum = 1;
  }
  pc.d = r->d;
  pc.values = r->spec_cols[0];
  pc.mult = r->mult;
  pc.nvalues = nvalues;
  pc.seed = r->seed;

  if ((status = cli_get_real(p, "theta_norm", 0.0, 0, INFINITY, 0, 0, &pc.theta_norm, err)) < 0) {
    return status;
  }
  if (strcmp(theta, "random") == 0) {
    pc.theta = DPD_THETA_RANDOM;
  } else if (strcmp(theta, "flat") == 0) {
    pc.theta = DPD_THETA_FLAT;
  } else if (starts_with(theta, "file:")) {
    size_t rows, ncols;
    if ((status = cli_read_table("theta_star", theta + 5, 1, 1, p->max_memory, r->theta_cols, &rows,
                                 &ncols, err)) < 0) {
      return status;
    }
    if (rows != r->d) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'theta_star': '%s' has %zu values but d = %zu (allowed: "
                      "exactly d values, one per line, in the eigenbasis)",
                      theta + 5, rows, r->d);
    }
    pc.theta = DPD_THETA_GIVEN;
    pc.theta_given = r->theta_cols[0];
    /* One rule: theta_norm given rescales the file's vector to that norm; not given, the
     * components are used as they are and theta_norm records their norm. */
    if (!cli_is_given(p, "theta_norm")) {
      double norm2 = 0.0;
      for (size_t i = 0; i < rows; i++) {
        norm2 += r->theta_cols[0][i] * r->theta_cols[0][i];
      }
      if (!(norm2 > 0.0)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'theta_star': every component in '%s' is 0 (allowed: "
                        "a nonzero theta*: the initial excess risk would be 0)",
                        theta + 5);
      }
      pc.theta_norm = 0.0; /* use the file's components as they are */
      if (cli_set_effective(p, "theta_norm", sqrt(norm2)) < 0) {
        return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      }
    }
  } else {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'theta_star': '%s' (allowed: random, flat, file:PATH)",
                    theta);
  }
  r->pc = pc;
  return DPD_OK;
}

static int setup_schedule(const cli_params *p, linreg_run *r, dpd_err *err) {
  dpd_schedule_config sc = dpd_schedule_config_default();
  const char *name = cli_get_text(p, "schedule");
  const char *limit_key = "eta0";
  int status;
  double sup;
  if (strcmp(name, "const") == 0 || strcmp(name, "sqrt") == 0 || strcmp(name, "hyperbolic") == 0) {
    sc.kind = strcmp(name, "const") == 0  ? DPD_SCHEDULE_CONST
              : strcmp(name, "sqrt") == 0 ? DPD_SCHEDULE_SQRT
                                          : DPD_SCHEDULE_HYPERBOLIC;
    if ((status = cli_get_real(p, "eta0", 0.0, 0, INFINITY, 0, 0, &sc.eta0, err)) < 0) {
      return status;
    }
    if (sc.kind == DPD_SCHEDULE_HYPERBOLIC &&
        (status = cli_get_real(p, "a", -1.0, 0, INFINITY, 0, 0, &sc.a, err)) < 0) {
      return status;
    }
  } else if (strcmp(name, "optimal") == 0) {
    sc.kind = DPD_SCHEDULE_OPTIMAL;
    limit_key = "c1";
    if ((status = cli_get_real(p, "c1", 0.0, 0, INFINITY, 0, 0, &sc.c1, err)) < 0 ||
        (status = cli_get_real(p, "c2", 0.0, 0, INFINITY, 0, 0, &sc.c2, err)) < 0 ||
        (status = cli_get_real(p, "c3", 0.0, 1, INFINITY, 0, 0, &sc.c3, err)) < 0) {
      return status;
    }
    sc.gamma = r->gamma;
    sc.rho = r->rho;
  } else if (strcmp(name, "step") == 0) {
    sc.kind = DPD_SCHEDULE_STEP;
    if ((status = cli_get_real(p, "eta0", 0.0, 0, INFINITY, 0, 0, &sc.eta0, err)) < 0 ||
        (status = cli_get_real(p, "factor", 0.0, 0, INFINITY, 0, 0, &sc.factor, err)) < 0 ||
        (status = cli_get_size(p, "drops", 1, 1000000, &sc.drops, err)) < 0) {
      return status;
    }
  } else if (strcmp(name, "cosine") == 0) {
    sc.kind = DPD_SCHEDULE_COSINE;
    if ((status = cli_get_real(p, "eta0", 0.0, 0, INFINITY, 0, 0, &sc.eta0, err)) < 0 ||
        (status = cli_get_real(p, "eta_min", 0.0, 1, INFINITY, 0, 0, &sc.eta_min, err)) < 0) {
      return status;
    }
  } else if (starts_with(name, "file:")) {
    size_t rows, ncols;
    sc.kind = DPD_SCHEDULE_TABLE;
    limit_key = "schedule";
    if ((status = cli_read_table("schedule", name + 5, 2, 2, p->max_memory, r->sched_cols, &rows,
                                 &ncols, err)) < 0) {
      return status;
    }
    sc.table_t = r->sched_cols[0];
    sc.table_eta = r->sched_cols[1];
    sc.table_len = rows;
  } else {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': '%s' (allowed: const, sqrt, hyperbolic, "
                    "optimal, step, cosine, file:PATH)",
                    name);
  }
  r->schedule_cfg = sc;
  if ((status = dpd_schedule_create(&sc, &r->schedule, err)) < 0) {
    return status;
  }
  sup = dpd_schedule_sup(r->schedule);
  /* Name the key that pushes sup eta~ over the limit: eta0 when it alone is too large, else
   * the key that makes the schedule grow above eta0. */
  if (sc.eta0 < 2.0 / r->gamma) {
    if (sc.kind == DPD_SCHEDULE_STEP && sc.factor > 1.0) {
      limit_key = "factor";
    } else if (sc.kind == DPD_SCHEDULE_COSINE && sc.eta_min > sc.eta0) {
      limit_key = "eta_min";
    } else if (sc.kind == DPD_SCHEDULE_HYPERBOLIC && sc.a < 0.0) {
      limit_key = "a";
    }
  }
  if (!(sup < 2.0 / r->gamma)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %s gives sup eta~ = %g (allowed: sup eta~ < 2/gamma "
                    "= %g, the stability limit)",
                    limit_key, cli_get_text(p, limit_key), sup, 2.0 / r->gamma);
  }
  if (isfinite(r->rho) && !dpd_schedule_is_nonincreasing(r->schedule)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': '%s' increases on [0, 1] (allowed: a "
                    "non-increasing schedule when rho is finite)",
                    name);
  }
  return DPD_OK;
}

/* noise = gaussian | laplace | rademacher | student:NU */
static int parse_noise(const char *text, dpd_noise_spec *noise, dpd_err *err) {
  noise->nu = 0.0;
  if (strcmp(text, "gaussian") == 0) {
    noise->law = DPD_NOISE_GAUSSIAN;
  } else if (strcmp(text, "laplace") == 0) {
    noise->law = DPD_NOISE_LAPLACE;
  } else if (strcmp(text, "rademacher") == 0) {
    noise->law = DPD_NOISE_RADEMACHER;
  } else if (starts_with(text, "student:")) {
    char *end;
    noise->law = DPD_NOISE_STUDENT;
    noise->nu = strtod(text + 8, &end);
    if (end == text + 8 || *end != '\0' || !(noise->nu > 2.0) || !isfinite(noise->nu)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'noise': '%s' (allowed: student:NU with finite NU > 2, "
                      "so that the variance is finite)",
                      text);
    }
  } else {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'noise': '%s' (allowed: gaussian, laplace, rademacher, "
                    "student:NU)",
                    text);
  }
  return DPD_OK;
}

/* The memory a linreg command needs, estimated from the validated sizes before anything large
 * is allocated (bytes; measured against peak RSS in tests/cli/test_limits.sh). The key named in
 * an error is the one whose term dominates. */
static int check_memory(const cli_params *p, const char *command, linreg_run *r, dpd_err *err) {
  const double d = (double)r->d, n = (double)r->n;
  const double threads = r->threads > 0 ? r->threads : omp_get_max_threads();
  const double groups = r->pc.spectrum == DPD_SPECTRUM_ISO        ? 1.0
                        : r->pc.spectrum == DPD_SPECTRUM_POWERLAW ? d
                                                                  : (double)r->pc.nvalues;
  const int sim = strcmp(command, "simulate") == 0 || strcmp(command, "compare") == 0 ||
                  strcmp(command, "sde") == 0 || r->with_sde;
  const int ode = strcmp(command, "ode") == 0 || strcmp(command, "compare") == 0 ||
                  strcmp(command, "tune") == 0;
  double by_d = 8.0 * (3.0 * d + 2.0 * (double)r->pc.nvalues) + 24.0 * groups;
  double by_n = 0.0, by_seeds = 0.0;
  const char *driver;
  if (sim) {
    by_d += 8.0 * threads * (2.0 * d + 16.0) * (r->with_sde ? 2.0 : 1.0);
    by_n += 16.0 * n * (r->with_sde ? 2.0 : 1.0);
    /* per replicate: its risk row and clipping row on the grid, and three numbers */
    by_seeds += 8.0 * (double)r->seeds * (2.0 * (double)r->grid + 3.0) * (r->with_sde ? 2.0 : 1.0);
  }
  if (ode) {
    by_d += 8.0 * 20.0 * groups; /* CVODE's BDF history and work vectors, the ODE's own */
  }
  if (strcmp(command, "account") == 0) {
    by_n += 16.0 * n;
  }
  if (by_n >= by_d && by_n >= by_seeds) {
    driver = cli_is_given(p, "n") || !cli_is_given(p, "gamma") ? "n" : "gamma";
  } else if (by_seeds >= by_d) {
    driver = "seeds";
  } else {
    driver = r->d_from_spectrum ? "spectrum" : "d";
  }
  r->memory_estimate = by_d + by_n + by_seeds + 8.0 * 8.0 * (double)r->grid;
  return cli_check_memory(p, r->memory_estimate, driver, err);
}

/* The names of the ODE methods whose flags include all of `with` and none of `without` (0, 0:
 * all), ", "-separated. */
static void method_names(unsigned with, unsigned without, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (const dpd_ode_method_type *const *m = dpd_ode_method_types; *m != NULL; m++) {
    if (((*m)->flags & with) == with && ((*m)->flags & without) == 0 && used < size) {
      int k = snprintf(buf + used, size - used, "%s%s", used > 0 ? ", " : "", (*m)->name);
      used += k > 0 ? (size_t)k : 0;
    }
  }
}

/* The requirements of the ODE method (its capability flags), checked with the other keys
 * before anything runs, in messages that name the user's keys: ode and compare check the
 * schedule and c; tune varies c and the schedule from several threads and writes the bounds,
 * so it takes only thread-safe methods without requirements that give the bounds. */
static int check_method(const cli_params *p, const char *command, const linreg_run *r,
                        dpd_err *err) {
  const unsigned needs = DPD_ODE_NEEDS_CONST_SCHEDULE | DPD_ODE_NEEDS_NO_CLIPPING;
  const dpd_ode_method_type *type = dpd_ode_method_type_get(r->method);
  const char *fallback = dpd_ode_method_type_get(dpd_ode_config_default().method)->name;
  double eta0, eta1;
  const unsigned tune_gives = DPD_ODE_THREAD_SAFE | DPD_ODE_GIVES_BOUNDS;
  if (strcmp(command, "tune") == 0 &&
      ((type->flags & needs) != 0 || (type->flags & tune_gives) != tune_gives)) {
    char allowed[128];
    method_names(tune_gives, needs, allowed, sizeof allowed);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'method': '%s' with tune (allowed for tune: %s; tune "
                    "solves from several threads at varying c and schedules, and writes the "
                    "bounds)",
                    type->name, allowed);
  }
  if (!(strcmp(command, "ode") == 0 || strcmp(command, "compare") == 0)) {
    return DPD_OK;
  }
  eta0 = dpd_schedule_eval(r->schedule, 0.0);
  eta1 = dpd_schedule_eval(r->schedule, 1.0);
  if ((type->flags & DPD_ODE_NEEDS_CONST_SCHEDULE) &&
      (!dpd_schedule_is_nonincreasing(r->schedule) || eta0 != eta1)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': %s with eta~(0) = %g, eta~(1) = %g is not "
                    "constant (allowed with method = %s: a constant schedule; use "
                    "method = %s otherwise)",
                    cli_get_text(p, "schedule"), eta0, eta1, type->name, fallback);
  }
  if ((type->flags & DPD_ODE_NEEDS_NO_CLIPPING) && isfinite(r->c)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c': %g with method = %s (allowed: c = inf; "
                    "clipping makes the equation nonlinear, use method = %s)",
                    r->c, type->name, fallback);
  }
  return DPD_OK;
}

/* Keys a linreg command uses: the common ones, its own, and those of its schedule family. A flag
 * outside them has no effect: a note says so (scripts pass one set of flags to several
 * commands, so it is not an error). */
void cli_linreg_note_unused(const cli_params *p, const char *command) {
  static const char *const common[] = {
      "model",      "d",          "n",    "gamma", "zeta",       "noise", "spectrum",
      "theta_star", "theta_norm", "c",    "rho",   "epsilon",    "delta", "schedule",
      "seed",       "threads",    "grid", "out",   "max_memory", "plot",  NULL};
  static const struct {
    const char *name;
    const char *const keys[11];
  } own[] = {{"simulate", {"seeds", NULL}},
             {"sde", {"seeds", "dt", NULL}},
             {"ode", {"method", "rtol", "atol", NULL}},
             {"compare", {"seeds", "method", "rtol", "atol", "sde", "dt", NULL}},
             {"account", {NULL}},
             {"tune",
              {"seeds", "method", "rtol", "atol", "tune", "c_min", "c_max", "heatmap",
               "heatmap_eta", "confirm_seeds", NULL}}};
  static const struct {
    const char *prefix;
    const char *const keys[4];
  } family[] = {{"const", {"eta0", NULL}},
                {"sqrt", {"eta0", NULL}},
                {"hyperbolic", {"eta0", "a", NULL}},
                {"optimal", {"c1", "c2", "c3", NULL}},
                {"step", {"eta0", "factor", "drops", NULL}},
                {"cosine", {"eta0", "eta_min", NULL}},
                {"file:", {NULL}}};
  const char *allowed[64];
  const char *schedule = cli_get_text(p, "schedule");
  size_t n = 0;
  char what[96];
  if (strcmp(command, "account") == 0 && cli_is_given(p, "sequence")) {
    return; /* its own keys are checked strictly */
  }
  for (size_t k = 0; common[k] != NULL; k++) {
    allowed[n++] = common[k];
  }
  for (size_t c = 0; c < sizeof own / sizeof own[0]; c++) {
    if (strcmp(own[c].name, command) == 0) {
      for (size_t k = 0; own[c].keys[k] != NULL; k++) {
        allowed[n++] = own[c].keys[k];
      }
    }
  }
  for (size_t f = 0; f < sizeof family / sizeof family[0]; f++) {
    size_t len = strlen(family[f].prefix);
    if (strncmp(schedule, family[f].prefix, len) == 0 &&
        (family[f].prefix[len - 1] == ':' || schedule[len] == '\0')) {
      for (size_t k = 0; family[f].keys[k] != NULL; k++) {
        allowed[n++] = family[f].keys[k];
      }
    }
  }
  allowed[n] = NULL;
  snprintf(what, sizeof what, "%s with schedule=%.40s", command, schedule);
  cli_params_note_unused(p, allowed, what);
}

/* Everything that does not depend on the command. */
static int setup(cli_params *p, const char *command, linreg_run *r, dpd_err *err) {
  int status;
  const char *model = cli_get_text(p, "model");
  const char *noise = cli_get_text(p, "noise");
  const char *method = cli_get_text(p, "method");
  size_t threads;
  static const char *const rf_only[] = {"p",     "n_test",      "activation", "target",
                                        "input", "eta",         "steps",      "clip",
                                        "sigma", "calibration", NULL};
  if (strcmp(model, "linreg") != 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'model': '%s' (allowed for %s: linreg%s)",
                    model, command,
                    strcmp(command, "ode") == 0 || strcmp(command, "sde") == 0 ||
                            strcmp(command, "tune") == 0
                        ? "; model=rf has simulate, ou, compare and account"
                        : ", rf");
  }
  for (size_t k = 0; rf_only[k] != NULL; k++) {
    if (cli_is_given(p, rf_only[k])) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "key '%s' does not apply to model=linreg (it is a model=rf key; set "
                      "--model=rf, or see 'dpdyn %s --help')",
                      rf_only[k], command);
    }
  }
  if ((status = parse_noise(noise, &r->noise, err)) < 0) {
    return status;
  }
  if (cli_is_given(p, "delta")) {
    if ((status = cli_get_real(p, "delta", 0.0, 0, 1.0, 0, 0, &r->delta, err)) < 0) {
      return status;
    }
    r->have_delta = 1;
  }
  if (cli_is_given(p, "epsilon")) {
    if ((status = cli_get_real(p, "epsilon", 0.0, 0, INFINITY, 0, 0, &r->epsilon, err)) < 0) {
      return status;
    }
    if (!r->have_delta) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "missing value for 'delta' (allowed: 0 < delta < 1; required with epsilon)");
    }
    if (cli_is_given(p, "rho")) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'epsilon': give either rho or (epsilon, delta), not both");
    }
    if ((status = dpd_privacy_rho_from_eps(r->epsilon, r->delta, &r->rho, err)) < 0) {
      return status;
    }
    r->have_epsilon = 1;
  } else if ((status = cli_get_real(p, "rho", 0.0, 0, INFINITY, 0, 1, &r->rho, err)) < 0) {
    return status;
  }
  if ((status = cli_get_real(p, "zeta", 0.0, 1, INFINITY, 0, 0, &r->zeta, err)) < 0 ||
      (status = cli_get_real(p, "c", 0.0, 0, INFINITY, 0, 1, &r->c, err)) < 0 ||
      (status = cli_get_size(p, "seeds", 1, (size_t)1 << 24, &r->seeds, err)) < 0 ||
      (status = cli_get_size(p, "grid", 2, (size_t)1 << 24, &r->grid, err)) < 0 ||
      (status = cli_get_size(p, "threads", 0, 4096, &threads, err)) < 0 ||
      (status = cli_get_u64(p, "seed", &r->seed, err)) < 0 ||
      (status = cli_get_real(p, "rtol", 0.0, 0, 1.0, 0, 0, &r->rtol, err)) < 0 ||
      (status = cli_get_real(p, "atol", 0.0, 0, INFINITY, 0, 0, &r->atol, err)) < 0) {
    return status;
  }
  r->threads = (int)threads;
  r->noise.zeta = r->zeta;
  if (cli_is_given(p, "dt")) {
    if ((status = cli_get_real(p, "dt", 0.0, 0, 1.0, 1, 0, &r->dt, err)) < 0) {
      return status;
    }
  }
  {
    size_t v;
    if ((status = cli_get_size(p, "sde", 0, 1, &v, err)) < 0) {
      return status;
    }
    r->with_sde = strcmp(command, "sde") == 0 || (strcmp(command, "compare") == 0 && v == 1);
  }
  if (isfinite(r->rho) && isinf(r->c)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c': inf with rho = %g (allowed: finite c > 0 when rho is "
                    "finite: the noise is calibrated to the clipping threshold)",
                    r->rho);
  }
  if (dpd_ode_method_lookup(method) == NULL) {
    char allowed[128];
    method_names(0, 0, allowed, sizeof allowed);
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'method': '%s' (allowed: %s)", method,
                    allowed);
  }
  r->method = dpd_ode_method_lookup(method)->id;
  r->plot = strcmp(command, "compare") == 0;
  if (cli_is_given(p, "plot")) {
    size_t v;
    if ((status = cli_get_size(p, "plot", 0, 1, &v, err)) < 0) {
      return status;
    }
    r->plot = (int)v;
  }
  if ((status = parse_problem(p, r, err)) < 0) {
    return status;
  }
  /* n, or gamma = d/n. */
  if (cli_is_given(p, "n")) {
    if ((status = cli_get_size(p, "n", 1, (size_t)1 << 40, &r->n, err)) < 0) {
      return status;
    }
    if (cli_is_given(p, "gamma")) {
      double g;
      if ((status = cli_get_real(p, "gamma", 0.0, 0, INFINITY, 0, 0, &g, err)) < 0) {
        return status;
      }
      if (fabs(g * (double)r->n - (double)r->d) > 0.5) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'gamma': %g is inconsistent with d/n = %zu/%zu "
                        "(allowed: give n or gamma, or both with gamma = d/n)",
                        g, r->d, r->n);
      }
    }
  } else if (cli_is_given(p, "gamma")) {
    double g, nn;
    if ((status = cli_get_real(p, "gamma", 0.0, 0, INFINITY, 0, 0, &g, err)) < 0) {
      return status;
    }
    nn = round((double)r->d / g);
    if (!(nn >= 1.0) || nn > 1e12) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'gamma': %g gives n = d/gamma = %g (allowed: 1 <= n <= "
                      "1e12)",
                      g, nn);
    }
    r->n = (size_t)nn;
  } else {
    return DPD_FAIL(err, DPD_EINVAL,
                    "missing value for 'n' (allowed: integer n >= 1, or give gamma = d/n > 0)");
  }
  r->gamma = (double)r->d / (double)r->n;
  if (cli_set_effective(p, "d", (double)r->d) < 0 || cli_set_effective(p, "n", (double)r->n) < 0 ||
      cli_set_effective(p, "gamma", r->gamma) < 0 || cli_set_effective(p, "rho", r->rho) < 0) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if ((status = setup_schedule(p, r, err)) < 0 || (status = check_method(p, command, r, err)) < 0 ||
      (status = check_memory(p, command, r, err)) < 0) {
    return status;
  }
  /* Every key is valid and the run fits in memory: build the problem. */
  return dpd_linreg_problem_create(&r->pc, &r->problem, err);
}

static void add_privacy_json(cJSON *root, const linreg_run *r) {
  double rho_z = 0.5 * r->rho * r->rho;
  cli_json_number(root, "rho", r->rho);
  cli_json_number(root, "zcdp", rho_z);
  if (r->have_delta) {
    double eps = INFINITY;
    if (isfinite(r->rho)) {
      dpd_privacy_eps_tight(rho_z, r->delta, &eps, NULL);
    }
    cli_json_number(root, "delta", r->delta);
    cli_json_number(root, "epsilon_bun_steinke", dpd_privacy_eps_bun_steinke(rho_z, r->delta));
    cli_json_number(root, "epsilon_tight", eps);
  }
}

static cJSON *summary_new(const cli_params *p, const linreg_run *r) {
  cJSON *root = cJSON_CreateObject();
  cJSON *params = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "command", p->command);
  cJSON_AddStringToObject(root, "model", "linreg");
  cJSON_AddStringToObject(root, "version", dpd_version());
  cli_json_number(root, "seed", (double)r->seed);
  cJSON_AddNumberToObject(root, "d", (double)r->d);
  cJSON_AddNumberToObject(root, "n", (double)r->n);
  cJSON_AddNumberToObject(root, "gamma", r->gamma);
  cJSON_AddStringToObject(root, "noise_law", dpd_noise_law_name(r->noise.law));
  if (r->noise.law == DPD_NOISE_STUDENT) {
    cJSON_AddNumberToObject(root, "noise_nu", r->noise.nu);
  }
  cJSON_AddStringToObject(root, "schedule", dpd_schedule_name(r->schedule));
  cJSON_AddNumberToObject(root, "initial_excess_risk", dpd_linreg_initial_risk(r->problem));
  cJSON_AddNumberToObject(root, "memory_estimate_bytes", round(r->memory_estimate));
  add_privacy_json(root, r);
  cli_params_to_json(p, params);
  cJSON_AddItemToObject(root, "params", params);
  return root;
}

static int write_table(cli_out *o, const cli_params *p, const char *name, const char *figure,
                       const char *columns, size_t rows, size_t ncols, const double *const *cols,
                       dpd_err *err) {
  char *tmp;
  FILE *f = cli_out_open(o, name, &tmp, err);
  if (f == NULL) {
    return err->status;
  }
  cli_write_header(f, p, figure, columns);
  for (size_t i = 0; i < rows; i++) {
    for (size_t k = 0; k < ncols; k++) {
      fprintf(f, k == 0 ? "%.10g" : " %.10g", cols[k][i]);
    }
    fputc('\n', f);
  }
  return cli_out_commit(o, f, tmp, name, err);
}

/* Human-readable summary on stdout: every number of the summary, one per line. */
static void print_summary(const cJSON *root, const char *command, const linreg_run *r) {
  printf("# dpdyn %s %s (model linreg, d = %zu, n = %zu, schedule %s, seed %llu)\n", dpd_version(),
         command, r->d, r->n, dpd_schedule_name(r->schedule), r->seed);
  cli_print_summary(root);
}

static void add_epsilons(cJSON *root, double rho, double delta, const char *suffix) {
  char key[64];
  double rz = 0.5 * rho * rho, eps = INFINITY;
  if (isfinite(rho)) {
    dpd_privacy_eps_tight(rz, delta, &eps, NULL);
  }
  snprintf(key, sizeof key, "epsilon_bun_steinke%s", suffix);
  cli_json_number(root, key, dpd_privacy_eps_bun_steinke(rz, delta));
  snprintf(key, sizeof key, "epsilon_tight%s", suffix);
  cli_json_number(root, key, eps);
}

static int write_summary(cli_out *o, cJSON *root, double start, dpd_err *err) {
  cli_json_number(root, "wall_seconds", cli_now() - start);
  return cli_out_json(o, "summary.json", root, err);
}

/* dpdyn account --sequence FILE: rho_eff of an arbitrary (eta_k, sigma_k) sequence. */
static int run_account_sequence(cli_params *p, double start, dpd_err *err) {
  const char *path = cli_get_text(p, "sequence");
  double *cols[2] = {NULL, NULL}, delta = 0.0, rho_eff;
  size_t rows = 0, ncols = 0;
  int status, code = CLI_EXIT_OK, have_delta = cli_is_given(p, "delta");
  cJSON *root, *params;
  cli_out o;
  static const char *const keys[] = {"model", "sequence", "delta", "out", "max_memory", NULL};
  /* Only the keys of this mode (a --d or --rho here would be silently ignored otherwise); the
   * output directory is checked before the file is read. */
  if ((status = cli_params_restrict(p, keys, "account --sequence", err)) < 0 ||
      (have_delta && (status = cli_get_real(p, "delta", 0.0, 0, 1.0, 0, 0, &delta, err)) < 0) ||
      (status = cli_out_init(&o, cli_get_text(p, "out"), err)) < 0) {
    return cli_exit_code(status);
  }
  if ((status = cli_read_table("sequence", path, 2, 2, p->max_memory, cols, &rows, &ncols, err)) <
      0) {
    cli_out_free(&o);
    return cli_exit_code(status);
  }
  for (size_t k = 0; k < rows; k++) {
    if (cols[0][k] < 0.0 || cols[1][k] < 0.0) {
      DPD_FAIL(err, DPD_EINVAL,
               "invalid value for 'sequence': row %zu of '%s' has eta = %g, sigma = %g (allowed: "
               "eta >= 0, sigma >= 0)",
               k + 1, path, cols[0][k], cols[1][k]);
      free(cols[0]);
      free(cols[1]);
      cli_out_free(&o);
      return CLI_EXIT_USAGE;
    }
  }
  rho_eff = dpd_privacy_rho_eff(cols[0], cols[1], rows);
  free(cols[0]);
  free(cols[1]);
  root = cJSON_CreateObject();
  params = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "command", "account");
  cJSON_AddStringToObject(root, "version", dpd_version());
  cJSON_AddStringToObject(root, "sequence", path);
  cJSON_AddNumberToObject(root, "steps", (double)rows);
  cli_json_number(root, "rho_eff", rho_eff);
  cli_json_number(root, "zcdp_eff", 0.5 * rho_eff * rho_eff);
  if (have_delta) {
    cli_json_number(root, "delta", delta);
    add_epsilons(root, rho_eff, delta, "_eff");
  }
  cli_params_to_json(p, params);
  cJSON_AddItemToObject(root, "params", params);
  printf("# dpdyn %s account (sequence '%s', %zu steps)\n", dpd_version(), path, rows);
  {
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
      if (cJSON_IsNumber(item)) {
        printf("%-32s %.10g\n", item->string, item->valuedouble);
      }
    }
  }
  if ((status = write_summary(&o, root, start, err)) == DPD_OK) {
    code = cli_out_finish(&o, NULL, err);
  }
  cli_out_free(&o);
  cJSON_Delete(root);
  return status < 0 ? cli_exit_code(status) : code;
}

static int run_account(const cli_params *p, linreg_run *r, cli_out *o, double start, dpd_err *err) {
  cJSON *root;
  double *eta = malloc(r->n * sizeof *eta), *sigma = malloc(r->n * sizeof *sigma);
  double rho_eff;
  int status, code = CLI_EXIT_OK;
  if (eta == NULL || sigma == NULL) {
    free(eta);
    free(sigma);
    return cli_exit_code(DPD_FAIL(err, DPD_ENOMEM, "out of memory for n = %zu steps", r->n));
  }
  dpd_schedule_steps(r->schedule, r->n, r->rho, eta, sigma);
  rho_eff = dpd_privacy_rho_eff(eta, sigma, r->n);
  free(eta);
  free(sigma);
  root = summary_new(p, r);
  cli_json_number(root, "rho_target", r->rho);
  cli_json_number(root, "rho_eff", rho_eff);
  cli_json_number(root, "zcdp_eff", 0.5 * rho_eff * rho_eff);
  if (r->have_delta) {
    add_epsilons(root, rho_eff, r->delta, "_eff");
  }
  if (r->have_epsilon) {
    cli_json_number(root, "epsilon", r->epsilon);
    cli_json_number(root, "rho_bun_steinke",
                    dpd_privacy_rho_from_eps_bun_steinke(r->epsilon, r->delta));
  }
  status = write_summary(o, root, start, err);
  if (status == DPD_OK) {
    print_summary(root, "account", r);
    code = cli_out_finish(o, NULL, err);
  }
  cJSON_Delete(root);
  return status < 0 ? cli_exit_code(status) : code;
}

/* A simulation-like result (simulate or sde) as training-trajectory columns:
 * the row t = 1 is replaced by the value before the release noise. */
static double *training_trajectory(const dpd_linreg_sim_result *res, double **se) {
  size_t g = res->grid;
  double *traj = malloc(2 * g * sizeof *traj);
  if (traj == NULL) {
    return NULL;
  }
  memcpy(traj, res->risk_mean, g * sizeof *traj);
  memcpy(traj + g, res->risk_se, g * sizeof *traj);
  traj[g - 1] = res->before_release;
  traj[2 * g - 1] = res->before_release_se;
  *se = traj + g;
  return traj;
}

/* max_j |a_j - b_j| and max_j |a_j - b_j| / se_j over points with se_j > 0. */
static void sup_gaps(const double *a, const double *b, const double *se, size_t g, double *sup,
                     double *sup_in_se) {
  *sup = 0.0;
  *sup_in_se = 0.0;
  for (size_t j = 0; j < g; j++) {
    double gap = fabs(a[j] - b[j]);
    *sup = fmax(*sup, gap);
    if (se[j] > 0.0) {
      *sup_in_se = fmax(*sup_in_se, gap / se[j]);
    }
  }
}

static void add_stochastic_json(cJSON *root, const char *prefix, const dpd_linreg_sim_result *res,
                                const char *clip_key) {
  char key[96];
  snprintf(key, sizeof key, "%sfinal_excess_risk", prefix);
  cli_json_number(root, key, res->final_risk);
  snprintf(key, sizeof key, "%sfinal_excess_risk_se", prefix);
  cli_json_number(root, key, res->final_risk_se);
  snprintf(key, sizeof key, "%sexcess_risk_before_release", prefix);
  cli_json_number(root, key, res->before_release);
  snprintf(key, sizeof key, "%sexcess_risk_before_release_se", prefix);
  cli_json_number(root, key, res->before_release_se);
  snprintf(key, sizeof key, "%srelease_jump", prefix);
  cli_json_number(root, key, res->final_risk - res->before_release);
  snprintf(key, sizeof key, "%s%s", prefix, clip_key);
  cli_json_number(root, key, res->clip_fraction_total);
}

/* ---- pieces shared with the other linreg commands (cli.h) ---- */

dpd_ode_config cli_linreg_ode_config(const linreg_run *r) {
  dpd_ode_config oc = dpd_ode_config_default();
  oc.gamma = r->gamma;
  oc.zeta = r->zeta;
  oc.noise = r->noise.law;
  oc.noise_nu = r->noise.nu;
  oc.c = r->c;
  oc.rho = r->rho;
  oc.grid = r->grid;
  oc.method = r->method;
  oc.rtol = r->rtol;
  oc.atol = r->atol;
  return oc;
}

dpd_linreg_sim_config cli_linreg_sim_config(const linreg_run *r) {
  dpd_linreg_sim_config sc = dpd_linreg_sim_config_default();
  sc.n = r->n;
  sc.zeta = r->zeta;
  sc.noise = r->noise.law;
  sc.noise_nu = r->noise.nu;
  sc.c = r->c;
  sc.rho = r->rho;
  sc.seeds = r->seeds;
  sc.seed = r->seed;
  sc.grid = r->grid;
  sc.threads = r->threads;
  sc.progress = isatty(STDERR_FILENO);
  return sc;
}

int cli_linreg_setup(cli_params *p, const char *command, linreg_run **out, dpd_err *err) {
  int status;
  *out = calloc(1, sizeof **out);
  if (*out == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if ((status = setup(p, command, *out, err)) < 0) {
    cli_linreg_free(*out);
    *out = NULL;
  }
  return status;
}

void cli_linreg_free(linreg_run *r) {
  if (r != NULL) {
    run_free(r);
    free(r);
  }
}

const dpd_linreg_problem *cli_linreg_problem(const linreg_run *r) {
  return r->problem;
}

const dpd_schedule_config *cli_linreg_schedule_config(const linreg_run *r) {
  return &r->schedule_cfg;
}

cJSON *cli_linreg_summary(const cli_params *p, const linreg_run *r) {
  return summary_new(p, r);
}

int cli_write_table(cli_out *o, const cli_params *p, const char *name, const char *columns,
                    size_t rows, size_t ncols, const double *const *cols, dpd_err *err) {
  return write_table(o, p, name, p->command, columns, rows, ncols, cols, err);
}

int cli_write_figure_table(cli_out *o, const cli_params *p, const char *name, const char *figure,
                           const char *columns, size_t rows, size_t ncols,
                           const double *const *cols, dpd_err *err) {
  return write_table(o, p, name, figure, columns, rows, ncols, cols, err);
}

int cli_cmd_linreg(const char *command, cli_params *p, double start, dpd_err *err) {
  linreg_run r;
  dpd_linreg_sim_result *sim = NULL, *sde = NULL;
  dpd_ode_result *ode = NULL;
  cJSON *root = NULL;
  cli_out o = {0};
  int status = DPD_OK, code = CLI_EXIT_OK;
  int is_sde = strcmp(command, "sde") == 0;
  int do_sim = strcmp(command, "simulate") == 0 || strcmp(command, "compare") == 0;
  int do_ode = strcmp(command, "ode") == 0 || strcmp(command, "compare") == 0;
  double *sim_traj = NULL, *sim_se = NULL, *sde_traj = NULL, *sde_se = NULL;
  const char *figure = command;
  memset(&r, 0, sizeof r);

  if (strcmp(command, "account") == 0 && cli_is_given(p, "sequence")) {
    return run_account_sequence(p, start, err);
  }
  if ((status = setup(p, command, &r, err)) < 0) {
    run_free(&r);
    return cli_exit_code(status);
  }
  if ((status = cli_out_init(&o, cli_get_text(p, "out"), err)) < 0) {
    run_free(&r);
    return cli_exit_code(status);
  }
  if (strcmp(command, "account") == 0) {
    code = run_account(p, &r, &o, start, err);
    cli_out_free(&o);
    run_free(&r);
    return code;
  }
  if (do_ode) {
    dpd_ode_config oc = cli_linreg_ode_config(&r);
    oc.bounds = 1; /* NULL when the method does not give them */
    if ((status = dpd_ode_solve(r.problem, r.schedule, &oc, &ode, err)) < 0) {
      goto done;
    }
  }
  if (do_sim) {
    dpd_linreg_sim_config sc = cli_linreg_sim_config(&r);
    if ((status = dpd_linreg_sim_run(r.problem, r.schedule, &sc, &sim, err)) < 0) {
      goto done;
    }
  }
  if (r.with_sde) {
    dpd_linreg_sde_config ec = dpd_linreg_sde_config_default();
    ec.n = r.n;
    ec.zeta = r.zeta;
    ec.noise = r.noise.law;
    ec.noise_nu = r.noise.nu;
    ec.c = r.c;
    ec.rho = r.rho;
    ec.seeds = r.seeds;
    ec.seed = r.seed;
    ec.grid = r.grid;
    ec.dt = r.dt;
    ec.threads = r.threads;
    ec.progress = isatty(STDERR_FILENO);
    if ((status = dpd_linreg_sde_run(r.problem, r.schedule, &ec, &sde, err)) < 0) {
      goto done;
    }
  }
  if ((sim != NULL && (sim_traj = training_trajectory(sim, &sim_se)) == NULL) ||
      (sde != NULL && (sde_traj = training_trajectory(sde, &sde_se)) == NULL)) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    goto done;
  }

  root = summary_new(p, &r);
  {
    size_t g = r.grid;
    const double *t = sim != NULL ? sim->t : sde != NULL ? sde->t : ode->t;
    const dpd_linreg_sim_result *main_run = sim != NULL ? sim : sde;
    const double *main_traj = sim != NULL ? sim_traj : sde_traj;
    const double *main_se = sim != NULL ? sim_se : sde_se;
    const double *cols[12];
    size_t ncols = 0;
    char names[320] = "t";
    double one = 1.0, nan = NAN;
    const double *rel[12];
    size_t nrel = 0;
    char rel_names[320] = "t";
#define ADD_COL(arr, name)                                                                         \
  do {                                                                                             \
    cols[ncols++] = (arr);                                                                         \
    strcat(names, " " name);                                                                       \
  } while (0)
#define ADD_REL(ptr, name)                                                                         \
  do {                                                                                             \
    rel[nrel++] = (ptr);                                                                           \
    strcat(rel_names, " " name);                                                                   \
  } while (0)
    cols[ncols++] = t;
    rel[nrel++] = &one;
    if (main_run != NULL) {
      add_stochastic_json(root, "", main_run,
                          sim != NULL ? "clipped_fraction" : "expected_clipped_fraction");
      cJSON_AddNumberToObject(root, "seeds", (double)r.seeds);
      ADD_COL(main_traj, "excess_risk");
      ADD_COL(main_se, "excess_risk_se");
      ADD_REL(&main_run->before_release, "before");
      ADD_REL(&main_run->before_release_se, "before_se");
      ADD_REL(&main_run->final_risk, "after");
      ADD_REL(&main_run->final_risk_se, "after_se");
    }
    if (ode != NULL) {
      const char *prefix = main_run != NULL ? "ode_" : "";
      char key[64];
      snprintf(key, sizeof key, "%sfinal_excess_risk", prefix);
      cli_json_number(root, key, ode->final_risk);
      if (main_run == NULL) {
        cli_json_number(root, "final_excess_risk_se", 0.0);
      }
      snprintf(key, sizeof key, "%sexcess_risk_before_release", prefix);
      cli_json_number(root, key, ode->before_release);
      snprintf(key, sizeof key, "%srelease_jump", prefix);
      cli_json_number(root, key, ode->release_jump);
      for (int b = 0; b < 2; b++) {
        const double *bound = b == 0 ? ode->lower : ode->upper;
        snprintf(key, sizeof key, "%s%s_bound_before_release", prefix, b == 0 ? "lower" : "upper");
        if (bound == NULL) {
          char why[96];
          snprintf(why, sizeof why, "method = %s solves the ODE without its bounds",
                   dpd_ode_method_type_get(r.method)->name);
          cli_json_na(root, key, why);
        } else {
          cli_json_number(root, key, bound[g - 1]);
        }
      }
      cJSON_AddNumberToObject(root, "ode_steps", (double)ode->steps);
      cJSON_AddNumberToObject(root, "distinct_eigenvalues", (double)r.problem->ngroups);
      if (main_run == NULL) {
        ADD_COL(ode->risk, "excess_risk");
        if (ode->lower != NULL) {
          ADD_COL(ode->lower, "lower_bound");
          ADD_COL(ode->upper, "upper_bound");
        }
        ADD_REL(&nan, "before");
        ADD_REL(&nan, "before_se");
        ADD_REL(&nan, "after");
        ADD_REL(&nan, "after_se");
      } else {
        ADD_COL(ode->risk, "ode_excess_risk");
        if (ode->lower != NULL) {
          ADD_COL(ode->lower, "ode_lower_bound");
          ADD_COL(ode->upper, "ode_upper_bound");
        }
      }
      ADD_REL(&ode->before_release, "ode_before");
      ADD_REL(&ode->final_risk, "ode_after");
    } else {
      ADD_REL(&nan, "ode_before");
      ADD_REL(&nan, "ode_after");
    }
    if (main_run != NULL) {
      if (sim != NULL) {
        ADD_COL(main_run->clip_fraction, "clipped_fraction");
      } else {
        ADD_COL(main_run->clip_fraction, "expected_clipped_fraction");
      }
    }
    if (sim != NULL && ode != NULL) {
      double sup, sup_se, final_gap = fabs(ode->final_risk - sim->final_risk);
      sup_gaps(ode->risk, sim_traj, sim_se, g, &sup, &sup_se);
      cli_json_number(root, "sup_gap", sup);
      cli_json_number(root, "sup_gap_in_se", sup_se);
      cli_json_number(root, "final_gap", final_gap);
      cli_json_number(root, "final_gap_in_se",
                      sim->final_risk_se > 0 ? final_gap / sim->final_risk_se : INFINITY);
    }
    if (sim != NULL && sde != NULL) {
      /* Three-way comparison: the SDE's own columns and gaps. */
      double sup, sup_se, final_gap = fabs(ode->final_risk - sde->final_risk);
      double both = hypot(sim->final_risk_se, sde->final_risk_se);
      figure = "compare3";
      add_stochastic_json(root, "sde_", sde, "expected_clipped_fraction");
      sup_gaps(ode->risk, sde_traj, sde_se, g, &sup, &sup_se);
      cli_json_number(root, "sde_sup_gap", sup);
      cli_json_number(root, "sde_sup_gap_in_se", sup_se);
      cli_json_number(root, "sde_final_gap", final_gap);
      cli_json_number(root, "sde_vs_simulate_final_gap_in_se",
                      both > 0 ? fabs(sde->final_risk - sim->final_risk) / both : INFINITY);
      ADD_COL(sde_traj, "sde_excess_risk");
      ADD_COL(sde_se, "sde_excess_risk_se");
      ADD_REL(&sde->before_release, "sde_before");
      ADD_REL(&sde->before_release_se, "sde_before_se");
      ADD_REL(&sde->final_risk, "sde_after");
      ADD_REL(&sde->final_risk_se, "sde_after_se");
    }
    if (is_sde) {
      cli_json_number(root, "dt", r.dt > 0.0 ? r.dt : 1.0 / (double)r.n);
    }
#undef ADD_COL
#undef ADD_REL
    if ((status = write_table(&o, p, "trajectory.tsv", figure, names, g, ncols, cols, err)) < 0 ||
        (status = write_table(&o, p, "release.tsv", figure, rel_names, 1, nrel, rel, err)) < 0 ||
        (status = write_summary(&o, root, start, err)) < 0) {
      goto done;
    }
  }
  print_summary(root, command, &r);
  code = cli_out_finish(&o, r.plot ? figure : NULL, err);
  if (code == CLI_EXIT_OK) {
    printf("# wrote %s/\n", o.dir);
  }
done:
  if (status < 0) {
    code = cli_exit_code(status);
  }
  free(sim_traj);
  free(sde_traj);
  cJSON_Delete(root);
  dpd_linreg_sim_result_free(sim);
  dpd_linreg_sim_result_free(sde);
  dpd_ode_result_free(ode);
  cli_out_free(&o);
  run_free(&r);
  return code;
}
