/* Optimised kernels for the serial N_Vector used by the risk ODE.
 * SPDX-License-Identifier: MIT
 *
 * Why: Debian's libsundials 6.4.1 is built without optimisation (-O0: every
 * loop of nvector_serial keeps its index and accumulator on the stack), so a
 * vector operation costs about 20 instructions per entry. For the risk ODE with
 * 10^5..10^6 groups these kernels were ~90% of the run time. The N_Vector is an
 * operations table (SUNDIALS user guide v6.4, section 9.1, "The NVECTOR API"),
 * so we keep N_Vector_Serial's storage and replace the hot operations by the
 * same loops compiled with our flags. Clones copy the table, so it is enough
 * to patch the template vector before CVodeInit. The semantics are exactly
 * those of nvector_serial.c (including in-place aliasing of outputs with
 * inputs, which is safe here because every output entry depends only on the
 * same entry of the inputs). Reductions use four partial sums to break the
 * floating-point add latency chain; the result differs from the sequential
 * sum only by rounding. */
#include <math.h>
#include <stddef.h>

#include <nvector/nvector_serial.h>

#include "linreg/ode_impl.h"

static size_t len(N_Vector v) {
  return (size_t)NV_LENGTH_S(v);
}

static void linear_sum(sunrealtype a, N_Vector x, sunrealtype b, N_Vector y, N_Vector z) {
  const double *xd = NV_DATA_S(x), *yd = NV_DATA_S(y);
  double *zd = NV_DATA_S(z);
  size_t n = len(x);
  for (size_t i = 0; i < n; i++) {
    zd[i] = a * xd[i] + b * yd[i];
  }
}

static void vconst(sunrealtype c, N_Vector z) {
  double *zd = NV_DATA_S(z);
  size_t n = len(z);
  for (size_t i = 0; i < n; i++) {
    zd[i] = c;
  }
}

static void prod(N_Vector x, N_Vector y, N_Vector z) {
  const double *xd = NV_DATA_S(x), *yd = NV_DATA_S(y);
  double *zd = NV_DATA_S(z);
  size_t n = len(x);
  for (size_t i = 0; i < n; i++) {
    zd[i] = xd[i] * yd[i];
  }
}

static void vdiv(N_Vector x, N_Vector y, N_Vector z) {
  const double *xd = NV_DATA_S(x), *yd = NV_DATA_S(y);
  double *zd = NV_DATA_S(z);
  size_t n = len(x);
  for (size_t i = 0; i < n; i++) {
    zd[i] = xd[i] / yd[i];
  }
}

static void scale(sunrealtype c, N_Vector x, N_Vector z) {
  const double *xd = NV_DATA_S(x);
  double *zd = NV_DATA_S(z);
  size_t n = len(x);
  for (size_t i = 0; i < n; i++) {
    zd[i] = c * xd[i];
  }
}

static void vabs(N_Vector x, N_Vector z) {
  const double *xd = NV_DATA_S(x);
  double *zd = NV_DATA_S(z);
  size_t n = len(x);
  for (size_t i = 0; i < n; i++) {
    zd[i] = fabs(xd[i]);
  }
}

static void inv(N_Vector x, N_Vector z) {
  const double *xd = NV_DATA_S(x);
  double *zd = NV_DATA_S(z);
  size_t n = len(x);
  for (size_t i = 0; i < n; i++) {
    zd[i] = 1.0 / xd[i];
  }
}

static void add_const(N_Vector x, sunrealtype b, N_Vector z) {
  const double *xd = NV_DATA_S(x);
  double *zd = NV_DATA_S(z);
  size_t n = len(x);
  for (size_t i = 0; i < n; i++) {
    zd[i] = xd[i] + b;
  }
}

static sunrealtype dot_prod(N_Vector x, N_Vector y) {
  const double *xd = NV_DATA_S(x), *yd = NV_DATA_S(y);
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  size_t n = len(x), i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += xd[i] * yd[i];
    s1 += xd[i + 1] * yd[i + 1];
    s2 += xd[i + 2] * yd[i + 2];
    s3 += xd[i + 3] * yd[i + 3];
  }
  for (; i < n; i++) {
    s0 += xd[i] * yd[i];
  }
  return (s0 + s1) + (s2 + s3);
}

static sunrealtype max_norm(N_Vector x) {
  const double *xd = NV_DATA_S(x);
  double m = 0.0;
  size_t n = len(x);
  for (size_t i = 0; i < n; i++) {
    double a = fabs(xd[i]);
    m = a > m ? a : m;
  }
  return m;
}

static sunrealtype wsqr_sum(N_Vector x, N_Vector w) {
  const double *xd = NV_DATA_S(x), *wd = NV_DATA_S(w);
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  size_t n = len(x), i = 0;
  for (; i + 4 <= n; i += 4) {
    double p0 = xd[i] * wd[i], p1 = xd[i + 1] * wd[i + 1];
    double p2 = xd[i + 2] * wd[i + 2], p3 = xd[i + 3] * wd[i + 3];
    s0 += p0 * p0;
    s1 += p1 * p1;
    s2 += p2 * p2;
    s3 += p3 * p3;
  }
  for (; i < n; i++) {
    double p = xd[i] * wd[i];
    s0 += p * p;
  }
  return (s0 + s1) + (s2 + s3);
}

