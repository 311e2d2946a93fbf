/* model=nc: the science the adapter (src/models/nc/) calls, beside the kernels: the exact
 * one-step error on each replicate and compare's paired evaluation (nc_compare.c), the feature
 * files as a problem, the problem with or without the PCA fix, the diagnostics of the ETF law or
 * of files with progress, and the memory models of the kernels (nc_run.c). Internal.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NC_IMPL_H
#define DPD_NC_IMPL_H

#include <stddef.h>

#include "dpdyn/nc.h"
#include "dpdyn/nc_features.h"
#include "dpdyn/nc_pca.h"
#include "dpdyn/model.h"
#include "dpdyn/status.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* ---- the exact one-step error and compare (nc_compare.c) ---- */

/* Why the exact one-step error of notes B.5 is not available for this run (a sentence for the
 * summary's n/a), or NULL when it is: one step, a test law that does not depend on the noise
 * (not adversarial), and features the theory can see (not a per-replicate fill). Pure. */
DPD_HIDDEN_FN const char *dpd__nc_theory_why_not(const dpd_nc_problem *problem,
                                                 const dpd_nc_sim_config *sc);

/* The exact one-step error of each replicate rep < sc->seeds, into e[rep] (caller memory):
 * replicate rep's training class sums as trained (dpd_nc_train_sums: feature clipping and
 * normalize applied) and its own test points as the classifier sees them (dpd_nc_test_point),
 * e[rep] = (1/n_test) sum_j P[err | x_j] (B.5). Exact given the replicate's training data and
 * test points (the same as the simulation's): only the noise is integrated out. A clean test on
 * the ETF law evaluates one point per class (all points of a class are equal). The projection
 * (radius) rescales W_1 by a positive factor, which leaves the argmax alone. When no replicate
 * redraws anything but the noise (no training shift or fixed rows, clean test) one replicate is
 * computed and copied. Replicates run on sc->threads OpenMP threads, each value computed alone:
 * bit-identical for any thread count. Progress through sc->progress. DPD_EINVAL when
 * dpd__nc_theory_why_not is not NULL; DPD_ENOMEM; the quadrature's status. */
DPD_HIDDEN_FN int dpd__nc_theory_replicates(const dpd_nc_problem *problem,
                                            const dpd_nc_sim_config *sc, double *e, dpd_err *err);
/* The same, and (e_class not NULL) each class's exact error e_class[rep K + k] = the mean of
 * P[err | x_j] over the test points of class k (caller memory, seeds K doubles; NaN for a
 * class without test points). e[] is bit-identical to dpd__nc_theory_replicates'. */
DPD_HIDDEN_FN int dpd__nc_theory_replicates_classes(const dpd_nc_problem *problem,
                                                    const dpd_nc_sim_config *sc, double *e,
                                                    double *e_class, dpd_err *err);

/* compare's numbers on a finished simulation (nc_compare.c). */
typedef struct {
  const char *why_not; /* the exact error is not available (then theory.. are NaN), or NULL */
  double theory, theory_se; /* mean and SE over replicates of the exact error */
  double gap, gap_se;       /* mean and SE of the paired differences sim_r - theory_r */
  double *class_theory, *class_theory_se; /* [K] per class over replicates (owned; NULL when
                                              why_not) */
  double *replicate_theory;               /* [seeds] (owned; NULL when why_not) */
  int d1;                                 /* the papers' D.1 bounds apply */
  double d1_printed, d1_union;
  const char *thm34_why; /* Thm 3.4 does not apply (a constant or thm34_buf), or NULL */
  char thm34_buf[256];
  double thm34, thm34_t, thm34_printed_eta; /* the last NaN: no t > 0 for the printed rule */
} dpd__nc_comparison;

/* The exact error on the simulation's replicates (paired: both sides of replicate r share its
 * training data and test points, so the SE of the differences is what the noise alone adds),
 * the D.1 bounds on balanced perfect collapse and Thm 3.4's bound for binary projected
 * NoisyGD. c: caller's, freed by dpd__nc_comparison_free. DPD_ENOMEM; the theory's status. */
DPD_HIDDEN_FN int dpd__nc_compare_eval(const dpd_nc_problem *problem, const dpd_nc_sim_config *sc,
                                       const dpd_nc_sim_result *sim, dpd__nc_comparison *c,
                                       dpd_err *err);
DPD_HIDDEN_FN void dpd__nc_comparison_free(dpd__nc_comparison *c);

/* ---- problems, files, diagnostics, memory (nc_run.c) ---- */

/* A run on a user's feature files (docs/nc.md, "Your own features"): the training set and,
 * when given, the test set (configs filled by the caller; read by dpd__nc_files_read). */
typedef struct {
  dpd_nc_features_config train_cfg, test_cfg;
  int test_given;
  double x_bound;                /* the public bound R (INFINITY: none) */
  dpd_nc_features *train, *test; /* owned */
  dpd_nc_data_config data;       /* the problem's view of them (dpd__nc_files_problem) */
} dpd__nc_files;

