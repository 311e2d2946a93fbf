/* Statistics over the replicates of a stochastic run: mean, standard error and sums, each in
 * replicate order.
 * SPDX-License-Identifier: MIT
 *
 * The mean is the first value plus the mean of the deviations from it (exact for identical
 * values); the variance is the two-pass sum of squared deviations from that mean (T. F. Chan,
 * G. H. Golub and R. J. LeVeque, Algorithms for computing the sample variance: analysis and
 * recommendations, The American Statistician 37 (1983) 242), free of the cancellation of the
 * one-pass sum of squares. */
#include <math.h>

#include "core/stats_impl.h"

void dpd__stats_mean_se(const double *x, size_t count, size_t stride, double *mean, double *se) {
  double shift = x[0], sum = 0.0, ss = 0.0, m;
  for (size_t r = 0; r < count; r++) {
    sum += x[r * stride] - shift;
  }
  m = shift + sum / (double)count;
  for (size_t r = 0; r < count; r++) {
    double dev = x[r * stride] - m;
    ss += dev * dev;
  }
  *mean = m;
  *se = count > 1 ? sqrt(ss / (double)(count - 1) / (double)count) : 0.0;
}

void dpd__stats_columns_mean_se(const double *x, size_t count, size_t cols, double *mean,
                                double *se) {
  for (size_t j = 0; j < cols; j++) {
    dpd__stats_mean_se(x + j, count, cols, &mean[j], &se[j]);
  }
}

double dpd__stats_sum(const double *x, size_t count, size_t stride) {
  double sum = 0.0;
  for (size_t r = 0; r < count; r++) {
    sum += x[r * stride];
  }
  return sum;
}
