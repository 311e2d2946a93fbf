/* Accuracy of Algorithm 1 against k, epsilon, n and n_public, on the exact generator or on
 * .npy files (docs/semipriv.md, "Does PCA help? (measured)"), with two variants beside the
 * library's default. Until the model=semipriv adapter exposes sweeps on the command line.
 * SPDX-License-Identifier: MIT
 *
 * Paired design: replicate r draws ONE labelled, public and test sample (synthetic: stream
 * (seed, r) of the generator; files: the same data for every r) and ONE public PCA (centred
 * covariance, top eigenvectors by dsyevr); every k and epsilon of the replicate uses these, so
 * the difference acc(k) - acc(k = d) is paired and its SE is that of the per-replicate
 * differences. Noise: the library's Noisy-SGD (dpd_semipriv_sgd_run, stream (seed, r)); the
 * variants use this driver's own loop of the same algorithm with stream (seed, 2^40 + r):
 *   default  the library, last iterate, eta(t) = 2 / sqrt(t (n^2 L^2 + k sigma^2));
 *   avg      the same dynamics (own loop), output the mean of the iterates t > T/2 (suffix
 *            averaging, Rakhlin-Shamir-Sridharan arXiv:1109.5647);
 *   kref     the step size of the ambient dimension d for every k:
 *            eta(t) = 2 / sqrt(t (n^2 L^2 + d sigma^2)), last iterate (and kref_avg: its suffix
 *            average). Privacy does not depend on eta (sigma, T and the sampling fix it).
 * zeta: synthetic gamma0 (1 - xi0(k) - 0.1 gamma0) as in dpd_semipriv_run; files: zeta=.
 *
 * Usage (key=value): dpd_semipriv_study [d=200] [nu=0.02] [n=500] [n_public=5000]
 *   [n_test=1000] [eps=0.1,0.7,inf] [k=5,200] [R=20] [seed=1] [variants=0|1] [threads=2]
 *   [dir=PATH zeta=Z]   (dir: priv_X.npy priv_y.npy pub_X.npy test_X.npy test_y.npy, labels
 *   +-1, rows of unit norm; k = d means no PCA)
 * Output: one row per (eps, k, variant) with the named columns of the header line. */
#include <gsl/gsl_errno.h>
#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "core/npy_impl.h"
#include "dpdyn/rng.h"
#include "dpdyn/semipriv.h"

void openblas_set_num_threads(int num_threads);

#define MAXL 64
#define NVAR 5
static const char *const var_name[NVAR] = {"default", "avg", "own_last", "kref", "kref_avg"};

static size_t parse_list(const char *s, double *out) {
  size_t m = 0;
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *tok = strtok(buf, ","); tok != NULL && m < MAXL; tok = strtok(NULL, ",")) {
    out[m++] = strcmp(tok, "inf") == 0 ? INFINITY : strtod(tok, NULL);
  }
  return m;
}

static double *load(const char *dir, const char *name, size_t *rows, size_t *cols) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  double *data = NULL;
  dpd__npy_info info;
  dpd_err err;
  if (dpd__read_npy("dir", path, 0, &data, &info, &err) != DPD_OK) {
    fprintf(stderr, "dpd_semipriv_study: %s\n", err.reason);
    exit(1);
  }
  *rows = info.rows;
  *cols = info.cols;
  return data;
}

/* Noisy-SGD of the library (same update, projection, step size up to k_eta), own stream. Writes
 * the last iterate to w and the mean of the iterates t > T/2 to wa. */
