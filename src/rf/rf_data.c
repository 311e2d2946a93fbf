/* Inputs and targets of a random-features problem from files (rf.h, dpd_rf_data; docs/rf.md,
 * "Inputs from a file"), read through the data matrices of core/datamat_impl.h.
 * SPDX-License-Identifier: MIT
 *
 * Preprocessing (computed once, in a fixed order, so it is the same bits for any thread count):
 *   m_k = (1/N) sum_i raw_ik (rows in order),
 *   s   = sqrt(d / ((1/N) sum_i |raw_i - m|^2)),   x_i = s (raw_i - m),
 * so the mean over the N rows of |x_i|^2 is d, the E|x|^2 = d of the Gaussian and sphere inputs
 * that the random-features theory assumes (V_jk ~ N(0, 1/d) gives pre-activations of order 1);
 * targets: y_i = (t_i - t_mean) / sd(t), sd with 1/N. Rows are converted to double and
 * preprocessed one at a time when a problem gathers them (rf.c), so the data stay in memory in
 * their own precision (a float32 .npy is mapped, not copied). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/datamat_impl.h"
#include "core/error_impl.h"
#include "dpdyn/rf.h"
#include "rf/rf_run_impl.h"

struct dpd_rf_data {
  dpd__datamat x;   /* N x d raw inputs */
  dpd__datamat t;   /* N x 1 raw targets (rows = 0: none) */
  double *mean;     /* [d] m */
  double scale;     /* s */
  double mean_norm; /* |m| */
  double t_mean;    /* NAN without targets */
  double t_scale;   /* 1 / sd(t); NAN without targets */
  char *input_path; /* copies, for the messages */
  char *target_path;
};

void dpd_rf_data_free(dpd_rf_data *data) {
  if (data == NULL) {
    return;
  }
  dpd__datamat_close(&data->x);
  dpd__datamat_close(&data->t);
  free(data->mean);
  free(data->input_path);
  free(data->target_path);
  free(data);
}

static char *copy_text(const char *s) {
  const size_t len = strlen(s) + 1;
  char *c = malloc(len);
  if (c != NULL) {
    memcpy(c, s, len);
  }
  return c;
}

/* m, s and |m| of the inputs (two passes over the rows, in order). */
static int input_factors(dpd_rf_data *data, dpd_err *err) {
  const size_t N = data->x.rows, d = data->x.cols;
  double *row = malloc(d * sizeof *row), msq = 0.0, norm2 = 0.0;
  if (row == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (d = %zu)", d);
  }
  for (size_t k = 0; k < d; k++) {
    data->mean[k] = 0.0;
  }
  for (size_t i = 0; i < N; i++) {
    dpd__datamat_row(&data->x, i, row);
    for (size_t k = 0; k < d; k++) {
      data->mean[k] += row[k];
    }
  }
  for (size_t k = 0; k < d; k++) {
    data->mean[k] /= (double)N;
    norm2 += data->mean[k] * data->mean[k];
  }
  for (size_t i = 0; i < N; i++) {
    double s = 0.0;
    dpd__datamat_row(&data->x, i, row);
    for (size_t k = 0; k < d; k++) {
      const double c = row[k] - data->mean[k];
      s += c * c;
    }
    msq += s;
  }
  free(row);
  msq /= (double)N;
  data->mean_norm = sqrt(norm2);
  if (!(msq > 0.0) || !isfinite(msq) || !isfinite(norm2)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'input': file:%s: the mean squared distance of its %zu "
                    "rows from their mean is %g (allowed: rows that differ, with a finite "
                    "positive spread: the inputs are centred and scaled to mean |x|^2 = d)",
                    data->input_path, N, msq);
  }
  data->scale = sqrt((double)d / msq);
  return DPD_OK;
}

