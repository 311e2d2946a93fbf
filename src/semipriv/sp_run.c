/* Semi-private learning: Algorithm 1 over replicates (semipriv.h), and its theory.
 * SPDX-License-Identifier: MIT
 *
 * References: Pinto, Hu, Yang & Sanyal (seed 003; arXiv:2306.03962), Algorithm 1, Theorem 1,
 * Prop. 4; Zwald & Blanchard, NIPS 2005, Theorem 4; notes-rf-nc-sp.md C.2-C.3; the core PCA
 * (pca.h: dsyrk blocks and LAPACK dsyevr, or the Gram route when d > n_public).
 *
 * One replicate: the public sample's top k + 1 principal directions by the core PCA (pca.h), its
 * rows regenerated block by block (SP_BLOCK points per dgemm with Q) through a row accessor that
 * keeps the last block; the labelled
 * sample in blocks, projected on the k eigenvectors as it is generated (no n x d matrix is
 * kept); Noisy-SGD; w_hat = A_hat w; the test sample in blocks. k = d skips the PCA (A = I). */
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/error_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/pca.h"
#include "dpdyn/semipriv.h"
#include "core/dot_impl.h"
#include "semipriv/sp_files_impl.h"
#include "semipriv/sp_impl.h"

/* Points generated per block (one dgemm with Q each). */
#define SP_BLOCK 256

static const char *const metric_names[DPD_SEMIPRIV_METRIC_COUNT] = {
    "test_accuracy",  "train_accuracy", "train_hinge", "test_hinge", "xi_k_hat",
    "subspace_error", "eigengap_hat",   "margin_min",  "w_norm",     "active_fraction"};

const char *dpd_semipriv_metric_name(dpd_semipriv_metric metric) {
  if ((int)metric < 0 || metric >= DPD_SEMIPRIV_METRIC_COUNT) {
    return NULL;
  }
  return metric_names[metric];
}

dpd_semipriv_run_config dpd_semipriv_run_config_default(void) {
  dpd_semipriv_run_config c = {.n = 500,
                               .n_public = 5000,
                               .n_test = 1000,
                               .k = 5,
                               .center = 1,
                               .epsilon = 1.0,
                               .delta = 1e-5,
                               .steps = 0,
                               .zeta = NAN,
                               .gamma0 = NAN,
                               .xi0 = NAN,
                               .beta = 0.05,
                               .seeds = 8,
                               .seed = 1,
                               .threads = 0,
                               .progress = NULL,
                               .progress_user = NULL,
                               .trainer = DPD_SEMIPRIV_TRAINER_BST,
                               .noise_multiplier = NAN};
  c.dpsgd = dpd_dpsgd_config_default();
  return c;
}

void dpd_semipriv_result_free(dpd_semipriv_result *res) {
  if (res == NULL) {
    return;
  }
  free(res->replicates);
  free(res->dpsgd_replicates);
  free(res);
}

typedef struct {
  const dpd_semipriv_gen *gen;
  const dpd_semipriv_run_config *cfg;
  dpd_semipriv_sgd_config sgd;
  dpd_dpsgd_config dp;  /* trainer = DPSGD */
  const double *A_true; /* [d k] population top-k */
  double gap_true;      /* population Delta_k */
  size_t work_doubles;
  double *rows;       /* [seeds * METRIC_COUNT] */
  double *dpsgd_rows; /* DPSGD: [seeds * DPSGD_COUNT] */
  dpd_err *errs;      /* [seeds] the failing replicate's reason */
} sp_plan;

/* Layout of one thread's workspace (offsets in doubles). */
typedef struct {
  double *X, *Z, *yb, *Ahat, *P, *ylab, *w, *what, *sgdw, *subw;
} sp_ws;