/* Sets the files' configs (the test file's errors name test_features, test_labels, and
 * features for K and p; test and the label paths may be NULL) and estimates in *bytes the memory
 * they take once read (dpd_nc_features_bytes). DPD_EINVAL naming the key of an unreadable file. */
DPD_HIDDEN_FN int dpd__nc_files_init(dpd__nc_files *f, const char *train, const char *labels,
                                     const char *test, const char *test_labels, double x_bound,
                                     double *bytes, dpd_err *err);
/* Reads the training file, then (test_given) the test file (K and p from the training set),
 * bounded by max_bytes; given[0..4): the K, p, n, n_test the user gave (0: not given), each of
 * which must agree with the files (DPD_EINVAL naming the key). dpd_nc_features_read's errors. */
DPD_HIDDEN_FN int dpd__nc_files_load(dpd__nc_files *f, size_t max_bytes, const size_t given[4],
                                     dpd_err *err);
/* The rules of the file keys, in this order: test_labels needs test_features; labels and
 * test_features need test_labels; replicas (a run of replicates) needs test_features; x_bound
 * must be finite and given unless normalize is l2 or center_l2 (unit) or for diagnose. */
DPD_HIDDEN_FN int dpd__nc_files_check(const char *labels, const char *test,
                                      const char *test_labels, int x_bound_given, double x_bound,
                                      int unit, int diagnose, int replicas, dpd_err *err);
/* The checks across a configuration's fields, in this order (DPD_EINVAL naming the key):
 * beta, offset, beta_test <= 1e150 / sqrt(p); the PCA fix (pca not NULL): pca_k <= p,
 * n_public >= 2 centred, no adversarial test; center* normalisation needs n >= 2; then
 * dpd__nc_shift_check: a training shift needs beta > 0. */
DPD_HIDDEN_FN int dpd__nc_config_check(const dpd_nc_problem_config *pc,
                                       const dpd_nc_pca_config *pca, dpd_err *err);
DPD_HIDDEN_FN int dpd__nc_shift_check(const dpd_nc_problem_config *pc, dpd_err *err);
/* The problem on the files (the files must outlive it): normalize, test_shift and beta_test
 * from pc. */
DPD_HIDDEN_FN int dpd__nc_files_problem(dpd__nc_files *f, const dpd_nc_problem_config *pc,
                                        dpd_nc_problem **out, dpd_err *err);
/* The fraction of training rows with |x| > R (clipped by the mechanism). Pure. */
DPD_HIDDEN_FN double dpd__nc_files_clipped_fraction(const dpd__nc_files *f, double R);
DPD_HIDDEN_FN void dpd__nc_files_free(dpd__nc_files *f);

/* The problem the simulator runs: the ETF problem of pc (pca NULL), or its projection on the
 * PCA fix (*base and *pca receive the ETF problem and the PCA object, returned-owned; *problem
 * is (*pca)->problem, not to be freed by itself). Pins OpenBLAS to one thread with the PCA
 * (bit-identical results for any `threads`). Free with dpd__nc_problem_release. */
DPD_HIDDEN_FN int dpd__nc_problem_build(const dpd_nc_problem_config *pc,
                                        const dpd_nc_pca_config *pca_cfg, dpd_nc_problem **problem,
                                        dpd_nc_problem **base, dpd_nc_pca **pca, dpd_err *err);
/* The problem of a run: on the files (files not NULL; not built unless replicas: account needs
 * no test rows), or dpd__nc_problem_build's. DPD_EINVAL for the PCA fix on files. */
DPD_HIDDEN_FN int dpd__nc_problem_make(dpd__nc_files *files, const dpd_nc_problem_config *pc,
                                       const dpd_nc_pca_config *pca_cfg, int replicas,
                                       dpd_nc_problem **problem, dpd_nc_problem **base,
                                       dpd_nc_pca **pca, dpd_err *err);
DPD_HIDDEN_FN void dpd__nc_problem_release(dpd_nc_problem *problem, dpd_nc_problem *base,
                                           dpd_nc_pca *pca);

/* The diagnostics of n rows (dpd_nc_diagnostics_create) reporting rows read (of 2 n) to
 * progress every 1024 rows; a non-zero return stops them: DPD_ECANCELLED. */
DPD_HIDDEN_FN int dpd__nc_diagnostics_polled(size_t n, size_t p, size_t K, dpd_nc_row_fn row,
                                             void *user, int (*progress)(void *, const char *,
                                                                         size_t, size_t),
                                             void *progress_user, dpd_nc_diagnostics **out,
                                             dpd_err *err);
/* The diagnostics of the training file and (when read) the test file, as above. */
DPD_HIDDEN_FN int dpd__nc_diagnostics_files(const dpd__nc_files *f,
                                            int (*progress)(void *, const char *, size_t, size_t),
                                            void *progress_user, dpd_nc_diagnostics **train,
                                            dpd_nc_diagnostics **test, dpd_err *err);
