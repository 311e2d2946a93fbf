/* Optimised and cache-blocked kernels for the serial N_Vector used by the risk ODE.
 * SPDX-License-Identifier: MIT
 *
 * Why optimised kernels: Debian's libsundials 6.4.1 is built without
 * optimisation (-O0: every loop of nvector_serial keeps its index and
 * accumulator on the stack), so a vector operation costs about 20 instructions
 * per entry. The N_Vector is an operations table (SUNDIALS user guide v6.4,
 * section 9.1, "The NVECTOR API"), so we keep N_Vector_Serial's storage and
 * replace the operations by the same loops compiled with our flags. Clones copy
 * the table, so it is enough to patch the template vectors before CVodeInit.
 *
 * Why deferred (fused) execution: CVODE calls one vector operation at a time,
 * about 105 passes over its vectors per BDF step (the predictor alone is
 * q(q+1)/2 = 15 linear sums at order 5; counted in docs/linreg.md). Once the
 * vectors leave the caches (10^6 groups: 8 MB per vector) every pass streams
 * from memory. For vectors of at least `fuse_min_length` entries the element-wise
 * operations (linear sums, scalings, constants, abs, inv, prod, div, the fused
 * linear combination and scale-add-multi) are therefore queued, and executed
 * together in blocks of `fuse_block` entries when a result is needed: before a
 * reduction (norm, dot product, min), which is then accumulated in the same
 * blocked sweep, when the queue is full, and whenever the data leave the
 * operations table (N_VGetArrayPointer, N_VSetArrayPointer, N_VDestroy, any
 * other operation). Every queued operation writes entry i from entries i of
 * its inputs only, so executing the queue block by block, in queue order
 * within each block, computes exactly what the operations would have computed
 * one after the other, bit for bit (in-place aliasing of outputs with inputs
 * included). Reductions use four partial sums to break the floating-point add
 * latency chain (the result differs from the sequential sum only by rounding);
 * blocks are multiples of four entries, so blocking does not change their
 * order of summation. All vectors of one solve share one queue (the
 * `dpd__ode_fuse` the solve owns, reached through each vector's content);
 * nothing is global, so concurrent solves stay independent. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <nvector/nvector_serial.h>

#include "linreg/ode_impl.h"

/* ---- Kernels on an index range [i0, i1) ---------------------------------------------------- */

typedef enum {
  OP_LINEAR_SUM, /* z = a x + b y */
  OP_CONST,      /* z = a */
  OP_PROD,       /* z = x y */
  OP_DIV,        /* z = x / y */
  OP_SCALE,      /* z = a x */
  OP_ABS,        /* z = |x| */
  OP_INV,        /* z = 1 / x */
  OP_ADD_CONST,  /* z = x + a */
  OP_LINCOMB,    /* zs[0] = sum_k c[k] xs[k] */
  OP_SCALE_ADD   /* zs[k] = c[k] x + xs[k] */
} op_kind;

/* Operations on more vectors than this are executed at once (CVODE's BDF uses at most 6, its
 * Adams method at most 13). */
enum { fuse_max_vecs = 16 };

typedef struct {
  op_kind kind;
  int nvec;
  double a, b;
  const double *x, *y;
  double *z;
  double c[fuse_max_vecs];
  const double *xs[fuse_max_vecs];
  double *zs[fuse_max_vecs];
} fuse_op;

static void op_apply(const fuse_op *op, size_t i0, size_t i1) {
  const double *xd = op->x, *yd = op->y;
  double *zd = op->z, a = op->a, b = op->b;
  switch (op->kind) {
  case OP_LINEAR_SUM:
    for (size_t i = i0; i < i1; i++) {
      zd[i] = a * xd[i] + b * yd[i];
    }
    break;
  case OP_CONST:
    for (size_t i = i0; i < i1; i++) {
      zd[i] = a;
    }
    break;
  case OP_PROD:
    for (size_t i = i0; i < i1; i++) {
      zd[i] = xd[i] * yd[i];
    }
    break;
  case OP_DIV:
    for (size_t i = i0; i < i1; i++) {
      zd[i] = xd[i] / yd[i];
    }
    break;
  case OP_SCALE:
    for (size_t i = i0; i < i1; i++) {
      zd[i] = a * xd[i];
    }
    break;
  case OP_ABS:
    for (size_t i = i0; i < i1; i++) {
      zd[i] = fabs(xd[i]);
    }
    break;
  case OP_INV:
    for (size_t i = i0; i < i1; i++) {
      zd[i] = 1.0 / xd[i];
    }
    break;
  case OP_ADD_CONST:
    for (size_t i = i0; i < i1; i++) {
      zd[i] = xd[i] + a;
    }
    break;
  case OP_LINCOMB: {
    /* Three vectors at a time keeps every pass read-before-write per entry (nvec >= 3). */
    const double *x0 = op->xs[0], *x1 = op->xs[1], *x2 = op->xs[2];
    double c0 = op->c[0], c1 = op->c[1], c2 = op->c[2];
    zd = op->zs[0];
    for (size_t i = i0; i < i1; i++) {
      zd[i] = c0 * x0[i] + c1 * x1[i] + c2 * x2[i];
    }
    for (int k = 3; k < op->nvec; k++) {
      const double *xk = op->xs[k];
      double ck = op->c[k];
      for (size_t i = i0; i < i1; i++) {
        zd[i] += ck * xk[i];
      }
    }
    break;
  }
  case OP_SCALE_ADD:
    for (int k = 0; k < op->nvec; k++) {
      const double *yk = op->xs[k];
      double *zk = op->zs[k];
      double ck = op->c[k];
      for (size_t i = i0; i < i1; i++) {
        zk[i] = ck * xd[i] + yk[i];
      }
    }
    break;
  }
}

