/* Semi-private learning, the parts behind model=semipriv (internal): a user's feature sets read
 * from files and scaled to the unit sphere, Algorithm 1 on them, the law's own checks and list
 * format, account's constants, the theory's bound curves, and the memory models of the runs.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_SP_FILES_IMPL_H
#define DPD_SP_FILES_IMPL_H

#include <stddef.h>

#include "dpdyn/semipriv.h"
#include "dpdyn/status.h"

#define DPD__SP_HIDDEN __attribute__((visibility("hidden")))

/* A feature set of the user: rows scaled to the unit sphere. */
typedef struct {
  const char *path, *labels_path; /* borrowed; labels_path NULL: none or column 0 */
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

/* Reads set `s` (its paths set; at most max_bytes per file): `key` / `labels_key` name the files
 * in errors; a labelled set takes its labels from s->labels_path or column 0, turned into +-1
 * (f->positive_class one-vs-rest, else they must be +-1); width 0: the training set (both
 * classes needed), else every row must have `width` features. Finite features, every row
 * scaled to norm 1. */
DPD__SP_HIDDEN int dpd__sp_set_read(dpd__sp_set *s, const char *key, const char *labels_key,
                                    int labelled, const dpd__sp_files *f, size_t width,
                                    size_t max_bytes, dpd_err *err);
DPD__SP_HIDDEN void dpd__sp_files_free(dpd__sp_files *f);
/* f->bytes: the memory the files take once read (twice each file's size: the text or .npy
 * read, then the matrix), from the paths set (the public set with run, the test set with
 * f->has_test); DPD_EINVAL naming the key of a file that cannot be opened. */
DPD__SP_HIDDEN int dpd__sp_files_bytes(dpd__sp_files *f, int run, dpd_err *err);

/* Bytes of a run on the files once read: the projected rows, the PCA and the replicates. */
DPD__SP_HIDDEN double dpd__sp_files_run_bytes(const dpd__sp_files *f, size_t k, size_t seeds);

/* Algorithm 1 on the files: PCA of the public set (pca.h) when k < d, projection, `seeds`
 * replicates of Noisy-SGD (only the noise and the sampled indices are redrawn), and the metrics
 * of semipriv.h per replicate (xi_k_hat, subspace_error, margin_min: NaN, no w*). *out as
 * dpd_semipriv_run's (returned-owned); eigengap = the public sample's lambda_k - lambda_{k+1}. */
DPD__SP_HIDDEN int dpd__sp_files_run(const dpd__sp_files *f, const dpd_semipriv_run_config *cfg,
                                     dpd_semipriv_result **out, dpd_err *err);

/* The law's list `lambda`: k_true - 1 = `want` finite numbers > 0, comma-separated (the
 * decimal grammar of keys; "none" or empty: no entry), into lambda[0..cap). */
DPD__SP_HIDDEN int dpd__sp_lambda_parse(const char *text, size_t want, double *lambda, size_t cap,
                                        size_t *count, dpd_err *err);
/* The law's own constraints, the error naming the key: d >= k_true + 1, a margin (tau < a c /
 * sqrt(1 - a^2)), and the bound z_max below 1e150. */
DPD__SP_HIDDEN int dpd__sp_law_check(const dpd_semipriv_gen_config *g, dpd_err *err);
/* Bytes of a law run: Q and the generator's arrays, and with run the per-thread workspace of
 * the replicates (threads <= 0: all cores). */
DPD__SP_HIDDEN double dpd__sp_law_bytes(size_t d, size_t k, size_t n, size_t seeds, int threads,
                                        int run);

/* account: sigma and the constants without a replicate, in the fields of a result (replicates
 * NULL). gen NULL: file features (zeta must be given). DPD_EINVAL naming zeta when it is not
 * > 0. */
DPD__SP_HIDDEN int dpd__sp_account_eval(const dpd_semipriv_gen *gen, const dpd_semipriv_run_config *cfg,
                                   size_t d, dpd_semipriv_result *acc, dpd_err *err);

/* The theory's bounds against n on a log grid of g points 10 .. 1e9: n, Theorem 1 at k and at
 * d, Proposition 4 (cols[0..4)[0..g)). */
DPD__SP_HIDDEN void dpd__sp_theory_curves(size_t k, size_t d, double epsilon, double delta,
                                          double zeta, size_t g, double *const cols[4]);

/* One member of a summary object: a number, a number not available (na: the reason), or a
 * text (text != NULL). */
typedef struct {
  const char *name;
  double value;
  const char *na, *text;
} dpd__sp_member;
#define DPD__SP_MEMBERS_MAX 32

/* The members a run reports, in order, into m[0..DPD__SP_MEMBERS_MAX): its metrics (means and
 * standard errors over the replicates; law: the estimated subspace's xi_k, the population's
 * constants; files: what is not available without w*), and for compare the theory beside them
 * (Theorem 1 and Proposition 4 at n, k and d, the sample sizes for `alpha`, the Zwald-Blanchard
 * bound against the measured subspace error). Returns the count. */
DPD__SP_HIDDEN size_t dpd__sp_result_members(const dpd_semipriv_result *res, int law,
                                             dpd__sp_member *m);
DPD__SP_HIDDEN size_t dpd__sp_theory_members(const dpd_semipriv_result *res,
                                             const dpd_semipriv_run_config *cfg, double alpha,
                                             int law, dpd__sp_member *m);

/* k: an integer 1 .. d, or none (*none = 1, *k = d); d = 0: d not known yet (file features),
 * the syntax alone (1 .. 46340). */
DPD__SP_HIDDEN int dpd__sp_k_parse(const char *text, size_t d, size_t *k, int *none, dpd_err *err);
/* Noisy-SGD's steps: n^2 < 2^33 when steps = 0 (the default n^2), and steps <= n^2 with a finite
 * epsilon (Bassily et al.'s sigma covers n^2 steps); DPD_EINVAL naming n or steps. */
DPD__SP_HIDDEN int dpd__sp_steps_check(size_t n, size_t steps, double epsilon, dpd_err *err);

#endif /* DPD_SP_FILES_IMPL_H */
