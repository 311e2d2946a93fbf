/* Random-features reproduction study (scripts/reproduce_rf.sh): full-batch DP-GD against the
 * min-norm interpolator theta* = Phi^+ y over the number of features p, and the
 * (C_clip / sqrt(p), tau) heat map at fixed p (MATH.md 2; Bombari & Mondelli, PNAS 122 (2025)
 * e2423072122, experiments of the released code).
 * SPDX-License-Identifier: MIT
 *
 * Setting (defaults of the seed's experiment): d = 100, n = 2000, n_test = 1000, x ~ N(0, I_d),
 * y = sign(u^T x), tanh features, eta = 1/p, delta = 1/n, sigma from the exact mu-GDP
 * calibration for each epsilon, T = C_time d (so tau = eta T = C_time d / p).
 *
 * Each problem (features, theta*) is built once; the DP-GD runs of one problem are independent
 * and run in parallel over OpenMP threads, each with dpd_rf_sim_run on one thread. Every number
 * is bit-identical for any thread count (the runs do not share state and LAPACK runs on one
 * OpenBLAS thread).
 *
 *   dpd_study_rf psweep OUT.tsv P1,P2,... EPS1,EPS2,... CTIME1,CTIME2,... CLIP SEEDS
 *     rows: kind=dpgd p eps ctime T sigma test test_se train clipped_final clipped_mean
 *           kind=star p theta*_test theta*_train
 *   dpd_study_rf heatmap OUT.tsv P EPS1,... CLIP_MIN CLIP_MAX NCLIP CTIME_MIN CTIME_MAX NTIME SEEDS
 *     rows: eps clip ctime T sigma test test_se train clipped_final clipped_mean (log-spaced axes)
 * Progress goes to stderr. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdyn/rf.h"
#include "dpdyn/rf_privacy.h"
#include "dpdyn/rf_sim.h"

typedef struct {
  double eps, clip, ctime;
  size_t T;
  double sigma, test, test_se, train, clip_final, clip_mean;
  int status;
  char reason[sizeof(((dpd_err *)0)->reason)];
} run;

static size_t parse_list(const char *s, double *out, size_t cap) {
  size_t k = 0;
  char *end;
  while (*s != '\0' && k < cap) {
    out[k++] = strtod(s, &end);
    if (end == s) {
      return 0;
    }
    s = *end == ',' ? end + 1 : end;
  }
  return k;
}

static dpd_rf_problem *build(size_t p) {
  dpd_rf_config cfg = dpd_rf_config_default();
  dpd_rf_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  cfg.d = 100;
  cfg.n = 2000;
  cfg.n_test = 1000;
  cfg.p = p;
  cfg.target = DPD_RF_TARGET_SIGN;
  cfg.zeta = 0.0;
  cfg.activation = DPD_RF_ACT_TANH;
  cfg.seed = 1;
  if (dpd_rf_problem_create(&cfg, &pr, &err) != DPD_OK) {
    fprintf(stderr, "study_rf: %s\n", err.reason);
    exit(2);
  }
  return pr;
}

/* Runs every configuration of `runs` on `pr` (eta = 1/p), in parallel over runs. */
static void run_all(const dpd_rf_problem *pr, run *runs, size_t nruns, size_t seeds) {
  const size_t p = pr->p, n = pr->n;
  size_t done = 0;
#pragma omp parallel for schedule(dynamic, 1)
  for (size_t k = 0; k < nruns; k++) {
    run *r = &runs[k];
    dpd_rf_sim_config sc = dpd_rf_sim_config_default();
    dpd_rf_sim_result *res = NULL;
    dpd_err err;
    dpd_err_reset(&err);
    sc.eta = 1.0 / (double)p;
    sc.T = r->T;
    sc.clip = r->clip;
    sc.seeds = seeds;
    sc.seed = 1;
    sc.grid = 2;
    sc.threads = 1;
    r->status = dpd_rf_privacy_sigma_exact(sc.eta, sc.T, r->eps, 1.0 / (double)n, &r->sigma, &err);
    if (r->status == DPD_OK) {
      sc.sigma = r->sigma;
      r->status = dpd_rf_sim_run(pr, &sc, &res, &err);
    }
    if (r->status == DPD_OK) {
      r->test = res->test_mean[1];
      r->test_se = res->test_se[1];
      r->train = res->train_mean[1];
      r->clip_final = res->clip_fraction[sc.T - 1];
      r->clip_mean = res->clip_fraction_total;
    } else {
      snprintf(r->reason, sizeof r->reason, "%s", err.reason);
    }
    dpd_rf_sim_result_free(res);
#pragma omp critical(study_progress)
    {
      done++;
      fprintf(stderr, "\rstudy_rf: p = %zu, %zu/%zu runs", p, done, nruns);
      if (done == nruns) {
        fputc('\n', stderr);
      }
    }
  }
}