static size_t layout(const sp_plan *pl, double *base, sp_ws *ws) {
  const size_t d = pl->gen->d, k = pl->cfg->k, n = pl->cfg->n;
  const int pca = k < d;
  size_t off = 0;
#define SP_TAKE(field, count)                                                                      \
  do {                                                                                             \
    if (base != NULL) {                                                                            \
      ws->field = base + off;                                                                      \
    }                                                                                              \
    off += (count);                                                                                \
  } while (0)
  SP_TAKE(X, SP_BLOCK * d);
  SP_TAKE(Z, SP_BLOCK * d);
  SP_TAKE(yb, SP_BLOCK);
  SP_TAKE(Ahat, d * k);
  SP_TAKE(P, n * k);
  SP_TAKE(ylab, n);
  SP_TAKE(w, k);
  SP_TAKE(what, d);
  SP_TAKE(sgdw, dpd_semipriv_sgd_work(k));
  SP_TAKE(subw, pca ? dpd_semipriv_subspace_work(d, k) : 0);
#undef SP_TAKE
  return off;
}

/* The core PCA's configuration for the public sample: the top k + 1 directions (the extra one
 * gives the empirical eigengap), or the top k when k + 1 exceeds the sample's numerical rank. */
static dpd_pca_config pca_config(const dpd_semipriv_gen *gen, const dpd_semipriv_run_config *cfg,
                                 size_t k) {
  dpd_pca_config pc = dpd_pca_config_default();
  pc.m = cfg->n_public;
  pc.p = gen->d;
  pc.k = k;
  pc.center = cfg->center;
  pc.block = SP_BLOCK;
  return pc;
}

size_t dpd_semipriv_run_work(const dpd_semipriv_gen *gen, const dpd_semipriv_run_config *cfg) {
  if (gen == NULL || cfg == NULL || cfg->k < 1 || cfg->k > gen->d) {
    return 0;
  }
  sp_plan pl = {.gen = gen, .cfg = cfg};
  double pca_bytes = 0.0;
  if (cfg->k < gen->d) { /* the PCA's own allocation (pca.h), k + 1 directions */
    const dpd_pca_config pc = pca_config(gen, cfg, cfg->k + 1);
    pca_bytes = dpd_pca_memory(&pc);
  }
  return layout(&pl, NULL, NULL) + (size_t)ceil(pca_bytes / (double)sizeof(double));
}

/* The row accessor of the public sample (pca.h): point i of set PUBLIC of the replicate, from
 * the block of SP_BLOCK points that holds it (generated once per pass over the rows: the PCA asks
 * for rows in index order). */
typedef struct {
  const sp_plan *pl;
  size_t rep;
  sp_ws *ws;
  size_t cached; /* first point of the block in ws->X; SIZE_MAX: none */
  dpd__replicate_slot *slot; /* polled for a stop request before each block */
} public_rows;

static int public_row(void *user, size_t i, size_t a, size_t len, double *x, dpd_err *err) {
  public_rows *u = user;
  const dpd_semipriv_gen *gen = u->pl->gen;
  const size_t d = gen->d, N = u->pl->cfg->n_public, b0 = i / SP_BLOCK * SP_BLOCK;
  if (u->cached != b0) {
    const size_t m = N - b0 < SP_BLOCK ? N - b0 : SP_BLOCK;
    if (dpd__replicate_progress(u->slot, 0)) {
      return DPD_FAIL(err, DPD_ECANCELLED, "stopped on request");
    }
    dpd_semipriv_gen_sample(gen, u->pl->cfg->seed, u->rep, DPD_SEMIPRIV_SET_PUBLIC, b0, m, u->ws->X,
                            u->ws->yb, u->ws->Z);
    u->cached = b0;
  }
  memcpy(x, u->ws->X + (i - b0) * d + a, len * sizeof *x);
  return 0;
}

/* The public sample's top k principal directions A_hat (d x k column-major, decreasing
 * eigenvalues) and the empirical eigengap lambda_k - lambda_{k+1} (NaN when k + 1 exceeds the
 * sample's numerical rank: then the top k alone). */
