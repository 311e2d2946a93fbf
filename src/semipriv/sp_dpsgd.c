/* Semi-private learning with the DP-SGD trainer (trainer = dpsgd) and the splits of file
 * features (public_fraction, private_fraction): Algorithm 1 with dpd_dpsgd_train as its private
 * step (semipriv.h, sp_files_impl.h; docs/semipriv.md, "DP-SGD trainer (trainer=dpsgd)").
 * SPDX-License-Identifier: MIT
 *
 * References: Pinto, Hu, Yang & Sanyal (seed 003; arXiv:2306.03962), Algorithm 1 and its
 * experiments (DP-SGD of multi-class linear classifiers on public-PCA features); Abadi et al.,
 * CCS 2016 (DP-SGD; dpsgd.h).
 *
 * A replicate r of a run on files redraws, from stream (seed, r):
 *  - the public split (public_fraction): one dpd_rng_uniform_fill of N values from region
 *    (tag 2, index 2^29), selection sampling of round(public_fraction N) public rows, the others
 *    private (dpd__sp_select);
 *  - the private subset (private_fraction < 1): the same from region (tag 2, index 2^29 + 1)
 *    over the private rows;
 *  - the trainer's batches and noise: DP-SGD from region tag 3 (dpsgd.h), or Noisy-SGD's tag 3
 *    regions (semipriv.h) with trainer = bst.
 * The runs themselves: sp_split.c (file features), sp_run.c (the law). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/stats_impl.h"
#include "dpdyn/rng.h"
#include "semipriv/sp_files_impl.h"
#include "semipriv/sp_impl.h"

const char *dpd_semipriv_trainer_name(dpd_semipriv_trainer t) {
  return t == DPD_SEMIPRIV_TRAINER_BST ? "bst" : t == DPD_SEMIPRIV_TRAINER_DPSGD ? "dpsgd" : NULL;
}

const char *dpd_semipriv_dpsgd_metric_name(dpd_semipriv_dpsgd_metric metric) {
  static const char *const names[DPD_SEMIPRIV_DPSGD_COUNT] = {"clipped_fraction", "mean_batch",
                                                              "train_loss", "test_loss"};
  return (int)metric < 0 || metric >= DPD_SEMIPRIV_DPSGD_COUNT ? NULL : names[metric];
}

int dpd__sp_classes_count(const double *y, size_t rows, const char *path, size_t *classes,
                          dpd_err *err) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < rows; i++) {
    lo = y[i] < lo ? y[i] : lo;
    hi = y[i] > hi ? y[i] : hi;
  }
  if (!(hi > lo)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'labels': every label of '%s' is %g (allowed: at least two "
                    "distinct classes 0 .. K-1 with trainer = dpsgd)",
                    path, rows > 0 ? lo : NAN);
  }
  if (classes != NULL) {
    *classes = (size_t)hi + 1;
  }
  return DPD_OK;
}

int dpd__sp_split_sizes(const dpd__sp_files *f, size_t N, size_t k, int run, size_t *n_public,
                        size_t *n_private, size_t *n_trained, dpd_err *err) {
  *n_public = f->public_fraction > 0.0 ? (size_t)llround(f->public_fraction * (double)N) : 0;
  *n_private = N - *n_public;
  *n_trained = (size_t)llround(f->private_fraction * (double)*n_private);
  if (f->public_fraction > 0.0 && ((run && *n_public < k + 1) || *n_public < 2)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'public_fraction': %g gives %zu public rows of %zu "
                    "(allowed: at least k + 1 = %zu public rows for the top-k PCA)",
                    f->public_fraction, *n_public, N, (run ? k : 1) + 1);
  }
  if (*n_private < 1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'public_fraction': %g leaves no private row of %zu "
                    "(allowed: a fraction that leaves private rows)",
                    f->public_fraction, N);
  }
  if (*n_trained < 1) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'private_fraction': %g of %zu private rows is no row "
                    "(allowed: a fraction that keeps at least one row)",
                    f->private_fraction, *n_private);
  }
  return DPD_OK;
}

void dpd__sp_select(uint64_t seed, uint64_t rep, uint64_t index, const size_t *from, size_t N,
                    size_t m, size_t *out, size_t *rest, double *u) {
  dpd_rng rng;
  size_t taken = 0, left = 0;
  dpd__semipriv_region(&rng, seed, rep, 2, index);
  dpd_rng_uniform_fill(&rng, u, N);
  for (size_t i = 0; i < N; i++) {
    const size_t v = from != NULL ? from[i] : i;
    if (u[i] * (double)(N - i) < (double)(m - taken)) {
      out[taken++] = v;
    } else if (rest != NULL) {
      rest[left++] = v;
    }
  }
}

int dpd__sp_dpsgd_prepare(const dpd_semipriv_run_config *cfg, size_t n, size_t K,
                          dpd_semipriv_result *res, dpd_dpsgd_config *dp, dpd_err *err) {
  dpd_account_result at;
  double z = 0.0;
  int status;
  *dp = cfg->dpsgd;
  if (dp->loss != DPD_DPSGD_SOFTMAX && K != 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'loss': %s with %zu classes in the labels (allowed: ce; "
                    "hinge and logistic are binary: give positive_class for one-vs-rest)",
                    dpd_dpsgd_loss_name(dp->loss), K);
  }
  dp->classes = K;
  dp->seed = cfg->seed;
  dp->stream = 0;
  dp->tag = (unsigned)DPD__SP_TAG_SGD;
  dp->noise_multiplier = 0.0;
  if (dp->sampling == DPD_DPSGD_FIXED && dp->batch == 0) { /* round(q n), at least 1 */
    const long long b = llround(dp->q * (double)n);
    dp->batch = b < 1 ? 1 : (size_t)b;
  }
  at.epsilon = at.epsilon_estimate = at.epsilon_lower = NAN;
  if ((status = dpd_dpsgd_check(dp, n, cfg->k, err)) < 0) {
    return status;
  }
  if (isnan(cfg->noise_multiplier)) {
    status = dpd_dpsgd_calibrate(dp, n, cfg->epsilon, cfg->delta, &z, &at, err);
  } else if ((z = cfg->noise_multiplier) > 0.0) {
    dpd_account a;
    dpd_account_segment seg;
    dpd_dpsgd_account_of(dp, n, z, &a, &seg);
    status = dpd_account_epsilon(&a, cfg->delta, &at, err);
  }
  if (status < 0) {
    return status;
  }
  dp->noise_multiplier = z;
  res->trainer = DPD_SEMIPRIV_TRAINER_DPSGD;
  res->calibration = cfg->calibration;
  res->noise_multiplier = z;
  res->sigma = z * dp->clip;
  res->sigma_bst = NAN;
  res->epsilon_pld = at.epsilon;
  res->epsilon_pld_estimate = at.epsilon_estimate;
  res->epsilon_pld_lower = at.epsilon_lower;
  res->steps = dpd_dpsgd_steps(dp, n);
  res->classes = K;
  res->batch = dp->sampling == DPD_DPSGD_FIXED ? dp->batch : 0;
  res->eta1 = dp->lr;
  res->n_private = n;
  res->dpsgd = *dp;
  return DPD_OK;
}

