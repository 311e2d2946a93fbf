/* Random-features regression problem: data, labels, feature matrices (docs/math.md §2.1).
 * SPDX-License-Identifier: MIT
 *
 * References: Bombari & Mondelli, PNAS 122 (2025) e2423072122 (arXiv:2410.14787), §2-3;
 * Rahimi & Recht, NIPS 2007; notes-rf-nc-sp.md A.1 (V_jk ~ N(0, 1/d), as the released code's
 * `V = randn(p, d) / sqrt(d)`). Hermite polynomials: He_2(z) = z^2 - 1, He_3(z) = z^3 - 3z
 * (probabilists'), so E He_k(g)^2 = k! for g ~ N(0, 1).
 *
 * The stream of every random item is listed in include/dpdyn/rf.h. Each item is drawn with one
 * Gaussian fill from the start of its own stream, so changing n does not change V or u, and
 * changing n_test does not change the training set; each draw (cfg.draw) has its own streams. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/rf.h"
#include "dpdyn/rng.h"
#include "core/dot_impl.h"
#include "rf/rf_run_impl.h"

#define RF_D_DEFAULT 100
#define RF_N_DEFAULT 400
#define RF_N_TEST_DEFAULT 1000
#define RF_P_DEFAULT 2000
#define RF_ZETA_DEFAULT 0.1
#define RF_SEED_DEFAULT 1

/* Offsets below DPD_RNG_STREAM_PROBLEM of the problem's streams (rf.h). */
enum { STREAM_V = 0, STREAM_U, STREAM_X, STREAM_Z, STREAM_X_TEST, STREAM_Z_TEST };

dpd_rf_config dpd_rf_config_default(void) {
  dpd_rf_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.d = RF_D_DEFAULT;
  cfg.n = RF_N_DEFAULT;
  cfg.n_test = RF_N_TEST_DEFAULT;
  cfg.p = RF_P_DEFAULT;
  cfg.input = DPD_RF_INPUT_GAUSSIAN;
  cfg.target = DPD_RF_TARGET_LINEAR;
  cfg.zeta = RF_ZETA_DEFAULT;
  cfg.activation = DPD_RF_ACT_TANH;
  cfg.seed = RF_SEED_DEFAULT;
  return cfg;
}

void dpd_rf_problem_free(dpd_rf_problem *problem) {
  if (problem == NULL) {
    return;
  }
  free(problem->V);
  free(problem->u);
  free(problem->phi);
  free(problem->phi_test);
  free(problem->y);
  free(problem->y_test);
  free(problem->row_norm);
  free(problem->rows);
  free(problem);
}

/* 1/sqrt(2 pi): the mean of max(0, g), g ~ N(0, 1). */
#define INV_SQRT_2PI 0.39894228040143267794
/* sqrt(2/pi): the mean of |g|. */
#define SQRT_2_OVER_PI 0.79788456080286535588

double dpd_rf_activation_eval(dpd_rf_activation act, double z) {
  switch (act) {
  case DPD_RF_ACT_TANH:
    return tanh(z);
  case DPD_RF_ACT_RELU_CENTERED:
    return (z > 0.0 ? z : 0.0) - INV_SQRT_2PI;
  case DPD_RF_ACT_HERMITE13:
    return z + (z * z * z - 3.0 * z) / 6.0;
  case DPD_RF_ACT_RELU:
    return z > 0.0 ? z : 0.0;
  case DPD_RF_ACT_ABS_CENTERED:
    return fabs(z) - SQRT_2_OVER_PI;
  case DPD_RF_ACT_HERMITE134:
    return z + (z * z * z - 3.0 * z) / 6.0 + ((z * z - 6.0) * z * z + 3.0) / 24.0;
  }
  return NAN;
}

double dpd_rf_activation_deriv(dpd_rf_activation act, double z) {
  switch (act) {
  case DPD_RF_ACT_TANH: {
    const double t = tanh(z);
    return 1.0 - t * t;
  }
  case DPD_RF_ACT_RELU_CENTERED:
  case DPD_RF_ACT_RELU:
    return z > 0.0 ? 1.0 : 0.0;
  case DPD_RF_ACT_HERMITE13:
    return 1.0 + (z * z - 1.0) / 2.0;
  case DPD_RF_ACT_ABS_CENTERED:
    return (double)((z > 0.0) - (z < 0.0));
  case DPD_RF_ACT_HERMITE134:
    return 1.0 + (z * z - 1.0) / 2.0 + (z * z - 3.0) * z / 6.0;
  }
  return NAN;
}

