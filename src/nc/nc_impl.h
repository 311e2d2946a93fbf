/* model=nc: the science the adapter (src/models/nc/) calls, beside the kernels: the exact
 * one-step error on each replicate and compare's paired evaluation (nc_compare.c), the feature
 * files as a problem, the problem with or without the PCA fix, the diagnostics of the ETF law or
 * of files with progress, and the memory models of the kernels (nc_run.c). Internal.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NC_IMPL_H
#define DPD_NC_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/account.h"
#include "dpdyn/dpsgd.h"
#include "dpdyn/nc.h"
#include "dpdyn/nc_features.h"
#include "dpdyn/nc_pca.h"
#include "dpdyn/model.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
/* The numbers each command's summary can hold (dpd_model_command.numbers; nc_report.c). */
DPD_HIDDEN_FN extern const char dpd__nc_simulate_numbers[], dpd__nc_compare_numbers[],
    dpd__nc_diagnose_numbers[], dpd__nc_account_numbers[];

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

/* ---- resize (nc_resize.c) ---- */

typedef struct {
  dpd_nc_resize mode;
  size_t P;                   /* the new dimension (resize_p) */
  size_t p;                   /* the old one */
  size_t *index;              /* [P] dpd_nc_resize_index (owned; NULL with none) */
  const dpd_nc_problem *base; /* the ETF law resized: its base problem (borrowed) */
  size_t *y;                  /* the law's labels: [n] training, [n_test] test (owned) */
  dpd_nc_data_config data;    /* the resized law as data */
} dpd__nc_resize;

/* ---- trainer = dpsgd: keys, privacy and reports (nc_dpsgd.c) ---- */

typedef struct {
  int on;                 /* trainer = dpsgd */
  dpd_dpsgd_config cfg;   /* lr = eta, steps (0: from epochs), the calibrated noise_multiplier */
  int budget;             /* 0: epsilon (calibrated), 1: noise_multiplier, -1: none (z = 0) */
  double epsilon;         /* budget 0: the target */
  dpd_account_result at;  /* the accountant at the noise multiplier (z > 0) */
  dpd_schedule *schedule; /* lr_schedule (owned; NULL: const) */
  size_t schedule_kind;   /* index in const|cosine|step|sqrt */
} dpd__nc_dpsgd;

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
/* The problem of a run: on the files (files not NULL, already resized; not built unless
 * replicas: account needs no test rows), the ETF law resized (rs->mode not none; *base the law),
 * or dpd__nc_problem_build's. DPD_EINVAL for the PCA fix on files. */
DPD_HIDDEN_FN int dpd__nc_problem_make(dpd__nc_files *files, const dpd_nc_problem_config *pc,
                                       const dpd_nc_pca_config *pca_cfg, dpd__nc_resize *rs,
                                       int replicas,
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
 * dpd_nc_train_sample), resized by rs (mode none: as it is), with progress as above. */
DPD_HIDDEN_FN int dpd__nc_diagnostics_law(const dpd_nc_problem_config *pc,
                                          const dpd__nc_resize *rs,
                                          int (*progress)(void *, const char *, size_t, size_t),
                                          void *progress_user, dpd_nc_diagnostics **out,
                                          dpd_err *err);

/* A key read into a context at a byte offset, by kind: z size_t, r double, c a choice (int: its
 * index, in the enum's order), u uint64, i size_t into an int. */
