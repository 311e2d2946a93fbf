/* model=rf, command reconstruct: keys, replicates and output of the reconstruction attack
 * (rf_reconstruct_impl.h; the attack itself: rf_reconstruct.c).
 * SPDX-License-Identifier: MIT
 *
 * Replicate r (r = 0 .. seeds - 1), with S = seed and D = the problem's draw:
 *   problem   draw D + r of seed S on the sphere |x| = sqrt(d) (rf.h streams; n_test = 1, the
 *             test set plays no part), theta = file: draw D for every replicate;
 *   theta     star: Phi^+ y (dgelsd); dpgd: dpd_rf_sim_run (one replicate, threads 1) with seed
 *             dpd__audit_seed_mix(S, r), i.e. noise stream (splitmix64(S + r golden), 0);
 *             file: the file's p values;
 *   attack    starts from streams (S, DPD_RF_RECONSTRUCT_STREAM + 2^20 r + k), k < restarts;
 *   score     against the draw's inputs (dpd_rf_reconstruct_inputs_get).
 * Replicates run in parallel over `threads` OpenMP threads, each serial inside (OpenBLAS on one
 * thread), and their values are reduced in replicate order: the same bits for any `threads`. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/audit_impl.h"
#include "core/datafile_impl.h"
#include "core/error_impl.h"
#include "core/model_impl.h"
#include "core/stats_impl.h"
#include "rf/rf_reconstruct_impl.h"
#include "rf/rf_run_impl.h"

/* Stream offset between the starts of consecutive replicates (restarts <= 2^20, the key's
 * range). */
#define REPLICATE_STREAMS ((uint64_t)1 << 20)
/* Hermite orders checked for the non-zero coefficients of order >= 3 (B2). */
#define B2_ORDERS 16

enum { RELEASE_STAR = 0, RELEASE_DPGD, RELEASE_FILE };

/* The per-replicate values, in the column order of reconstruct.tsv. */
#define COLUMNS                                                                                    \
  "replicate draw reconstructed_fraction matched_fraction matching_error sign_flip_fraction "      \
  "cosine_mean "                                                                                   \
  "loss residual loss_at_truth theta_norm best_restart restarts_run iterations evaluations"
enum {
  C_REPLICATE,
  C_DRAW,
  C_FRACTION,
  C_MATCHED,
  C_ERROR,
  C_FLIPS,
  C_COSINE,
  C_LOSS,
  C_RESIDUAL,
  C_TRUTH,
  C_THETA_NORM,
  C_BEST,
  C_RESTARTS,
  C_ITERATIONS,
  C_EVALUATIONS,
  NCOL
};

int dpd__rf_reconstruct_defaults(dpd_keys *keys, dpd_err *err) {
  static const char *const key[] = {"d", "n", "p", "seeds"};
  static const double value[] = {10.0, 8.0, 2000.0, 8.0};
  int status = DPD_OK;
  for (size_t k = 0; k < 4 && status == DPD_OK; k++) {
    if (!dpd_keys_given(keys, key[k])) {
      status = dpd_keys_effective_real_set(keys, key[k], value[k], err);
    }
  }
  return status;
}

/* The privacy budget key given (epsilon, sigma, mu, zcdp), NULL when none. */
static const char *budget_given(const dpd_keys *keys) {
  static const char *const budgets[] = {"epsilon", "sigma", "mu", "zcdp"};
  for (size_t k = 0; k < 4; k++) {
    if (dpd_keys_given(keys, budgets[k])) {
      return budgets[k];
    }
  }
  return NULL;
}

/* The release: star, dpgd or file (*path its PATH); auto is dpgd when a budget is given. */
static int release_get(const dpd_keys *keys, int *release, const char **path, dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, "theta");
  *path = dpd__model_file_path(text);
  if (*path != NULL && **path != '\0') {
    *release = RELEASE_FILE;
    return DPD_OK;
  }
  if (text != NULL && strcmp(text, "auto") == 0) {
    *release = budget_given(keys) != NULL ? RELEASE_DPGD : RELEASE_STAR;
    return DPD_OK;
  }
  if (text != NULL && (strcmp(text, "star") == 0 || strcmp(text, "dpgd") == 0)) {
    *release = text[0] == 's' ? RELEASE_STAR : RELEASE_DPGD;
    return DPD_OK;
  }
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for 'theta': '%s' (allowed: auto, star, dpgd, file:PATH with a "
                  "non-empty PATH)",
                  text != NULL ? text : "");
}

