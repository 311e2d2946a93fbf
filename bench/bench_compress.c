/* Spectral compression of the risk ODE against the uncompressed solve (docs/ode.md).
 * SPDX-License-Identifier: MIT
 *
 * Usage: dpd_bench_compress D SPECTRUM SCHEDULE PRIVATE THETA [NODES]
 *   D         dimension
 *   SPECTRUM  iso | levels | powerlaw:ALPHA
 *   SCHEDULE  const | sqrt | hyperbolic | optimal | step | cosine | file (a tabulated decay)
 *   PRIVATE   1: c = 0.5, rho = 1; 0: no clipping, no privacy
 *   THETA     random | flat
 *   NODES     Gauss nodes per band (default 6; the CLI raises it until compress_tol is met)
 * Both solves use the library defaults (BDF, rtol 1e-10, atol 1e-14), gamma = 0.25, zeta = 0.5,
 * with the bounds. Prints one line:
 *   d spectrum schedule private theta groups nodes t_full t_compress speedup
 *   maxrel_R maxrel_lower maxrel_upper maxrel_final err_full err_compressed
 * where t_compress includes building the compressed problem from the full one (t_full does
 * not include building the full problem), maxrel_X = max over the 101-point grid of
 * |X_compressed - X_full| / |X_full|, and err_full, err_compressed are the max relative errors
 * of R (grid and released risk) of the two default solves against a reference: the compressed
 * problem with 12 nodes per band solved at rtol 1e-12, atol 1e-16 (cheap: a few hundred groups).
 * They show which of the two solves carries the difference. For d <= 10^4 a last column checks
 * that reference against the uncompressed problem solved at the same tight tolerances (the
 * largest relative difference of R; "-" above 10^4). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdyn/linreg.h"
#include "dpdyn/ode.h"
#include "dpdyn/schedule.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double max_rel(const double *a, const double *b, size_t n) {
  double m = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (isfinite(a[i]) && isfinite(b[i])) {
      m = fmax(m, fabs(a[i] - b[i]) / fabs(b[i]));
    }
  }
  return m;
}

static int die(const char *what, const dpd_err *err) {
  fprintf(stderr, "dpd_bench_compress: %s: %s\n", what, err->reason);
  return 1;
}

int main(int argc, char **argv) {
  static const double levels_v[3] = {4.0, 1.0, 0.25};
  static const double tab_t[5] = {0.0, 0.25, 0.5, 0.75, 1.0};
  static const double tab_eta[5] = {1.5, 1.2, 0.8, 0.5, 0.3};
  size_t levels_m[3];
  dpd_linreg_problem_config pc = dpd_linreg_problem_config_default();
  dpd_linreg_compress_config cc = dpd_linreg_compress_config_default();
  dpd_schedule_config sc = dpd_schedule_config_default();
  dpd_ode_config oc = dpd_ode_config_default();
  dpd_linreg_problem *full = NULL, *cp = NULL;
  dpd_schedule *s = NULL;
  dpd_ode_result *rf = NULL, *rc = NULL, *rr = NULL;
  dpd_linreg_problem *rp = NULL;
  dpd_ode_config ocr;
  dpd_err err;
  double t0, t_full, t_comp;
  if (argc < 6) {
    fprintf(stderr, "usage: dpd_bench_compress D SPECTRUM SCHEDULE PRIVATE THETA [NODES]\n");
    return 2;
  }
  pc.d = (size_t)strtod(argv[1], NULL);
  if (strcmp(argv[2], "iso") == 0) {
    pc.spectrum = DPD_SPECTRUM_ISO;
  } else if (strcmp(argv[2], "levels") == 0) {
    levels_m[0] = pc.d / 4;
    levels_m[1] = pc.d / 2;
    levels_m[2] = pc.d - levels_m[0] - levels_m[1];
    pc.spectrum = DPD_SPECTRUM_LEVELS;
    pc.values = levels_v;
    pc.mult = levels_m;
    pc.nvalues = 3;
  } else if (strncmp(argv[2], "powerlaw:", 9) == 0) {
    pc.spectrum = DPD_SPECTRUM_POWERLAW;
    pc.alpha = atof(argv[2] + 9);
  } else {
    fprintf(stderr, "dpd_bench_compress: unknown spectrum '%s'\n", argv[2]);
    return 2;
  }
  pc.theta = strcmp(argv[5], "flat") == 0 ? DPD_THETA_FLAT : DPD_THETA_RANDOM;
  pc.seed = 1;
  if (argc > 6) {
    cc.nodes = atoi(argv[6]);
  }
  oc.gamma = 0.25;
  oc.zeta = 0.5;
  oc.bounds = 1;
  if (atoi(argv[4])) {
    oc.c = 0.5;
    oc.rho = 1.0;
  }
  sc.eta0 = 1.5;
  sc.gamma = oc.gamma;
  sc.rho = oc.rho;
  sc.c1 = 0.6;
  sc.c2 = 0.5;
  sc.c3 = 0.8;
  sc.drops = 3;
  sc.eta_min = 0.2;
  if (strcmp(argv[3], "file") == 0) {
    sc.kind = DPD_SCHEDULE_TABLE;
    sc.table_t = tab_t;
    sc.table_eta = tab_eta;
    sc.table_len = 5;
  } else {
    const dpd_schedule_family *f = dpd_schedule_family_lookup(argv[3]);
    if (f == NULL) {
      fprintf(stderr, "dpd_bench_compress: unknown schedule '%s'\n", argv[3]);
      return 2;
    }
    sc.kind = f->kind;
  }
  if (dpd_schedule_create(&sc, &s, &err) != DPD_OK) {
    return die("schedule", &err);
  }
  if (dpd_linreg_problem_create(&pc, &full, &err) != DPD_OK) {
    return die("problem", &err);
  }
  t0 = now();
  if (dpd_ode_solve(full, s, &oc, &rf, &err) != DPD_OK) {
    return die("uncompressed solve", &err);
  }
  t_full = now() - t0;
  t0 = now();
  if (dpd_linreg_problem_compress(full, &cc, &cp, &err) != DPD_OK) {
    return die("compress", &err);
  }
  if (dpd_ode_solve(cp, s, &oc, &rc, &err) != DPD_OK) {
    return die("compressed solve", &err);
  }
  t_comp = now() - t0;
  cc.nodes = 12;
  ocr = oc;
  ocr.rtol = 1e-12;
  ocr.atol = 1e-16;
  if (dpd_linreg_problem_compress(full, &cc, &rp, &err) != DPD_OK ||
      dpd_ode_solve(rp, s, &ocr, &rr, &err) != DPD_OK) {
    return die("reference solve", &err);
  }
  printf("%zu %s %s %s %s %zu %zu %.4g %.4g %.4g %.2e %.2e %.2e %.2e %.2e %.2e", pc.d, argv[2],
         argv[3], argv[4], argv[5], full->ngroups, cp->ngroups, t_full, t_comp, t_full / t_comp,
         max_rel(rc->risk, rf->risk, rf->grid), max_rel(rc->lower, rf->lower, rf->grid),
         max_rel(rc->upper, rf->upper, rf->grid), fabs(rc->final_risk / rf->final_risk - 1.0),
         fmax(max_rel(rf->risk, rr->risk, rr->grid), fabs(rf->final_risk / rr->final_risk - 1.0)),
         fmax(max_rel(rc->risk, rr->risk, rr->grid), fabs(rc->final_risk / rr->final_risk - 1.0)));
  if (pc.d <= 10000) {
    dpd_ode_result *rt = NULL;
    if (dpd_ode_solve(full, s, &ocr, &rt, &err) != DPD_OK) {
      return die("tight uncompressed solve", &err);
    }
    printf(" %.2e\n", fmax(max_rel(rr->risk, rt->risk, rt->grid),
                           fabs(rr->final_risk / rt->final_risk - 1.0)));
    dpd_ode_result_free(rt);
  } else {
    printf(" -\n");
  }
  dpd_ode_result_free(rr);
  dpd_linreg_problem_free(rp);
  dpd_ode_result_free(rf);
  dpd_ode_result_free(rc);
  dpd_linreg_problem_free(cp);
  dpd_linreg_problem_free(full);
  dpd_schedule_free(s);
  return 0;
}
