/* PLD accountant speed (issue 28 s1: <= 50 ms for 1e4 homogeneous steps) beside the RDP one.
 * SPDX-License-Identifier: MIT
 *
 * For one Poisson-subsampled Gaussian setting (add/remove neighbours) and each step count T:
 * the time to build one step's PLD at grid step h, to compose it T times (FFT power) and to read
 * eps(delta) (the three together are what `dpdyn account` does), as the median and the minimum
 * of `repeats` runs; the composed PLD's points; eps_up and eps_low. Then the RDP accountant
 * (dpd_rdp_subsampled_gaussian_epsilon, default orders, tight conversion): median time and eps.
 * bench/bench_pld.sh adds the NumPy baseline (the reference's algorithm at the same h) in the
 * same run. Prints human-readable lines ('#') and machine-readable key=value lines:
 *   pld_T<T>_seconds_median=..., pld_T<T>_seconds_min=..., pld_T<T>_points=...,
 *   pld_T<T>_eps_up=..., pld_T<T>_eps_low=..., rdp_T<T>_seconds_median=..., rdp_T<T>_eps=...
 * Usage: dpd_bench_pld [q (0.01)] [sigma (1)] [delta (1e-5)] [h (1e-4)] [repeats (5)]
 *                      [T ... (10000 100000)] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dpdyn/pld.h"
#include "dpdyn/rdp.h"

#include "bench_timing.h"

#define MAX_REPEATS 101


/* One accounting: build, compose T times, read eps. Returns the status. */
static int pld_once(double q, double sigma, double delta, double h, size_t T, double *up,
                    double *low, size_t *points, dpd_err *err) {
  dpd_pld *one = NULL, *all = NULL;
  int st = dpd_pld_subsampled_gaussian(sigma, q, h, &one, err);
  if (st == DPD_OK)
    st = dpd_pld_compose_self(one, T, &all, err);
  if (st == DPD_OK)
    st = dpd_pld_epsilon(all, delta, up, low, err);
  if (st == DPD_OK)
    *points = dpd_pld_points(all);
  dpd_pld_free(one);
  dpd_pld_free(all);
  return st;
}

int main(int argc, char **argv) {
  double q = argc > 1 ? atof(argv[1]) : 0.01;
  double sigma = argc > 2 ? atof(argv[2]) : 1.0;
  double delta = argc > 3 ? atof(argv[3]) : 1e-5;
  double h = argc > 4 ? atof(argv[4]) : 1e-4;
  int repeats = argc > 5 ? atoi(argv[5]) : 5;
  if (repeats < 1 || repeats > MAX_REPEATS) {
    fprintf(stderr, "dpd_bench_pld: repeats in [1, %d]\n", MAX_REPEATS);
    return 1;
  }
  size_t Ts[16] = {10000, 100000};
  int nT = 2;
  if (argc > 6) {
    nT = 0;
    for (int i = 6; i < argc && nT < 16; i++)
      Ts[nT++] = (size_t)strtod(argv[i], NULL);
  }
  printf("# dpd_bench_pld: Poisson-subsampled Gaussian, add/remove, q=%g sigma=%g delta=%g h=%g, "
         "median of %d\n",
         q, sigma, delta, h, repeats);
  printf("# %8s %12s %12s %10s %14s %14s %12s %14s\n", "T", "pld_med_s", "pld_min_s", "points",
         "eps_up", "eps_low", "rdp_med_s", "rdp_eps");
  for (int i = 0; i < nT; i++) {
    size_t T = Ts[i];
    double times[MAX_REPEATS], up = NAN, low = NAN, rdp_eps = NAN;
    size_t points = 0;
    dpd_err err;
    int st = DPD_OK;
    for (int r = 0; r < repeats && st == DPD_OK; r++) {
      double t0 = now_s();
      st = pld_once(q, sigma, delta, h, T, &up, &low, &points, &err);
      times[r] = now_s() - t0;
    }
    if (st != DPD_OK) {
      printf("# T=%zu: PLD failed: %s\n", T, dpd_status_str(st));
      continue;
    }
    double tmin = times[0];
    for (int r = 1; r < repeats; r++)
      tmin = fmin(tmin, times[r]);
    double tmed = median(times, repeats);
    double rtimes[MAX_REPEATS];
    for (int r = 0; r < repeats; r++) {
      double t0 = now_s();
      (void)dpd_rdp_subsampled_gaussian_epsilon(sigma, q, T, delta, &rdp_eps, NULL, NULL);
      rtimes[r] = now_s() - t0;
    }
    double rmed = median(rtimes, repeats);
    printf("# %8zu %12.6f %12.6f %10zu %14.8g %14.8g %12.6f %14.8g\n", T, tmed, tmin, points, up,
           low, rmed, rdp_eps);
    printf("pld_T%zu_seconds_median=%.6g\npld_T%zu_seconds_min=%.6g\npld_T%zu_points=%zu\n"
           "pld_T%zu_eps_up=%.10g\npld_T%zu_eps_low=%.10g\nrdp_T%zu_seconds_median=%.6g\n"
           "rdp_T%zu_eps=%.10g\n",
           T, tmed, T, tmin, T, points, T, up, T, low, T, rmed, T, rdp_eps);
  }
  return 0;
}