/* He_r(z) by the recurrence He_{k+1} = z He_k - k He_{k-1}. */
static double hermite_poly(unsigned r, double z) {
  double prev = 1.0, cur = z;
  if (r == 0) {
    return 1.0;
  }
  for (unsigned k = 1; k < r; k++) {
    const double next = z * cur - (double)k * prev;
    prev = cur;
    cur = next;
  }
  return cur;
}

/* E[max(0, G) He_r(G)] = He_{r-2}(0) / sqrt(2 pi) for r >= 2 (integrate by parts with
 * He_r phi = (-1)^r phi^(r)); 1/sqrt(2 pi) and 1/2 for r = 0, 1. */
static double relu_moment(unsigned r) {
  if (r <= 1) {
    return r == 0 ? INV_SQRT_2PI : 0.5;
  }
  return hermite_poly(r - 2, 0.0) * INV_SQRT_2PI;
}

/* The positive nodes and weights of the 10-point Gauss-Legendre rule on [-1, 1]. */
static const double gl10[5][2] = {{0.14887433898163122, 0.29552422471475298},
                                  {0.43339539412924721, 0.26926671930999652},
                                  {0.67940956829902444, 0.21908636251598201},
                                  {0.86506336668898454, 0.14945134915058036},
                                  {0.97390652851717174, 0.066671344308688069}};

/* E[phi(G) He_r(G)] by composite 10-point Gauss-Legendre on panels of width 1/8 covering
 * [-16, 16] (the kinks of the activations are at 0, a panel edge); the Gaussian tail beyond 16
 * is below 1e-56. */
static double hermite_quadrature(dpd_rf_activation act, unsigned r) {
  enum { PANELS_PER_UNIT = 8, HALF_WIDTH_UNITS = 16 };
  const double h = 1.0 / PANELS_PER_UNIT;
  double sum = 0.0;
  for (int k = -HALF_WIDTH_UNITS * PANELS_PER_UNIT; k < HALF_WIDTH_UNITS * PANELS_PER_UNIT; k++) {
    const double mid = ((double)k + 0.5) * h;
    double panel = 0.0;
    for (int q = 0; q < 5; q++) {
      for (int sgn = -1; sgn <= 1; sgn += 2) {
        const double z = mid + sgn * gl10[q][0] * 0.5 * h;
        panel += gl10[q][1] * dpd_rf_activation_eval(act, z) * hermite_poly(r, z) *
                 exp(-0.5 * z * z);
      }
    }
    sum += panel * 0.5 * h;
  }
  return sum * INV_SQRT_2PI;
}

double dpd_rf_activation_hermite(dpd_rf_activation act, unsigned r) {
  double m; /* E[phi(G) He_r(G)] */
  if (r > DPD_RF_HERMITE_MAX) {
    return NAN;
  }
  switch (act) {
  case DPD_RF_ACT_TANH:
    m = r % 2 == 0 ? 0.0 : hermite_quadrature(act, r); /* odd */
    break;
  case DPD_RF_ACT_RELU:
    m = relu_moment(r);
    break;
  case DPD_RF_ACT_RELU_CENTERED:
    m = r == 0 ? 0.0 : relu_moment(r);
    break;
  case DPD_RF_ACT_ABS_CENTERED: /* |z| = relu(z) + relu(-z), E[relu(-G) He_r(G)] = (-1)^r ... */
    m = r == 0 || r % 2 == 1 ? 0.0 : 2.0 * relu_moment(r);
    break;
  case DPD_RF_ACT_HERMITE13: /* E[He_j He_r] = r! [j = r] */
    m = r == 1 ? 1.0 : r == 3 ? 1.0 : 0.0;
    break;
  case DPD_RF_ACT_HERMITE134:
    m = r == 1 || r == 3 || r == 4 ? 1.0 : 0.0;
    break;
  default:
    return NAN;
  }
  double fact = 1.0;
  for (unsigned k = 2; k <= r; k++) {
    fact *= (double)k;
  }
  return m / sqrt(fact);
}

typedef struct {
  const char *name;
  int value;
} name_entry;

