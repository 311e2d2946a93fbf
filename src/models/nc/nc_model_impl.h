/* model=nc: what the adapter (nc_model.c) shares with its feature-file part
 * (nc_features_model.c). Internal.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NC_MODEL_IMPL_H
#define DPD_NC_MODEL_IMPL_H

#include "dpdyn/nc.h"
#include "dpdyn/nc_features.h"
#include "core/model_impl.h"

/* The keys of a run on a user's feature files: features = file:PATH, labels, test_features,
 * test_labels, x_bound (docs/nc.md, "Your own features"). */
typedef struct {
  int from_file;  /* features = file:PATH (0: the ETF law) */
  double x_bound; /* the public bound R (INFINITY: not given) */
  int test_given; /* test_features given */
  double bytes;   /* memory the files take once read (estimate, before reading) */
  dpd_nc_features_config train_cfg, test_cfg;
  dpd_nc_features *train, *test; /* read by dpd__nc_files_read */
  dpd_nc_data_config data;       /* the problem's view of them (dpd__nc_files_problem) */
} dpd__nc_files;

/* Validates the file keys of `command` (simulate, compare: test_features and, unless normalize
 * is l2 or center_l2, x_bound are required with file features; diagnose: both optional) and
 * estimates the memory of the files from their sizes (.npy headers); reads nothing else. With
 * features = etf the other file keys are errors. The keys of the ETF law (etf, imbalance_*,
 * shift, beta, offset, offset_at_test) are dropped with file features (not in effect). */
DPD_HIDDEN_FN int dpd__nc_files_setup(dpd_keys *keys, dpd_nc_normalize normalize, dpd__nc_files *f,
                                      dpd_err *err);
/* Reads the files (bounded by env->max_memory), checks the keys K, p, n, n_test against them
 * when given (DPD_EINVAL naming the key) and records the values in effect. */
DPD_HIDDEN_FN int dpd__nc_files_read(dpd_keys *keys, const dpd_run_env *env, dpd__nc_files *f,
                                     dpd_err *err);
/* The problem on the files (dpd_nc_problem_from_data; the files must outlive it). */
DPD_HIDDEN_FN int dpd__nc_files_problem(dpd__nc_files *f, const dpd_nc_problem_config *pc,
                                        dpd_nc_problem **out, dpd_err *err);
/* The summary's "features" object (files, sizes, x_bound, clipped fraction) and the note on
 * what replicates redraw. */
DPD_HIDDEN_FN int dpd__nc_files_output(dpd_output *out, const dpd__nc_files *f, dpd_err *err);
DPD_HIDDEN_FN void dpd__nc_files_free(dpd__nc_files *f);

/* dpdyn diagnose --model=nc: the collapse diagnostics of the features (file or ETF law). */
DPD_HIDDEN_FN int dpd__nc_diagnose(dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
                                   dpd_err *err);

#endif