static void check(const run *runs, size_t nruns) {
  for (size_t k = 0; k < nruns; k++) {
    if (runs[k].status != DPD_OK) {
      fprintf(stderr, "study_rf: eps %g clip %g ctime %g: %s\n", runs[k].eps, runs[k].clip,
              runs[k].ctime, runs[k].reason);
      exit(2);
    }
  }
}

static void print_run(FILE *f, const run *r) {
  fprintf(f, "%g %.6g %.6g %zu %.8g %.8g %.4g %.8g %.6g %.6g\n", r->eps, r->clip, r->ctime, r->T,
          r->sigma, r->test, r->test_se, r->train, r->clip_final, r->clip_mean);
}

static int psweep(int argc, char **argv) {
  double ps[64], eps[16], ct[16], clip;
  size_t np, ne, nc, seeds;
  FILE *f;
  if (argc != 8 || (np = parse_list(argv[3], ps, 64)) == 0 ||
      (ne = parse_list(argv[4], eps, 16)) == 0 || (nc = parse_list(argv[5], ct, 16)) == 0) {
    fprintf(stderr, "usage: dpd_study_rf psweep OUT P,... EPS,... CTIME,... CLIP SEEDS\n");
    return 1;
  }
  clip = strtod(argv[6], NULL);
  seeds = (size_t)strtoul(argv[7], NULL, 10);
  if ((f = fopen(argv[2], "w")) == NULL) {
    perror(argv[2]);
    return 3;
  }
  fprintf(f,
          "# dpd_study_rf psweep: d=100 n=2000 n_test=1000 sign target, tanh, eta=1/p, "
          "delta=1/n, exact calibration, clip=%g, seeds=%zu\n"
          "# star rows: star p theta_star_test theta_star_train\n"
          "# dpgd rows: dpgd p eps clip ctime T sigma test test_se train clipped_final "
          "clipped_mean\n",
          clip, seeds);
  for (size_t i = 0; i < np; i++) {
    size_t p = (size_t)(ps[i] + 0.5), nruns = ne * nc;
    dpd_rf_problem *pr = build(p);
    double *theta = malloc(p * sizeof *theta), star_train, star_test;
    run *runs = calloc(nruns, sizeof *runs);
    dpd_err err;
    dpd_err_reset(&err);
    if (theta == NULL || runs == NULL ||
        dpd_rf_theta_star_get(pr, -1.0, theta, &star_train, &star_test, &err) != DPD_OK) {
      fprintf(stderr, "study_rf: theta* at p = %zu: %s\n", p, err.reason);
      return 2;
    }
    free(theta);
    fprintf(f, "star %zu %.8g %.8g\n", p, star_test, star_train);
    for (size_t a = 0; a < ne; a++) {
      for (size_t b = 0; b < nc; b++) {
        run *r = &runs[a * nc + b];
        r->eps = eps[a];
        r->clip = clip;
        r->ctime = ct[b];
        r->T = (size_t)(ct[b] * 100.0 + 0.5);
      }
    }
    run_all(pr, runs, nruns, seeds);
    check(runs, nruns);
    for (size_t k = 0; k < nruns; k++) {
      fprintf(f, "dpgd %zu ", p);
      print_run(f, &runs[k]);
    }
    fflush(f);
    free(runs);
    dpd_rf_problem_free(pr);
  }
  fclose(f);
  return 0;
}

