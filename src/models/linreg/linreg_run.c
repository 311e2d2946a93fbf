/* model=linreg: the commands simulate | sde | ode | compare | account (model.h).
 * SPDX-License-Identifier: MIT
 *
 * Validates every key before anything runs (env->validate_only stops there), then calls the
 * library and returns the summary, trajectory.tsv (the training trajectory on the grid; the row
 * at t = 1 is the iterate before the release noise) and release.tsv (before/after the
 * last-iterate noise). The keys in effect are recorded: those of the command and of the
 * schedule family; the others are dropped (the CLI notes the flags that had no effect). */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/table_impl.h"
#include "dpdyn/clip.h"
#include "dpdyn/linreg_setting.h"
#include "dpdyn/noise.h"
#include "dpdyn/sde.h"
#include "models/linreg/linreg_impl.h"

typedef struct linreg_run {
  size_t d, n;
  double gamma, zeta, c, rho, delta, epsilon;
  int have_delta, have_epsilon;
  dpd_noise_spec noise;
  double dt; /* sde step (0 = 1/n) */
  int with_sde;
  size_t seeds, grid;
  int save_replicates; /* 0 none, 1 replicates.tsv, 2 also replicates_trajectory.tsv */
  uint64_t seed;
  int threads;
  int plot;
  dpd_ode_method method;
  double rtol, atol;
  int uses_ode;                    /* ode, compare, tune */
  int compress;                    /* 0 off, 1 on, 2 auto */
  int finite_size;                 /* DPD_FINITE_OFF | ON | AUTO (the key finite_size) */
  double compress_tol;             /* target of the a-posteriori compression error */
  dpd_linreg_compress_config cc;   /* nodes per band in use, bands per decade */
  dpd_linreg_problem *problem;     /* the full problem; NULL when only the ODE runs, spectrally */
  dpd_linreg_problem *ode_problem; /* what the ODE solves: a spectral problem, or `problem` */
  dpd_linreg_spectrum *spectrum;   /* the bands' moments behind a spectral ode_problem */
  int spectrum_nodes;              /* the nodes per band it holds moments for */
  dpd_schedule *schedule;
  dpd_schedule_config schedule_cfg; /* as created (table pointers into sched_cols) */
  /* storage for file inputs (borrowed by the configs during create) */
  double *spec_cols[2];
  double *theta_cols[1];
  double *sched_cols[2];
  size_t *mult;
  dpd_linreg_problem_config pc;  /* validated, built once every key has been checked */
  double memory_estimate;        /* bytes the command is expected to need (check_memory) */
  int d_from_spectrum;           /* d implied by a levels:/file: spectrum (not given) */
  const dpd_run_env *env;        /* borrowed for the set-up */
  dpd__progress_bridge progress; /* replicates to env->progress (progress_user of the runs) */
} linreg_run;

static void run_free(linreg_run *r) {
  if (r->ode_problem != r->problem) {
    dpd_linreg_problem_free(r->ode_problem);
  }
  dpd_linreg_problem_free(r->problem);
  dpd_linreg_spectrum_free(r->spectrum);
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
      if (errno == ERANGE || m > LINREG_MAX_DIM - total) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': '%s' has multiplicities summing to more "
                        "than %zu (allowed: d = sum of multiplicities <= %zu)",
                        spec, LINREG_MAX_DIM, LINREG_MAX_DIM);
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

