/* The audit command's shared pieces (internal): its keys and its output, for every model that
 * has `audit` (src/linreg/audit.c, src/rf/audit_rf.c; docs/privacy.md "Empirical audit").
 * SPDX-License-Identifier: MIT */
#ifndef DPD_AUDIT_IMPL_H
#define DPD_AUDIT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/audit.h"
#include "dpdyn/keys.h"
#include "dpdyn/model.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* The key lines every model's audit takes (runs, confidence), to copy into its key table. */
#define DPD__AUDIT_KEY_LINES                                                                       \
  {"runs", DPD_KEY_INT, "2000", 10, 16777216.0, 0, NULL, "audit",                                  \
   "audit: runs of the private algorithm on each of the two neighbouring datasets (>= 10; "      \
   "the first half chooses the test's threshold, the second half bounds its errors)"},             \
      {"confidence", DPD_KEY_REAL, "0.95", 0, 1, DPD_KEY_LO_OPEN | DPD_KEY_HI_OPEN, NULL, "audit", \
       "audit: confidence of the lower bounds (Clopper-Pearson)"}

/* The numbers an audit's summary adds (dpd_model_command.numbers). */
#define DPD__AUDIT_NUMBERS                                                                         \
  "runs audit_confidence audit_delta epsilon_lower epsilon_upper epsilon_ratio mu_hat "            \
  "mu_hat_lo mu_hat_hi mu_lower mu_upper mu_ratio mu_canary runs_needed "                          \
  "epsilon_lower_expected fpr fnr fpr_upper fnr_upper threshold_epsilon threshold_mu "             \
  "eval_runs mean0 mean1 sd_pooled"

/* Runs used for the trade-off table (points) and the theoretical curves (points). */
#define DPD__AUDIT_TRADEOFF_POINTS 101
#define DPD__AUDIT_CURVE_POINTS 400
/* Largest runs per side that runs_needed searches. */
#define DPD__AUDIT_RUNS_NEEDED_MAX ((size_t)1 << 30)

typedef struct {
  size_t runs;       /* per side */
  double confidence; /* of the bounds */
  double delta;      /* of the epsilon bounds (the model's key) */
} dpd__audit_keys;

/* A model's `audit` command entry (model.h): its run function, uses bits, the numbers its
 * summary can hold (DPD__AUDIT_NUMBERS among them), and an example command line. */
#define DPD__AUDIT_COMMAND(run_fn, uses_bits, model_numbers, example_line)                         \
  {.name = "audit",                                                                                \
   .summary = "empirical privacy audit: epsilon and mu lower bounds from a canary, beside the "    \
              "accountant's upper bound",                                                          \
   .files = "audit_runs.tsv audit_tradeoff.tsv audit_curve.tsv summary.json audit.png",            \
   .example = example_line,                                                                        \
   .numbers = model_numbers,                                                                       \
   .run = run_fn,                                                                                  \
   .uses = uses_bits,                                                                              \
   .replicates_key = "runs",                                                                       \
   .plot_default = 1}

/* runs and confidence (validated: DPD_EINVAL naming the key); delta is left to the model. */
DPD_HIDDEN_FN int dpd__audit_keys_get(const dpd_keys *keys, dpd__audit_keys *a, dpd_err *err);

/* What the model says about its audit. */
typedef struct {
  const char *model;     /* "linreg", "rf" */
  const char *privacy;   /* the privacy as words for the figure, e.g. "rho = 1" */
  const char *bound;     /* what the upper bound is, e.g. "last-iterate GDP ..." */
  const char *canary;    /* the canary and its neighbour, in words */
  const char *statistic; /* the statistic, in words */
  double mu_upper;       /* the accountant's mu-GDP upper bound */
  double mu_canary;      /* the mu this canary and statistic show exactly (NAN: unknown) */
} dpd__audit_upper;

/* Appends the audit's summary numbers, audit_runs.tsv, audit_tradeoff.tsv and audit_curve.tsv
 * (figure "audit") and the report lines to `out`, from the statistics s0 (side 0) and s1 (side
 * 1) of `a->runs` runs each. */
DPD_HIDDEN_FN int dpd__audit_output(dpd_output *out, const double *s0, const double *s1,
                                    const dpd__audit_keys *a, const dpd__audit_upper *u,
                                    dpd_err *err);

/* Independent seeds of the audit's streams: the splitmix64 finaliser of seed + k (golden
 * ratio increments), so that audits with seeds s and s + 1 share no stream. Pure. */
DPD_HIDDEN_FN uint64_t dpd__audit_seed_mix(uint64_t seed, uint64_t k);

#endif