static void own_sgd(const double *P, const double *y, size_t n, size_t k, double zeta, double eps,
                    double delta, size_t k_eta, uint64_t seed, uint64_t stream, double *w,
                    double *wa, double *buf) {
  const double L = 1.0 / zeta, nd = (double)n;
  const double sigma = dpd_semipriv_sgd_sigma(n, L, eps, delta);
  const double a = 2.0 / sqrt(nd * nd * L * L + (double)k_eta * sigma * sigma);
  const size_t T = n * n, C = 256;
  dpd_rng rng;
  dpd_rng_init(&rng, seed, stream);
  memset(w, 0, k * sizeof *w);
  memset(wa, 0, k * sizeof *wa);
  double *u = buf, *xi = buf + C;
  for (size_t t0 = 0; t0 < T; t0 += C) {
    const size_t m = T - t0 < C ? T - t0 : C;
    dpd_rng_uniform_fill(&rng, u, m);
    if (sigma > 0.0) {
      dpd_rng_gaussian_fill(&rng, xi, m * k);
    } else {
      memset(xi, 0, m * k * sizeof *xi);
    }
    for (size_t s = 0; s < m; s++) {
      const size_t t = t0 + s + 1;
      const double eta = a / sqrt((double)t);
      size_t i = (size_t)(u[s] * nd);
      i = i < n ? i : n - 1;
      const double *x = P + i * k;
      const double *z = xi + s * k;
      double v = 0.0;
      for (size_t j = 0; j < k; j++) {
        v += w[j] * x[j];
      }
      const double g = y[i] * v < zeta ? eta * nd * L * y[i] : 0.0;
      double r2 = 0.0;
      for (size_t j = 0; j < k; j++) {
        w[j] += g * x[j] - eta * sigma * z[j];
        r2 += w[j] * w[j];
      }
      if (r2 > 1.0) {
        const double f = 1.0 / sqrt(r2);
        for (size_t j = 0; j < k; j++) {
          w[j] *= f;
        }
      }
      if (t > T / 2) {
        for (size_t j = 0; j < k; j++) {
          wa[j] += w[j];
        }
      }
    }
  }
  const double inv = 1.0 / (double)(T - T / 2);
  for (size_t j = 0; j < k; j++) {
    wa[j] *= inv;
  }
}