static int public_pca(const sp_plan *pl, size_t rep, sp_ws *ws, dpd__replicate_slot *slot,
                      double *gap_hat) {
  const size_t d = pl->gen->d, k = pl->cfg->k;
  public_rows u = {pl, rep, ws, SIZE_MAX, slot};
  dpd_pca_config pc = pca_config(pl->gen, pl->cfg, k + 1);
  dpd_pca_result *pr = NULL;
  dpd_err e1;
  int st = dpd_pca_compute(&pc, public_row, &u, &pr, &e1);
  *gap_hat = NAN;
  if (st == DPD_EINVAL) { /* k + 1 beyond the numerical rank (or the Gram route's m - 1) */
    pc.k = k;
    u.cached = SIZE_MAX;
    st = dpd_pca_compute(&pc, public_row, &u, &pr, &pl->errs[rep]);
  } else if (st < 0) {
    pl->errs[rep] = e1;
  }
  if (st < 0) {
    return st;
  }
  for (size_t j = 0; j < k; j++) {
    for (size_t l = 0; l < d; l++) {
      ws->Ahat[j * d + l] = pr->V[l * pr->k + j];
    }
  }
  if (pr->k > k) {
    *gap_hat = pr->eigenvalues[k - 1] - pr->eigenvalues[k];
  }
  dpd_pca_result_free(pr);
  return DPD_OK;
}

/* The replicate's margin, eigengap and xi_k of the estimated subspace (any trainer). */
static void law_geometry(const sp_plan *pl, const sp_ws *ws, double *row, double margin,
                         double gap_hat) {
  const size_t d = pl->gen->d, k = pl->cfg->k;
  row[DPD_SEMIPRIV_MARGIN_MIN] = margin;
  row[DPD_SEMIPRIV_EIGENGAP_HAT] = gap_hat;
  row[DPD_SEMIPRIV_XI_HAT] = k < d ? dpd_semipriv_xi(ws->Ahat, d, k, pl->gen->w_star) : 0.0;
}

/* |A_k A_k^T - A_hat A_hat^T| (0 at k = d; NaN when the population top-k is not unique). */
static int law_subspace(sp_plan *pl, size_t rep, sp_ws *ws, double *row) {
  const size_t d = pl->gen->d, k = pl->cfg->k;
  double dist = k < d ? NAN : 0.0;
  if (k < d && pl->gap_true > 0.0) {
    int st = dpd_semipriv_subspace_dist(pl->A_true, ws->Ahat, d, k, &dist, ws->subw,
                                        &pl->errs[rep]);
    if (st < 0) {
      return st;
    }
  }
  row[DPD_SEMIPRIV_SUBSPACE_ERROR] = dist;
  return DPD_OK;
}

/* trainer = DPSGD on the projected labelled sample (labels +-1 -> 1 / 0), the test sample
 * projected block by block (into ws->Z, free once a block is made) and evaluated. */
static int law_dpsgd(sp_plan *pl, size_t rep, sp_ws *ws, dpd__replicate_slot *slot, double *row) {
  const size_t d = pl->gen->d, k = pl->cfg->k, n = pl->cfg->n, nt = pl->cfg->n_test;
  double *drow = pl->dpsgd_rows + rep * DPD_SEMIPRIV_DPSGD_COUNT, acc, loss, asum = 0.0,
         lsum = 0.0;
  int32_t *yi = malloc(n * sizeof *yi), yt[SP_BLOCK];
  if (yi == NULL) {
    return DPD_FAIL(&pl->errs[rep], DPD_ENOMEM, "semipriv: out of memory (n = %zu)", n);
  }
  for (size_t i = 0; i < n; i++) {
    yi[i] = ws->ylab[i] > 0.0;
  }
  dpd_dpsgd_model *m = NULL;
  int st = dpd__sp_dpsgd_fit(&pl->dp, rep, ws->P, yi, n, NULL, NULL, 0, k, row, drow, &m,
                             &pl->errs[rep]);
  free(yi);
  if (st < 0) {
    return st;
  }
  for (size_t b0 = 0; b0 < nt; b0 += SP_BLOCK) {
    const size_t mb = nt - b0 < SP_BLOCK ? nt - b0 : SP_BLOCK;
    if (dpd__replicate_progress(slot, 0)) {
      dpd_dpsgd_model_free(m);
      return DPD_ECANCELLED;
    }
    dpd_semipriv_gen_sample(pl->gen, pl->cfg->seed, rep, DPD_SEMIPRIV_SET_TEST, b0, mb, ws->X,
                            ws->yb, ws->Z);
    for (size_t i = 0; i < mb; i++) {
      yt[i] = ws->yb[i] > 0.0;
      for (size_t j = 0; j < k; j++) {
        ws->Z[i * k + j] = k < d ? dpd__dot8(ws->X + i * d, ws->Ahat + j * d, d) : ws->X[i * d + j];
      }
    }
    dpd_dpsgd_evaluate(m, ws->Z, yt, mb, &acc, &loss);
    asum += acc * (double)mb;
    lsum += loss * (double)mb;
  }
  dpd_dpsgd_model_free(m);
  row[DPD_SEMIPRIV_TEST_ACCURACY] = asum / (double)nt;
  drow[DPD_SEMIPRIV_DPSGD_TEST_LOSS] = lsum / (double)nt;
  return DPD_OK;
}

