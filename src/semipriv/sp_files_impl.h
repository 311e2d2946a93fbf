/* Semi-private learning, the parts behind model=semipriv (internal): a user's feature sets read
 * from files and scaled to the unit sphere, Algorithm 1 on them, the law's own checks and list
 * format, account's constants, the theory's bound curves, and the memory models of the runs.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_SP_FILES_IMPL_H
#define DPD_SP_FILES_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/dpsgd.h"
#include "dpdyn/keys.h"
#include "dpdyn/model.h"
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
  double positive_class;   /* labels == positive_class -> +1, else -1 (one-vs-rest) */
  int multiclass;          /* trainer = dpsgd without positive_class: y holds class indices
                              0 .. K-1 (as doubles), K = classes (max label + 1 of the training
                              set, >= 2 distinct labels) */
  size_t classes;          /* K (0 until the training set is read; 2 for +-1 labels) */
  double public_fraction;  /* in (0, 1): the public set is a random subset of the features
                              file's rows, redrawn per replicate; 0: none */
  double private_fraction; /* in (0, 1]: the fraction of the private rows trained on */
  dpd_schedule *schedule;  /* lr_schedule of trainer = dpsgd (owned; NULL: constant) */
  double bytes;            /* estimated memory of the sets once read */
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

/* The file keys against each other and the command (run: simulate, compare): test_labels
 * needs test_features, run needs test_features, and zeta must be given (no margin from data). */
DPD__SP_HIDDEN int dpd__sp_files_check(const dpd__sp_files *f, int run, int zeta_given,
                                       dpd_err *err);
/* positive_class, when given, must be an integer label. */
DPD__SP_HIDDEN int dpd__sp_positive_check(const dpd__sp_files *f, dpd_err *err);
/* Records a size read off a file (key d, n, n_public, n_test); < 0 stops the reading. */
typedef int (*dpd__sp_size_fn)(void *user, const char *key, size_t value, const char *path,
                               dpd_err *err);
/* Reads the training set, then the public set (f->has_public) and with run the test set
 * (f->has_test), each bounded by max_bytes, calling `record` with each set's sizes once it is
 * read (so that a size the user gave otherwise is refused before the next file is read). */
DPD__SP_HIDDEN int dpd__sp_files_read(dpd__sp_files *f, size_t max_bytes, int run,
                                      dpd__sp_size_fn record, void *user, dpd_err *err);

/* Class labels 0 .. K-1 of a training set: *classes = max + 1 (NULL: not stored); fewer than
 * two distinct labels is DPD_EINVAL naming 'labels'. */
DPD__SP_HIDDEN int dpd__sp_classes_count(const double *y, size_t rows, const char *path,
                                         size_t *classes, dpd_err *err);

/* The sizes of a split of the features file's N rows (sp_dpsgd.c): *n_public = round(
 * public_fraction N) (0 without a split), *n_private = N - n_public, *n_trained =
 * round(private_fraction n_private). DPD_EINVAL names 'public_fraction' (fewer than k + 1 public
 * rows, or no private row) or 'private_fraction' (no row trained on). */
DPD__SP_HIDDEN int dpd__sp_split_sizes(const dpd__sp_files *f, size_t N, size_t k, int run,
                                       size_t *n_public, size_t *n_private, size_t *n_trained,
                                       dpd_err *err);
/* m of the N entries of `from` (NULL: 0 .. N-1), in order, into out: a uniformly random subset
 * by selection sampling on one dpd_rng_uniform_fill of N values u_i from region (tag 2, index)
 * of stream (seed, rep): entry i is taken iff u_i (N - i) < m - (entries already taken).
 * `rest` (NULL allowed): the N - m others, in order. u: N doubles of work. */
DPD__SP_HIDDEN void dpd__sp_select(uint64_t seed, uint64_t rep, uint64_t index, const size_t *from,
                                   size_t N, size_t m, size_t *out, size_t *rest, double *u);
/* Region indexes of tag 2 of a replicate's stream for the splits of file features (the law's
 * test points use indexes < n_test; file features draw no points). */
#define DPD__SP_SPLIT_PUBLIC (UINT64_C(1) << 29)
#define DPD__SP_SPLIT_PRIVATE ((UINT64_C(1) << 29) + 1)

/* Algorithm 1 on the files with trainer = dpsgd or a split (public_fraction, private_fraction):
 * per replicate the split redrawn, the PCA of the public rows (once per run when they are
 * public_features), the rows trained on projected (n x k), the trainer, the metrics. *out as
 * dpd__sp_files_run's. */
DPD__SP_HIDDEN int dpd__sp_split_run(const dpd__sp_files *f, const dpd_semipriv_run_config *cfg,
                                     dpd_semipriv_result **out, dpd_err *err);

