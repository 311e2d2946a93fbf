/* Helpers shared by the model adapters (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_MODEL_IMPL_H
#define DPD_MODEL_IMPL_H

#include <stdint.h>

#include "core/output_impl.h"
#include "dpdyn/model.h"
#include "dpdyn/privacy.h"

#ifndef DPD_HIDDEN_FN
#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))
#endif

/* Checks a run's memory estimate (bytes) against env->max_memory before anything large is
 * allocated: DPD_EINVAL naming `driver` (the key whose value drives the size, with its value)
 * and the bytes needed. */
DPD_HIDDEN_FN int dpd__model_memory_check(const dpd_keys *keys, const dpd_run_env *env,
                                          double bytes, const char *driver, dpd_err *err);

/* The PATH of a key's value "file:PATH", or NULL when the value is not of that form. */
DPD_HIDDEN_FN const char *dpd__model_file_path(const char *value);

/* A file key's path: *path = NULL when the key is not given; DPD_EINVAL naming the key when its
 * value is not file:PATH with a non-empty PATH. */
DPD_HIDDEN_FN int dpd__model_file_key(const dpd_keys *keys, const char *key, const char **path,
                                      dpd_err *err);
/* The key `features`: `law` (the model's generator; its value, e.g. "etf") or file:PATH. With
 * the law, none of file_keys[0..n) may be given (the error names the first one given) and *path
 * is NULL; else *path points into the value. Anything else is an error naming `features`. */
DPD_HIDDEN_FN int dpd__model_features_key(const dpd_keys *keys, const char *law,
                                          const char *const *file_keys, size_t n, const char **path,
                                          dpd_err *err);

/* To call once every key is valid, before anything large is built: 1 when env->validate_only
 * (return DPD_OK, nothing built), 0 to go on, < 0 when env->validated refuses (return it). */
DPD_HIDDEN_FN int dpd__model_validated(const dpd_run_env *env, dpd_err *err);

/* A library run's progress (dpd_progress_fn, replicate.h) forwarded to env->progress with the
 * unit counted: progress = dpd__model_progress, progress_user = &bridge (it must outlive the
 * run). */
typedef struct {
  const dpd_run_env *env;
  const char *unit; /* "replicates", "DP-GD steps" */
} dpd__progress_bridge;
DPD_HIDDEN_FN int dpd__model_progress(void *bridge, size_t done, size_t total);

/* The value of the key `plot` (0/1), or `def` when it is not given. */
DPD_HIDDEN_FN int dpd__model_plot_get(const dpd_keys *keys, int def, int *plot, dpd_err *err);

/* Writes the guarantees of a run as the summary's "privacy" object: mu (when GDP holds), zcdp,
 * delta, epsilon (the tightest) with its conversion, and each conversion's epsilon. */
DPD_HIDDEN_FN void dpd__output_guarantee(dpd_output *out, const dpd_privacy_guarantee *g);

/* The output every command of a model starts from (returned-owned; NULL on failure): the plot
 * flag, and the summary's command, model, version and seed, in that order. */
DPD_HIDDEN_FN int dpd__output_begin(const char *command, const char *model, int plot, uint64_t seed,
                                    dpd_output **out, dpd_err *err);

/* Sets out->headline / out->figure (copies). */
DPD_HIDDEN_FN int dpd__output_headline_set(dpd_output *out, dpd_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
DPD_HIDDEN_FN int dpd__output_figure_set(dpd_output *out, const char *figure, dpd_err *err);
/* The figure `figure` drawn (dpd__output_figure_set) and recorded in the summary for dpdyn plot
 * DIR: "figure": {"name": figure, "data": [data0, data1]} (the data files in the figure's order;
 * one file may be named twice). DPD_ENOMEM. */
DPD_HIDDEN_FN int dpd__output_figure_record(dpd_output *out, const char *figure, const char *data0,
                                            const char *data1, dpd_err *err);
/* Appends a note line / report text (printf-style). */
/* Summary numbers named prefix + each of the space-separated `names` (at most 63 characters),
 * set to v[k]; with `why`, a NaN is null with that reason under "not_available". */
DPD_HIDDEN_FN void dpd__output_numbers_set(dpd_output *out, const char *prefix, const char *names,
                                           const double *v, const char *why);
/* Appends builder columns named prefix + each of the space-separated `names` (cols[k]). */
DPD_HIDDEN_FN int dpd__table_builder_add_named(dpd_table_builder *tb, const char *prefix,
                                               const char *names, const double *const *cols,
                                               dpd_err *err);
DPD_HIDDEN_FN int dpd__output_note_add(dpd_output *out, dpd_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
DPD_HIDDEN_FN int dpd__output_report_add(dpd_output *out, dpd_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets the extra header line of the last table added. */
DPD_HIDDEN_FN int dpd__output_table_comment_set(dpd_output *out, const char *comment, dpd_err *err);

/* The key save_replicates (docs/output.md, "Per-replicate values"): 0 none, 1 replicates.tsv
 * (each replicate's final values), 2 also replicates_trajectory.tsv (each replicate on the
 * grid); `max` is the largest level the command has. *level = 0 when the key does not apply
 * to the command; DPD_EINVAL naming the key and its allowed values otherwise. */
DPD_HIDDEN_FN int dpd__model_save_replicates_get(const dpd_keys *keys, size_t max, int *level,
                                                 dpd_err *err);
/* Bytes the per-replicate tables of `level` take (built, then copied into the output): nfinal
 * columns of replicates.tsv, ntrajectory of replicates_trajectory.tsv (the replicate index
 * aside), for the memory estimate. */
DPD_HIDDEN_FN double dpd__model_replicates_bytes(int level, size_t seeds, size_t grid,
                                                 size_t nfinal, size_t ntrajectory);
/* Adds replicates.tsv: the column `replicate` (0 .. seeds-1), then `ncols` columns of `seeds`
 * values (cols: borrowed) named by the space-separated `columns`. */
DPD_HIDDEN_FN int dpd__output_replicates_add(dpd_output *out, const char *figure,
                                             const char *columns, size_t seeds, size_t ncols,
                                             const double *const *cols, dpd_err *err);
/* Adds replicates_trajectory.tsv in long format, one row per replicate and grid point
 * (replicate-major): the column `replicate`, `nshared` columns of the grid (shared[k][j],
 * j < grid: t, step), then `nper` columns each [seeds * grid] row-major by replicate; `columns`
 * names all but `replicate`. */
DPD_HIDDEN_FN int dpd__output_replicate_trajectory_add(dpd_output *out, const char *figure,
                                                       const char *columns, size_t seeds,
                                                       size_t grid, size_t nshared,
                                                       const double *const *shared, size_t nper,
                                                       const double *const *per, dpd_err *err);

#endif
