/* Lower-triangular Toeplitz systems and causal convolutions by blocked FFT recursion.
 * SPDX-License-Identifier: MIT
 *
 * Method: E. Hairer, Ch. Lubich and M. Schlichte, "Fast numerical solution of nonlinear
 * Volterra convolution equations", SIAM J. Sci. Stat. Comput. 6 (1985) 532-541:
 * the unknowns of a causal convolution equation are computed in blocks; once the first half of
 * a block of length L = 2^k is known, its whole contribution to the second half,
 *   c[v] = sum_{u < L/2} x[lo + u] w[v - u],   L/2 <= v < L,
 * is one convolution, here the circular convolution of length L of (x[lo..lo+L/2), 0...) with
 * (0, w_1, ..., w_{L-1}): the lag v - u lies in [1, L), so no wrap-around reaches the outputs
 * used. The recursion costs O(n log^2 n). Transforms: FFTW 3 real-to-complex and back (M. Frigo
 * and S. G. Johnson, "The design and implementation of FFTW3", Proc. IEEE 93 (2005) 216-231),
 * planned once per block length on arrays owned by the engine; the kernel spectrum of every
 * block length is computed once per kernel (scaled by 1/L, FFTW's transforms being
 * unnormalised). Blocks of length <= leaf are done by direct substitution, in a fixed order.
 *
 * Error: each block product has a norm-wise error of order eps log2(L) |x| |w| (the standard
 * bound for the FFT; N. J. Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
 * SIAM 2002, chapter 24); the FFT checks of tests/unit/test_volterra.c compare with the direct
 * O(n^2) sums. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "core/error_impl.h"
#include "linreg/volterra_impl.h"

/* Block lengths are powers of two 2^k, k < LTT_MAX_LEVELS. */
#define LTT_MAX_LEVELS 40

struct dpd__ltt {
  size_t cap;                         /* longest kernel */
  size_t pmax;                        /* power of two >= cap */
  size_t leaf;                        /* direct block length */
  size_t n;                           /* current kernel length */
  double *w;                          /* [pmax] kernel, zero beyond n */
  double *rbuf;                       /* [pmax] FFT real buffer (fftw_malloc) */
  fftw_complex *cbuf;                 /* [pmax/2 + 1] FFT complex buffer */
  fftw_complex *spec[LTT_MAX_LEVELS]; /* [L/2 + 1] kernel spectrum / L of block length L */
  fftw_plan fwd[LTT_MAX_LEVELS];      /* r2c of length L: rbuf -> cbuf */
  fftw_plan inv[LTT_MAX_LEVELS];      /* c2r of length L: cbuf -> rbuf */
};

void dpd__ltt_free(dpd__ltt *ltt) {
  if (ltt == NULL) {
    return;
  }
  for (size_t k = 0; k < LTT_MAX_LEVELS; k++) {
    if (ltt->fwd[k] != NULL) {
      fftw_destroy_plan(ltt->fwd[k]);
    }
    if (ltt->inv[k] != NULL) {
      fftw_destroy_plan(ltt->inv[k]);
    }
    fftw_free(ltt->spec[k]);
  }
  free(ltt->w);
  fftw_free(ltt->rbuf);
  fftw_free(ltt->cbuf);
  free(ltt);
}

/* Block lengths that use FFTs: L = 2^k with leaf < L <= pmax. */
static int level_used(const dpd__ltt *ltt, size_t k) {
  size_t len = (size_t)1 << k;
  return len > ltt->leaf && len <= ltt->pmax;
}

int dpd__ltt_create(size_t cap, size_t leaf, unsigned fftw_flags, dpd__ltt **out, dpd_err *err) {
  dpd__ltt *ltt;
  size_t pmax = 1;
  *out = NULL;
  if (cap < 1 || cap > ((size_t)1 << (LTT_MAX_LEVELS - 2)) || cap > (size_t)INT_MAX / 2) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'steps': %zu (allowed: 1 .. %zu)", cap,
                    (size_t)INT_MAX / 2);
  }
  if (leaf < 1) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'leaf': %zu (allowed: integer >= 1)", leaf);
  }
  while (pmax < cap) {
    pmax *= 2;
  }
  ltt = calloc(1, sizeof *ltt);
  if (ltt == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for a Toeplitz engine of %zu", cap);
  }
  ltt->cap = cap;
  ltt->pmax = pmax;
  ltt->leaf = leaf;
  ltt->w = calloc(pmax, sizeof *ltt->w);
  ltt->rbuf = fftw_malloc(pmax * sizeof *ltt->rbuf);
  ltt->cbuf = fftw_malloc((pmax / 2 + 1) * sizeof *ltt->cbuf);
  if (ltt->w == NULL || ltt->rbuf == NULL || ltt->cbuf == NULL) {
    dpd__ltt_free(ltt);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for a Toeplitz engine of %zu", cap);
  }
  for (size_t k = 0; k < LTT_MAX_LEVELS; k++) {
    int len = (int)((size_t)1 << k);
    if (!level_used(ltt, k)) {
      continue;
    }
    ltt->spec[k] = fftw_malloc(((size_t)len / 2 + 1) * sizeof *ltt->spec[k]);
    ltt->fwd[k] = fftw_plan_dft_r2c_1d(len, ltt->rbuf, ltt->cbuf, fftw_flags);
    ltt->inv[k] = fftw_plan_dft_c2r_1d(len, ltt->cbuf, ltt->rbuf, fftw_flags);
    if (ltt->spec[k] == NULL || ltt->fwd[k] == NULL || ltt->inv[k] == NULL) {
      dpd__ltt_free(ltt);
      return DPD_FAIL(err, DPD_ENOMEM, "cannot plan an FFT of length %d", len);
    }
  }
  *out = ltt;
  return DPD_OK;
}