/* trainer = dpsgd, once per run before any replicate: cfg->dpsgd completed for n rows and K
 * classes into *dp (seed; tag 3; noise_multiplier z: given, or calibrated to (epsilon, delta)
 * with dpd_dpsgd_calibrate at n); res's trainer, noise_multiplier, sigma = z clip, steps T,
 * classes, batch and the accountant's epsilons at z (NaN when z = 0). DPD_EINVAL names the key
 * (dpd_dpsgd_check's, 'loss' for a binary loss with K > 2, 'epsilon', 'delta'). */
DPD__SP_HIDDEN int dpd__sp_dpsgd_prepare(const dpd_semipriv_run_config *cfg, size_t n, size_t K,
                                         dpd_semipriv_result *res, dpd_dpsgd_config *dp,
                                         dpd_err *err);
/* One replicate's DP-SGD on the projected rows P (n x k) with labels yi, stream rep: the metrics
 * of row (test accuracy on Pt, n_test x k, labels yti, when n_test > 0; train accuracy; w_norm;
 * hinge columns and active_fraction NaN) and drow (DPD_SEMIPRIV_DPSGD_COUNT values; test_loss
 * NaN when n_test = 0). keep NULL: the model freed; else *keep (returned-owned). */
DPD__SP_HIDDEN int dpd__sp_dpsgd_fit(const dpd_dpsgd_config *dp, uint64_t rep, const double *P,
                                     const int32_t *yi, size_t n, const double *Pt,
                                     const int32_t *yti, size_t n_test, size_t k, double *row,
                                     double *drow, dpd_dpsgd_model **keep, dpd_err *err);
/* The result's DPSGD means (dpsgd_mean, dpsgd_se) once the replicates ran. */
DPD__SP_HIDDEN void dpd__sp_dpsgd_finish(dpd_semipriv_result *res);

/* The keys of model=semipriv (sp_keys.c). */
DPD__SP_HIDDEN extern const dpd_key_desc dpd__sp_keys[];
/* Whether trainer = dpsgd was given. */
DPD__SP_HIDDEN int dpd__sp_trainer_is_dpsgd(const dpd_keys *keys);
/* The trainer's keys (after epsilon and steps are in rc; before the files are read):
 * public_fraction, private_fraction into f (file features only, public_fraction exclusive with
 * public_features); with trainer = dpsgd rc->trainer, rc->dpsgd, rc->noise_multiplier (refused
 * with an explicit finite epsilon), f->schedule, f->multiclass (no positive_class); zeta and
 * calibration refused. With trainer = bst the DP-SGD keys are refused, naming the key. */
DPD__SP_HIDDEN int dpd__sp_trainer_keys(const dpd_keys *keys, dpd_semipriv_run_config *rc,
                                        dpd__sp_files *f, dpd_err *err);
/* The default steps: n^2 (bst) or T of DP-SGD at n (batch = round(q n) when fixed and unset). */
DPD__SP_HIDDEN size_t dpd__sp_steps_default(const dpd_semipriv_run_config *rc);

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

/* The noise of a run (sp_calib.c) at n labelled points, L = 1/zeta and T = steps: res->sigma by
 * cfg->calibration (BST: dpd_semipriv_sgd_sigma; PLD: dpd_semipriv_sgd_sigma_pld, once per run),
 * res->calibration, sigma_bst, noise_multiplier and, for PLD, the accountant's epsilons at it;
 * sgd (NULL allowed) is set to use that sigma in every replicate. */
DPD__SP_HIDDEN int dpd__sp_calibrate(const dpd_semipriv_run_config *cfg, size_t n, double L,
                                     size_t steps, dpd_semipriv_result *res,
                                     dpd_semipriv_sgd_config *sgd, dpd_err *err);
/* The privacy keys of model=semipriv: epsilon, delta and calibration (bst | pld) into rc. */
DPD__SP_HIDDEN int dpd__sp_privacy_keys(const dpd_keys *keys, dpd_semipriv_run_config *rc,
                                        dpd_err *err);

/* account: sigma and the constants without a replicate, in the fields of a result (replicates
 * NULL). gen NULL: file features (zeta must be given). DPD_EINVAL naming zeta when it is not
 * > 0. */
DPD__SP_HIDDEN int dpd__sp_account_eval(const dpd_semipriv_gen *gen,
                                        const dpd_semipriv_run_config *cfg, size_t d,
                                        dpd_semipriv_result *acc, dpd_err *err);

/* One member of a summary object: a number, a number not available (na: the reason), or a
 * text (text != NULL). */
typedef struct {
  const char *name;
  double value;
  const char *na, *text;
} dpd__sp_member;
#define DPD__SP_MEMBERS_MAX 40

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

/* The names of the numbers the members above can put in a summary, per command, as dpdyn sweep
 * names them (dpd_model_command.numbers of model=semipriv): the union over the configurations
 * (law or files), checked by tests/cli/test_sweep_plot_y.sh. */
#define DPD__SP_NUMBERS_HEAD                                                                       \
  "seed k d privacy.epsilon privacy.delta privacy.noise_multiplier privacy.epsilon_pld "           \
  "privacy.epsilon_pld_estimate privacy.epsilon_pld_lower privacy.sigma_bst "                      \
  "privacy.sigma_bst_over_sigma privacy.q privacy.batch privacy.steps privacy.clip privacy.n "     \
  "sigma L zeta eta1 steps "
