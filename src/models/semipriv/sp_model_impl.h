/* model=semipriv: what the adapter's two files share (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_SP_MODEL_IMPL_H
#define DPD_SP_MODEL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/semipriv.h"
#include "core/model_impl.h"

/* A feature set of the user (sp_files.c): rows scaled to the unit sphere. */
typedef struct {
  const char *path, *labels_path; /* borrowed from the keys; labels_path NULL: none or column 0 */
  size_t n, p;
  double *X; /* [n p] row-major, |x_i| = 1 (or 0 for a zero row) */
  double *y; /* [n] +-1; NULL for the public (unlabelled) set */
} dpd__sp_set;

/* The three sets of features = file:PATH. */
typedef struct {
  int from_file;
  dpd__sp_set train, pub, test;
  int has_public, has_test;
  int has_positive;
  double positive_class; /* labels == positive_class -> +1, else -1 (one-vs-rest) */
  double bytes;          /* estimated memory of the sets once read */
} dpd__sp_files;

/* Reads the file keys (features, labels, public_features, test_features, test_labels,
 * positive_class) and checks them against each other and the command; no file is read, but the
 * .npy headers and text sizes give f->bytes. Generator keys given with file features are an
 * error. need_public: k < d is asked for (d unknown yet: the caller re-checks after reading). */
DPD_HIDDEN_FN int dpd__sp_files_setup(dpd_keys *keys, dpd__sp_files *f, dpd_err *err);

/* Reads the sets (bounded by env->max_memory), checks widths, finiteness and labels, scales
 * every row to norm 1, and records d, n, n_public, n_test in effect. */
DPD_HIDDEN_FN int dpd__sp_files_read(dpd_keys *keys, const dpd_run_env *env, dpd__sp_files *f,
                                     int need_test, dpd_err *err);
DPD_HIDDEN_FN void dpd__sp_files_free(dpd__sp_files *f);

/* Algorithm 1 on the files: PCA of the public set (pca.h) when k < d, projection, `seeds`
 * replicates of Noisy-SGD (only the noise and the sampled indices are redrawn), and the metrics of
 * semipriv.h per replicate (xi_k_hat, subspace_error, margin_min: NaN, no w*). *out as
 * dpd_semipriv_run's (returned-owned); eigengap = the public sample's lambda_k - lambda_{k+1}. */
DPD_HIDDEN_FN int dpd__sp_files_run(const dpd__sp_files *f, const dpd_semipriv_run_config *cfg,
                                    dpd_semipriv_result **out, dpd_err *err);

/* The summary's "features" object and the note on what replicates redraw. */
DPD_HIDDEN_FN int dpd__sp_files_output(dpd_output *out, const dpd__sp_files *f, int replicates,
                                       dpd_err *err);

#endif