static int run_replicate(void *job, size_t rep, double *work, dpd__replicate_slot *slot) {
  sp_plan *pl = job;
  const dpd_semipriv_gen *gen = pl->gen;
  const dpd_semipriv_run_config *cfg = pl->cfg;
  const size_t d = gen->d, k = cfg->k, n = cfg->n;
  const int pca = k < d;
  const uint64_t seed = cfg->seed;
  double *row = pl->rows + rep * DPD_SEMIPRIV_METRIC_COUNT;
  sp_ws ws;
  layout(pl, work, &ws);
  double gap_hat = NAN;
  if (pca) {
    int st = public_pca(pl, rep, &ws, slot, &gap_hat);
    if (st < 0) {
      return st;
    }
  }
  /* labelled sample, projected block by block; its minimum margin under w* */
  double margin = INFINITY;
  for (size_t b0 = 0; b0 < n; b0 += SP_BLOCK) {
    const size_t m = n - b0 < SP_BLOCK ? n - b0 : SP_BLOCK;
    if (dpd__replicate_progress(slot, 0)) { /* a stop request, heard between blocks */
      return DPD_ECANCELLED;
    }
    dpd_semipriv_gen_sample(gen, seed, rep, DPD_SEMIPRIV_SET_LABELLED, b0, m, ws.X, ws.yb, ws.Z);
    const double mm = dpd_semipriv_margin_min(ws.X, ws.yb, m, d, gen->w_star);
    margin = mm < margin ? mm : margin;
    memcpy(ws.ylab + b0, ws.yb, m * sizeof *ws.yb);
    if (pca) {
      for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < k; j++) {
          ws.P[(b0 + i) * k + j] = dpd__dot8(ws.X + i * d, ws.Ahat + j * d, d);
        }
      }
    } else {
      memcpy(ws.P + b0 * d, ws.X, m * d * sizeof *ws.P);
    }
  }
  dpd_semipriv_sgd_info info;
  int st = pl->cfg->trainer == DPD_SEMIPRIV_TRAINER_DPSGD
               ? law_dpsgd(pl, rep, &ws, slot, row)
               : dpd_semipriv_sgd_run(&pl->sgd, ws.P, ws.ylab, n, k, seed, rep, ws.w, ws.sgdw,
                                      &info, &pl->errs[rep]);
  if (st < 0) {
    return st;
  }
  if (pl->cfg->trainer == DPD_SEMIPRIV_TRAINER_DPSGD) {
    law_geometry(pl, &ws, row, margin, gap_hat);
    return law_subspace(pl, rep, &ws, row);
  }
  if (pca) {
    for (size_t l = 0; l < d; l++) {
      double s = 0.0;
      for (size_t j = 0; j < k; j++) {
        s += ws.Ahat[j * d + l] * ws.w[j];
      }
      ws.what[l] = s;
    }
  } else {
    memcpy(ws.what, ws.w, d * sizeof *ws.what);
  }
  const double zeta = pl->sgd.zeta;
  double h, acc;
  dpd_semipriv_hinge(ws.P, ws.ylab, n, k, ws.w, zeta, &h, &acc);
  row[DPD_SEMIPRIV_TRAIN_HINGE] = h;
  row[DPD_SEMIPRIV_TRAIN_ACCURACY] = acc;
  double hsum = 0.0, rsum = 0.0;
  for (size_t b0 = 0; b0 < cfg->n_test; b0 += SP_BLOCK) {
    const size_t m = cfg->n_test - b0 < SP_BLOCK ? cfg->n_test - b0 : SP_BLOCK;
    if (dpd__replicate_progress(slot, 0)) {
      return DPD_ECANCELLED;
    }
    dpd_semipriv_gen_sample(gen, seed, rep, DPD_SEMIPRIV_SET_TEST, b0, m, ws.X, ws.yb, ws.Z);
    dpd_semipriv_hinge(ws.X, ws.yb, m, d, ws.what, zeta, &h, &acc);
    hsum += h * (double)m;
    rsum += acc * (double)m;
  }
  row[DPD_SEMIPRIV_TEST_ACCURACY] = rsum / (double)cfg->n_test;
  row[DPD_SEMIPRIV_TEST_HINGE] = hsum / (double)cfg->n_test;
  row[DPD_SEMIPRIV_W_NORM] = sqrt(dpd__dot8(ws.w, ws.w, k));
  row[DPD_SEMIPRIV_ACTIVE_FRACTION] = info.active_fraction;
  law_geometry(pl, &ws, row, margin, gap_hat);
  return law_subspace(pl, rep, &ws, row);
}