int dpd__sp_dpsgd_fit(const dpd_dpsgd_config *dp, uint64_t rep, const double *P, const int32_t *yi,
                      size_t n, const double *Pt, const int32_t *yti, size_t n_test, size_t k,
                      double *row, double *drow, dpd_dpsgd_model **keep, dpd_err *err) {
  dpd_dpsgd_config c = *dp;
  dpd_dpsgd_model *m = NULL;
  double acc = NAN, loss = NAN, ss = 0.0;
  c.stream = rep;
  int status = dpd_dpsgd_train(&c, P, yi, n, k, &m, err);
  if (status < 0) {
    return status;
  }
  if (n_test > 0) {
    dpd_dpsgd_evaluate(m, Pt, yti, n_test, &acc, &loss);
  }
  for (size_t i = 0; i < m->rows * (m->d + (size_t)m->bias); i++) {
    ss += m->W[i] * m->W[i];
  }
  row[DPD_SEMIPRIV_TEST_ACCURACY] = acc;
  row[DPD_SEMIPRIV_TRAIN_ACCURACY] = m->train_accuracy;
  row[DPD_SEMIPRIV_TRAIN_HINGE] = NAN;
  row[DPD_SEMIPRIV_TEST_HINGE] = NAN;
  row[DPD_SEMIPRIV_W_NORM] = sqrt(ss);
  row[DPD_SEMIPRIV_ACTIVE_FRACTION] = NAN;
  drow[DPD_SEMIPRIV_DPSGD_CLIPPED_FRACTION] = m->clipped_fraction;
  drow[DPD_SEMIPRIV_DPSGD_MEAN_BATCH] = m->mean_batch;
  drow[DPD_SEMIPRIV_DPSGD_TRAIN_LOSS] = m->train_loss;
  drow[DPD_SEMIPRIV_DPSGD_TEST_LOSS] = loss;
  if (keep != NULL) {
    *keep = m;
  } else {
    dpd_dpsgd_model_free(m);
  }
  return DPD_OK;
}

void dpd__sp_dpsgd_finish(dpd_semipriv_result *res) {
  if (res->dpsgd_replicates != NULL) {
    dpd__stats_columns_mean_se(res->dpsgd_replicates, res->seeds, DPD_SEMIPRIV_DPSGD_COUNT,
                               res->dpsgd_mean, res->dpsgd_se);
  }
}