/* theta = file:PATH: its values (returned-owned), which must be p. */
static int theta_file_read(const char *path, size_t p, double **theta, dpd_err *err) {
  size_t rows = 0, cols = 0;
  double *data = NULL;
  int status = dpd__datafile_read("theta", path, (size_t)(8.0 * (double)p + 4096.0) * 4, &data,
                                  &rows, &cols, NULL, err);
  if (status < 0) {
    return status;
  }
  if (rows * cols != p) {
    free(data);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'theta': file:%s holds %zu x %zu = %zu values (allowed: "
                    "p = %zu values, one per feature)",
                    path, rows, cols, rows * cols, p);
  }
  *theta = data;
  return DPD_OK;
}

/* The activation's (B2) conditions: *failed receives the first failing condition's text
 * (empty when all hold); returns 1 when the activation is linear in L2 (every coefficient of
 * order >= 2 zero), the one case the attack cannot work: the slides' counterexample. */
static int b2_check(dpd_rf_activation act, char *failed, size_t cap, double mu[5]) {
  int odd = 0, even = 0, higher = 0;
  for (unsigned r = 0; r <= B2_ORDERS; r++) {
    const double m = dpd_rf_activation_hermite(act, r);
    if (r < 5) {
      mu[r] = m;
    }
    const int nz = fabs(m) > DPD_RF_RECONSTRUCT_HERMITE_ZERO;
    higher |= r >= 2 && nz;
    odd |= r >= 3 && r % 2 == 1 && nz;
    even |= r >= 3 && r % 2 == 0 && nz;
  }
  size_t len = 0;
  failed[0] = '\0';
#define B2_FAIL(...)                                                                               \
  (len += (size_t)snprintf(failed + len, cap - len, "%s", len > 0 ? "; " : ""),                    \
   len += (size_t)snprintf(failed + len, cap - len, __VA_ARGS__), len = len < cap ? len : cap - 1)
  if (fabs(mu[0]) > DPD_RF_RECONSTRUCT_HERMITE_ZERO) {
    B2_FAIL("phi_0 = %.4g != 0", mu[0]);
  }
  if (fabs(mu[2]) > DPD_RF_RECONSTRUCT_HERMITE_ZERO) {
    B2_FAIL("phi_2 = %.4g != 0", mu[2]);
  }
  if (!(fabs(mu[1]) > DPD_RF_RECONSTRUCT_HERMITE_ZERO)) {
    B2_FAIL("phi_1 = 0");
  }
  if (!odd || !even) {
    B2_FAIL("no non-zero %s Hermite coefficient of order 3..%d", odd ? "even" : "odd", B2_ORDERS);
  }
#undef B2_FAIL
  return !higher;
}

/* Bytes of one replicate: its problem, theta* by dgelsd (or DP-GD's workspace), the attack's
 * workspace (3 n p + n^2 + p + 4 n d) and BFGS's vectors (about 10 n d). */
static double replicate_bytes(const dpd_rf_config *pc) {
  dpd__rf_bytes b = {0};
  dpd__rf_problem_bytes(pc, &b);
  dpd__rf_theta_star_bytes(pc, &b);
  const double n = (double)pc->n, d = (double)pc->d, p = (double)pc->p;
  return b.p + b.n + b.d + 8.0 * (3.0 * n * p + n * n + 2.0 * p + 16.0 * n * d);
}