static sunrealtype wrms_norm(N_Vector x, N_Vector w) {
  return sqrt(wsqr_sum(x, w) / (double)len(x));
}

static sunrealtype vmin(N_Vector x) {
  const double *xd = NV_DATA_S(x);
  size_t n = len(x);
  double m = xd[0];
  for (size_t i = 1; i < n; i++) {
    m = xd[i] < m ? xd[i] : m;
  }
  return m;
}

/* z = sum_k c[k] X[k]; z may be one of the X[k]. */
static int linear_combination(int nvec, sunrealtype *c, N_Vector *X, N_Vector z) {
  double *zd = NV_DATA_S(z);
  size_t n = len(z);
  if (nvec < 1) {
    return -1;
  }
  if (nvec == 1) {
    scale(c[0], X[0], z);
    return 0;
  }
  if (nvec == 2) {
    linear_sum(c[0], X[0], c[1], X[1], z);
    return 0;
  }
  /* Three vectors at a time keeps every pass read-before-write per entry. */
  {
    const double *x0 = NV_DATA_S(X[0]), *x1 = NV_DATA_S(X[1]), *x2 = NV_DATA_S(X[2]);
    for (size_t i = 0; i < n; i++) {
      zd[i] = c[0] * x0[i] + c[1] * x1[i] + c[2] * x2[i];
    }
  }
  for (int k = 3; k < nvec; k++) {
    const double *xk = NV_DATA_S(X[k]);
    double ck = c[k];
    if (xk == zd) {
      /* z appeared again later in the list: nvector_serial forbids this too. */
      return -1;
    }
    for (size_t i = 0; i < n; i++) {
      zd[i] += ck * xk[i];
    }
  }
  return 0;
}

/* Z[k] = a[k] x + Y[k], k = 0..nvec-1. */
static int scale_add_multi(int nvec, sunrealtype *a, N_Vector x, N_Vector *Y, N_Vector *Z) {
  const double *xd = NV_DATA_S(x);
  size_t n = len(x);
  for (int k = 0; k < nvec; k++) {
    const double *yd = NV_DATA_S(Y[k]);
    double *zd = NV_DATA_S(Z[k]);
    double ak = a[k];
    for (size_t i = 0; i < n; i++) {
      zd[i] = ak * xd[i] + yd[i];
    }
  }
  return 0;
}

static int dot_prod_multi(int nvec, N_Vector x, N_Vector *Y, sunrealtype *dots) {
  for (int k = 0; k < nvec; k++) {
    dots[k] = dot_prod(x, Y[k]);
  }
  return 0;
}

/* Z[k] = c[k] X[k]. */
static int scale_vector_array(int nvec, sunrealtype *c, N_Vector *X, N_Vector *Z) {
  for (int k = 0; k < nvec; k++) {
    scale(c[k], X[k], Z[k]);
  }
  return 0;
}

static int const_vector_array(int nvec, sunrealtype c, N_Vector *Z) {
  for (int k = 0; k < nvec; k++) {
    vconst(c, Z[k]);
  }
  return 0;
}

/* Z[k] = a X[k] + b Y[k]. */
static int linear_sum_vector_array(int nvec, sunrealtype a, N_Vector *X, sunrealtype b, N_Vector *Y,
                                   N_Vector *Z) {
  for (int k = 0; k < nvec; k++) {
    linear_sum(a, X[k], b, Y[k], Z[k]);
  }
  return 0;
}

static int wrms_norm_vector_array(int nvec, N_Vector *X, N_Vector *W, sunrealtype *norms) {
  for (int k = 0; k < nvec; k++) {
    norms[k] = wrms_norm(X[k], W[k]);
  }
  return 0;
}

void dpd__ode_nvector_speedup(N_Vector v) {
  N_Vector_Ops ops = v->ops;
  ops->nvlinearsum = linear_sum;
  ops->nvconst = vconst;
  ops->nvprod = prod;
  ops->nvdiv = vdiv;
  ops->nvscale = scale;
  ops->nvabs = vabs;
  ops->nvinv = inv;
  ops->nvaddconst = add_const;
  ops->nvdotprod = dot_prod;
  ops->nvdotprodlocal = dot_prod;
  ops->nvmaxnorm = max_norm;
  ops->nvmaxnormlocal = max_norm;
  ops->nvwrmsnorm = wrms_norm;
  ops->nvwsqrsumlocal = wsqr_sum;
  ops->nvmin = vmin;
  ops->nvminlocal = vmin;
  ops->nvlinearcombination = linear_combination;
  ops->nvscaleaddmulti = scale_add_multi;
  ops->nvdotprodmulti = dot_prod_multi;
  ops->nvscalevectorarray = scale_vector_array;
  ops->nvconstvectorarray = const_vector_array;
  ops->nvlinearsumvectorarray = linear_sum_vector_array;
  ops->nvwrmsnormvectorarray = wrms_norm_vector_array;
}