static int check_run(const dpd_semipriv_gen *gen, const dpd_semipriv_run_config *c, dpd_err *err) {
  const size_t d = gen->d;
  if (c->k < 1 || c->k > d) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'k': %zu (allowed: 1 .. d = %zu)", c->k, d);
  }
  if (c->n < 1 || c->n >= DPD__SP_INDEX_MAX) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n': %zu (allowed: 1 .. 2^30 - 1)", c->n);
  }
  if (c->n_test < 1 || c->n_test >= DPD__SP_INDEX_MAX) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'n_test': %zu (allowed: 1 .. 2^30 - 1)",
                    c->n_test);
  }
  const size_t np_min = c->k < d ? c->k + 1 : 0; /* k + 1 >= 2 also suits centring */
  if (c->n_public >= DPD__SP_INDEX_MAX || (c->k < d && c->n_public < np_min)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n_public': %zu (allowed: k + 1 = %zu .. 2^30 - 1)",
                    c->n_public, c->k + 1);
  }
  if (!(c->beta > 0.0 && c->beta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'beta': %g (allowed: 0 < beta < 1)",
                    c->beta);
  }
  if (!(c->epsilon > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'epsilon': %g (allowed: > 0, or inf)",
                    c->epsilon);
  }
  if (!(c->delta > 0.0 && c->delta < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'delta': %g (allowed: 0 < delta < 1)",
                    c->delta);
  }
  if (c->steps >= ((size_t)1 << 33) ||
      (c->steps == 0 && (double)c->n * (double)c->n >= 8589934592.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'steps': %zu (allowed: 1 .. 2^33 - 1, or 0 = n^2 with "
                    "n^2 < 2^33)",
                    c->steps);
  }
  if (!isnan(c->zeta) && !(c->zeta > 0.0 && isfinite(c->zeta))) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'zeta': %g (allowed: finite, > 0)",
                    c->zeta);
  }
  if (!isnan(c->gamma0) && !(c->gamma0 > 0.0 && c->gamma0 <= 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'gamma0': %g (allowed: 0 < gamma0 <= 1)",
                    c->gamma0);
  }
  if (!isnan(c->xi0) && !(c->xi0 >= 0.0 && c->xi0 < 1.0)) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'xi0': %g (allowed: 0 <= xi0 < 1)", c->xi0);
  }
  if (c->seeds < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'seeds': %zu (allowed: integer >= 1)",
                    c->seeds);
  }
  return DPD_OK;
}