/* The targets file: one value per input row; t_mean and 1 / sd. */
static int target_factors(dpd_rf_data *data, dpd_err *err) {
  const size_t N = data->x.rows;
  double sum = 0.0, var = 0.0;
  if (data->t.cols != 1 || data->t.rows != N) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'target': file:%s holds %zu x %zu values (allowed: N = "
                    "%zu values, one per row of the input file %s, as a 1-D .npy or one column)",
                    data->target_path, data->t.rows, data->t.cols, N, data->input_path);
  }
  for (size_t i = 0; i < N; i++) {
    sum += dpd__datamat_at(&data->t, i, 0);
  }
  data->t_mean = sum / (double)N;
  for (size_t i = 0; i < N; i++) {
    const double c = dpd__datamat_at(&data->t, i, 0) - data->t_mean;
    var += c * c;
  }
  var /= (double)N;
  if (!(var > 0.0) || !isfinite(var)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'target': file:%s: the variance of its %zu values is %g "
                    "(allowed: targets that differ, with a finite variance: they are centred and "
                    "scaled to unit variance)",
                    data->target_path, N, var);
  }
  data->t_scale = 1.0 / sqrt(var);
  return DPD_OK;
}

int dpd_rf_data_create(const char *inputs, const char *targets, size_t max_bytes, dpd_rf_data **out,
                       dpd_err *err) {
  dpd_rf_data *data;
  int status;
  if (out != NULL) {
    *out = NULL;
  }
  if (inputs == NULL || out == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "rf data: NULL inputs path or output pointer");
  }
  if (inputs[0] == '\0' || (targets != NULL && targets[0] == '\0')) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': 'file:' (allowed: file:PATH with a non-empty PATH)",
                    inputs[0] == '\0' ? "input" : "target");
  }
  if ((data = calloc(1, sizeof *data)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  data->t_mean = NAN;
  data->t_scale = NAN;
  if ((data->input_path = copy_text(inputs)) == NULL ||
      (targets != NULL && (data->target_path = copy_text(targets)) == NULL)) {
    dpd_rf_data_free(data);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if ((status = dpd__datamat_open("input", inputs, 2, max_bytes, &data->x, err)) < 0 ||
      (targets != NULL &&
       (status = dpd__datamat_open("target", targets, 1, max_bytes, &data->t, err)) < 0)) {
    dpd_rf_data_free(data);
    return status;
  }
  if ((data->mean = malloc(data->x.cols * sizeof *data->mean)) == NULL) {
    dpd_rf_data_free(data);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (d = %zu)", data->x.cols);
  }
  if ((status = input_factors(data, err)) < 0 ||
      (targets != NULL && (status = target_factors(data, err)) < 0)) {
    dpd_rf_data_free(data);
    return status;
  }
  *out = data;
  return DPD_OK;
}

/* Bytes a data matrix takes in memory (mapped pages included). */
static double matrix_bytes(const dpd__datamat *m) {
  return (double)m->rows * (double)m->cols * (m->f32 ? 4.0 : 8.0);
}

void dpd_rf_data_info_get(const dpd_rf_data *data, dpd_rf_data_info *info) {
  memset(info, 0, sizeof *info);
  info->rows = data->x.rows;
  info->d = data->x.cols;
  info->f32 = data->x.f32;
  info->input_scale = data->scale;
  info->input_mean_norm = data->mean_norm;
  info->has_targets = data->target_path != NULL;
  info->target_mean = data->t_mean;
  info->target_scale = data->t_scale;
  info->bytes = matrix_bytes(&data->x) + matrix_bytes(&data->t) + 8.0 * (double)data->x.cols;
}

void dpd_rf_data_row_get(const dpd_rf_data *data, size_t i, double *x) {
  const size_t d = data->x.cols;
  dpd__datamat_row(&data->x, i, x);
  for (size_t k = 0; k < d; k++) {
    x[k] = data->scale * (x[k] - data->mean[k]);
  }
}

double dpd_rf_data_target_get(const dpd_rf_data *data, size_t i) {
  return data->target_path != NULL
             ? data->t_scale * (dpd__datamat_at(&data->t, i, 0) - data->t_mean)
             : NAN;
}

const double *dpd_rf_data_mean_get(const dpd_rf_data *data) {
  return data->mean;
}

const char *dpd__rf_data_path(const dpd_rf_data *data, int target) {
  return target ? data->target_path : data->input_path;
}