/* Reductions, accumulated block by block into the same four partial sums (or running
 * extremum) as one sweep over [0, n). */
typedef enum { RED_DOT, RED_WSQR, RED_MAXABS, RED_MIN } red_kind;

typedef struct {
  red_kind kind;
  const double *x, *y;
  double s[4];
  double m;
} fuse_red;

static void red_init(fuse_red *r, red_kind kind, const double *x, const double *y) {
  r->kind = kind;
  r->x = x;
  r->y = y;
  r->s[0] = r->s[1] = r->s[2] = r->s[3] = 0.0;
  r->m = kind == RED_MIN ? x[0] : 0.0;
}

/* i0 is a multiple of 4; only the last block (i1 = n) may leave a tail. */
static void red_apply(fuse_red *r, size_t i0, size_t i1) {
  const double *xd = r->x, *yd = r->y;
  double s0 = r->s[0], s1 = r->s[1], s2 = r->s[2], s3 = r->s[3], m = r->m;
  size_t i = i0;
  switch (r->kind) {
  case RED_DOT:
    for (; i + 4 <= i1; i += 4) {
      s0 += xd[i] * yd[i];
      s1 += xd[i + 1] * yd[i + 1];
      s2 += xd[i + 2] * yd[i + 2];
      s3 += xd[i + 3] * yd[i + 3];
    }
    for (; i < i1; i++) {
      s0 += xd[i] * yd[i];
    }
    break;
  case RED_WSQR:
    for (; i + 4 <= i1; i += 4) {
      double p0 = xd[i] * yd[i], p1 = xd[i + 1] * yd[i + 1];
      double p2 = xd[i + 2] * yd[i + 2], p3 = xd[i + 3] * yd[i + 3];
      s0 += p0 * p0;
      s1 += p1 * p1;
      s2 += p2 * p2;
      s3 += p3 * p3;
    }
    for (; i < i1; i++) {
      double p = xd[i] * yd[i];
      s0 += p * p;
    }
    break;
  case RED_MAXABS:
    for (; i < i1; i++) {
      double a = fabs(xd[i]);
      m = a > m ? a : m;
    }
    break;
  case RED_MIN:
    for (i = i0 > 0 ? i0 : 1; i < i1; i++) {
      m = xd[i] < m ? xd[i] : m;
    }
    break;
  }
  r->s[0] = s0;
  r->s[1] = s1;
  r->s[2] = s2;
  r->s[3] = s3;
  r->m = m;
}

static double red_result(const fuse_red *r) {
  return r->kind == RED_DOT || r->kind == RED_WSQR ? (r->s[0] + r->s[1]) + (r->s[2] + r->s[3])
                                                   : r->m;
}

/* ---- The queue ----------------------------------------------------------------------------- */

/* 2048 entries = 16 KiB per vector: the ~10 vectors of a typical flush stay in L2. */
enum { fuse_block = 2048, fuse_capacity = 64 };

/* Shorter vectors (2 MiB each; a BDF solve holds about 25) are worked on at once: while they
 * stay in the caches, queueing saves no memory traffic and costs 5-10% (measured with
 * bench/bench_ode.sh at 10^3..10^5 groups). */
enum { fuse_min_length = 262144 };

struct dpd__ode_fuse {
  size_t n; /* the length of every vector of the solve */
  int len;  /* queued operations */
  int mode; /* 0: queue; 1: execute at once (short vectors, or dpd__ode_nvector_bench_mode) */
  fuse_op ops[fuse_capacity];
};

