/* Neural collapse on a user's features: feature files and the collapse diagnostics of any
 * feature set (docs/nc.md, "Your own features").
 * SPDX-License-Identifier: MIT
 *
 * References: Papyan, Han & Donoho, "Prevalence of neural collapse during the terminal phase of
 * deep learning training", PNAS 117 (2020), arXiv:2008.08186 (NC1 = tr(Sigma_W Sigma_B^+) / K,
 * the simplex ETF cosine -1/(K-1)); Wang, Zhu, Su & Wang, arXiv:2405.08920, §3 (the feature
 * shift beta = |x - M_y|_inf and the sensitivity G at W = 0).
 *
 * File layout (docs/input.md). The type is chosen by the file name: a name ending in ".npy" is
 * a NumPy array (versions 1.0 / 2.0 / 3.0, little-endian f8 f4 i8 i4 i2 i1 u8 u4 u2 u1 b1,
 * C or Fortran order), anything else is text (numbers separated by blanks or commas, '#'
 * comments, the same number of columns on every row).
 *   Without a labels file: one row per sample, `label x_1 ... x_p` (a 2-D (n, p + 1) array for
 *   .npy): column 0 is the label.
 *   With a labels file: the features file holds `x_1 ... x_p` only (a 2-D (n, p) array), and
 *   the labels file one label per row (a 1-D (n,) or (n, 1) array, or a one-column text file).
 * Labels are integers 0..K-1 (written as numbers: 3 or 3.0), every class has at least one row;
 * K = the largest label + 1 unless the caller fixes K. Features are finite. */
#ifndef DPD_NC_FEATURES_H
#define DPD_NC_FEATURES_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A feature set read from files (transparent; arrays owned by it). */
typedef struct {
  size_t n, p, K;
  double *X;      /* [n p] row-major features */
  size_t *y;      /* [n] labels in 0..K-1 */
  size_t *counts; /* [K] rows per class, each >= 1 */
} dpd_nc_features;

typedef struct {
  const char *path;        /* features file (borrowed) */
  const char *labels_path; /* labels file (borrowed), NULL: labels in column 0 of path */
  const char *key;         /* the user's key of path, named in errors ("features") */
  const char *labels_key;  /* the key of labels_path ("labels") */
  size_t K;                /* 0: K = largest label + 1; else the labels must be 0..K-1 with every
                              class present (errors then name K_key) */
  const char *K_key;       /* the key that fixed K ("K", or the training set's key) */
  size_t p;                /* 0: any width; else the feature columns must be p (errors name
                              p_key) */
  const char *p_key;       /* what fixed p, for messages ("features", "p") */
  size_t max_bytes;        /* memory for the matrix and labels (0: no limit), DPD_EINVAL
                              before anything larger is allocated */
} dpd_nc_features_config;

/* Defaults: no paths, key "features", labels_key "labels", K 0, K_key "K", p 0, p_key "p",
 * max_bytes 0. */
DPD_API dpd_nc_features_config dpd_nc_features_config_default(void);

/* Reads a feature set; *out is returned-owned (dpd_nc_features_free). DPD_EINVAL with a message
 * naming the key and the file: unreadable or malformed file (npy header, dtype, byte order,
 * truncation, ragged text rows, an empty file), a non-finite feature (row, column), a label that
 * is not an integer >= 0, labels and rows of different counts, a class with no row, fewer than
 * 2 classes, a K or p that disagrees; DPD_ENOMEM. Prints nothing. Thread-safe. */
DPD_API int dpd_nc_features_read(const dpd_nc_features_config *cfg, dpd_nc_features **out,
                                 dpd_err *err);
DPD_API void dpd_nc_features_free(dpd_nc_features *f);

/* Bytes the feature set of `path` (and labels_path) will take once read, from the .npy header
 * or, for text, an upper bound of 8 bytes per 2 bytes of text (a number and its separator);
 * the size of a text file is its byte count. *bytes receives the estimate; DPD_EINVAL for an
 * unreadable file or a bad .npy header (naming the key). */
DPD_API int dpd_nc_features_bytes(const dpd_nc_features_config *cfg, double *bytes, dpd_err *err);