static int parse_problem(dpd_keys *keys, linreg_run *r, dpd_err *err) {
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  const char *spec = dpd_keys_text_get(keys, "spectrum");
  const char *theta = dpd_keys_text_get(keys, "theta_star");
  int status;
  size_t nvalues = 0, spectrum_d = 0;

  if (starts_with(spec, "file:")) {
    size_t rows, ncols;
    if ((status = dpd__read_table("spectrum", spec + 5, 1, 2, r->env->max_memory, r->spec_cols,
                                  &rows, &ncols, err)) < 0) {
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
      if (m > (double)(LINREG_MAX_DIM - spectrum_d)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'spectrum': multiplicities in '%s' sum to more than "
                        "%zu by data row %zu (allowed: d = sum of multiplicities <= %zu)",
                        spec + 5, LINREG_MAX_DIM, k + 1, LINREG_MAX_DIM);
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
  if (dpd_keys_given(keys, "d") || spectrum_d == 0) {
    if ((status = dpd_keys_size_range_get(keys, "d", 1, LINREG_MAX_DIM, &r->d, err)) < 0) {
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

  if ((status = dpd_keys_real_range_get(keys, "theta_norm", 0.0, 0, INFINITY, 0, 0, &pc.theta_norm,
                                        err)) < 0) {
    return status;
  }
  if (strcmp(theta, "random") == 0) {
    pc.theta = DPD_THETA_RANDOM;
  } else if (strcmp(theta, "flat") == 0) {
    pc.theta = DPD_THETA_FLAT;
  } else if (starts_with(theta, "file:")) {
    size_t rows, ncols;
    if ((status = dpd__read_table("theta_star", theta + 5, 1, 1, r->env->max_memory, r->theta_cols,
                                  &rows, &ncols, err)) < 0) {
      return status;
    }
    if (rows != r->d) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'theta_star': '%s' has %zu values but d = %zu (allowed: "
                      "exactly d values, one per line, in the eigenbasis)",
                      theta + 5, rows, r->d);
    }
    for (size_t i = 0; i < rows; i++) {
      /* the squared norm and the ODE's theta_i^2 terms must stay finite (1e200 gave a CVode
       * error, exit 2) */
      if (!(fabs(r->theta_cols[0][i]) <= 1e150)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'theta_star': %g on data line %zu of '%s' (allowed: "
                        "|theta_i| <= 1e150, so that the squares the run forms stay finite)",
                        r->theta_cols[0][i], i + 1, theta + 5);
      }
    }
    pc.theta = DPD_THETA_GIVEN;
    pc.theta_given = r->theta_cols[0];
    /* One rule: theta_norm given rescales the file's vector to that norm; not given, the
     * components are used as they are and theta_norm records their norm. */
    if (!dpd_keys_given(keys, "theta_norm")) {
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
      if (dpd_keys_effective_real_set(keys, "theta_norm", sqrt(norm2), NULL) < 0) {
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

static int setup_schedule(const dpd_keys *keys, linreg_run *r, dpd_err *err) {
  dpd_schedule_config sc = dpd_schedule_config_default();
  const char *name = dpd_keys_text_get(keys, "schedule");
  const char *limit_key = "eta0";
  int status;
  double sup;
  const dpd_schedule_family *family = dpd_schedule_family_lookup(name);
  if (family == NULL) {
    char allowed[256];
    dpd_schedule_family_list(allowed, sizeof allowed);
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'schedule': '%s' (allowed: %s)", name,
                    allowed);
  }
  sc.kind = family->kind;
  /* The family's parameters, each validated by the range of its key in the model's table. */
  for (const dpd_schedule_param *q = family->params; q->key != NULL; q++) {
    void *field = (char *)&sc + q->offset;
    status = q->integer ? dpd_keys_size_get(keys, q->key, (size_t *)field, err)
                        : dpd_keys_real_get(keys, q->key, (double *)field, err);
    if (status < 0) {
      return status;
    }
  }
  if (sc.kind == DPD_SCHEDULE_OPTIMAL) {
    limit_key = "c1";
    sc.gamma = r->gamma;
    sc.rho = r->rho;
  } else if (family->takes_path) {
    size_t rows, ncols;
    const char *path = name + strlen(family->name) + 1;
    limit_key = "schedule";
    if ((status = dpd__read_table("schedule", path, 2, 2, r->env->max_memory, r->sched_cols, &rows,
                                  &ncols, err)) < 0) {
      return status;
    }
    sc.table_t = r->sched_cols[0];
    sc.table_eta = r->sched_cols[1];
    sc.table_len = rows;
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
                    limit_key, dpd_keys_text_get(keys, limit_key), sup, 2.0 / r->gamma);
  }
  if (isfinite(r->rho) && !dpd_schedule_is_nonincreasing(r->schedule)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'schedule': '%s' increases on [0, 1] (allowed: a "
                    "non-increasing schedule when rho is finite)",
                    name);
  }
  return DPD_OK;
}

/* The memory a linreg command needs, estimated from the validated sizes before anything large
 * is allocated (bytes; measured against peak RSS in tests/cli/test_limits.sh). The key named in
 * an error is the one whose term dominates. */
/* 1 when the ODE's spectral problem can be built without the full problem: an analytic spectrum
 * and theta* random or flat (dpd_linreg_problem_create_spectral). */
static int spectral_direct(const linreg_run *r) {
  if (r->pc.spectrum == DPD_SPECTRUM_POWERLAW && r->pc.alpha * log10((double)r->d) > 250.0) {
    return 0; /* eigenvalues that underflow: the full problem handles them */
  }
  return r->pc.spectrum != DPD_SPECTRUM_LIST &&
         (r->pc.theta == DPD_THETA_RANDOM || r->pc.theta == DPD_THETA_FLAT);
}

/* 1 when the command needs the per-coordinate problem: a simulation, or the uncompressed ODE. */
static int needs_full(const linreg_run *r, const char *command) {
  return !r->uses_ode || r->compress == 0 || !spectral_direct(r) || strcmp(command, "ode") != 0;
}

static int check_memory(const dpd_keys *keys, const char *command, linreg_run *r, dpd_err *err) {
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
  double ode_groups = groups;
  if (r->uses_ode && r->compress != 0 && r->pc.spectrum == DPD_SPECTRUM_POWERLAW) {
    /* at most 2 x 32 nodes per band, bands_per_decade per decade of d^alpha */
    const double bands = r->cc.bands_per_decade * r->pc.alpha * log10(d) + 2.0;
    ode_groups = fmin(groups, 64.0 * bands);
  }
  if (!needs_full(r, command)) {
    by_d = 8.0 * 4.0 * ode_groups + (r->pc.theta == DPD_THETA_RANDOM ? 8.0 * 4096.0 : 0.0);
  }
  double by_n = 0.0, by_seeds = 0.0;
  const char *driver;
  if (sim) {
    by_d += 8.0 * threads * (2.0 * d + 16.0) * (r->with_sde ? 2.0 : 1.0);
    by_n += 16.0 * n * (r->with_sde ? 2.0 : 1.0);
    /* per replicate: its risk row and clipping row on the grid, three numbers (clip total,
     * before release, released) and the driver's record of it (sim 4, sde 6 doubles) */
    by_seeds += 8.0 * (double)r->seeds *
                ((2.0 * (double)r->grid + 7.0) + (r->with_sde ? 2.0 * (double)r->grid + 9.0 : 0.0));
    by_seeds += dpd__model_replicates_bytes(r->save_replicates, r->seeds, r->grid,
                                            r->with_sde ? 6 : 3, r->with_sde ? 5 : 3);
  }
  if (ode) {
    by_d += 8.0 * 20.0 * ode_groups; /* CVODE's BDF history and work vectors, the ODE's own */
  }
  if (strcmp(command, "account") == 0) {
    by_n += 16.0 * n;
  }
  if (by_n >= by_d && by_n >= by_seeds) {
    driver = dpd_keys_given(keys, "n") || !dpd_keys_given(keys, "gamma") ? "n" : "gamma";
  } else if (by_seeds >= by_d) {
    driver = "seeds";
  } else {
    driver = r->d_from_spectrum ? "spectrum" : "d";
  }
  r->memory_estimate = by_d + by_n + by_seeds + 8.0 * 8.0 * (double)r->grid;
  return dpd__model_memory_check(keys, r->env, r->memory_estimate, driver, err);
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
static int check_method(const dpd_keys *keys, const char *command, const linreg_run *r,
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
                    dpd_keys_text_get(keys, "schedule"), eta0, eta1, type->name, fallback);
  }
  if ((type->flags & DPD_ODE_NEEDS_NO_CLIPPING) && isfinite(r->c)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'c': %g with method = %s (allowed: c = inf; "
                    "clipping makes the equation nonlinear, use method = %s)",
                    r->c, type->name, fallback);
  }
  return DPD_OK;
}

/* Drops the keys not in effect: those of other commands (table) and the parameters of the
 * schedule families other than the run's, so that summaries and headers record only what the
 * run used. */
void dpd__linreg_keys_in_effect(dpd_keys *keys) {
  const char *schedule = dpd_keys_text_get(keys, "schedule");
  const dpd_schedule_family *own = schedule != NULL ? dpd_schedule_family_lookup(schedule) : NULL;
  const dpd_schedule_family *f;
  (void)dpd_keys_restrict(keys, 0, "", NULL);
  for (size_t i = 0; own != NULL && (f = dpd_schedule_family_at(i)) != NULL; i++) {
    for (const dpd_schedule_param *q = f->params; q->key != NULL; q++) {
      if (!dpd_schedule_family_reads(own, q->key)) {
        dpd_keys_unset(keys, q->key);
      }
    }
  }
}

/* Everything that does not depend on the command. With build = 0, nothing is built. */
static int setup(dpd_keys *keys, const dpd_run_env *env, linreg_run *r, int build, dpd_err *err) {
  int status;
  const char *command = dpd_keys_command_get(keys);
  const char *noise = dpd_keys_text_get(keys, "noise");
  const char *method = dpd_keys_text_get(keys, "method");
  size_t threads;
  r->env = env;
  r->progress = (dpd__progress_bridge){env, "replicates"};
  if ((status = dpd_noise_spec_parse(noise, &r->noise, err)) < 0) {
    return status;
  }
  if (dpd_keys_given(keys, "delta")) {
    if ((status = dpd_keys_real_range_get(keys, "delta", 0.0, 0, 1.0, 0, 0, &r->delta, err)) < 0) {
      return status;
    }
    r->have_delta = 1;
  }
  if (dpd_keys_given(keys, "epsilon")) {
    if ((status = dpd_keys_real_range_get(keys, "epsilon", 0.0, 0, INFINITY, 0, 0, &r->epsilon,
                                          err)) < 0) {
      return status;
    }
    if (!r->have_delta) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "missing value for 'delta' (allowed: 0 < delta < 1; required with epsilon)");
    }
    if (dpd_keys_given(keys, "rho") || dpd_keys_given(keys, "zcdp")) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'epsilon': give either %s or (epsilon, delta), not both",
                      dpd_keys_given(keys, "rho") ? "rho" : "zcdp");
    }
    if ((status = dpd_privacy_rho_from_eps(r->epsilon, r->delta, &r->rho, err)) < 0) {
      return status;
    }
    r->have_epsilon = 1;
  } else if (dpd_keys_given(keys, "zcdp")) {
    /* the whole run is zcdp-zCDP: rho^2/2 = zcdp */
    double zcdp;
    if (dpd_keys_given(keys, "rho")) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'zcdp': give one of rho, zcdp or (epsilon, delta), not "
                      "two (rho is the alias sqrt(2 zcdp))");
    }
    if ((status = dpd_keys_real_get(keys, "zcdp", &zcdp, err)) < 0) {
      return status;
    }
    r->rho = sqrt(2.0 * zcdp);
  } else if ((status = dpd_keys_real_range_get(keys, "rho", 0.0, 0, INFINITY, 0, 1, &r->rho, err)) <
             0) {
    return status;
  }
  if ((status = dpd_keys_real_range_get(keys, "zeta", 0.0, 1, INFINITY, 0, 0, &r->zeta, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "c", 0.0, 0, INFINITY, 0, 1, &r->c, err)) < 0 ||
      (status = dpd_keys_size_range_get(keys, "seeds", 1, (size_t)1 << 24, &r->seeds, err)) < 0 ||
      (status = dpd_keys_size_range_get(keys, "grid", 2, (size_t)1 << 24, &r->grid, err)) < 0 ||
      (status = dpd_keys_size_range_get(keys, "threads", 0, 4096, &threads, err)) < 0 ||
      (status = dpd_keys_u64_get(keys, "seed", &r->seed, err)) < 0 ||
      (status = dpd__model_save_replicates_get(keys, 2, &r->save_replicates, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "rtol", 0.0, 0, 1.0, 0, 0, &r->rtol, err)) < 0 ||
      (status = dpd_keys_real_range_get(keys, "atol", 0.0, 0, INFINITY, 0, 0, &r->atol, err)) < 0) {
    return status;
  }
  r->uses_ode = strcmp(command, "ode") == 0 || strcmp(command, "compare") == 0 ||
                strcmp(command, "tune") == 0;
  r->cc = dpd_linreg_compress_config_default();
  r->compress = 0;
  if (r->uses_ode) {
    size_t choice, nodes, bands;
    if ((status = dpd_keys_choice_get(keys, "compress", &choice, err)) < 0 ||
        (status = dpd_keys_real_range_get(keys, "compress_tol", 0.0, 0, 1.0, 0, 0, &r->compress_tol,
                                          err)) < 0 ||
        (status = dpd_keys_size_range_get(keys, "compress_nodes", 1, 30, &nodes, err)) < 0 ||
        (status = dpd_keys_size_range_get(keys, "compress_bands", 1, 100, &bands, err)) < 0) {
      return status;
    }
    r->compress = choice == 0 ? 2 : choice == 1 ? 1 : 0; /* auto|on|off */
    r->cc.nodes = (int)nodes;
    r->cc.bands_per_decade = (int)bands;
  }
  r->finite_size = DPD_FINITE_OFF;
  if (r->uses_ode || strcmp(command, "sde") == 0) {
    size_t choice;
    if ((status = dpd_keys_choice_get(keys, "finite_size", &choice, err)) < 0) {
      return status;
    }
    r->finite_size = choice == 0 ? DPD_FINITE_OFF : choice == 1 ? DPD_FINITE_ON : DPD_FINITE_AUTO;
  }
  r->threads = (int)threads;
  r->noise.zeta = r->zeta;
  if (dpd_keys_given(keys, "dt")) {
    if ((status = dpd_keys_real_range_get(keys, "dt", 0.0, 0, 1.0, 1, 0, &r->dt, err)) < 0) {
      return status;
    }
  }
  {
    size_t v;
    if ((status = dpd_keys_size_range_get(keys, "sde", 0, 1, &v, err)) < 0) {
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
  if ((status = dpd__model_plot_get(keys, strcmp(command, "compare") == 0, &r->plot, err)) < 0) {
    return status;
  }
  if ((status = parse_problem(keys, r, err)) < 0) {
    return status;
  }
  /* n, or gamma = d/n. */
  if (dpd_keys_given(keys, "n")) {
    if ((status = dpd_keys_size_range_get(keys, "n", 1, (size_t)1 << 40, &r->n, err)) < 0) {
      return status;
    }
    if (dpd_keys_given(keys, "gamma")) {
      double g;
      if ((status = dpd_keys_real_range_get(keys, "gamma", 0.0, 0, INFINITY, 0, 0, &g, err)) < 0) {
        return status;
      }
      if (fabs(g * (double)r->n - (double)r->d) > 0.5) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'gamma': %g is inconsistent with d/n = %zu/%zu "
                        "(allowed: give n or gamma, or both with gamma = d/n)",
                        g, r->d, r->n);
      }
    }
  } else if (dpd_keys_given(keys, "gamma")) {
    double g, nn;
    if ((status = dpd_keys_real_range_get(keys, "gamma", 0.0, 0, INFINITY, 0, 0, &g, err)) < 0) {
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
  if ((status = dpd_keys_effective_real_set(keys, "d", (double)r->d, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "n", (double)r->n, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "gamma", r->gamma, err)) < 0 ||
      (status = dpd_keys_effective_real_set(keys, "rho", r->rho, err)) < 0 ||
      (status = setup_schedule(keys, r, err)) < 0 ||
      (status = check_method(keys, command, r, err)) < 0 ||
      (status = check_memory(keys, command, r, err)) < 0) {
    return status;
  }
  if (!build) {
    return DPD_OK;
  }
  return dpd__linreg_build(keys, r, err);
}

/* Nodes per band the spectrum keeps moments for: the first count and three refinements. */
#define SPECTRUM_EXTRA_NODES 6

/* The problem the ODE solves with `nodes` per band, from the bands' moments (built from the full
 * problem when there is one, else straight from the configuration; rebuilt for more nodes). */
static int spectral_build(linreg_run *r, int nodes, dpd_linreg_problem **out, dpd_err *err) {
  int status;
  if (r->spectrum == NULL || nodes > r->spectrum_nodes) {
    dpd_linreg_compress_config cc = r->cc;
    cc.nodes = nodes + SPECTRUM_EXTRA_NODES > DPD_COMPRESS_MAX_NODES ? DPD_COMPRESS_MAX_NODES
                                                                     : nodes + SPECTRUM_EXTRA_NODES;
    dpd_linreg_spectrum_free(r->spectrum);
    r->spectrum = NULL;
    status = r->problem != NULL
                 ? dpd_linreg_spectrum_from_problem(r->problem, &cc, &r->spectrum, err)
                 : dpd_linreg_spectrum_from_config(&r->pc, &cc, r->threads, &r->spectrum, err);
    if (status < 0) {
      return status;
    }
    r->spectrum_nodes = cc.nodes;
  }
  return dpd_linreg_spectrum_problem(r->spectrum, nodes, out, err);
}

int dpd__linreg_build(dpd_keys *keys, linreg_run *r, dpd_err *err) {
  /* Every key is valid and the run fits in memory: record the keys in effect, build. */
  int status;
  dpd__linreg_keys_in_effect(keys);
  if (needs_full(r, dpd_keys_command_get(keys)) &&
      (status = dpd_linreg_problem_create(&r->pc, &r->problem, err)) < 0) {
    return status;
  }
  r->ode_problem = r->problem;
  if (r->uses_ode && r->compress != 0) {
    dpd_linreg_problem *sp = NULL;
    if ((status = spectral_build(r, r->cc.nodes, &sp, err)) < 0) {
      return status;
    }
    /* auto: only when it at least halves the groups (a spectral problem built straight from
     * the configuration is used in any case: it is exact where it does not compress) */
    if (r->compress == 1 || r->problem == NULL || 2 * sp->ngroups <= r->problem->ngroups) {
      r->ode_problem = sp;
    } else {
      dpd_linreg_problem_free(sp);
    }
  }
  return DPD_OK;
}

static void add_privacy(dpd_output *out, const linreg_run *r) {
  double rho_z = 0.5 * r->rho * r->rho;
  dpd_privacy_guarantee g;
  /* Every guarantee of the run (docs/privacy.md): the algorithm is rho^2/2-zCDP (its proof gives
   * no GDP curve, so no mu and no GDP epsilon are claimed); epsilon at the delta given, else at
   * 1/n. */
  if (dpd_privacy_guarantee_from_zcdp(rho_z, r->have_delta ? r->delta : 1.0 / (double)r->n, &g,
                                      NULL) == DPD_OK) {
    dpd__output_guarantee(out, &g);
  }
  dpd_output_number_set(out, "rho", r->rho);
  dpd_output_number_set(out, "zcdp", rho_z);
  if (r->have_delta) {
    double eps = INFINITY;
    if (isfinite(r->rho)) {
      dpd_privacy_eps_tight(rho_z, r->delta, &eps, NULL);
    }
    dpd_output_number_set(out, "delta", r->delta);
    dpd_output_number_set(out, "epsilon_bun_steinke", dpd_privacy_eps_bun_steinke(rho_z, r->delta));
    dpd_output_number_set(out, "epsilon_tight", eps);
  }
}

int dpd__linreg_output_begin(const dpd_keys *keys, const linreg_run *r, dpd_output **outp,
                             dpd_err *err) {
  dpd_output *out;
  int status;
  if ((status = dpd__output_begin(dpd_keys_command_get(keys), "linreg", r->plot, r->seed, outp,
                                  err)) < 0) {
    return status;
  }
  out = *outp;
  if ((status = dpd__output_headline_set(
           out, err, "model linreg, d = %zu, n = %zu, schedule %s, seed %llu", r->d, r->n,
           dpd_schedule_name(r->schedule), (unsigned long long)r->seed)) < 0) {
    return status;
  }
  cJSON_AddNumberToObject(out->summary, "d", (double)r->d);
  cJSON_AddNumberToObject(out->summary, "n", (double)r->n);
  cJSON_AddNumberToObject(out->summary, "gamma", r->gamma);
  cJSON_AddStringToObject(out->summary, "noise_law", dpd_noise_law_name(r->noise.law));
  if (r->noise.law == DPD_NOISE_STUDENT) {
    cJSON_AddNumberToObject(out->summary, "noise_nu", r->noise.nu);
  }
  cJSON_AddStringToObject(out->summary, "schedule", dpd_schedule_name(r->schedule));
  cJSON_AddNumberToObject(
      out->summary, "initial_excess_risk",
      dpd_linreg_initial_risk(r->problem != NULL ? r->problem : r->ode_problem));
  cJSON_AddNumberToObject(out->summary, "memory_estimate_bytes", round(r->memory_estimate));
  add_privacy(out, r);
  return DPD_OK;
}

static void add_epsilons(dpd_output *out, double rho, double delta, const char *suffix) {
  char key[64];
  double rz = 0.5 * rho * rho, eps = INFINITY;
  if (isfinite(rho)) {
    dpd_privacy_eps_tight(rz, delta, &eps, NULL);
  }
  snprintf(key, sizeof key, "epsilon_bun_steinke%s", suffix);
  dpd_output_number_set(out, key, dpd_privacy_eps_bun_steinke(rz, delta));
  snprintf(key, sizeof key, "epsilon_tight%s", suffix);
  dpd_output_number_set(out, key, eps);
}

/* dpdyn account --sequence FILE: rho_eff of an arbitrary (eta_k, sigma_k) sequence. Only the keys
 * of this mode apply (a --d or --rho here would be silently ignored otherwise). */
static int run_account_sequence(dpd_keys *keys, const dpd_run_env *env, dpd_output **outp,
                                dpd_err *err) {
  static const char *const allowed[] = {"model", "sequence", "delta", "out", "max_memory", NULL};
  const char *path = dpd_keys_text_get(keys, "sequence");
  double *cols[2] = {NULL, NULL}, delta = 0.0, rho_eff;
  size_t rows = 0, ncols = 0;
  int status, have_delta = dpd_keys_given(keys, "delta");
  dpd_output *out;
  *outp = NULL;
  for (size_t i = 0; i < dpd_keys_count(keys); i++) {
    const char *name = dpd_keys_desc_get(keys, i)->name;
    int in = 0;
    for (size_t k = 0; allowed[k] != NULL; k++) {
      in |= strcmp(allowed[k], name) == 0;
    }
    if (in) {
      continue;
    }
    if (dpd_keys_given_at(keys, i)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "key '%s' does not apply to account --sequence (allowed keys: model, "
                      "sequence, delta, out, max_memory)",
                      name);
    }
    dpd_keys_unset(keys, name);
  }
  if ((have_delta &&
       (status = dpd_keys_real_range_get(keys, "delta", 0.0, 0, 1.0, 0, 0, &delta, err)) < 0) ||
      (status = dpd__model_validated(env, err)) != 0) {
    return status < 0 ? status : DPD_OK; /* the output is prepared before the file is read */
  }
  if ((status = dpd__read_table("sequence", path, 2, 2, env->max_memory, cols, &rows, &ncols,
                                err)) < 0) {
    return status;
  }
  for (size_t k = 0; k < rows; k++) {
    if (cols[0][k] < 0.0 || cols[1][k] < 0.0) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for 'sequence': row %zu of '%s' has eta = %g, sigma = %g "
                        "(allowed: eta >= 0, sigma >= 0)",
                        k + 1, path, cols[0][k], cols[1][k]);
      free(cols[0]);
      free(cols[1]);
      return status;
    }
  }
  rho_eff = dpd_privacy_rho_eff(cols[0], cols[1], rows);
  free(cols[0]);
  free(cols[1]);
  if ((status = dpd_output_create(outp, err)) < 0 ||
      (status = dpd__output_headline_set(*outp, err, "sequence '%s', %zu steps", path, rows)) < 0) {
    return status;
  }
  out = *outp;
  cJSON_AddStringToObject(out->summary, "command", "account");
  cJSON_AddStringToObject(out->summary, "version", dpd_version());
  cJSON_AddStringToObject(out->summary, "sequence", path);
  cJSON_AddNumberToObject(out->summary, "steps", (double)rows);
  dpd_output_number_set(out, "rho_eff", rho_eff);
  dpd_output_number_set(out, "zcdp_eff", 0.5 * rho_eff * rho_eff);
  if (have_delta) {
    dpd_output_number_set(out, "delta", delta);
    add_epsilons(out, rho_eff, delta, "_eff");
  }
  return DPD_OK;
}

