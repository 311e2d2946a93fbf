/* Private: the one kernel dispatch of the library (isa/isa.c).
 * SPDX-License-Identifier: MIT
 *
 * A vectorised kernel is written once as an always-inline body and wrapped three times: a
 * plain function, one with __attribute__((target("avx2"))) and one with
 * __attribute__((target("avx512f,prefer-vector-width=512"))), the last two only when
 * DPD__ISA_X86 (gcc vectorises each copy for its instruction set; with a fixed reduction order
 * and -ffp-contract=off all three give the same bits). DPD__ISA_CLONES writes the three
 * wrappers, DPD__ISA_CLONE_PICK picks one for a requested path:
 *
 *   static inline __attribute__((always_inline)) double step_body(const double *x, size_t n);
 *   DPD__ISA_CLONES(double, step, (const double *x, size_t n), step_body(x, n))
 *   double (*kernel)(const double *, size_t) = DPD__ISA_CLONE_PICK(DPD_ISA_AUTO, step);
 *
 * Kernels whose copies differ by more than the target (rng.c, volterra.c) define their own
 * three and pick with DPD__ISA_PICK(isa, scalar, avx2, avx512). The three must have the same
 * type (the conditional expression checks it). */
#ifndef DPD_ISA_IMPL_H
#define DPD_ISA_IMPL_H

#include "dpdyn/isa.h"

#if defined(__x86_64__) || defined(__i386__)
#define DPD__ISA_X86 1
#else
#define DPD__ISA_X86 0
#endif

/* 1 if this CPU can run `isa` (dpd_isa_available; inline because the Gaussian fills ask on
 * every call). AVX-512 needs both AVX-512F and AVX-512DQ. __builtin_cpu_supports reads the CPU
 * model that libgcc's (or compiler-rt's) constructor filled in before main: thread-safe, and
 * no __builtin_cpu_init is needed outside constructors. */
static inline int dpd__isa_supported(dpd_isa isa) {
  switch (isa) {
  case DPD_ISA_AUTO:
  case DPD_ISA_SCALAR:
    return 1;
#if DPD__ISA_X86
  case DPD_ISA_AVX2:
    return __builtin_cpu_supports("avx2") != 0;
  case DPD_ISA_AVX512:
    return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512dq") != 0;
#endif
  default:
    return 0;
  }
}

/* The process-wide path of DPD_ISA_AUTO (isa.c): -1 until first asked, then the path that
 * dpd_isa_set or the environment variable DPD_ISA chose, or DPD_ISA_AUTO for "the fastest".
 * Read relaxed on every dispatch (a plain load); written once lazily and by dpd_isa_set. */
extern __attribute__((visibility("hidden"))) int dpd__isa_auto_state;
__attribute__((visibility("hidden"))) int dpd__isa_auto_init(void);

/* The path a request for `isa` runs on: DPD_ISA_AUTO (or a value outside the enum) gives the
 * path forced by dpd_isa_set / DPD_ISA if any, else the fastest this CPU supports; a path this
 * CPU lacks falls back to the fastest one below it (AVX-512 -> AVX2 -> scalar); a supported
 * path is itself. Never DPD_ISA_AUTO. Thread-safe. */
static inline dpd_isa dpd__isa_resolve(dpd_isa isa) {
  if (isa != DPD_ISA_SCALAR && isa != DPD_ISA_AVX2 && isa != DPD_ISA_AVX512) {
    int forced = __atomic_load_n(&dpd__isa_auto_state, __ATOMIC_RELAXED);
    if (forced < 0) {
      forced = dpd__isa_auto_init();
    }
    isa = (dpd_isa)forced;
  }
  if (isa == DPD_ISA_SCALAR) {
    return DPD_ISA_SCALAR;
  }
  if (isa != DPD_ISA_AVX2 && dpd__isa_supported(DPD_ISA_AVX512)) {
    return DPD_ISA_AVX512;
  }
  return dpd__isa_supported(DPD_ISA_AVX2) ? DPD_ISA_AVX2 : DPD_ISA_SCALAR;
}

/* The kernel among (scalar, avx2, avx512) for a request of `isa` (dpd__isa_resolve). Off x86
 * only `scalar` is named, so the other two need not exist there. */
#if DPD__ISA_X86
#define DPD__ISA_PICK(isa, scalar, avx2, avx512)                                                   \
  (dpd__isa_resolve(isa) == DPD_ISA_AVX512 ? (avx512)                                              \
   : dpd__isa_resolve(isa) == DPD_ISA_AVX2 ? (avx2)                                                \
                                           : (scalar))
#else
#define DPD__ISA_PICK(isa, scalar, avx2, avx512) ((void)(isa), (scalar))
#endif

/* Defines `static ret name_scalar params`, `name_avx2` and `name_avx512` (the last two on x86
 * only), each returning `call` (an expression in the parameters, usually the always-inline
 * body) compiled for its target. `ret` must not be void. */
#if DPD__ISA_X86
#define DPD__ISA_CLONES(ret, name, params, call)                                                   \
  static ret name##_scalar params {                                                                \
    return call;                                                                                   \
  }                                                                                                \
  __attribute__((target("avx2"))) static ret name##_avx2 params {                                  \
    return call;                                                                                   \
  }                                                                                                \
  __attribute__((target("avx512f,prefer-vector-width=512"))) static ret name##_avx512 params {     \
    return call;                                                                                   \
  }
#else
#define DPD__ISA_CLONES(ret, name, params, call)                                                   \
  static ret name##_scalar params {                                                                \
    return call;                                                                                   \
  }
#endif

/* The clone of DPD__ISA_CLONES(..., name, ...) for a request of `isa`. */
#define DPD__ISA_CLONE_PICK(isa, name) DPD__ISA_PICK(isa, name##_scalar, name##_avx2, name##_avx512)

#endif /* DPD_ISA_IMPL_H */