/* Row accessor of a feature set: writes row i (0 <= i < n) into x[0..p) and returns its label.
 * Called in index order, twice per row, from the calling thread. */
typedef size_t (*dpd_nc_row_fn)(void *user, size_t i, double *x);

/* The accessor of a dpd_nc_features (user = the features, borrowed). */
DPD_API size_t dpd_nc_features_row(void *features, size_t i, double *x);

#define DPD_NC_BETA_QUANTILES 8 /* probabilities 0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1 */
#define DPD_NC_RANK_RTOL                                                                           \
  1e-10 /* eigenvalues of the centred means' Gram matrix below this                                \
           fraction of the largest count as 0 (NC1's pseudo-inverse) */

/* The collapse diagnostics of n rows in R^p with labels in 0..K-1 (transparent; arrays owned). */
typedef struct {
  size_t n, p, K;
  size_t *counts;       /* [K] rows per class */
  double *means;        /* [K p] class means Mhat_k (row k) */
  double *global_mean;  /* [p] mean of all rows, mu_G = sum_k n_k Mhat_k / n */
  double *centred_norm; /* [K] |Mhat_k - mu_G| */
  double *within_rms;   /* [K] sqrt(mean over the class of |x_i - Mhat_k|^2) */
  size_t npairs;        /* K (K - 1) / 2 */
  double *cosines;      /* [npairs] cos(Mhat_j - mu_G, Mhat_k - mu_G) for j < k, in the order
                           (0,1), (0,2), ..., (0,K-1), (1,2), ...; NaN when a centred mean is 0 */
  double cos_etf;       /* -1 / (K - 1), the simplex ETF value */
  double cos_mean, cos_min, cos_max; /* over the pairs (NaN pairs skipped; NaN when all are) */
  double cos_max_dev;                /* max over the pairs of |cos + 1/(K - 1)| */
  double beta_prob[DPD_NC_BETA_QUANTILES];     /* the probabilities above */
  double beta_quantile[DPD_NC_BETA_QUANTILES]; /* quantiles of beta_i = |x_i - Mhat_{y_i}|_inf
                                                  (linear interpolation between order statistics,
                                                  gsl_stats_quantile_from_sorted_data) */
  double beta_mean;
  double x_norm_max;    /* max_i |x_i| */
  double x_norm_mean;   /* mean_i |x_i| */
  double G_ce;          /* sqrt((K - 1) / K) x_norm_max: the CE sensitivity at W = 0 that the data
                           themselves attain. Data-dependent: a run that uses it as its noise scale
                           is not private (a public bound x_bound is used instead) */
  double within_trace;  /* tr(Sigma_W) = (1/n) sum_i |x_i - Mhat_{y_i}|^2 */
  double between_trace; /* tr(Sigma_B) = (1/K) sum_k |Mhat_k - mu_G|^2 */
  double trace_ratio;   /* within_trace / between_trace (INFINITY when between is 0) */
  double nc1;           /* Papyan et al.'s NC1 = tr(Sigma_W Sigma_B^+) / K (0: perfect collapse) */
  size_t between_rank;  /* rank of Sigma_B (K - 1 for distinct, affinely independent means) */
} dpd_nc_diagnostics;

/* Computes the diagnostics of rows row(user, i, x), i = 0..n-1, each of dimension p with a label
 * in 0..K-1. Two passes over the rows (class sums; then residuals), every sum in row order, so
 * the result is deterministic. Memory: (2 K + 2) p + n + K^2 doubles. *out is returned-owned
 * (dpd_nc_diagnostics_free). DPD_EINVAL: K < 2, p or n 0, a label >= K ('labels'), a class with
 * no row ('labels'), a non-finite value ('features', row and column); DPD_ENOMEM; DPD_ESOLVER when
 * the K x K eigenproblem (LAPACKE_dsyev) fails. Pure apart from the accessor; prints nothing. */
DPD_API int dpd_nc_diagnostics_create(size_t n, size_t p, size_t K, dpd_nc_row_fn row, void *user,
                                      dpd_nc_diagnostics **out, dpd_err *err);
DPD_API void dpd_nc_diagnostics_free(dpd_nc_diagnostics *d);

#ifdef __cplusplus
}
#endif
#endif /* DPD_NC_FEATURES_H */