#define DPD__SP_NUMBERS_RUN                                                                        \
  "seeds test_accuracy test_accuracy_se test_hinge test_hinge_se train_accuracy train_hinge "      \
  "w_norm active_fraction xi_k xi_k_se xi_k_population eigengap eigengap_hat margin_min "          \
  "margin_guaranteed subspace_error gamma0 xi0 classes epochs eta clipped_fraction "               \
  "clipped_fraction_se mean_batch mean_batch_se train_loss train_loss_se test_loss test_loss_se "  \
  "n_private n_public "
#define DPD__SP_NUMBERS_FILES                                                                      \
  "features.n features.d features.n_public features.n_test features.positive_class"
#define DPD__SP_NUMBERS_SIMULATE DPD__SP_NUMBERS_HEAD DPD__SP_NUMBERS_RUN DPD__SP_NUMBERS_FILES
#define DPD__SP_NUMBERS_COMPARE                                                                    \
  DPD__SP_NUMBERS_HEAD DPD__SP_NUMBERS_RUN                                                         \
      "theory.alpha_private theory.alpha_private_no_pca theory.alpha_nonprivate theory.alpha "     \
      "theory.n_labelled theory.n_labelled_no_pca theory.n_labelled_nonprivate theory.test_error " \
      "theory.test_error_se theory.beta theory.zb_bound theory.subspace_error "                    \
      "theory.subspace_error_se theory.subspace_error_max theory.zb_bound_holds_fraction "         \
      "theory.n_public_theorem1 " DPD__SP_NUMBERS_FILES
#define DPD__SP_NUMBERS_ACCOUNT                                                                    \
  DPD__SP_NUMBERS_HEAD "n gamma0 xi0 features.n features.d features.positive_class"

/* Writes the members into a summary object (obj NULL: nothing). */
DPD__SP_HIDDEN void dpd__sp_members_add(cJSON *obj, const dpd__sp_member *m, size_t count);
/* The guarantee of Noisy-SGD (the summary's "privacy" object) at cfg's (epsilon, delta), by
 * res's calibration: Bassily et al.'s theorem (bst), or the PLD accountant (pld: its epsilon,
 * estimate and lower bound at sigma, and Bassily et al.'s sigma beside it); the calibration and
 * the noise multiplier sigma / (n L) either way; no zCDP or GDP conversion; epsilon = inf:
 * none. */
DPD__SP_HIDDEN size_t dpd__sp_privacy_members(const dpd_semipriv_run_config *cfg,
                                              const dpd_semipriv_result *res, dpd__sp_member *m);
/* The features of a run (the summary's "features" object): the law, or the files read. */
DPD__SP_HIDDEN size_t dpd__sp_files_members(const dpd__sp_files *f, dpd__sp_member *m);
/* The constants of a run, in order: k, d, then sigma, L, zeta, eta1, steps (7 members). */
DPD__SP_HIDDEN size_t dpd__sp_constants_members(const dpd_semipriv_result *res, dpd__sp_member *m);

/* The notes on a run: what a replicate redraws (law, files), what the theory is. */
typedef enum {
  DPD__SP_NOTE_LAW,
  DPD__SP_NOTE_FILES,
  DPD__SP_NOTE_THEORY,
  DPD__SP_NOTE_THEORY_TABLE /* the header line of theory.tsv */
} dpd__sp_note_kind;
DPD__SP_HIDDEN const char *dpd__sp_note(dpd__sp_note_kind kind);
/* The note on what a run's replicates redraw: the law's or the files' note for Noisy-SGD without
 * a split (as before), else the note of the split or of trainer = dpsgd. */
DPD__SP_HIDDEN const char *dpd__sp_run_note(const dpd_semipriv_result *res, int law);

/* replicates.tsv: `replicate`, then every metric of semipriv.h by its name (*b returned-owned;
 * NULL on failure). */
DPD__SP_HIDDEN int dpd__sp_replicates_table(const dpd_semipriv_result *res, dpd_table_builder **b,
                                            dpd_err *err);
/* theory.tsv: the bounds against n on a log grid of 33 points 10 .. 1e9: n, Theorem 1 at k and at
 * d, Proposition 4 (*b as above). */
DPD__SP_HIDDEN int dpd__sp_theory_table(const dpd_semipriv_result *res,
                                        const dpd_semipriv_run_config *cfg, dpd_table_builder **b,
                                        dpd_err *err);
/* Once n, d and k are known (the files read): rc's n, n_public and n_test from the files, the
 * steps (rc->steps, 0: n^2; dpd__sp_steps_check), and with run the public set that file features
 * need for k < d and n_public >= k + 1 for the top-k PCA. */
DPD__SP_HIDDEN int dpd__sp_sizes_check(dpd_semipriv_run_config *rc, size_t d,
                                       const dpd__sp_files *f, int run, dpd_err *err);

#endif /* DPD_SP_FILES_IMPL_H */