void dpd__ltt_kernel_set(dpd__ltt *ltt, const double *w, size_t n) {
  ltt->n = n;
  memcpy(ltt->w, w, n * sizeof *ltt->w);
  memset(ltt->w + n, 0, (ltt->pmax - n) * sizeof *ltt->w);
  for (size_t k = 0; k < LTT_MAX_LEVELS; k++) {
    size_t len = (size_t)1 << k;
    double scale = 1.0 / (double)len;
    if (!level_used(ltt, k)) {
      continue;
    }
    /* Lag 0 never crosses from one half to the other. */
    ltt->rbuf[0] = 0.0;
    memcpy(ltt->rbuf + 1, ltt->w + 1, (len - 1) * sizeof *ltt->rbuf);
    fftw_execute(ltt->fwd[k]);
    for (size_t i = 0; i <= len / 2; i++) {
      ltt->spec[k][i][0] = ltt->cbuf[i][0] * scale;
      ltt->spec[k][i][1] = ltt->cbuf[i][1] * scale;
    }
  }
}

static size_t level_of(size_t len) {
  size_t k = 0;
  while (((size_t)1 << k) < len) {
    k++;
  }
  return k;
}

/* acc[lo + v] += sum_{u < L/2} src[lo + u] w[v - u] for L/2 <= v < L, lo + v < n. */
static void block_update(dpd__ltt *ltt, const double *src, double *acc, size_t lo, size_t len) {
  size_t half = len / 2, k = level_of(len), end = ltt->n - lo < len ? ltt->n - lo : len;
  fftw_complex *spec = ltt->spec[k];
  fftw_complex *c = ltt->cbuf;
  memcpy(ltt->rbuf, src + lo, half * sizeof *ltt->rbuf);
  memset(ltt->rbuf + half, 0, half * sizeof *ltt->rbuf);
  fftw_execute(ltt->fwd[k]);
  for (size_t i = 0; i <= half; i++) {
    double re = c[i][0] * spec[i][0] - c[i][1] * spec[i][1];
    double im = c[i][0] * spec[i][1] + c[i][1] * spec[i][0];
    c[i][0] = re;
    c[i][1] = im;
  }
  fftw_execute(ltt->inv[k]);
  for (size_t v = half; v < end; v++) {
    acc[lo + v] += ltt->rbuf[v];
  }
}

/* Direct block [lo, lo + len): solve (x in place) or apply (y += T x within the block). */
static void block_direct(const dpd__ltt *ltt, const double *x, double *y, size_t lo, size_t len,
                         int solve) {
  const double *w = ltt->w;
  size_t end = ltt->n - lo < len ? ltt->n : lo + len;
  for (size_t k = lo; k < end; k++) {
    double s = 0.0;
    for (size_t i = lo; i < k; i++) {
      s += w[k - i] * (solve ? y[i] : x[i]);
    }
    if (solve) {
      y[k] = (y[k] + s) / (1.0 - w[0]);
    } else {
      y[k] += s + w[0] * x[k];
    }
  }
}

/* The recursion on [lo, lo + len), len a power of two. In solve mode x == NULL and y holds
 * the right-hand side (plus every contribution of the unknowns before lo) on entry. */
static void recurse(dpd__ltt *ltt, const double *x, double *y, size_t lo, size_t len, int solve) {
  size_t half = len / 2;
  if (lo >= ltt->n) {
    return;
  }
  if (len <= ltt->leaf) {
    block_direct(ltt, x, y, lo, len, solve);
    return;
  }
  recurse(ltt, x, y, lo, half, solve);
  if (lo + half < ltt->n) {
    block_update(ltt, solve ? y : x, y, lo, len);
  }
  recurse(ltt, x, y, lo + half, half, solve);
}

static size_t top_length(const dpd__ltt *ltt) {
  size_t len = 1;
  while (len < ltt->n) {
    len *= 2;
  }
  return len;
}

void dpd__ltt_apply(dpd__ltt *ltt, const double *x, double *y) {
  memset(y, 0, ltt->n * sizeof *y);
  recurse(ltt, x, y, 0, top_length(ltt), 0);
}

void dpd__ltt_solve(dpd__ltt *ltt, double *x) {
  recurse(ltt, NULL, x, 0, top_length(ltt), 1);
}
