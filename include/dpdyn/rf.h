/* Random-features regression problem: data, target, features (docs/math.md §2.1).
 * SPDX-License-Identifier: MIT
 *
 * References: Bombari & Mondelli, "Privacy for free in the overparameterized regime",
 * PNAS 122 (2025) e2423072122 (arXiv:2410.14787), setting of §2-3; Rahimi & Recht,
 * "Random features for large-scale kernel machines", NIPS 2007; notes-rf-nc-sp.md A.1.
 *
 * Model: x_i ~ N(0, I_d) (or uniform on the sphere of radius sqrt(d), or rows of a data file,
 * below), y_i = f*(x_i) + zeta g_i (or the file's targets + zeta g_i),
 * features phi(V x) in R^p with V_jk ~ N(0, 1/d), so each pre-activation has variance |v_j|^2 ~ 1.
 * The feature matrices Phi = phi(X V^T) (n x p) and Phi_test (n_test x p) are row-major; every
 * entry of X V^T is one dot product with a fixed summation order (OpenMP over tiles).
 *
 * Random numbers (stream rule of rng.h), with S = cfg.seed, M = DPD_RNG_STREAM_PROBLEM
 * (2^64 - 1) and B = M - DPD_RF_DRAW_STREAMS cfg.draw (draw 0: B = M); each item is one
 * dpd_rng_gaussian_fill from the start of its stream:
 *   V       [p x d, row-major]  stream (S, B)       values scaled by 1/sqrt(d)
 *   u       [d]                 stream (S, B - 1)   normalised to |u| = 1
 *   X       [n x d]             stream (S, B - 2)   sphere: each row rescaled to norm sqrt(d)
 *   z       [n]                 stream (S, B - 3)   label noise zeta z_i
 *   X_test  [n_test x d]        stream (S, B - 4)
 *   z_test  [n_test]            stream (S, B - 5)
 * With input = DPD_RF_INPUT_FILE the stream (S, B - 2) draws the rows instead of X: a partial
 * Fisher-Yates shuffle of 0..N-1 over its first n + n_test positions, position k swapped with
 * k + floor(u_k (N - k)), u_k the k-th dpd_rng_uniform of the stream; positions 0..n-1 are the
 * training rows, n..n+n_test-1 the test rows (distinct, uniform without replacement), and
 * stream (S, B - 4) is not used.
 * Draws d != d' of one seed therefore share no stream: they are independent problems (data,
 * target direction, features and test set), which is what the replicates of
 * dpd_rf_sim_resample_run (rf_sim.h) use. The simulator's noise uses streams (seed, r) with
 * small r, so the two never collide. The problem depends only on the config: it is
 * bit-identical for any thread count, and the first rows of Phi do not change when n grows. */
#ifndef DPD_RF_H
#define DPD_RF_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DPD_RF_INPUT_GAUSSIAN = 0, /* x ~ N(0, I_d) */
  DPD_RF_INPUT_SPHERE,       /* x uniform on the sphere of radius sqrt(d) */
  DPD_RF_INPUT_FILE          /* the preprocessed rows of dpd_rf_config.data (below) */
} dpd_rf_input;

typedef enum {
  DPD_RF_TARGET_LINEAR = 0, /* f*(x) = u^T x, |u| = 1 */
  DPD_RF_TARGET_SIGN,       /* f*(x) = sign(u^T x) (sign(0) = 0) */
  DPD_RF_TARGET_HERMITE2,   /* f*(x) = He_2(u^T x) / sqrt(2) = ((u^T x)^2 - 1) / sqrt(2) */
  DPD_RF_TARGET_FILE        /* the preprocessed targets of the data's rows (input = FILE) */
} dpd_rf_target;

/* Inputs (and targets) from files (docs/rf.md, "Inputs from a file"): an N x d matrix, .npy
 * (float64 or float32, kept in its own precision and converted row by row) or text, and
 * optionally N targets. Preprocessing, fixed at create: every feature centred by its mean over
 * the N rows, then all features scaled by one factor s so that the mean over the rows of |x|^2
 * is d (the normalisation E|x|^2 = d of the Gaussian and sphere inputs):
 *   x_i = s (raw_i - m),   m = (1/N) sum_i raw_i,   s = sqrt(d / ((1/N) sum_i |raw_i - m|^2));
 * the targets centred and scaled to unit variance (1/N): y_i = s_t (t_i - t_mean). Opaque;
 * read-only after create, so one object may serve any number of problems and threads. */
typedef struct dpd_rf_data dpd_rf_data;