static const name_entry activation_names[] = {{"tanh", DPD_RF_ACT_TANH},
                                              {"relu_centered", DPD_RF_ACT_RELU_CENTERED},
                                              {"hermite13", DPD_RF_ACT_HERMITE13},
                                              {"relu", DPD_RF_ACT_RELU},
                                              {"abs_centered", DPD_RF_ACT_ABS_CENTERED},
                                              {"hermite134", DPD_RF_ACT_HERMITE134}};
static const name_entry input_names[] = {{"gaussian", DPD_RF_INPUT_GAUSSIAN},
                                         {"sphere", DPD_RF_INPUT_SPHERE},
                                         {"file", DPD_RF_INPUT_FILE}};
static const name_entry target_names[] = {{"linear", DPD_RF_TARGET_LINEAR},
                                          {"sign", DPD_RF_TARGET_SIGN},
                                          {"hermite2", DPD_RF_TARGET_HERMITE2},
                                          {"file", DPD_RF_TARGET_FILE}};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int lookup(const name_entry *table, size_t count, const char *key, const char *allowed,
                  const char *name, int *out, dpd_err *err) {
  if (name != NULL) {
    for (size_t k = 0; k < count; k++) {
      if (strcmp(name, table[k].name) == 0) {
        *out = table[k].value;
        return DPD_OK;
      }
    }
  }
  return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': '%s' (allowed: %s)", key,
                  name != NULL ? name : "(null)", allowed);
}

static const char *name_of(const name_entry *table, size_t count, int value) {
  for (size_t k = 0; k < count; k++) {
    if (table[k].value == value) {
      return table[k].name;
    }
  }
  return "unknown";
}

#define ACT_ALLOWED "tanh, relu_centered, hermite13, relu, abs_centered, hermite134"
#define INPUT_ALLOWED "gaussian, sphere, file"
#define TARGET_ALLOWED "linear, sign, hermite2, file"

int dpd_rf_activation_get(const char *name, dpd_rf_activation *out, dpd_err *err) {
  int v = 0;
  int st =
      lookup(activation_names, COUNT(activation_names), "activation", ACT_ALLOWED, name, &v, err);
  if (st == DPD_OK) {
    *out = (dpd_rf_activation)v;
  }
  return st;
}

int dpd_rf_input_get(const char *name, dpd_rf_input *out, dpd_err *err) {
  int v = 0;
  int st = lookup(input_names, COUNT(input_names), "input", INPUT_ALLOWED, name, &v, err);
  if (st == DPD_OK) {
    *out = (dpd_rf_input)v;
  }
  return st;
}

int dpd_rf_target_get(const char *name, dpd_rf_target *out, dpd_err *err) {
  int v = 0;
  int st = lookup(target_names, COUNT(target_names), "target", TARGET_ALLOWED, name, &v, err);
  if (st == DPD_OK) {
    *out = (dpd_rf_target)v;
  }
  return st;
}

const char *dpd_rf_activation_name(dpd_rf_activation act) {
  return name_of(activation_names, COUNT(activation_names), (int)act);
}

const char *dpd_rf_input_name(dpd_rf_input input) {
  return name_of(input_names, COUNT(input_names), (int)input);
}

const char *dpd_rf_target_name(dpd_rf_target target) {
  return name_of(target_names, COUNT(target_names), (int)target);
}

/* The data file against the config: present for input = file, d its columns, n + n_test at
 * most its rows (naming n when n alone leaves no test row, else n_test), targets for
 * target = file. */
static int data_check(const dpd_rf_config *cfg, dpd_err *err) {
  dpd_rf_data_info info;
  if (cfg->input != DPD_RF_INPUT_FILE) {
    return cfg->target != DPD_RF_TARGET_FILE
               ? DPD_OK
               : DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for 'target': file (allowed: file:PATH only with input = "
                          "file:PATH, whose rows it labels; or linear, sign, hermite2)");
  }
  if (cfg->data == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'input': file without data (allowed: input = file with "
                    "dpd_rf_config.data from dpd_rf_data_create)");
  }
  dpd_rf_data_info_get(cfg->data, &info);
  if (cfg->d != info.d) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'd': %zu (allowed: d = %zu, the columns of the input file "
                    "%s; or leave d out)",
                    cfg->d, info.d, dpd__rf_data_path(cfg->data, 0));
  }
  if (cfg->n >= info.rows || cfg->n_test > info.rows - cfg->n) {
    const int name_n = cfg->n >= info.rows;
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %zu with %s = %zu (allowed: n + n_test <= N = %zu, "
                    "the rows of the input file %s: the training and test rows are distinct "
                    "rows of it)",
                    name_n ? "n" : "n_test", name_n ? cfg->n : cfg->n_test, name_n ? "n_test" : "n",
                    name_n ? cfg->n_test : cfg->n, info.rows, dpd__rf_data_path(cfg->data, 0));
  }
  if (cfg->target == DPD_RF_TARGET_FILE && !info.has_targets) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'target': file without a targets file (allowed: "
                    "file:PATH, or linear, sign, hermite2)");
  }
  return DPD_OK;
}