int dpd__rf_reconstruct_keys(const dpd_keys *keys, const dpd_rf_config *pc, dpd_err *err) {
  const char *budget = budget_given(keys), *path;
  int release, status;
  char failed[256];
  double mu[5], *theta = NULL;
  size_t choice;
  if ((status = release_get(keys, &release, &path, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "require_b2", &choice, err)) < 0) {
    return status;
  }
  if (release != RELEASE_DPGD && budget != NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'theta': '%s' with %s given (allowed: theta = dpgd, whose "
                    "DP-GD training the privacy budget calibrates; or leave %s out)",
                    dpd_keys_text_get(keys, "theta"), budget, budget);
  }
  if (pc->p < pc->n) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'p': %zu (allowed: p >= n = %zu: with fewer features "
                    "than samples theta* need not lie in the features' span)",
                    pc->p, pc->n);
  }
  if (b2_check(pc->activation, failed, sizeof failed, mu)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'activation': %s (allowed: a non-linear activation: "
                    "with every Hermite coefficient of order >= 2 zero the span of the features "
                    "does not identify the inputs)",
                    dpd_rf_activation_name(pc->activation));
  }
  if (choice == 1 && failed[0] != '\0') {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'activation': %s fails assumption (B2): %s (allowed: with "
                    "require_b2 = on, phi_0 = phi_2 = 0, phi_1 != 0 and non-zero coefficients of "
                    "order >= 3 of both parities, e.g. hermite134)",
                    dpd_rf_activation_name(pc->activation), failed);
  }
  if (release == RELEASE_FILE && (status = theta_file_read(path, pc->p, &theta, err)) < 0) {
    return status;
  }
  free(theta);
  return DPD_OK;
}

double dpd__rf_reconstruct_bytes(const dpd_rf_config *pc, const dpd_rf_sim_config *sc) {
  const double threads = sc->threads > 0 ? sc->threads : omp_get_max_threads();
  dpd_rf_config c = *pc;
  c.n_test = 1;
  return replicate_bytes(&c) * fmin((double)sc->seeds, threads) + 16.0 * NCOL * (double)sc->seeds;
}

/* Everything one replicate needs and gives. */
typedef struct {
  const dpd_rf_config *pc;
  const dpd_rf_sim_config *sc;
  int release;
  const double *theta_file;
  dpd_rf_reconstruct_config attack;
  double cosine;
} job;

/* Replicate r: the values of its row (COLUMNS). */
static int replicate_run(const job *j, size_t r, double *row, dpd_err *err) {
  dpd_rf_config c = *j->pc;
  dpd_rf_problem *pr = NULL;
  dpd_rf_sim_result *res = NULL;
  c.n_test = 1;
  c.input = DPD_RF_INPUT_SPHERE;
  c.draw = j->release == RELEASE_FILE ? j->pc->draw : j->pc->draw + r;
  const size_t n = c.n, d = c.d, p = c.p;
  double *theta = malloc(p * sizeof *theta), *X = malloc(n * d * sizeof *X),
         *Xh = malloc(n * d * sizeof *Xh);
  int status = theta == NULL || X == NULL || Xh == NULL
                   ? DPD_FAIL(err, DPD_ENOMEM, "reconstruct: out of memory (n = %zu)", n)
                   : dpd_rf_problem_create(&c, &pr, err);
  if (status >= 0 && j->release == RELEASE_STAR) {
    status = dpd_rf_theta_star_get(pr, -1.0, theta, NULL, NULL, err);
  } else if (status >= 0 && j->release == RELEASE_DPGD) {
    dpd_rf_sim_config s = *j->sc;
    s.seeds = 1;
    s.grid = 2;
    s.threads = 1;
    s.progress = NULL;
    s.seed = dpd__audit_seed_mix(j->sc->seed, r);
    if ((status = dpd_rf_sim_run(pr, &s, &res, err)) >= 0) {
      memcpy(theta, res->theta_last, p * sizeof *theta);
    }
  } else if (status >= 0) {
    memcpy(theta, j->theta_file, p * sizeof *theta);
  }
  dpd_rf_reconstruct_config a = j->attack;
  a.stream = DPD_RF_RECONSTRUCT_STREAM + REPLICATE_STREAMS * (uint64_t)r;
  dpd_rf_reconstruct_info info;
  dpd_rf_reconstruct_score score;
  dpd_rf_reconstruct_work *w = NULL;
  if (status >= 0) {
    const dpd_rf_features f = {pr->V, p, d, c.activation};
    if ((status = dpd_rf_reconstruct_inputs_get(&c, X, err)) >= 0 &&
        (status = dpd_rf_reconstruct_run(&f, theta, n, &a, Xh, &info, err)) >= 0 &&
        (status = dpd_rf_reconstruct_score_eval(Xh, n, X, n, d, j->cosine, &score, NULL, NULL,
                                                err)) >= 0 &&
        (status = dpd_rf_reconstruct_work_create(&f, n, a.ridge, &w, err)) >= 0) {
      double t2 = 0.0;
      for (size_t k = 0; k < p; k++) {
        t2 += theta[k] * theta[k];
      }
      const double v[NCOL] = {(double)r,
                              (double)c.draw,
                              score.reconstructed_fraction,
                              score.matched_fraction,
                              score.matching_error,
                              score.sign_flip_fraction,
                              score.cosine_mean,
                              info.loss,
                              info.residual,
                              dpd_rf_reconstruct_loss_eval(w, theta, X, NULL, NULL),
                              sqrt(t2),
                              (double)info.best_restart,
                              (double)info.restarts_run,
                              (double)info.iterations,
                              (double)info.evaluations};
      memcpy(row, v, sizeof v);
    }
  }
  dpd_rf_reconstruct_work_free(w);
  dpd_rf_sim_result_free(res);
  dpd_rf_problem_free(pr);
  free(theta);
  free(X);
  free(Xh);
  return status;
}