/* The serial content with the solve's queue appended (the prefix keeps NV_DATA_S and the
 * N_Vector_Serial functions valid). */
typedef struct {
  struct _N_VectorContent_Serial serial;
  dpd__ode_fuse *fuse;
} fuse_content;

/* dpd__ode_nvector_bench_mode (benchmarks and tests only). The default is 1, one pass per
 * operation: on the development machine the queued kernels stream fewer vectors (69 instead of
 * 127 per step) but measured 4-8 % faster in some runs and 5-15 % slower in others at 10^6
 * groups (docs/linreg.md, "Cost per step and eigenvalue"), so they stay opt-in until a larger
 * machine shows a gain. */
static int bench_mode = 1;

void dpd__ode_nvector_bench_mode(int mode) {
  bench_mode = mode;
}

dpd__ode_fuse *dpd__ode_fuse_new(size_t n) {
  dpd__ode_fuse *f = malloc(sizeof *f);
  if (f != NULL) {
    f->n = n;
    f->len = 0;
    f->mode = bench_mode != 0 || n < fuse_min_length ? 1 : 0;
  }
  return f;
}

void dpd__ode_fuse_free(dpd__ode_fuse *f) {
  free(f);
}

static size_t len(N_Vector v) {
  return (size_t)NV_LENGTH_S(v);
}

static dpd__ode_fuse *fuse_of(N_Vector v) {
  return ((fuse_content *)v->content)->fuse;
}

/* Executes the queue (and the reduction r, if any) block by block. */
static void fuse_run(dpd__ode_fuse *f, fuse_red *r, size_t n) {
  if (f != NULL && f->len == 0 && r == NULL) {
    return;
  }
  for (size_t i0 = 0; i0 < n; i0 += fuse_block) {
    size_t i1 = n - i0 < fuse_block ? n : i0 + fuse_block;
    if (f != NULL) {
      for (int k = 0; k < f->len; k++) {
        op_apply(&f->ops[k], i0, i1);
      }
    }
    if (r != NULL) {
      red_apply(r, i0, i1);
    }
  }
  if (f != NULL) {
    f->len = 0;
  }
}

static void flush(N_Vector v) {
  dpd__ode_fuse *f = fuse_of(v);
  if (f != NULL) {
    fuse_run(f, NULL, f->n);
  }
}

/* Queues op (whose vectors all have length len(v)) or, when queueing is off or the length
 * differs, executes it after what is queued. */
static void submit(N_Vector v, const fuse_op *op) {
  dpd__ode_fuse *f = fuse_of(v);
  size_t n = len(v);
  if (f == NULL || f->mode != 0 || n != f->n) {
    if (f != NULL) {
      fuse_run(f, NULL, f->n);
    }
    op_apply(op, 0, n);
    return;
  }
  if (f->len == fuse_capacity) {
    fuse_run(f, NULL, n);
  }
  f->ops[f->len++] = *op;
}

static double reduce(N_Vector v, red_kind kind, N_Vector x, N_Vector y) {
  dpd__ode_fuse *f = fuse_of(v);
  size_t n = len(v);
  fuse_red r;
  if (f != NULL && (n != f->n || kind == RED_MIN)) {
    /* RED_MIN starts from entry 0, which the queue may still change. */
    fuse_run(f, NULL, f->n);
    f = NULL;
  }
  red_init(&r, kind, NV_DATA_S(x), y != NULL ? NV_DATA_S(y) : NULL);
  fuse_run(f, &r, n);
  return red_result(&r);
}

/* ---- Operations table ---------------------------------------------------------------------- */

static void simple(op_kind kind, double a, double b, N_Vector x, N_Vector y, N_Vector z) {
  fuse_op op;
  op.kind = kind;
  op.nvec = 0;
  op.a = a;
  op.b = b;
  op.x = x != NULL ? NV_DATA_S(x) : NULL;
  op.y = y != NULL ? NV_DATA_S(y) : NULL;
  op.z = NV_DATA_S(z);
  submit(z, &op);
}

static void linear_sum(sunrealtype a, N_Vector x, sunrealtype b, N_Vector y, N_Vector z) {
  simple(OP_LINEAR_SUM, a, b, x, y, z);
}

static void vconst(sunrealtype c, N_Vector z) {
  simple(OP_CONST, c, 0.0, NULL, NULL, z);
}

static void prod(N_Vector x, N_Vector y, N_Vector z) {
  simple(OP_PROD, 0.0, 0.0, x, y, z);
}

static void vdiv(N_Vector x, N_Vector y, N_Vector z) {
  simple(OP_DIV, 0.0, 0.0, x, y, z);
}

