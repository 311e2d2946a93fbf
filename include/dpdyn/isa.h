/* Instruction-set paths of the vectorised kernels (the Gaussian fills of rng.h, the replicate
 * kernels of the simulators, the Volterra tabulation).
 * SPDX-License-Identifier: MIT
 *
 * Every kernel is compiled once per path from the same source, with a fixed reduction order
 * and without FMA contraction, so all paths give bit-identical results: the choice changes the
 * speed only. The library picks the fastest path this CPU supports; tests and benchmarks may
 * ask for another. */
#ifndef DPD_ISA_H
#define DPD_ISA_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DPD_ISA_AUTO = 0, /* the fastest path this CPU supports (dpd_isa_get) */
  DPD_ISA_SCALAR,   /* portable C (baseline x86-64, or any other CPU) */
  DPD_ISA_AVX2,     /* x86 AVX2 */
  DPD_ISA_AVX512    /* x86 AVX-512F + AVX-512DQ (both required) */
} dpd_isa;

/* The path DPD_ISA_AUTO selects: the one forced by dpd_isa_set or, if never set, by the
 * environment variable DPD_ISA (read once, at the first kernel dispatch; an unset, empty,
 * unknown or unsupported value means "the fastest"), else the fastest this CPU supports.
 * DPD_ISA_AVX512, DPD_ISA_AVX2 or DPD_ISA_SCALAR. Thread-safe. */
DPD_API dpd_isa dpd_isa_get(void);

/* The fastest path this CPU supports, whatever dpd_isa_set or DPD_ISA chose. Thread-safe. */
DPD_API dpd_isa dpd_isa_best(void);

/* Forces the path of DPD_ISA_AUTO for the whole process (DPD_ISA_AUTO: back to the fastest);
 * overrides DPD_ISA. Returns DPD_EINVAL, changing nothing, for a path this CPU lacks or a value
 * outside the enum. Since every path gives the same bits, this changes the speed only; it is
 * for tests, benchmarks and users who want to check that claim. Call it between runs, not
 * during one (a run in flight may then mix paths, which is still bit-identical but not what
 * was asked). */
DPD_API int dpd_isa_set(dpd_isa isa);

/* Reads a path name ("auto", "scalar", "avx2", "avx512", exactly) into *isa. DPD_EINVAL for
 * any other text (and NULL). */
DPD_API int dpd_isa_parse(const char *text, dpd_isa *isa);

/* Checks the environment variable DPD_ISA: DPD_OK when it is unset, empty or names a path this
 * CPU supports; otherwise DPD_EINVAL and a one-line reason in msg (cap bytes, may be NULL),
 * naming the variable, its value, the allowed names and the paths this CPU has. The CLI and
 * the Python package refuse to run on DPD_EINVAL; the library alone falls back to the
 * fastest path. Thread-safe. */
DPD_API int dpd_isa_env_check(char *msg, size_t cap);

/* "auto", "scalar", "avx2", "avx512" ("unknown" for any other value). Thread-safe. */
DPD_API const char *dpd_isa_name(dpd_isa isa);

/* 1 if this CPU can run the path `isa` (always for DPD_ISA_AUTO and DPD_ISA_SCALAR), 0
 * otherwise (and for values outside the enum). Thread-safe. */
DPD_API int dpd_isa_available(dpd_isa isa);

#ifdef __cplusplus
}
#endif
#endif /* DPD_ISA_H */