/* All replicates, in parallel; the lowest failed replicate is run again alone for its message. */
static int replicates_all(const job *j, size_t seeds, int threads, const dpd_run_env *env,
                          double *rows, dpd_err *err) {
  size_t failed = SIZE_MAX, done = 0;
  int stop = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (long k = 0; k < (long)seeds; k++) {
    int halt;
#pragma omp atomic read
    halt = stop;
    if (!halt && replicate_run(j, (size_t)k, rows + (size_t)k * NCOL, NULL) < 0) {
#pragma omp critical(dpd_rf_reconstruct_failed)
      failed = (size_t)k < failed ? (size_t)k : failed;
    }
#pragma omp atomic update
    done++;
    if (env->progress != NULL && omp_get_thread_num() == 0) {
      size_t now;
#pragma omp atomic read
      now = done;
      if (env->progress(env->progress_user, "replicates", now, seeds) != 0) {
#pragma omp atomic write
        stop = 1;
      }
    }
  }
  if (stop) {
    return DPD_FAIL(err, DPD_ECANCELLED, "reconstruct: stopped after %zu of %zu replicates", done,
                    seeds);
  }
  return failed == SIZE_MAX ? DPD_OK : replicate_run(j, failed, rows + failed * NCOL, err);
}

/* The summary: mean and SE over the replicates of each score (sign flips over the replicates
 * that matched some point), the cost means, the activation's Hermite coefficients. */
static void summary_set(dpd_output *out, const double *rows, size_t seeds) {
  static const struct {
    const char *name;
    int col;
  } scored[] = {{"reconstructed_fraction", C_FRACTION},
                {"matched_fraction", C_MATCHED},
                {"matching_error", C_ERROR},
                {"sign_flip_fraction", C_FLIPS},
                {"cosine_mean", C_COSINE},
                {"loss", C_LOSS},
                {"residual", C_RESIDUAL},
                {"loss_at_truth", C_TRUTH},
                {"theta_norm", C_THETA_NORM}};
  double *x = malloc(seeds * sizeof *x);
  char se[64];
  if (x == NULL) {
    return;
  }
  for (size_t k = 0; k < sizeof scored / sizeof scored[0]; k++) {
    size_t m = 0;
    double mean = NAN, sd = NAN;
    for (size_t r = 0; r < seeds; r++) {
      const double v = rows[r * NCOL + (size_t)scored[k].col];
      if (!isnan(v)) {
        x[m++] = v;
      }
    }
    if (m > 0) {
      dpd__stats_mean_se(x, m, 1, &mean, &sd);
    }
    snprintf(se, sizeof se, "%s_se", scored[k].name);
    dpd_output_number_set(out, scored[k].name, mean);
    dpd_output_number_set(out, se, m > 1 ? sd : NAN);
  }
  static const char *const cost[] = {"restarts_run", "iterations", "evaluations"};
  for (size_t k = 0; k < 3; k++) {
    double mean, sd;
    dpd__stats_mean_se(rows + C_RESTARTS + k, seeds, NCOL, &mean, &sd);
    dpd_output_number_set(out, cost[k], mean);
  }
  free(x);
}