typedef struct {
  const char *key;
  char kind;
  size_t at;
} dpd__nc_read;
/* Reads the keys of r (up to a NULL key) into base + r->at; the getters' errors. */
DPD_HIDDEN_FN int dpd__nc_keys_read(const dpd_keys *keys, const dpd__nc_read *r, void *base,
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

/* ---- a replicate of another trainer on the simulator's data (nc_sim.c) ---- */

/* The work space of one replicate of dpd_nc_sim_run (doubles), which the two calls below use. */
DPD_HIDDEN_FN size_t dpd__nc_work_doubles(const dpd_nc_problem *pr);
/* Replicate rep's training features as the simulator trains on them (fill, feature clip,
 * normalize) into X [n p] (class order) and their labels y [n]; work: dpd__nc_work_doubles
 * doubles, kept for dpd__nc_replicate_test. The fill's errors. */
DPD_HIDDEN_FN int dpd__nc_replicate_rows(const dpd_nc_problem *pr, uint64_t seed, size_t rep,
                                         double *work, double *X, int32_t *y, dpd_err *err);
/* The simulator's test of W (K x p) on replicate rep's test points, after
 * dpd__nc_replicate_rows on the same work: class_err[k] (K), returns the errors in all. */
DPD_HIDDEN_FN size_t dpd__nc_replicate_test(const dpd_nc_problem *pr, uint64_t seed, size_t rep,
                                            double *work, const double *W, double *class_err);

/* The map for features of width p (problem seed `seed`); DPD_EINVAL naming 'resize_p'. */
DPD_HIDDEN_FN int dpd__nc_resize_init(dpd__nc_resize *rs, size_t p, uint64_t seed, dpd_err *err);
/* The files' rows resized (after dpd__nc_resize_init with their p). */
DPD_HIDDEN_FN int dpd__nc_files_resize(dpd__nc_files *f, const dpd__nc_resize *rs, dpd_err *err);
/* The ETF law of pc resized: *base the law without test perturbation and normalisation, and
 * *problem the per-replicate features in R^P (normalize, test_shift of pc), x_bound the sup of
 * |x| over the resized support. rs must outlive both. */
DPD_HIDDEN_FN int dpd__nc_resize_law(dpd__nc_resize *rs, const dpd_nc_problem_config *pc,
                                     dpd_nc_problem **problem, dpd_nc_problem **base,
                                     dpd_err *err);
DPD_HIDDEN_FN void dpd__nc_resize_free(dpd__nc_resize *rs);

/* The keys of the trainer (after the nc keys eta, steps, loss, radius, normalize of pc and sc are
 * read): trainer = noisygd refuses every dpsgd-only key given (q, batch, sampling, epochs,
 * lr_schedule, clip, noise_multiplier); dpsgd refuses mu, zcdp, sigma, a finite radius,
 * loss = square, normalize = center / center_l2, epsilon with noise_multiplier, batch with
 * poisson. DPD_EINVAL naming the key. */
DPD_HIDDEN_FN int dpd__nc_dpsgd_keys(const dpd_keys *keys, const dpd_nc_problem_config *pc,
                                     const dpd_nc_sim_config *sc, dpd__nc_dpsgd *d, dpd_err *err);
/* Once n and p are known: batch (fixed: round(q n) unless given), dpd_dpsgd_check ('batch' >
 * n, 'q', 'epochs'), T, and the values in effect recorded in keys (steps = T). */
DPD_HIDDEN_FN int dpd__nc_dpsgd_sizes(dpd_keys *keys, dpd__nc_dpsgd *d, size_t n, size_t p,
                                      dpd_err *err);
/* Calibrates (budget 0: dpd_dpsgd_calibrate at delta) or accounts (budget 1) the run on n
 * records and writes the summary's trainer members. */
DPD_HIDDEN_FN int dpd__nc_dpsgd_privacy(dpd_output *out, dpd__nc_dpsgd *d, size_t n, double delta,
                                        dpd_err *err);
/* The replicates' clipped_fraction, mean_batch, train_loss: columns of t[1] and means (with SE)
 * in the summary. */
DPD_HIDDEN_FN int dpd__nc_dpsgd_tables(dpd_output *out, const dpd_nc_sim_result *sim,
                                       dpd_table_builder **t, dpd_err *err);
/* compare's numbers with dpsgd: the exact one-step theory and the bounds n/a, with the reason. */
DPD_HIDDEN_FN void dpd__nc_dpsgd_comparison(dpd__nc_comparison *c);
/* The collapse diagnostics of the training file as trained (after resize, before the feature
 * clip and normalize) as the summary's "collapse" object: nc1, within_trace, between_trace,
 * trace_ratio, cos_max_dev, beta_mean, beta_median, x_norm_max. */
DPD_HIDDEN_FN int dpd__nc_collapse_report(dpd_output *out, const dpd__nc_files *f, dpd_err *err);
DPD_HIDDEN_FN void dpd__nc_dpsgd_free(dpd__nc_dpsgd *d);
/* The end of setup, once every key is read and the files (files not NULL) are loaded: the keys
 * resize and resize_p ('resize_p' given without resize, missing with it, out of range; resize
 * with pca_k > 0), the map for the features' p (problem seed pc->seed), the files resized
 * (their memory checked against max_memory first, naming 'resize_p') and pc->p set to the new
 * width; with trainer = dpsgd the sizes (dpd__nc_dpsgd_sizes on the dimension it trains in) and
 * *steps = T. */
DPD_HIDDEN_FN int dpd__nc_setup_finish(dpd_keys *keys, const dpd_run_env *env,
                                       dpd__nc_files *files, dpd_nc_problem_config *pc,
                                       size_t pca_k, dpd__nc_resize *rs, dpd__nc_dpsgd *d,
                                       size_t *steps, dpd_err *err);
/* Memory beyond the simulator's (bytes): the resized law's per-replicate rows and, with dpsgd,
 * each thread's n x p matrix (threads <= 0: counted as 2, at most seeds). */
DPD_HIDDEN_FN double dpd__nc_more_bytes(const dpd_nc_problem_config *pc, size_t pca_k,
                                        const dpd__nc_resize *rs, const dpd__nc_dpsgd *d,
                                        int from_file, size_t seeds, int threads);

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

/* The numbers each command's summary can hold (dpd_model_command.numbers; nc_report.c). */
DPD_HIDDEN_FN extern const char dpd__nc_simulate_numbers[], dpd__nc_compare_numbers[],
    dpd__nc_diagnose_numbers[], dpd__nc_account_numbers[];

#endif