static int heatmap(int argc, char **argv) {
  double eps[16];
  size_t ne, p, ncl, nt, seeds, nruns;
  double cmin, cmax, tmin, tmax;
  FILE *f;
  if (argc != 12 || (ne = parse_list(argv[4], eps, 16)) == 0) {
    fprintf(stderr, "usage: dpd_study_rf heatmap OUT P EPS,... CLIP_MIN CLIP_MAX NCLIP "
                    "CTIME_MIN CTIME_MAX NTIME SEEDS\n");
    return 1;
  }
  p = (size_t)strtoul(argv[3], NULL, 10);
  cmin = strtod(argv[5], NULL);
  cmax = strtod(argv[6], NULL);
  ncl = (size_t)strtoul(argv[7], NULL, 10);
  tmin = strtod(argv[8], NULL);
  tmax = strtod(argv[9], NULL);
  nt = (size_t)strtoul(argv[10], NULL, 10);
  seeds = (size_t)strtoul(argv[11], NULL, 10);
  if (ncl < 2 || nt < 2 || !(cmin > 0 && cmax > cmin && tmin > 0 && tmax > tmin)) {
    fprintf(stderr, "study_rf heatmap: bad axes\n");
    return 1;
  }
  nruns = ne * ncl * nt;
  run *runs = calloc(nruns, sizeof *runs);
  if (runs == NULL || (f = fopen(argv[2], "w")) == NULL) {
    perror(argv[2]);
    return 3;
  }
  for (size_t a = 0; a < ne; a++) {
    for (size_t i = 0; i < ncl; i++) {
      for (size_t j = 0; j < nt; j++) {
        run *r = &runs[(a * ncl + i) * nt + j];
        r->eps = eps[a];
        r->clip = cmin * pow(cmax / cmin, (double)i / (double)(ncl - 1));
        r->ctime = tmin * pow(tmax / tmin, (double)j / (double)(nt - 1));
        r->T = (size_t)fmax(1.0, floor(r->ctime * 100.0 + 0.5));
      }
    }
  }
  dpd_rf_problem *pr = build(p);
  fprintf(f,
          "# dpd_study_rf heatmap: p=%zu d=100 n=2000 n_test=1000 sign target, tanh, "
          "eta=1/p, delta=1/n, exact calibration, seeds=%zu, T = ctime d\n"
          "# columns: eps clip ctime T sigma test test_se train clipped_final clipped_mean\n",
          p, seeds);
  run_all(pr, runs, nruns, seeds);
  check(runs, nruns);
  for (size_t a = 0; a < ne; a++) {
    for (size_t i = 0; i < ncl; i++) {
      for (size_t j = 0; j < nt; j++) {
        print_run(f, &runs[(a * ncl + i) * nt + j]);
      }
      fputc('\n', f); /* gnuplot pm3d scan separator */
    }
    fputs("\n", f); /* blank line between epsilon blocks (index) */
  }
  fclose(f);
  free(runs);
  dpd_rf_problem_free(pr);
  return 0;
}

int main(int argc, char **argv) {
  openblas_set_num_threads(1);
  if (argc >= 2 && strcmp(argv[1], "psweep") == 0) {
    return psweep(argc, argv);
  }
  if (argc >= 2 && strcmp(argv[1], "heatmap") == 0) {
    return heatmap(argc, argv);
  }
  fprintf(stderr, "usage: dpd_study_rf psweep|heatmap ...\n");
  return 1;
}