int dpd__rf_reconstruct_output(dpd_output *out, const dpd_rf_config *pc,
                               const dpd_rf_sim_config *sc, const dpd_keys *keys,
                               const dpd_run_env *env, dpd_err *err) {
  job j = {.pc = pc, .sc = sc, .attack = dpd_rf_reconstruct_config_default()};
  const char *path;
  char failed[256];
  double mu[5], *theta_file = NULL;
  size_t restarts, iterations;
  int status;
  if ((status = release_get(keys, &j.release, &path, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "restarts", &restarts, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "attack_iterations", &iterations, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "cosine", &j.cosine, err)) < 0 ||
      (status = dpd_keys_real_get(keys, "ridge", &j.attack.ridge, err)) < 0 ||
      (j.release == RELEASE_FILE &&
       (status = theta_file_read(path, pc->p, &theta_file, err)) < 0)) {
    return status;
  }
  j.theta_file = theta_file;
  j.attack.restarts = restarts;
  j.attack.max_iter = iterations;
  j.attack.seed = sc->seed;
  const size_t seeds = j.release == RELEASE_FILE ? 1 : sc->seeds;
  const int threads = sc->threads > 0 ? sc->threads : omp_get_max_threads();
  double *rows = calloc(seeds * NCOL, sizeof *rows);
  const double *cols[NCOL];
  if (rows == NULL) {
    free(theta_file);
    return DPD_FAIL(err, DPD_ENOMEM, "reconstruct: out of memory (seeds = %zu)", seeds);
  }
  status = replicates_all(&j, seeds, threads, env, rows, err);
  free(theta_file);
  double *colv = status >= 0 ? malloc(NCOL * seeds * sizeof *colv) : NULL;
  if (status >= 0 && colv == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "reconstruct: out of memory (seeds = %zu)", seeds);
  }
  if (status >= 0) {
    for (size_t k = 0; k < NCOL; k++) {
      for (size_t r = 0; r < seeds; r++) {
        colv[k * seeds + r] = rows[r * NCOL + k];
      }
      cols[k] = colv + k * seeds;
    }
    status = dpd_output_table_add(out, "reconstruct.tsv", NULL, COLUMNS, seeds, NCOL, cols, err);
  }
  if (status >= 0) {
    summary_set(out, rows, seeds);
    (void)b2_check(pc->activation, failed, sizeof failed, mu);
    dpd__output_numbers_set(out, "hermite_", "mu0 mu1 mu2 mu3 mu4", mu, NULL);
    dpd_output_number_set(out, "b2_holds", failed[0] == '\0' ? 1.0 : 0.0);
    dpd_output_number_set(out, "p_over_nd", (double)pc->p / ((double)pc->n * (double)pc->d));
    dpd_output_number_set(out, "seeds", (double)seeds);
    static const char *const released[] = {"star", "dpgd", "file"};
    cJSON_AddStringToObject(out->summary, "theta", dpd_keys_text_get(keys, "theta"));
    cJSON_AddStringToObject(out->summary, "released", released[j.release]);
    if (failed[0] != '\0') {
      status = dpd__output_note_add(
          out, err,
          "warning: activation %s fails assumption (B2) of the slides: %s; the attack runs, "
          "but the theorem does not cover it (a reconstruction of -x_i counts as recovered and is "
          "reported as a sign flip)",
          dpd_rf_activation_name(pc->activation), failed);
      cJSON_AddStringToObject(out->summary, "b2_warning", failed);
    }
  }
  free(colv);
  free(rows);
  return status;
}