/* What dpd_rf_data_info_get reports. */
typedef struct {
  size_t rows;            /* N */
  size_t d;               /* columns of the inputs */
  int f32;                /* 1: the inputs are float32 in memory */
  double input_scale;     /* s above */
  double input_mean_norm; /* |m|, the norm of the raw rows' mean */
  int has_targets;        /* 1: a targets file was given */
  double target_mean;     /* t_mean (NAN without targets) */
  double target_scale;    /* s_t = 1 / sd(t) (NAN without targets) */
  double bytes;           /* memory the data hold (mapped file pages included) */
} dpd_rf_data_info;

/* Opens `inputs` (the value of key 'input', file:PATH's PATH) and `targets` (key 'target';
 * NULL: none) and computes the preprocessing. *out is returned-owned (dpd_rf_data_free); the
 * paths are copied. max_bytes: the memory the inputs may take (0: no limit). Returns DPD_EINVAL
 * naming the key, the value and the allowed range for a file that cannot be read, a bad .npy,
 * ragged rows, a non-finite value (its row and column), fewer than 2 rows, inputs whose rows are
 * all equal, targets that are not one value per row, whose count is not N, or that are all
 * equal; DPD_ENOMEM. Prints nothing. */
DPD_API int dpd_rf_data_create(const char *inputs, const char *targets, size_t max_bytes,
                               dpd_rf_data **out, dpd_err *err);
/* Releases the data; NULL is allowed. */
DPD_API void dpd_rf_data_free(dpd_rf_data *data);
/* Sizes and preprocessing factors (pure). */
DPD_API void dpd_rf_data_info_get(const dpd_rf_data *data, dpd_rf_data_info *info);
/* Row i < N preprocessed, x[0..d) (caller memory; pure). */
DPD_API void dpd_rf_data_row_get(const dpd_rf_data *data, size_t i, double *x);
/* The preprocessed target of row i < N (NAN without targets; pure). */
DPD_API double dpd_rf_data_target_get(const dpd_rf_data *data, size_t i);
/* The raw rows' mean m[0..d) (borrowed from the data). */
DPD_API const double *dpd_rf_data_mean_get(const dpd_rf_data *data);

/* Activations and their normalised Hermite coefficients mu_r = E[phi(G) He_r(G)] / sqrt(r!),
 * G ~ N(0, 1), He_r the probabilists' Hermite polynomials (so phi = sum_r mu_r He_r / sqrt(r!)
 * in L2(N(0, 1)), and E phi'(G) = mu_1). The values below are the exact ones
 * (docs/overparameterization.md, "Activations"). */
typedef enum {
  DPD_RF_ACT_TANH = 0,      /* tanh(z) (odd: mu_0 = mu_2 = 0; mu_1 = 0.6057) */
  DPD_RF_ACT_RELU_CENTERED, /* max(0, z) - 1/sqrt(2 pi) (mu_0 = 0, mu_1 = 1/2,
                               mu_2 = 1/(2 sqrt(pi)) != 0) */
  DPD_RF_ACT_HERMITE13,     /* He_1 + He_3 / 6 = z + (z^3 - 3 z) / 6 (mu_1 = 1, mu_3 = 1/sqrt(6)) */
  DPD_RF_ACT_RELU,          /* max(0, z) (mu_0 = 1/sqrt(2 pi), mu_1 = 1/2,
                               mu_r = He_{r-2}(0) / sqrt(2 pi r!) for r >= 2: odd r >= 3 vanish) */
  DPD_RF_ACT_ABS_CENTERED,  /* |z| - sqrt(2/pi): even, so mu_r = 0 for odd r and
                               E phi'(G) = mu_1 = 0; mu_0 = 0, mu_2 = 1/sqrt(pi) */
  DPD_RF_ACT_HERMITE134     /* He_1 + He_3 / 6 + He_4 / 24 (mu_0 = mu_2 = 0, mu_1 = 1,
                               mu_3 = 1/sqrt(6), mu_4 = 1/sqrt(24): an odd and an even
                               coefficient of order >= 3, assumption (B2) of the slides) */
} dpd_rf_activation;

/* Number of activations (enumerators 0 .. DPD_RF_ACT_COUNT - 1). */
#define DPD_RF_ACT_COUNT 6
/* Largest order r that dpd_rf_activation_hermite computes. */
#define DPD_RF_HERMITE_MAX 16

/* Streams reserved per draw of the problem (six are used; see above). */
#define DPD_RF_DRAW_STREAMS 8
/* Largest draw index: keeps every problem stream far above the simulator's (seed, r). */
#define DPD_RF_DRAW_MAX ((uint64_t)1 << 56)