/* test accuracy of w_hat = A w (A NULL: identity) on X (m x d); cosine with wstar (NULL: NaN) */
static double accuracy(const double *A, size_t d, size_t k, const double *w, const double *X,
                       const double *y, size_t m, const double *wstar, double *cosw, double *what) {
  for (size_t l = 0; l < d; l++) {
    double s = 0.0;
    if (A == NULL) {
      s = w[l];
    } else {
      for (size_t j = 0; j < k; j++) {
        s += A[j * d + l] * w[j];
      }
    }
    what[l] = s;
  }
  size_t right = 0;
  for (size_t i = 0; i < m; i++) {
    right += y[i] * cblas_ddot((int)d, what, 1, X + i * d, 1) > 0.0;
  }
  if (wstar != NULL) {
    const double nw = cblas_dnrm2((int)d, what, 1);
    *cosw = nw > 0.0 ? cblas_ddot((int)d, what, 1, wstar, 1) / nw : 0.0;
  } else {
    *cosw = NAN;
  }
  return (double)right / (double)m;
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  openblas_set_num_threads(1);
  size_t d = 200, n = 500, np = 5000, nt = 1000, R = 20;
  double nu = 0.02, zeta_file = 0.1, delta = 1e-5;
  uint64_t seed = 1;
  int variants = 0, threads = 2;
  const char *dir = NULL;
  double eps[MAXL] = {0.1, 0.7, INFINITY}, kd[MAXL] = {5, 200};
  size_t neps = 3, nk = 2;
  for (int a = 1; a < argc; a++) {
    const char *eq = strchr(argv[a], '=');
    if (eq == NULL) {
      fprintf(stderr, "dpd_semipriv_study: expected key=value, got '%s'\n", argv[a]);
      return 1;
    }
    const char *v = eq + 1;
    const size_t kl = (size_t)(eq - argv[a]);
#define KEY(s) (kl == strlen(s) && strncmp(argv[a], s, kl) == 0)
    if (KEY("d")) {
      d = strtoul(v, NULL, 10);
    } else if (KEY("nu")) {
      nu = strtod(v, NULL);
    } else if (KEY("n")) {
      n = strtoul(v, NULL, 10);
    } else if (KEY("n_public")) {
      np = strtoul(v, NULL, 10);
    } else if (KEY("n_test")) {
      nt = strtoul(v, NULL, 10);
    } else if (KEY("eps")) {
      neps = parse_list(v, eps);
    } else if (KEY("k")) {
      nk = parse_list(v, kd);
    } else if (KEY("R")) {
      R = strtoul(v, NULL, 10);
    } else if (KEY("seed")) {
      seed = strtoull(v, NULL, 10);
    } else if (KEY("variants")) {
      variants = atoi(v);
    } else if (KEY("threads")) {
      threads = atoi(v);
    } else if (KEY("dir")) {
      dir = v;
    } else if (KEY("zeta")) {
      zeta_file = strtod(v, NULL);
    } else {
      fprintf(stderr, "dpd_semipriv_study: unknown key '%s'\n", argv[a]);
      return 1;
    }
#undef KEY
  }
  /* data */
  dpd_semipriv_gen *gen = NULL;
  double *fXl = NULL, *fyl = NULL, *fXp = NULL, *fXt = NULL, *fyt = NULL;
  if (dir != NULL) {
    size_t r1, c1, r2, c2, r3, c3, r4, c4, r5, c5;
    fXl = load(dir, "priv_X.npy", &r1, &c1);
    fyl = load(dir, "priv_y.npy", &r2, &c2);
    fXp = load(dir, "pub_X.npy", &r3, &c3);
    fXt = load(dir, "test_X.npy", &r4, &c4);
    fyt = load(dir, "test_y.npy", &r5, &c5);
    if (c1 != c3 || c1 != c4 || r1 != r2 || r4 != r5 || c2 != 1 || c5 != 1) {
      fprintf(stderr, "dpd_semipriv_study: inconsistent shapes in %s\n", dir);
      return 1;
    }
    d = c1;
    n = r1;
    np = r3;
    nt = r4;
  } else {
    dpd_semipriv_gen_config c = dpd_semipriv_gen_config_default();
    c.d = d;
    c.nu = nu;
    dpd_err e;
    if (dpd_semipriv_gen_create(&c, &gen, &e) != DPD_OK) {
      fprintf(stderr, "dpd_semipriv_study: %s\n", e.reason);
      return 1;
    }
  }
  size_t kmax = 0;
  for (size_t a = 0; a < nk; a++) {
    if (kd[a] < 1 || kd[a] > (double)d) {
      fprintf(stderr, "dpd_semipriv_study: k = %g outside 1 .. d = %zu\n", kd[a], d);
      return 1;
    }
    if ((size_t)kd[a] < d && (size_t)kd[a] > kmax) {
      kmax = (size_t)kd[a];
    }
  }
  const size_t nv = variants ? NVAR : 1;
  const size_t cells = neps * nk * nv;
  double *acc = calloc(R * cells, sizeof *acc), *cosr = calloc(R * cells, sizeof *cosr);
  double *xih = calloc(R * nk, sizeof *xih);
  double *zetas = calloc(nk, sizeof *zetas);
  for (size_t a = 0; a < nk; a++) {
    const size_t k = (size_t)kd[a];
    if (gen != NULL) {
      const double g0 = gen->margin_guaranteed, x0 = dpd_semipriv_gen_xi(gen, k);
      zetas[a] = g0 * (1.0 - x0 - 0.1 * g0);
    } else {
      zetas[a] = zeta_file;
    }
  }
  const double t_start = omp_get_wtime();
#pragma omp parallel for schedule(dynamic) num_threads(threads)
  for (size_t r = 0; r < R; r++) {
    double *Xl, *yl, *Xp, *Xt, *yt, *Z = NULL;
    if (gen != NULL) {
      const size_t mx = np > n ? (np > nt ? np : nt) : (n > nt ? n : nt);
      Xl = malloc(n * d * sizeof *Xl);
      yl = malloc(n * sizeof *yl);
      Xp = malloc(np * d * sizeof *Xp);
      Xt = malloc(nt * d * sizeof *Xt);
      yt = malloc(nt * sizeof *yt);
      Z = malloc(mx * d * sizeof *Z);
      double *yp = malloc(np * sizeof *yp);
      dpd_semipriv_gen_sample(gen, seed, r, DPD_SEMIPRIV_SET_LABELLED, 0, n, Xl, yl, Z);
      dpd_semipriv_gen_sample(gen, seed, r, DPD_SEMIPRIV_SET_PUBLIC, 0, np, Xp, yp, Z);
      dpd_semipriv_gen_sample(gen, seed, r, DPD_SEMIPRIV_SET_TEST, 0, nt, Xt, yt, Z);
      free(yp);
    } else {
      Xl = fXl, yl = fyl, Xp = fXp, Xt = fXt, yt = fyt;
    }
    /* centred public covariance and its top kmax eigenvectors (decreasing) */
    double *A = NULL;
    if (kmax > 0) {
      double *C = calloc(d * d, sizeof *C), *mean = calloc(d, sizeof *mean);
      cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, (int)d, (int)np, 1.0 / (double)np, Xp,
                  (int)d, 0.0, C, (int)d);
      for (size_t i = 0; i < np; i++) {
        for (size_t l = 0; l < d; l++) {
          mean[l] += Xp[i * d + l] / (double)np;
        }
      }
      for (size_t j = 0; j < d; j++) {
        for (size_t i = 0; i <= j; i++) {
          C[j * d + i] -= mean[i] * mean[j];
        }
      }
      double *ev = malloc(d * sizeof *ev), *V = malloc(d * kmax * sizeof *V);
      lapack_int found = 0, *isz = malloc(2 * kmax * sizeof *isz);
      if (LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'U', (lapack_int)d, C, (lapack_int)d, 0.0, 0.0,
                         (lapack_int)(d - kmax + 1), (lapack_int)d, 0.0, &found, ev, V,
                         (lapack_int)d, isz) != 0 ||
          found != (lapack_int)kmax) {
        fprintf(stderr, "dpd_semipriv_study: dsyevr failed\n");
        exit(2);
      }
      A = malloc(d * kmax * sizeof *A);
      for (size_t j = 0; j < kmax; j++) {
        memcpy(A + j * d, V + (kmax - 1 - j) * d, d * sizeof *A);
      }
      free(C), free(mean), free(ev), free(V), free(isz);
    }
    double *P = malloc(n * d * sizeof *P), *w = malloc(d * sizeof *w);
    double *wa = malloc(d * sizeof *wa), *what = malloc(d * sizeof *what);
    size_t swn = 0;
    for (size_t a = 0; a < nk; a++) {
      const size_t wk = dpd_semipriv_sgd_work((size_t)kd[a]);
      swn = wk > swn ? wk : swn;
    }
    double *sw = malloc(swn * sizeof *sw);
    double *buf = malloc((256 + 256 * d) * sizeof *buf);
    for (size_t a = 0; a < nk; a++) {
      const size_t k = (size_t)kd[a];
      const double *Ak = k < d ? A : NULL;
      if (Ak != NULL) {
        /* A: d x k column-major, i.e. k x d row-major; P = Xl A */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)k, (int)d, 1.0, Xl,
                    (int)d, Ak, (int)d, 0.0, P, (int)k);
        if (gen != NULL) {
          xih[r * nk + a] = dpd_semipriv_xi(Ak, d, k, gen->w_star);
        }
      } else {
        memcpy(P, Xl, n * d * sizeof *P);
      }
      for (size_t e = 0; e < neps; e++) {
        const size_t base = r * cells + (e * nk + a) * nv;
        dpd_semipriv_sgd_config sc = dpd_semipriv_sgd_config_default();
        sc.epsilon = eps[e];
        sc.delta = delta;
        sc.zeta = zetas[a];
        dpd_err err;
        if (dpd_semipriv_sgd_run(&sc, P, yl, n, k, seed, r, w, sw, NULL, &err) != DPD_OK) {
          fprintf(stderr, "dpd_semipriv_study: %s\n", err.reason);
          exit(2);
        }
        const double *ws = gen != NULL ? gen->w_star : NULL;
        acc[base] = accuracy(Ak, d, k, w, Xt, yt, nt, ws, &cosr[base], what);
        if (variants) {
          const uint64_t st = ((uint64_t)1 << 40) + r;
          own_sgd(P, yl, n, k, zetas[a], eps[e], delta, k, seed, st, w, wa, buf);
          acc[base + 1] = accuracy(Ak, d, k, wa, Xt, yt, nt, ws, &cosr[base + 1], what);
          acc[base + 2] = accuracy(Ak, d, k, w, Xt, yt, nt, ws, &cosr[base + 2], what);
          own_sgd(P, yl, n, k, zetas[a], eps[e], delta, d, seed, st, w, wa, buf);
          acc[base + 3] = accuracy(Ak, d, k, w, Xt, yt, nt, ws, &cosr[base + 3], what);
          acc[base + 4] = accuracy(Ak, d, k, wa, Xt, yt, nt, ws, &cosr[base + 4], what);
        }
      }
    }
    free(P), free(w), free(wa), free(what), free(sw), free(buf), free(A);
    if (gen != NULL) {
      free(Xl), free(yl), free(Xp), free(Xt), free(yt), free(Z);
    }
  }
  /* the baseline column: k = d if present, else the largest k */
  size_t ab = 0;
  for (size_t a = 0; a < nk; a++) {
    if (kd[a] > kd[ab]) {
      ab = a;
    }
  }
  printf("# dpd_semipriv_study: %s d=%zu nu=%g n=%zu n_public=%zu n_test=%zu delta=%g R=%zu "
         "seed=%llu zeta=%s; %.1f s on %d threads\n",
         dir != NULL ? dir : "generator (notes C.5 defaults, gen seed 1)", d, dir ? NAN : nu, n, np,
         nt, delta, R, (unsigned long long)seed,
         dir != NULL ? "given" : "gamma0 (1 - xi0(k) - 0.1 gamma0)", omp_get_wtime() - t_start,
         threads);
  printf("# diff = paired mean over replicates of acc(k) - acc(k = %g) (same data, same "
         "variant); cos = cosine of w_hat with w* (NaN for files)\n",
         kd[ab]);
  printf("d n n_public eps k variant R acc acc_se diff diff_se cos cos_se xi_hat zeta\n");
  for (size_t e = 0; e < neps; e++) {
    for (size_t a = 0; a < nk; a++) {
      for (size_t v = 0; v < nv; v++) {
        double s = 0, s2 = 0, df = 0, df2 = 0, c = 0, c2 = 0, xh = 0;
        for (size_t r = 0; r < R; r++) {
          const double x = acc[r * cells + (e * nk + a) * nv + v];
          const double xb = acc[r * cells + (e * nk + ab) * nv + v];
          const double cc = cosr[r * cells + (e * nk + a) * nv + v];
          s += x, s2 += x * x, df += x - xb, df2 += (x - xb) * (x - xb), c += cc, c2 += cc * cc;
          xh += xih[r * nk + a];
        }
        const double Rd = (double)R;
        const double m = s / Rd, md = df / Rd, mc = c / Rd;
        const double se = R > 1 ? sqrt(fmax(s2 / Rd - m * m, 0) * Rd / (Rd - 1) / Rd) : NAN;
        const double sed = R > 1 ? sqrt(fmax(df2 / Rd - md * md, 0) * Rd / (Rd - 1) / Rd) : NAN;
        const double sec = R > 1 ? sqrt(fmax(c2 / Rd - mc * mc, 0) * Rd / (Rd - 1) / Rd) : NAN;
        printf("%zu %zu %zu %g %zu %s %zu %.4f %.4f %.4f %.4f %.4f %.4f %.4f %.4f\n", d, n, np,
               eps[e], (size_t)kd[a], var_name[v], R, m, se, md, sed, mc, sec,
               (size_t)kd[a] < d && gen != NULL ? xh / Rd : 0.0, zetas[a]);
      }
    }
  }
  free(acc), free(cosr), free(xih), free(zetas);
  dpd_semipriv_gen_free(gen);
  free(fXl), free(fyl), free(fXp), free(fXt), free(fyt);
  return 0;
}