static int validate(const dpd_rf_config *cfg, dpd_err *err) {
  int status;
  const struct {
    const char *key;
    size_t value;
  } sizes[] = {{"d", cfg->d}, {"n", cfg->n}, {"n_test", cfg->n_test}, {"p", cfg->p}};
  for (size_t k = 0; k < COUNT(sizes); k++) {
    if (sizes[k].value < 1) {
      return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %zu (allowed: integer >= 1)",
                      sizes[k].key, sizes[k].value);
    }
  }
  if (!(cfg->zeta >= 0.0) || !isfinite(cfg->zeta)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'zeta': %g (allowed: finite, >= 0)",
                    cfg->zeta);
  }
  if (strcmp(dpd_rf_activation_name(cfg->activation), "unknown") == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'activation': %d (allowed: %s)",
                    (int)cfg->activation, ACT_ALLOWED);
  }
  if (strcmp(dpd_rf_input_name(cfg->input), "unknown") == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'input': %d (allowed: %s)", (int)cfg->input,
                    INPUT_ALLOWED);
  }
  if (strcmp(dpd_rf_target_name(cfg->target), "unknown") == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'target': %d (allowed: %s)",
                    (int)cfg->target, TARGET_ALLOWED);
  }
  if ((status = data_check(cfg, err)) < 0) {
    return status;
  }
  if (cfg->draw > DPD_RF_DRAW_MAX) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'draw': %llu (allowed: integer 0 <= draw <= 2^56)",
                    (unsigned long long)cfg->draw);
  }
  /* All products must fit in size_t bytes and in the BLAS int (blasint is 32-bit here). */
  const size_t max_dim = (size_t)INT32_MAX;
  const size_t max_doubles = SIZE_MAX / sizeof(double);
  size_t rows = cfg->n > cfg->n_test ? cfg->n : cfg->n_test;
  if (cfg->d > max_dim || cfg->p > max_dim || rows > max_dim || cfg->p > max_doubles / rows ||
      cfg->d > max_doubles / rows || cfg->d > max_doubles / cfg->p) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'p': sizes too large (d = %zu, n = %zu, n_test = %zu, "
                    "p = %zu; allowed: each <= %zu and products within memory)",
                    cfg->d, cfg->n, cfg->n_test, cfg->p, max_dim);
  }
  return DPD_OK;
}

int dpd__rf_config_check(const dpd_rf_config *cfg, dpd_err *err) {
  return validate(cfg, err);
}

/* Sum of squares of x[0..m) in a fixed order. */
static double sum_sq(const double *x, size_t m) {
  return dpd__dot8(x, x, m);
}

/* Item `offset` of draw `draw` (rf.h): stream (seed, M - DPD_RF_DRAW_STREAMS draw - offset). */
static void fill_stream(const dpd_rf_config *cfg, int offset, double *out, size_t m) {
  dpd_rng rng;
  dpd_rng_init(&rng, cfg->seed,
               DPD_RNG_STREAM_PROBLEM - DPD_RF_DRAW_STREAMS * cfg->draw - (uint64_t)offset);
  dpd_rng_gaussian_fill(&rng, out, m);
}

static double target_eval(dpd_rf_target target, double s) {
  switch (target) {
  case DPD_RF_TARGET_LINEAR:
    return s;
  case DPD_RF_TARGET_SIGN:
    return (double)((s > 0.0) - (s < 0.0));
  case DPD_RF_TARGET_HERMITE2:
    return (s * s - 1.0) / sqrt(2.0);
  case DPD_RF_TARGET_FILE: /* the data's targets (build_set) */
    break;
  }
  return NAN;
}