typedef struct {
  size_t d;      /* input dimension, >= 1 */
  size_t n;      /* training samples, >= 1 */
  size_t n_test; /* test samples, >= 1 */
  size_t p;      /* features, >= 1 */
  dpd_rf_input input;
  dpd_rf_target target;
  double zeta; /* label-noise standard deviation (Gaussian), finite >= 0 */
  dpd_rf_activation activation;
  uint64_t seed; /* master seed of the streams listed above */
  uint64_t draw; /* which independent draw of the problem, 0..DPD_RF_DRAW_MAX (streams above);
                    0 is the problem of earlier versions */
  const dpd_rf_data *data; /* borrowed (must outlive the problems built from this config): the
                              rows of input = FILE and the targets of target = FILE, with
                              d = its columns and n + n_test <= its rows; NULL otherwise */
} dpd_rf_config;

/* A built problem (transparent; all arrays owned by it). */
typedef struct {
  dpd_rf_config cfg; /* copy of the config it was built from */
  size_t d, n, n_test, p;
  double *V;        /* [p * d] row-major, V_jk ~ N(0, 1/d) */
  double *u;        /* [d] target direction, |u| = 1 */
  double *phi;      /* [n * p] row-major train features Phi */
  double *phi_test; /* [n_test * p] row-major test features */
  double *y;        /* [n] train labels */
  double *y_test;   /* [n_test] test labels */
  double *row_norm; /* [n] ||phi_i|| (Euclidean norm of row i of Phi) */
  size_t *rows;     /* [n + n_test] input = FILE: the data rows of the training set, then of the
                       test set (0-based, distinct); NULL otherwise */
} dpd_rf_problem;

/* Defaults: d = 100, n = 400, n_test = 1000, p = 2000, gaussian input, linear target,
 * zeta = 0.1, tanh, seed = 1, draw = 0, data = NULL. */
DPD_API dpd_rf_config dpd_rf_config_default(void);

/* Builds the problem. *out is returned-owned (dpd_rf_problem_free); NULL on failure.
 * Returns DPD_EINVAL naming the key, value and allowed range (d, n, n_test or p < 1, zeta
 * negative or not finite, an unknown input/target/activation enumerator, n p too large, draw
 * above DPD_RF_DRAW_MAX; input = FILE without data, d other than the data's columns, n + n_test
 * above its rows; target = FILE without input = FILE or without targets in the data),
 * DPD_ENOMEM. Thread-safe (uses OpenMP threads inside). */
DPD_API int dpd_rf_problem_create(const dpd_rf_config *cfg, dpd_rf_problem **out, dpd_err *err);

/* Releases a problem; NULL is allowed. */
DPD_API void dpd_rf_problem_free(dpd_rf_problem *problem);

/* phi(z) for the activation `act` (pure; NaN for an unknown enumerator). */
DPD_API double dpd_rf_activation_eval(dpd_rf_activation act, double z);

/* phi'(z) for the activation `act` (pure; NaN for an unknown enumerator). At the kink z = 0,
 * relu and relu_centered give 0 and abs_centered sign(0) = 0 (a null set under any continuous
 * law of z). */
DPD_API double dpd_rf_activation_deriv(dpd_rf_activation act, double z);

/* The r-th normalised Hermite coefficient mu_r = E[phi(G) He_r(G)] / sqrt(r!), G ~ N(0, 1)
 * (pure, deterministic). Exact closed forms for relu, relu_centered, abs_centered and the
 * polynomial activations; tanh by composite Gauss-Legendre quadrature of
 * phi(z) He_r(z) exp(-z^2/2)/sqrt(2 pi) on [-16, 0] and [0, 16] (absolute error below 1e-12 for
 * r <= DPD_RF_HERMITE_MAX). NaN for r > DPD_RF_HERMITE_MAX or an unknown enumerator. */
DPD_API double dpd_rf_activation_hermite(dpd_rf_activation act, unsigned r);

/* Name lookups for the CLI: "tanh", "relu_centered", "hermite13", "relu", "abs_centered",
 * "hermite134"; "gaussian", "sphere", "file";
 * "linear", "sign", "hermite2", "file" (the CLI's values file:PATH). The *_get functions return
 * DPD_EINVAL naming the key
 * ("activation", "input", "target"), the value and the allowed names; *out is unchanged then.
 * The *_name functions return "unknown" for an unknown enumerator. */
DPD_API int dpd_rf_activation_get(const char *name, dpd_rf_activation *out, dpd_err *err);
DPD_API int dpd_rf_input_get(const char *name, dpd_rf_input *out, dpd_err *err);
DPD_API int dpd_rf_target_get(const char *name, dpd_rf_target *out, dpd_err *err);
DPD_API const char *dpd_rf_activation_name(dpd_rf_activation act);
DPD_API const char *dpd_rf_input_name(dpd_rf_input input);
DPD_API const char *dpd_rf_target_name(dpd_rf_target target);

#ifdef __cplusplus
}
#endif
#endif /* DPD_RF_H */
