/* Helpers shared by the model adapters (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_MODEL_IMPL_H
#define DPD_MODEL_IMPL_H

#include "dpdyn/model.h"

#define DPD_HIDDEN_FN __attribute__((visibility("hidden")))

/* Checks a run's memory estimate (bytes) against env->max_memory before anything large is
 * allocated: DPD_EINVAL naming `driver` (the key whose value drives the size, with its value)
 * and the bytes needed. */
DPD_HIDDEN_FN int dpd__model_memory_check(const dpd_keys *keys, const dpd_run_env *env,
                                          double bytes, const char *driver, dpd_err *err);

/* The value of the key `plot` (0/1), or `def` when it is not given. */
DPD_HIDDEN_FN int dpd__model_plot_get(const dpd_keys *keys, int def, int *plot, dpd_err *err);

/* Sets out->headline / out->figure (copies). */
DPD_HIDDEN_FN int dpd__output_headline_set(dpd_output *out, dpd_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
DPD_HIDDEN_FN int dpd__output_figure_set(dpd_output *out, const char *figure, dpd_err *err);

/* The registered model types (one per folder of src/models/). */
extern const dpd_model_type dpd__model_linreg DPD_HIDDEN_FN;
extern const dpd_model_type dpd__model_rf DPD_HIDDEN_FN;

#endif
