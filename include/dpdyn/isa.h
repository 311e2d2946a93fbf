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

/* The path DPD_ISA_AUTO selects on this CPU: DPD_ISA_AVX512, DPD_ISA_AVX2 or DPD_ISA_SCALAR.
 * Thread-safe. */
DPD_API dpd_isa dpd_isa_get(void);

/* "auto", "scalar", "avx2", "avx512" ("unknown" for any other value). Thread-safe. */
DPD_API const char *dpd_isa_name(dpd_isa isa);

/* 1 if this CPU can run the path `isa` (always for DPD_ISA_AUTO and DPD_ISA_SCALAR), 0
 * otherwise (and for values outside the enum). Thread-safe. */
DPD_API int dpd_isa_available(dpd_isa isa);

#ifdef __cplusplus
}
#endif
#endif /* DPD_ISA_H */