static void scale(sunrealtype c, N_Vector x, N_Vector z) {
  simple(OP_SCALE, c, 0.0, x, NULL, z);
}

static void vabs(N_Vector x, N_Vector z) {
  simple(OP_ABS, 0.0, 0.0, x, NULL, z);
}

static void inv(N_Vector x, N_Vector z) {
  simple(OP_INV, 0.0, 0.0, x, NULL, z);
}

static void add_const(N_Vector x, sunrealtype b, N_Vector z) {
  simple(OP_ADD_CONST, b, 0.0, x, NULL, z);
}

static sunrealtype dot_prod(N_Vector x, N_Vector y) {
  return reduce(x, RED_DOT, x, y);
}

static sunrealtype max_norm(N_Vector x) {
  return reduce(x, RED_MAXABS, x, NULL);
}

static sunrealtype wsqr_sum(N_Vector x, N_Vector w) {
  return reduce(x, RED_WSQR, x, w);
}

static sunrealtype wrms_norm(N_Vector x, N_Vector w) {
  return sqrt(wsqr_sum(x, w) / (double)len(x));
}

static sunrealtype vmin(N_Vector x) {
  return reduce(x, RED_MIN, x, NULL);
}

/* z = sum_k c[k] X[k]; z may be one of the X[k] (k < 3, as nvector_serial requires). */
static int linear_combination(int nvec, sunrealtype *c, N_Vector *X, N_Vector z) {
  fuse_op op;
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
  if (nvec > fuse_max_vecs) {
    /* The three first terms as one operation, then z += c[k] X[k] one vector at a time
     * (1 * z + c[k] X[k] rounds exactly like z + c[k] X[k]). */
    if (linear_combination(3, c, X, z) != 0) {
      return -1;
    }
    for (int k = 3; k < nvec; k++) {
      if (NV_DATA_S(X[k]) == NV_DATA_S(z)) {
        return -1;
      }
      linear_sum(1.0, z, c[k], X[k], z);
    }
    return 0;
  }
  op.kind = OP_LINCOMB;
  op.nvec = nvec;
  op.a = op.b = 0.0;
  op.x = op.y = NULL;
  op.z = NULL;
  op.zs[0] = NV_DATA_S(z);
  for (int k = 0; k < nvec; k++) {
    op.c[k] = c[k];
    op.xs[k] = NV_DATA_S(X[k]);
    if (k >= 3 && op.xs[k] == op.zs[0]) {
      /* z appeared again later in the list: nvector_serial forbids this too. */
      return -1;
    }
  }
  submit(z, &op);
  return 0;
}