/* The diagnostics of replicate 0's training sample of the ETF law of pc (stream (seed, 0),
 * dpd_nc_train_sample), with progress as above. */
DPD_HIDDEN_FN int dpd__nc_diagnostics_law(const dpd_nc_problem_config *pc,
                                          int (*progress)(void *, const char *, size_t, size_t),
                                          void *progress_user, dpd_nc_diagnostics **out,
                                          dpd_err *err);

/* The noise of a privacy budget over `steps` Gaussian steps: budget 0 epsilon v at delta (exact
 * GDP calibration), 1 mu = v, 2 zcdp = v (total): *multiplier; 3: *sigma = v (the multiplier
 * follows from G). dpd_privacy_sigma_from_*'s errors. */
DPD_HIDDEN_FN int dpd__nc_noise_budget(int budget, double v, double delta, size_t steps,
                                       double *multiplier, double *sigma, dpd_err *err);

/* Memory models (bytes): a NoisyGD run of K classes in dimension p on n + n_test points with
 * `threads` workers (0: counted as 2); the PCA fix's PCA, projection blocks and projected
 * features of every replicate in flight (0 when pca is NULL); the diagnostics of n rows. */
DPD_HIDDEN_FN double dpd__nc_sim_bytes(size_t K, size_t p, size_t n, size_t n_test, int threads);
DPD_HIDDEN_FN double dpd__nc_pca_bytes(const dpd_nc_problem_config *pc,
                                       const dpd_nc_pca_config *pca, size_t threads);
DPD_HIDDEN_FN double dpd__nc_diagnostics_bytes(size_t n, size_t p, size_t K);

/* ---- the results as parts of a run's output (nc_report.c) ---- */

/* The figure of a run (out->figure) and, in the summary, {"figure": {"name", "data": [first,
 * second]}}: its script and data files, from which dpdyn plot DIR draws it again. */
DPD_HIDDEN_FN int dpd__nc_figure_report(dpd_output *out, const char *figure, const char *first,
                                        const char *second, dpd_err *err);
/* G, sigma, noise_multiplier, budget (the key's name or "none"), the guarantees of T = steps
 * Gaussian steps of multiplier m (sqrt(T)/m-GDP; "privacy") and zcdp_per_step. */
DPD_HIDDEN_FN int dpd__nc_privacy_report(dpd_output *out, double G, double sigma,
                                         double multiplier, const char *budget, double delta,
                                         size_t steps, dpd_err *err);
/* The summary's "features" object (source; with files: paths, sizes, x_bound, clipped
 * fraction) and, for a run of replicates on files, the note on what they redraw. */
DPD_HIDDEN_FN int dpd__nc_files_report(dpd_output *out, const dpd__nc_files *f, int from_file,
                                       int diagnose, int replicas, dpd_err *err);
/* The PCA fix: pca_k, n_public, pca_center, pca_route, pca_eigenvalues, pca_trace,
 * pca_x_bound, pca_etf_residual, pca_etf_energy, pca_beta0, and (K = 2, rho the finite zCDP
 * of the run) samples_thm41 at gamma = 0.05. */
DPD_HIDDEN_FN int dpd__nc_pca_report(const dpd_nc_pca *pca, double rho, dpd_output *out,
                                     dpd_err *err);
/* seeds, test_error, test_error_se, w_norm; the builders t[0] (classes: class train_count
 * test_count test_error test_error_se) and t[1] (replicates: replicate test_error w_norm),
 * returned-owned. */
DPD_HIDDEN_FN int dpd__nc_sim_report(dpd_output *out, const dpd_nc_problem *problem,
                                     const dpd_nc_sim_result *sim, dpd_table_builder **t,
                                     dpd_err *err);
/* compare's numbers: theory_test_error (+ _se), gap, gap_se, gap_in_se, the standard gaps of
 * dpd_compare_add (g = 1: the exact error against the simulated one, the SE of the paired
 * differences) or their n/a with the reason (and the seeds warning), the bounds; the columns
 * theory_test_error (+ _se) of t[0] (K classes) and theory_test_error of t[1] (S replicates),
 * NaN when the exact error is not available. */
DPD_HIDDEN_FN int dpd__nc_compare_report(dpd_output *out, const dpd__nc_comparison *c,
                                         dpd_table_builder **t, size_t K, size_t S,
                                         double final_sim, dpd_err *err);
/* diagnose's summary (the diagnostics; "test" for the test set; "sample" for the ETF law),
 * classes.tsv, cosines.tsv, beta_quantiles.tsv and the note on G_estimated. */
DPD_HIDDEN_FN int dpd__nc_diagnose_report(dpd_output *out, const dpd_nc_diagnostics *train,
                                          const dpd_nc_diagnostics *test, int law, dpd_err *err);

#endif