int dpd_semipriv_run(const dpd_semipriv_gen *gen, const dpd_semipriv_run_config *cfg,
                     dpd_semipriv_result **out, dpd_err *err) {
  if (out != NULL) {
    *out = NULL;
  }
  if (gen == NULL || cfg == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "semipriv: NULL generator, config or output pointer");
  }
  int status = check_run(gen, cfg, err);
  if (status < 0) {
    return status;
  }
  const size_t d = gen->d, k = cfg->k, seeds = cfg->seeds;
  const double gamma0 = isnan(cfg->gamma0) ? gen->margin_guaranteed : cfg->gamma0;
  const double xi0 = isnan(cfg->xi0) ? dpd_semipriv_gen_xi(gen, k) : cfg->xi0;
  const double zeta = isnan(cfg->zeta) ? gamma0 * (1.0 - xi0 - 0.1 * gamma0) : cfg->zeta;
  if (!(zeta > 0.0)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'zeta': %g = gamma0 (1 - xi0 - 0.1 gamma0) with gamma0 = "
                    "%g, xi0 = %g (allowed: > 0; give 'zeta')",
                    zeta, gamma0, xi0);
  }
  sp_plan pl = {.gen = gen, .cfg = cfg};
  const int dpsgd = cfg->trainer == DPD_SEMIPRIV_TRAINER_DPSGD;
  pl.sgd = dpd_semipriv_sgd_config_default();
  pl.sgd.epsilon = cfg->epsilon;
  pl.sgd.delta = cfg->delta;
  pl.sgd.zeta = zeta;
  pl.sgd.steps = cfg->steps;
  dpd_semipriv_result *res = calloc(1, sizeof *res);
  double *A_true = malloc(d * k * sizeof *A_true);
  dpd_err *errs = calloc(seeds, sizeof *errs);
  if (res != NULL) {
    res->replicates = malloc(seeds * DPD_SEMIPRIV_METRIC_COUNT * sizeof *res->replicates);
  }
  if (res != NULL && dpsgd) {
    res->dpsgd_replicates = malloc(seeds * DPD_SEMIPRIV_DPSGD_COUNT * sizeof(double));
  }
  if (res == NULL || A_true == NULL || errs == NULL || res->replicates == NULL ||
      (dpsgd && res->dpsgd_replicates == NULL)) {
    status = DPD_FAIL(err, DPD_ENOMEM, "semipriv: out of memory (seeds = %zu, d = %zu)", seeds, d);
    goto cleanup;
  }
  if ((status = dpsgd ? dpd__sp_dpsgd_prepare(cfg, cfg->n, 2, res, &pl.dp, err)
                      : dpd__sp_calibrate(cfg, cfg->n, 1.0 / zeta,
                                          cfg->steps == 0 ? cfg->n * cfg->n : cfg->steps, res,
                                          &pl.sgd, err)) < 0) {
    goto cleanup;
  }
  dpd_semipriv_gen_top(gen, k, A_true);
  pl.A_true = A_true;
  pl.gap_true = dpd_semipriv_gen_eigengap(gen, k);
  pl.rows = res->replicates;
  pl.dpsgd_rows = res->dpsgd_replicates;
  pl.errs = errs;
  pl.work_doubles = layout(&pl, NULL, NULL);
  const dpd__replicate_plan reps = {.n = seeds,
                                    .threads = cfg->threads,
                                    .work_doubles = pl.work_doubles,
                                    .units = 1,
                                    .progress = cfg->progress,
                                    .progress_user = cfg->progress_user,
                                    .what = "semipriv"};
  size_t rep = seeds;
  status = dpd__replicate_run(&reps, run_replicate, &pl, &rep, err);
  if (status < 0 && status != DPD_ECANCELLED && rep < seeds) {
    if (errs[rep].status < 0) {
      status =
          DPD_FAIL(err, errs[rep].status, "semipriv: replicate %zu: %s", rep, errs[rep].reason);
    } else {
      status = DPD_FAIL(err, status, "semipriv: replicate %zu failed", rep);
    }
  }
  if (status < 0) {
    goto cleanup;
  }
  res->seeds = seeds;
  res->k = k;
  res->d = d;
  res->steps = dpsgd ? res->steps : cfg->steps == 0 ? cfg->n * cfg->n : cfg->steps;
  dpd__stats_columns_mean_se(res->replicates, seeds, DPD_SEMIPRIV_METRIC_COUNT, res->mean, res->se);
  dpd__sp_dpsgd_finish(res);
  if (dpsgd) {
    res->n_private = cfg->n;
    res->n_public = k < d ? cfg->n_public : 0;
  }
  res->zeta = dpsgd ? NAN : zeta; /* the hinge's margin scale: Noisy-SGD's */
  res->gamma0 = gamma0;
  res->xi0 = xi0;
  res->L = dpsgd ? NAN : 1.0 / zeta;
  res->eta1 = dpsgd ? res->eta1 : dpd_semipriv_sgd_eta(1, cfg->n, res->L, k, res->sigma,
                                                       pl.sgd.radius);
  res->xi_k = dpd_semipriv_gen_xi(gen, k);
  res->eigengap = dpd_semipriv_gen_eigengap(gen, k);
  res->margin_guaranteed = gen->margin_guaranteed;
  res->zb_bound =
      k < d ? dpd_semipriv_theory_zb_bound(res->eigengap, cfg->n_public, cfg->beta) : 0.0;
  *out = res;
  res = NULL;
  status = DPD_OK;