/* Z[k] = a[k] x + Y[k], k = 0..nvec-1. */
static int scale_add_multi(int nvec, sunrealtype *a, N_Vector x, N_Vector *Y, N_Vector *Z) {
  fuse_op op;
  if (nvec < 1) {
    return -1;
  }
  if (nvec > fuse_max_vecs) {
    for (int k = 0; k < nvec; k++) {
      linear_sum(a[k], x, 1.0, Y[k], Z[k]);
    }
    return 0;
  }
  op.kind = OP_SCALE_ADD;
  op.nvec = nvec;
  op.a = op.b = 0.0;
  op.x = NV_DATA_S(x);
  op.y = NULL;
  op.z = NULL;
  for (int k = 0; k < nvec; k++) {
    op.c[k] = a[k];
    op.xs[k] = NV_DATA_S(Y[k]);
    op.zs[k] = NV_DATA_S(Z[k]);
  }
  submit(x, &op);
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

/* ---- Data access, life cycle and the operations we do not queue: flush first -------------- */

static sunrealtype *get_array_pointer(N_Vector v) {
  flush(v);
  return NV_DATA_S(v);
}

static void set_array_pointer(sunrealtype *data, N_Vector v) {
  flush(v);
  N_VSetArrayPointer_Serial(data, v);
}

static int attach(N_Vector v, dpd__ode_fuse *fuse);

static N_Vector clone_empty(N_Vector w) {
  N_Vector v = N_VCloneEmpty_Serial(w);
  if (v != NULL && attach(v, fuse_of(w)) != 0) {
    N_VDestroy_Serial(v);
    return NULL;
  }
  return v;
}

static N_Vector clone(N_Vector w) {
  N_Vector v = clone_empty(w);
  double *data;
  if (v == NULL) {
    return NULL;
  }
  data = malloc(len(w) * sizeof *data);
  if (data == NULL && len(w) > 0) {
    N_VDestroy_Serial(v);
    return NULL;
  }
  NV_OWN_DATA_S(v) = SUNTRUE;
  NV_DATA_S(v) = data;
  return v;
}

static void destroy(N_Vector v) {
  if (v == NULL) {
    return;
  }
  if (v->content != NULL) {
    flush(v);
  }
  N_VDestroy_Serial(v); /* frees the data it owns, the content (one block) and the vector */
}

static sunrealtype wrms_norm_mask(N_Vector x, N_Vector w, N_Vector id) {
  flush(x);
  return N_VWrmsNormMask_Serial(x, w, id);
}

static sunrealtype wl2_norm(N_Vector x, N_Vector w) {
  flush(x);
  return N_VWL2Norm_Serial(x, w);
}

static sunrealtype l1_norm(N_Vector x) {
  flush(x);
  return N_VL1Norm_Serial(x);
}

static void compare(sunrealtype c, N_Vector x, N_Vector z) {
  flush(x);
  N_VCompare_Serial(c, x, z);
}

static sunbooleantype inv_test(N_Vector x, N_Vector z) {
  flush(x);
  return N_VInvTest_Serial(x, z);
}

static sunbooleantype constr_mask(N_Vector c, N_Vector x, N_Vector m) {
  flush(x);
  return N_VConstrMask_Serial(c, x, m);
}

static sunrealtype min_quotient(N_Vector num, N_Vector denom) {
  flush(num);
  return N_VMinQuotient_Serial(num, denom);
}

static sunrealtype wsqr_sum_mask(N_Vector x, N_Vector w, N_Vector id) {
  flush(x);
  return N_VWSqrSumMaskLocal_Serial(x, w, id);
}

static int buf_pack(N_Vector x, void *buf) {
  flush(x);
  return N_VBufPack_Serial(x, buf);
}

static int buf_unpack(N_Vector x, void *buf) {
  flush(x);
  return N_VBufUnpack_Serial(x, buf);
}

static void print_vec(N_Vector x) {
  flush(x);
  N_VPrint_Serial(x);
}

static void print_file(N_Vector x, FILE *file) {
  flush(x);
  N_VPrintFile_Serial(x, file);
}

/* Appends the queue pointer to v's serial content (one allocation, freed by free() like the
 * serial content). */
static int attach(N_Vector v, dpd__ode_fuse *fuse) {
  fuse_content *c = malloc(sizeof *c);
  if (c == NULL) {
    return -1;
  }
  memcpy(&c->serial, v->content, sizeof c->serial);
  c->fuse = fuse;
  free(v->content);
  v->content = c;
  return 0;
}

int dpd__ode_nvector_speedup(N_Vector v, dpd__ode_fuse *fuse) {
  N_Vector_Ops ops = v->ops;
  if (attach(v, fuse) != 0) {
    return -1;
  }
  ops->nvclone = clone;
  ops->nvcloneempty = clone_empty;
  ops->nvdestroy = destroy;
  ops->nvgetarraypointer = get_array_pointer;
  ops->nvsetarraypointer = set_array_pointer;
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
  ops->nvwrmsnormmask = wrms_norm_mask;
  ops->nvwl2norm = wl2_norm;
  ops->nvl1norm = l1_norm;
  ops->nvl1normlocal = l1_norm;
  ops->nvcompare = compare;
  ops->nvinvtest = inv_test;
  ops->nvinvtestlocal = inv_test;
  ops->nvconstrmask = constr_mask;
  ops->nvconstrmasklocal = constr_mask;
  ops->nvminquotient = min_quotient;
  ops->nvminquotientlocal = min_quotient;
  ops->nvwsqrsummasklocal = wsqr_sum_mask;
  ops->nvbufpack = buf_pack;
  ops->nvbufunpack = buf_unpack;
  ops->nvprint = print_vec;
  ops->nvprintfile = print_file;
  ops->nvlinearcombination = linear_combination;
  ops->nvscaleaddmulti = scale_add_multi;
  ops->nvdotprodmulti = dot_prod_multi;
  ops->nvdotprodmultilocal = dot_prod_multi;
  ops->nvscalevectorarray = scale_vector_array;
  ops->nvconstvectorarray = const_vector_array;
  ops->nvlinearsumvectorarray = linear_sum_vector_array;
  ops->nvwrmsnormvectorarray = wrms_norm_vector_array;
  /* Not implemented here: NULL makes SUNDIALS fall back to the operations above. */
  ops->nvwrmsnormmaskvectorarray = NULL;
  ops->nvscaleaddmultivectorarray = NULL;
  ops->nvlinearcombinationvectorarray = NULL;
  ops->nvdotprodmultiallreduce = NULL;
  return 0;
}