/* phi[i p + j] = act(x_i^T v_j) for rows x_i of X (rows x d) and rows v_j of V (p x d), in
 * tiles that keep a block of X and of V in cache. Every entry is one dpd__dot8, so the features
 * are bit-identical for any thread count and any number of rows. (OpenBLAS dgemm is not: its
 * blocking, and with it the summation order, depends on the shape and on its thread count.) */
static void features_eval(dpd_rf_activation act, const double *X, size_t rows, const double *V,
                          size_t p, size_t d, double *phi) {
  enum { TILE_I = 128, TILE_J = 64 };
  const size_t ti = (rows + TILE_I - 1) / TILE_I, tj = (p + TILE_J - 1) / TILE_J;
  const long long tiles = (long long)(ti * tj);
#pragma omp parallel for schedule(static)
  for (long long t = 0; t < tiles; t++) {
    const size_t i0 = (size_t)t / tj * TILE_I, j0 = (size_t)t % tj * TILE_J;
    const size_t i1 = i0 + TILE_I < rows ? i0 + TILE_I : rows;
    const size_t j1 = j0 + TILE_J < p ? j0 + TILE_J : p;
    for (size_t i = i0; i < i1; i++) {
      const double *x = X + i * d;
      double *out = phi + i * p;
      for (size_t j = j0; j < j1; j++) {
        out[j] = dpd_rf_activation_eval(act, dpd__dot8(x, V + j * d, d));
      }
    }
  }
}

/* The data rows of a problem (input = file): the first n + n_test positions of a partial
 * Fisher-Yates shuffle of 0..N-1 drawn from stream (S, B - 2) (rf.h) into pr->rows; idx: N
 * entries of work. */
static void rows_sample(dpd_rf_problem *pr, size_t N, size_t *idx) {
  const dpd_rf_config *cfg = &pr->cfg;
  const size_t m = pr->n + pr->n_test;
  dpd_rng rng;
  dpd_rng_init(&rng, cfg->seed,
               DPD_RNG_STREAM_PROBLEM - DPD_RF_DRAW_STREAMS * cfg->draw - (uint64_t)STREAM_X);
  for (size_t i = 0; i < N; i++) {
    idx[i] = i;
  }
  for (size_t k = 0; k < m; k++) {
    size_t j = k + (size_t)(dpd_rng_uniform(&rng) * (double)(N - k));
    j = j < N ? j : N - 1;
    const size_t tmp = idx[k];
    idx[k] = idx[j];
    idx[j] = tmp;
    pr->rows[k] = idx[k];
  }
}

double dpd__rf_rows_hash(const dpd_rf_problem *problem) {
  uint64_t h = UINT64_C(14695981039346656037);
  if (problem->rows == NULL) {
    return NAN;
  }
  for (size_t k = 0; k < problem->n + problem->n_test; k++) {
    uint64_t v = (uint64_t)problem->rows[k];
    for (int b = 0; b < 8; b++) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= UINT64_C(1099511628211);
    }
  }
  return (double)(h >> 32);
}

/* Draws `rows` inputs into X (work, rows x d), or gathers the preprocessed data rows
 * pr->rows[first ..] (input = file), and builds labels and features: y = f*(x) + zeta z (or the
 * rows' targets + zeta z), Phi = phi(X V^T). */
static void build_set(const dpd_rf_problem *pr, size_t rows, size_t first, int stream_x,
                      int stream_z, double *X, double *y, double *phi) {
  const dpd_rf_config *cfg = &pr->cfg;
  const size_t d = pr->d, p = pr->p;
  if (cfg->input == DPD_RF_INPUT_FILE) {
    for (size_t i = 0; i < rows; i++) {
      dpd_rf_data_row_get(cfg->data, pr->rows[first + i], X + i * d);
    }
  } else {
    fill_stream(cfg, stream_x, X, rows * d);
  }
  if (cfg->input == DPD_RF_INPUT_SPHERE) {
    for (size_t i = 0; i < rows; i++) {
      double norm = sqrt(sum_sq(X + i * d, d));
      double scale = norm > 0.0 ? sqrt((double)d) / norm : 0.0;
      for (size_t k = 0; k < d; k++) {
        X[i * d + k] *= scale;
      }
    }
  }
  fill_stream(cfg, stream_z, y, rows);
  for (size_t i = 0; i < rows; i++) {
    double s = 0.0;
    for (size_t k = 0; k < d; k++) {
      s += pr->u[k] * X[i * d + k];
    }
    const double f = cfg->target == DPD_RF_TARGET_FILE
                         ? dpd_rf_data_target_get(cfg->data, pr->rows[first + i])
                         : target_eval(cfg->target, s);
    y[i] = f + cfg->zeta * y[i];
  }
  features_eval(cfg->activation, X, rows, pr->V, p, d, phi);
}