cleanup:
  dpd_semipriv_result_free(res);
  free(A_true);
  free(errs);
  return status;
}

/* ---- theory ------------------------------------------------------------------------------- */

double dpd_semipriv_theory_zb_bound(double eigengap, size_t n_public, double beta) {
  if (!(beta > 0.0 && beta < 1.0) || n_public == 0) {
    return NAN;
  }
  if (!(eigengap > 0.0)) {
    return INFINITY;
  }
  return 4.0 * (1.0 + sqrt(log(2.0 / beta) / 2.0)) / (eigengap * sqrt((double)n_public));
}

double dpd_semipriv_theory_n_public(double gamma0, double eigengap, double beta) {
  if (!(beta > 0.0 && beta < 1.0) || !(gamma0 > 0.0)) {
    return NAN;
  }
  if (!(eigengap > 0.0)) {
    return INFINITY;
  }
  const double f = 1.0 + sqrt(log(2.0 / beta) / 2.0);
  return 1600.0 * f * f / (gamma0 * gamma0 * eigengap * eigengap);
}

double dpd_semipriv_theory_alpha_private(size_t n, size_t k, double epsilon, double delta,
                                         double zeta) {
  if (n == 0 || k == 0 || !(epsilon > 0.0) || !(delta > 0.0 && delta < 1.0) || !(zeta > 0.0)) {
    return NAN;
  }
  if (isinf(epsilon)) {
    return 0.0;
  }
  const double nd = (double)n, l = log(nd / delta);
  return 2.0 / zeta * l * sqrt(l) * sqrt((double)k * log(1.0 / delta)) / (nd * epsilon);
}

double dpd_semipriv_theory_alpha_nonprivate(size_t n, double zeta) {
  if (n == 0 || !(zeta > 0.0)) {
    return NAN;
  }
  return 1.0 / sqrt(zeta * (double)n);
}

double dpd_semipriv_theory_n_labelled(double alpha, size_t k, double epsilon, double delta,
                                      double zeta) {
  if (!(alpha > 0.0) || k == 0 || !(epsilon > 0.0) || !(delta > 0.0 && delta < 1.0) ||
      !(zeta > 0.0)) {
    return NAN;
  }
  if (isinf(epsilon)) {
    return 1.0;
  }
  /* alpha_priv(n) decreases for log(n / delta) >= 3/2 (d/dn of l^{3/2}/n < 0 there). */
  double lo = ceil(exp(1.5) * delta), hi = 4503599627370496.0; /* 2^52 */
  if (lo < 1.0) {
    lo = 1.0;
  }
  if (dpd_semipriv_theory_alpha_private((size_t)hi, k, epsilon, delta, zeta) > alpha) {
    return INFINITY;
  }
  if (dpd_semipriv_theory_alpha_private((size_t)lo, k, epsilon, delta, zeta) <= alpha) {
    return lo;
  }
  while (hi - lo > 1.0) {
    const double mid = floor(0.5 * (lo + hi));
    if (dpd_semipriv_theory_alpha_private((size_t)mid, k, epsilon, delta, zeta) <= alpha) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}