/* dpdyn account: the privacy of the schedule (no simulation). */
static int account_summary(linreg_run *r, dpd_output *out, dpd_err *err) {
  double *eta = malloc(r->n * sizeof *eta), *sigma = malloc(r->n * sizeof *sigma);
  double rho_eff;
  if (eta == NULL || sigma == NULL) {
    free(eta);
    free(sigma);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for n = %zu steps", r->n);
  }
  dpd_schedule_steps(r->schedule, r->n, r->rho, eta, sigma);
  rho_eff = dpd_privacy_rho_eff(eta, sigma, r->n);
  free(eta);
  free(sigma);
  dpd_output_number_set(out, "rho_target", r->rho);
  dpd_output_number_set(out, "rho_eff", rho_eff);
  dpd_output_number_set(out, "zcdp_eff", 0.5 * rho_eff * rho_eff);
  if (r->have_delta) {
    add_epsilons(out, rho_eff, r->delta, "_eff");
  }
  if (r->have_epsilon) {
    dpd_output_number_set(out, "epsilon", r->epsilon);
    dpd_output_number_set(out, "rho_bun_steinke",
                          dpd_privacy_rho_from_eps_bun_steinke(r->epsilon, r->delta));
  }
  return DPD_OK;
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

static void add_stochastic(dpd_output *out, const char *prefix, const dpd_linreg_sim_result *res,
                           const char *clip_key) {
  char key[96];
  snprintf(key, sizeof key, "%sfinal_excess_risk", prefix);
  dpd_output_number_set(out, key, res->final_risk);
  snprintf(key, sizeof key, "%sfinal_excess_risk_se", prefix);
  dpd_output_number_set(out, key, res->final_risk_se);
  snprintf(key, sizeof key, "%sexcess_risk_before_release", prefix);
  dpd_output_number_set(out, key, res->before_release);
  snprintf(key, sizeof key, "%sexcess_risk_before_release_se", prefix);
  dpd_output_number_set(out, key, res->before_release_se);
  snprintf(key, sizeof key, "%srelease_jump", prefix);
  dpd_output_number_set(out, key, res->release_jump);
  snprintf(key, sizeof key, "%s%s", prefix, clip_key);
  dpd_output_number_set(out, key, res->clip_fraction_total);
}

/* ---- pieces shared with tune (linreg_impl.h) ---- */

/* The one setting of the run: simulate, sde and ode (and tune) build their configurations
 * from it, so they cannot disagree (linreg_setting.h). */
static dpd_linreg_setting run_setting(const linreg_run *r) {
  dpd_linreg_setting s = dpd_linreg_setting_default();
  s.n = r->n;
  s.zeta = r->zeta;
  s.noise = r->noise.law;
  s.noise_nu = r->noise.nu;
  s.c = r->c;
  s.rho = r->rho;
  return s;
}

dpd_ode_config dpd__linreg_ode_config(const linreg_run *r) {
  const dpd_linreg_setting s = run_setting(r);
  dpd_ode_config oc = dpd_ode_config_init(&s, r->d); /* gamma = d/n = r->gamma */
  oc.grid = r->grid;
  oc.method = r->method;
  oc.rtol = r->rtol;
  oc.atol = r->atol;
  oc.finite_size = r->finite_size;
  return oc;
}

dpd_linreg_sim_config dpd__linreg_sim_config(const linreg_run *r) {
  const dpd_linreg_setting s = run_setting(r);
  dpd_linreg_sim_config sc = dpd_linreg_sim_config_init(&s);
  sc.seeds = r->seeds;
  sc.seed = r->seed;
  sc.grid = r->grid;
  sc.threads = r->threads;
  sc.progress = r->env->progress != NULL ? dpd__model_progress : NULL;
  sc.progress_user = (void *)&r->progress;
  return sc;
}

int dpd__linreg_setup(dpd_keys *keys, const dpd_run_env *env, int build, linreg_run **out,
                      dpd_err *err) {
  int status;
  *out = calloc(1, sizeof **out);
  if (*out == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if ((status = setup(keys, env, *out, build, err)) < 0) {
    dpd__linreg_free(*out);
    *out = NULL;
  }
  return status;
}

void dpd__linreg_free(linreg_run *r) {
  if (r != NULL) {
    run_free(r);
    free(r);
  }
}

const dpd_linreg_problem *dpd__linreg_problem(const linreg_run *r) {
  return r->problem;
}

const dpd_linreg_problem *dpd__linreg_ode_problem(const linreg_run *r) {
  return r->ode_problem;
}

const dpd_schedule_config *dpd__linreg_schedule_config(const linreg_run *r) {
  return &r->schedule_cfg;
}

int dpd__linreg_plot(const linreg_run *r) {
  return r->plot;
}

/* Largest relative difference |a - b| / |b| over the grid of the risk and, when both have
 * them, of the finite bounds. */
static double max_rel_diff(const dpd_ode_result *a, const dpd_ode_result *b, int bounds) {
  double m = 0.0;
  for (size_t i = 0; i < a->grid; i++) {
    m = fmax(m, fabs(a->risk[i] - b->risk[i]) / fabs(b->risk[i]));
    if (bounds && a->lower != NULL && b->lower != NULL) {
      if (isfinite(a->lower[i]) && isfinite(b->lower[i])) {
        m = fmax(m, fabs(a->lower[i] - b->lower[i]) / fabs(b->lower[i]));
      }
      if (isfinite(a->upper[i]) && isfinite(b->upper[i])) {
        m = fmax(m, fabs(a->upper[i] - b->upper[i]) / fabs(b->upper[i]));
      }
    }
  }
  m = fmax(m, fabs(a->final_risk - b->final_risk) / fabs(b->final_risk));
  return m;
}

/* Largest system whose error is estimated by a second solve at rtol/10. */
#define ODE_ESTIMATE_MAX_GROUPS 20000

typedef struct {
  double compress_est; /* NAN: not compressed */
  double ode_est;      /* NAN: not estimated (why in ode_est_why) */
  const char *ode_est_why;
} ode_estimates;

/* Solves the ODE on r->ode_problem with the a-posteriori estimates of docs/ode.md: a compressed
 * problem is solved again with 2 more nodes per band, until the largest relative change of R
 * (and of the release) is at most compress_tol or 32 nodes are reached; the finer solve is the
 * result, the last change the compression estimate. The ODE's own error: the result against a
 * solve at rtol/10, atol/10 (systems of at most ODE_ESTIMATE_MAX_GROUPS groups). */
static int ode_solve_estimated(linreg_run *r, const dpd_ode_config *oc, dpd_ode_result **res,
                               ode_estimates *est, dpd_err *err) {
  int status;
  dpd_ode_result *a = NULL;
  est->compress_est = NAN;
  est->ode_est = NAN;
  est->ode_est_why = NULL;
  if ((status = dpd_ode_solve(r->ode_problem, r->schedule, oc, &a, err)) < 0) {
    return status;
  }
  if (r->ode_problem->spectral && r->ode_problem->compressed_bands > 0) {
    int n = r->ode_problem->nodes_per_band;
    while (n + 2 <= DPD_COMPRESS_MAX_NODES) {
      dpd_linreg_problem *finer = NULL;
      dpd_ode_result *b = NULL;
      if ((status = spectral_build(r, n + 2, &finer, err)) < 0 ||
          (status = dpd_ode_solve(finer, r->schedule, oc, &b, err)) < 0) {
        dpd_linreg_problem_free(finer);
        dpd_ode_result_free(a);
        return status;
      }
      est->compress_est = max_rel_diff(a, b, 0);
      dpd_ode_result_free(a);
      a = b;
      if (r->ode_problem != r->problem) {
        dpd_linreg_problem_free(r->ode_problem);
      }
      r->ode_problem = finer;
      n += 2;
      if (est->compress_est <= r->compress_tol) {
        break;
      }
    }
  }
  if (r->method == DPD_ODE_VOLTERRA) {
    est->ode_est_why = "method volterra: its error is not set by rtol";
  } else if (r->ode_problem->ngroups > ODE_ESTIMATE_MAX_GROUPS) {
    est->ode_est_why = "more than 20000 groups: a second solve would double the cost";
  } else {
    dpd_ode_config fine = *oc;
    dpd_ode_result *c = NULL;
    fine.rtol = oc->rtol / 10.0;
    fine.atol = oc->atol / 10.0;
    if ((status = dpd_ode_solve(r->ode_problem, r->schedule, &fine, &c, err)) < 0) {
      dpd_ode_result_free(a);
      return status;
    }
    est->ode_est = max_rel_diff(a, c, 1);
    dpd_ode_result_free(c);
  }
  *res = a;
  return DPD_OK;
}

/* Distinct eigenvalues of the spectrum (not of the ODE's groups). */
static double distinct_eigenvalues(const linreg_run *r) {
  if (r->problem != NULL) {
    return (double)r->problem->ngroups;
  }
  if (r->pc.spectrum == DPD_SPECTRUM_POWERLAW) {
    return (double)r->d;
  }
  return r->ode_problem->compressed_bands == 0 ? (double)r->ode_problem->ngroups : NAN;
}

/* The finite-size diagnostics (docs/finite_size.md): whether the correction was applied, m2,
 * lambda_max/d, and a warning (summary "warnings" and a note) when sqrt(m2) exceeds the auto
 * threshold and the correction is off. */
int dpd__linreg_finite_size_report(dpd_output *out, const linreg_run *r, dpd_err *err) {
  const dpd_linreg_problem *p = r->ode_problem != NULL ? r->ode_problem : r->problem;
  const dpd_ode_config oc = dpd__linreg_ode_config(r);
  const int applied = dpd_ode_finite_size_applies(p, &oc);
  const double m2 = dpd_linreg_m2(p);
  cJSON_AddBoolToObject(out->summary, "finite_size", applied);
  cJSON_AddNumberToObject(out->summary, "m2", m2);
  cJSON_AddNumberToObject(out->summary, "lambda_max_over_d", p->lambda_max / (double)p->d);
  if (!applied && dpd_linreg_finite_size_matters(p)) {
    char msg[300];
    cJSON *w = cJSON_GetObjectItemCaseSensitive(out->summary, "warnings");
    snprintf(msg, sizeof msg,
             "the relative sd of |x|^2/d is %.3g > %g and lambda_max/d = %.3g > %g: the "
             "asymptotic equivalent is off by its finite-size terms here; use finite_size = on "
             "or auto",
             sqrt(m2), DPD_FINITE_AUTO_THRESHOLD, p->lambda_max / (double)p->d,
             DPD_FINITE_AUTO_LMAX);
    if (w == NULL) {
      w = cJSON_AddArrayToObject(out->summary, "warnings");
    }
    if (w == NULL || !cJSON_AddItemToArray(w, cJSON_CreateString(msg)) ||
        dpd__output_note_add(out, err, "warning: %s", msg) < 0) {
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
  }
  return DPD_OK;
}

static void add_ode_report(dpd_output *out, const linreg_run *r, const dpd_ode_result *ode,
                           const ode_estimates *est) {
  const dpd_linreg_problem *p = r->ode_problem;
  cJSON_AddNumberToObject(out->summary, "ode_steps", (double)ode->steps);
  cJSON_AddNumberToObject(out->summary, "distinct_eigenvalues", distinct_eigenvalues(r));
  cJSON_AddNumberToObject(out->summary, "ode_groups", (double)p->ngroups);
  cJSON_AddBoolToObject(out->summary, "compressed", p->spectral && p->compressed_bands > 0);
  if (p->spectral && p->compressed_bands > 0) {
    cJSON_AddNumberToObject(out->summary, "compress_nodes_per_band", (double)p->nodes_per_band);
    cJSON_AddNumberToObject(out->summary, "compressed_bands", (double)p->compressed_bands);
    dpd_output_number_set(out, "compress_error_estimate", est->compress_est);
  } else {
    dpd_output_na_set(out, "compress_error_estimate",
                      r->compress == 0 ? "compress = off"
                                       : "every group exact (no band compressed)");
  }
  if (isnan(est->ode_est)) {
    dpd_output_na_set(out, "ode_error_estimate", est->ode_est_why);
  } else {
    dpd_output_number_set(out, "ode_error_estimate", est->ode_est);
  }
}

/* save_replicates: replicates.tsv (each replicate's final values, named as the summary's means
 * of them) and, at 2, replicates_trajectory.tsv (each replicate on the grid, named as the
 * trajectory.tsv columns they average to: the row t = 1 is the risk before the release noise).
 * runs[0] is the command's main run (no prefix), runs[1] compare's SDE ("sde_"). */
static int add_replicates(dpd_output *out, const linreg_run *r, const dpd_linreg_sim_result *sim,
                          const dpd_linreg_sim_result *sde, dpd_err *err) {
  const dpd_linreg_sim_result *runs[2] = {sim != NULL ? sim : sde, sim != NULL ? sde : NULL};
  const size_t S = r->seeds, g = r->grid;
  const double *fin[6], *per[4];
  char fin_names[320] = "", per_names[320] = "t";
  size_t nfin = 0, nper = 0;
  int status;
  for (size_t k = 0; k < 2 && runs[k] != NULL; k++) {
    const dpd_linreg_sim_result *res = runs[k];
    const char *prefix = k == 0 ? "" : "sde_";
    const char *clip = res == sim ? "clipped_fraction" : "expected_clipped_fraction";
    size_t len = strlen(fin_names), plen = strlen(per_names);
    fin[nfin++] = res->final_replicates;
    fin[nfin++] = res->before_release_replicates;
    fin[nfin++] = res->clip_total_replicates;
    snprintf(fin_names + len, sizeof fin_names - len,
             "%s%sfinal_excess_risk %sexcess_risk_before_release %s%s", len > 0 ? " " : "", prefix,
             prefix, prefix, clip);
    if (r->save_replicates >= 2) {
      per[nper++] = res->risk_replicates; /* t = 1 before release (the convention of linreg.h) */
      per[nper++] = res->clip_replicates;
      snprintf(per_names + plen, sizeof per_names - plen, " %sexcess_risk %s%s", prefix, prefix,
               clip);
    }
  }
  status = dpd__output_replicates_add(out, NULL, fin_names, S, nfin, fin, err);
  if (status == DPD_OK && nper > 0) {
    const double *shared[1] = {runs[0]->t};
    status =
        dpd__output_replicate_trajectory_add(out, NULL, per_names, S, g, 1, shared, nper, per, err);
  }
  return status;
}

/* simulate | sde | ode | compare | account. */
static int run_command(dpd_keys *keys, const dpd_run_env *env, dpd_output **outp, dpd_err *err) {
  const char *command = dpd_keys_command_get(keys);
  linreg_run r;
  dpd_linreg_sim_result *sim = NULL, *sde = NULL;
  dpd_ode_result *ode = NULL;
  ode_estimates est = {NAN, NAN, NULL};
  dpd_output *out = NULL;
  int status = DPD_OK;
  int is_sde = strcmp(command, "sde") == 0;
  int do_sim = strcmp(command, "simulate") == 0 || strcmp(command, "compare") == 0;
  int do_ode = strcmp(command, "ode") == 0 || strcmp(command, "compare") == 0;
  const char *figure = command;
  memset(&r, 0, sizeof r);
  *outp = NULL;

  if (strcmp(command, "account") == 0 && dpd_keys_given(keys, "sequence")) {
    return run_account_sequence(keys, env, outp, err);
  }
  if ((status = setup(keys, env, &r, 0, err)) < 0 ||
      (status = dpd__model_validated(env, err)) != 0 ||
      (status = dpd__linreg_build(keys, &r, err)) < 0) {
    run_free(&r);
    return status < 0 ? status : DPD_OK;
  }
  if ((status = dpd__linreg_output_begin(keys, &r, &out, err)) < 0) {
    goto done;
  }
  if (strcmp(command, "account") == 0) {
    out->plot = 0;
    status = account_summary(&r, out, err);
    goto done;
  }
  if (do_ode) {
    dpd_ode_config oc = dpd__linreg_ode_config(&r);
    oc.bounds = 1; /* NULL when the method does not give them */
    if ((status = ode_solve_estimated(&r, &oc, &ode, &est, err)) < 0) {
      goto done;
    }
  }
  if (do_sim) {
    dpd_linreg_sim_config sc = dpd__linreg_sim_config(&r);
    if ((status = dpd_linreg_sim_run(r.problem, r.schedule, &sc, &sim, err)) < 0) {
      goto done;
    }
  }
  if (r.with_sde) {
    const dpd_linreg_setting s = run_setting(&r);
    dpd_linreg_sde_config ec = dpd_linreg_sde_config_init(&s);
    ec.seeds = r.seeds;
    ec.seed = r.seed;
    ec.grid = r.grid;
    ec.dt = r.dt;
    ec.threads = r.threads;
    ec.progress = env->progress != NULL ? dpd__model_progress : NULL;
    ec.progress_user = &r.progress;
    ec.finite_size = r.finite_size;
    if ((status = dpd_linreg_sde_run(r.problem, r.schedule, &ec, &sde, err)) < 0) {
      goto done;
    }
  }
  {
    /* The trajectories end before release (the release convention of linreg.h and ode.h):
     * the rows t = 1 of simulate, sde and ode all hold R(1-), release.tsv the released values. */
    const double *sim_traj = sim != NULL ? sim->risk_mean : NULL;
    const double *sim_se = sim != NULL ? sim->risk_se : NULL;
    const double *sde_traj = sde != NULL ? sde->risk_mean : NULL;
    const double *sde_se = sde != NULL ? sde->risk_se : NULL;
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
      add_stochastic(out, "", main_run,
                     sim != NULL ? "clipped_fraction" : "expected_clipped_fraction");
      cJSON_AddNumberToObject(out->summary, "seeds", (double)r.seeds);
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
      dpd_output_number_set(out, key, ode->final_risk);
      if (main_run == NULL) {
        dpd_output_number_set(out, "final_excess_risk_se", 0.0);
      }
      snprintf(key, sizeof key, "%sexcess_risk_before_release", prefix);
      dpd_output_number_set(out, key, ode->before_release);
      snprintf(key, sizeof key, "%srelease_jump", prefix);
      dpd_output_number_set(out, key, ode->release_jump);
      for (int b = 0; b < 2; b++) {
        const double *bound = b == 0 ? ode->lower : ode->upper;
        snprintf(key, sizeof key, "%s%s_bound_before_release", prefix, b == 0 ? "lower" : "upper");
        if (bound == NULL) {
          char why[96];
          snprintf(why, sizeof why, "method = %s solves the ODE without its bounds",
                   dpd_ode_method_type_get(r.method)->name);
          dpd_output_na_set(out, key, why);
        } else {
          dpd_output_number_set(out, key, bound[g - 1]);
        }
      }
      add_ode_report(out, &r, ode, &est);
      if ((status = dpd__linreg_finite_size_report(out, &r, err)) < 0) {
        goto done;
      }
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
      dpd_output_number_set(out, "sup_gap", sup);
      dpd_output_number_set(out, "sup_gap_in_se", sup_se);
      dpd_output_number_set(out, "final_gap", final_gap);
      dpd_output_number_set(out, "final_gap_in_se",
                            sim->final_risk_se > 0 ? final_gap / sim->final_risk_se : INFINITY);
    }
    if (sim != NULL && sde != NULL) {
      /* Three-way comparison: the SDE's own columns and gaps. */
      double sup, sup_se, final_gap = fabs(ode->final_risk - sde->final_risk);
      double both = hypot(sim->final_risk_se, sde->final_risk_se);
      figure = "compare3";
      add_stochastic(out, "sde_", sde, "expected_clipped_fraction");
      sup_gaps(ode->risk, sde_traj, sde_se, g, &sup, &sup_se);
      dpd_output_number_set(out, "sde_sup_gap", sup);
      dpd_output_number_set(out, "sde_sup_gap_in_se", sup_se);
      dpd_output_number_set(out, "sde_final_gap", final_gap);
      dpd_output_number_set(out, "sde_vs_simulate_final_gap_in_se",
                            both > 0 ? fabs(sde->final_risk - sim->final_risk) / both : INFINITY);
      ADD_COL(sde_traj, "sde_excess_risk");
      ADD_COL(sde_se, "sde_excess_risk_se");
      ADD_REL(&sde->before_release, "sde_before");
      ADD_REL(&sde->before_release_se, "sde_before_se");
      ADD_REL(&sde->final_risk, "sde_after");
      ADD_REL(&sde->final_risk_se, "sde_after_se");
    }
    if (is_sde) {
      dpd_output_number_set(out, "dt", r.dt > 0.0 ? r.dt : 1.0 / (double)r.n);
      if ((status = dpd__linreg_finite_size_report(out, &r, err)) < 0) {
        goto done;
      }
    }
#undef ADD_COL
#undef ADD_REL
    if ((status = dpd__output_figure_set(out, figure, err)) < 0 ||
        (status = dpd_output_table_add(out, "trajectory.tsv", figure, names, g, ncols, cols, err)) <
            0 ||
        (status = dpd_output_table_add(out, "release.tsv", figure, rel_names, 1, nrel, rel, err)) <
            0) {
      goto done;
    }
    if (main_run != NULL && r.save_replicates > 0 &&
        (status = add_replicates(out, &r, sim, sde, err)) < 0) {
      goto done;
    }
  }
done:
  dpd_linreg_sim_result_free(sim);
  dpd_linreg_sim_result_free(sde);
  dpd_ode_result_free(ode);
  run_free(&r);
  if (status < 0) {
    dpd_output_free(out);
    out = NULL;
  }
  *outp = out;
  return status;
}

/* The numbers each command's summary can hold, as dpdyn sweep names them
 * (dpd_model_command.numbers): the union over the command's configurations, checked by
 * tests/cli/test_sweep_plot_y.sh. */
static const char linreg_simulate_numbers[] =
    "seed d n gamma initial_excess_risk privacy.zcdp privacy.delta privacy.epsilon "
    "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke rho zcdp final_excess_risk "
    "final_excess_risk_se excess_risk_before_release excess_risk_before_release_se release_jump "
    "clipped_fraction seeds delta epsilon_bun_steinke epsilon_tight noise_nu";

static const char linreg_sde_numbers[] =
    "seed d n gamma initial_excess_risk privacy.zcdp privacy.delta privacy.epsilon "
    "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke rho zcdp final_excess_risk "
    "final_excess_risk_se excess_risk_before_release excess_risk_before_release_se release_jump "
    "expected_clipped_fraction seeds dt finite_size m2 lambda_max_over_d delta "
    "epsilon_bun_steinke epsilon_tight noise_nu";

static const char linreg_ode_numbers[] =
    "seed d n gamma initial_excess_risk privacy.zcdp privacy.delta privacy.epsilon "
    "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke rho zcdp final_excess_risk "
    "final_excess_risk_se excess_risk_before_release release_jump lower_bound_before_release "
    "upper_bound_before_release ode_steps distinct_eigenvalues ode_groups compressed "
    "compress_error_estimate ode_error_estimate finite_size m2 lambda_max_over_d delta "
    "epsilon_bun_steinke epsilon_tight noise_nu compress_nodes_per_band compressed_bands";

static const char linreg_compare_numbers[] =
    "seed d n gamma initial_excess_risk privacy.zcdp privacy.delta privacy.epsilon "
    "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke rho zcdp final_excess_risk "
    "final_excess_risk_se excess_risk_before_release excess_risk_before_release_se release_jump "
    "clipped_fraction seeds ode_final_excess_risk ode_excess_risk_before_release ode_release_jump "
    "ode_lower_bound_before_release ode_upper_bound_before_release ode_steps distinct_eigenvalues "
    "ode_groups compressed compress_error_estimate ode_error_estimate finite_size m2 "
    "lambda_max_over_d sup_gap sup_gap_in_se final_gap final_gap_in_se delta epsilon_bun_steinke "
    "epsilon_tight noise_nu sde_final_excess_risk sde_final_excess_risk_se "
    "sde_excess_risk_before_release sde_excess_risk_before_release_se sde_release_jump "
    "sde_expected_clipped_fraction sde_sup_gap sde_sup_gap_in_se sde_final_gap "
    "sde_vs_simulate_final_gap_in_se compress_nodes_per_band compressed_bands";

static const char linreg_account_numbers[] =
    "seed d n gamma initial_excess_risk privacy.zcdp privacy.delta privacy.epsilon "
    "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke rho zcdp rho_target rho_eff zcdp_eff "
    "delta epsilon_bun_steinke epsilon_tight epsilon_bun_steinke_eff epsilon_tight_eff epsilon "
    "rho_bun_steinke noise_nu steps";

static const char linreg_tune_numbers[] =
    "seed d n gamma initial_excess_risk privacy.zcdp privacy.delta privacy.epsilon "
    "privacy.epsilon_zcdp_tight privacy.epsilon_bun_steinke rho zcdp finite_size m2 "
    "lambda_max_over_d optimum.c optimum.eta0 optimum.eta_at_0 optimum.eta_at_1 optimum.eta_sup "
    "optimum.stability_limit final_excess_risk final_excess_risk_se excess_risk_before_release "
    "release_jump lower_bound_before_release upper_bound_before_release confirm_seeds ode_groups "
    "compressed confirm_final_excess_risk confirm_final_excess_risk_se confirm_gap "
    "confirm_gap_in_se confirm_sup_gap confirm_sup_gap_in_se clipped_fraction heatmap "
    "heatmap_points heatmap_failed heatmap_beating_optimum heatmap_best_excess_risk "
    "heatmap_best_c heatmap_best_eta0 iterations evaluations failed_evaluations local_searches "
    "converged start_spread prescan_best tuner.safety tuner.eta_min_fraction tuner.shape_min "
    "tuner.shape_max tuner.prescan tuner.starts tuner.xtol tuner.max_iter tuner.restarts delta "
    "epsilon_bun_steinke epsilon_tight optimum.a optimum.c1 optimum.c2 optimum.c3 "
    "optimum.offset_scale noise_nu compress_nodes_per_band compressed_bands";

const dpd_model_command dpd__linreg_commands[] = {
    {"simulate", "one-pass DP-SGD over `seeds` replicates: excess risk with standard errors",
     "trajectory.tsv release.tsv [replicates.tsv replicates_trajectory.tsv] summary.json",
     "dpdyn simulate --d=200 --n=800 --c=1 --rho=2", run_command, linreg_simulate_numbers},
    {"sde", "homogenized SDE (H-DP-SGD) by Euler-Maruyama over `seeds` replicates",
     "trajectory.tsv release.tsv [replicates.tsv replicates_trajectory.tsv] summary.json",
     "dpdyn sde --d=200 --n=800 --c=1 --rho=2", run_command, linreg_sde_numbers},
    {"ode", "deterministic equivalent: coupled risk ODEs, bounds, last-iterate jump",
     "trajectory.tsv release.tsv summary.json", "dpdyn ode --d=1000 --n=4000 --c=1 --rho=2",
     run_command, linreg_ode_numbers},
    {"compare", "simulation against the ODE (+ the SDE with --sde=1): gaps, figure",
     "trajectory.tsv release.tsv [replicates.tsv replicates_trajectory.tsv] summary.json "
     "compare.png",
     "dpdyn compare --d=200 --n=800 --c=1 --rho=2", run_command, linreg_compare_numbers},
    {"account", "privacy of the schedule (or of a sequence): rho_eff, (epsilon, delta)",
     "summary.json", "dpdyn account --d=1000 --n=4000 --epsilon=2 --delta=1e-6 --schedule=sqrt",
     run_command, linreg_account_numbers},
    {"tune", "optimise c and the schedule on the ODE; heat map; confirm by simulation",
     "trajectory.tsv release.tsv heatmap.tsv summary.json tune.png",
     "dpdyn tune --d=1000 --n=4000 --rho=2 --schedule=sqrt", dpd__linreg_tune, linreg_tune_numbers,
     .replicates_key = "confirm_seeds"},
    {NULL, NULL, NULL, NULL, NULL, NULL}};