int dpd_rf_problem_create(const dpd_rf_config *cfg, dpd_rf_problem **out, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  if (cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rf: NULL config or output pointer");
  }
  int status = validate(cfg, err);
  if (status < 0) {
    return status;
  }
  const size_t d = cfg->d, n = cfg->n, nt = cfg->n_test, p = cfg->p;
  const size_t rows = n > nt ? n : nt;
  dpd_rf_data_info info = {0};
  if (cfg->input == DPD_RF_INPUT_FILE) {
    dpd_rf_data_info_get(cfg->data, &info);
  }
  const size_t N = info.rows; /* 0: inputs drawn, no rows */
  double *X = NULL;
  size_t *idx = NULL;
  dpd_rf_problem *pr = calloc(1, sizeof *pr);
  if (pr != NULL) {
    pr->cfg = *cfg;
    pr->d = d;
    pr->n = n;
    pr->n_test = nt;
    pr->p = p;
    pr->V = malloc(p * d * sizeof *pr->V);
    pr->u = malloc(d * sizeof *pr->u);
    pr->phi = malloc(n * p * sizeof *pr->phi);
    pr->phi_test = malloc(nt * p * sizeof *pr->phi_test);
    pr->y = malloc(n * sizeof *pr->y);
    pr->y_test = malloc(nt * sizeof *pr->y_test);
    pr->row_norm = malloc(n * sizeof *pr->row_norm);
    X = malloc(rows * d * sizeof *X);
    if (N > 0) {
      pr->rows = malloc((n + nt) * sizeof *pr->rows);
      idx = malloc(N * sizeof *idx);
    }
  }
  if (pr == NULL || pr->V == NULL || pr->u == NULL || pr->phi == NULL || pr->phi_test == NULL ||
      pr->y == NULL || pr->y_test == NULL || pr->row_norm == NULL || X == NULL ||
      (N > 0 && (pr->rows == NULL || idx == NULL))) {
    dpd_rf_problem_free(pr);
    free(X);
    free(idx);
    return DPD_FAIL(err, DPD_ENOMEM, "rf: out of memory (n = %zu, n_test = %zu, p = %zu, d = %zu)",
                    n, nt, p, d);
  }

  fill_stream(cfg, STREAM_V, pr->V, p * d);
  const double inv_sqrt_d = 1.0 / sqrt((double)d);
  for (size_t k = 0; k < p * d; k++) {
    pr->V[k] *= inv_sqrt_d;
  }
  fill_stream(cfg, STREAM_U, pr->u, d);
  double unorm = sqrt(sum_sq(pr->u, d));
  for (size_t k = 0; k < d; k++) {
    pr->u[k] /= unorm;
  }
  if (N > 0) {
    rows_sample(pr, N, idx);
    free(idx);
  }
  build_set(pr, n, 0, STREAM_X, STREAM_Z, X, pr->y, pr->phi);
  build_set(pr, nt, n, STREAM_X_TEST, STREAM_Z_TEST, X, pr->y_test, pr->phi_test);
  for (size_t i = 0; i < n; i++) {
    pr->row_norm[i] = sqrt(sum_sq(pr->phi + i * p, p));
  }
  free(X);
  *out = pr;
  return DPD_OK;
}

void dpd__rf_problem_bytes(const dpd_rf_config *pc, dpd__rf_bytes *b) {
  const double d = (double)pc->d, n = (double)pc->n, nt = (double)pc->n_test, p = (double)pc->p;
  b->p += 8.0 * (p * d + (n + nt) * p + 2.0 * p);
  b->d += 8.0 * ((n > nt ? n : nt) * d + 4.0 * n + 2.0 * nt);
  if (pc->input == DPD_RF_INPUT_FILE && pc->data != NULL) {
    dpd_rf_data_info info;
    dpd_rf_data_info_get(pc->data, &info);
    /* the data themselves, the shuffle of 0..N-1 while the rows are drawn, the rows kept */
    b->d += info.bytes + 8.0 * ((double)info.rows + n + nt);
  }
}
