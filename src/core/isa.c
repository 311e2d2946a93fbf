/* Which vectorised path this CPU runs: the public face of core/isa_impl.h, which holds the one
 * definition of each instruction set's support (AVX-512 = AVX-512F and AVX-512DQ: the Gaussian
 * fills of rng.c are compiled for both, and one test for every kernel keeps the choice the same
 * across the library; CPUs with F but not DQ, the Xeon Phi family, run the AVX2 path).
 * SPDX-License-Identifier: MIT */
#include "core/isa_impl.h"

int dpd_isa_available(dpd_isa isa) {
  return dpd__isa_supported(isa);
}

dpd_isa dpd_isa_get(void) {
  return dpd__isa_resolve(DPD_ISA_AUTO);
}

const char *dpd_isa_name(dpd_isa isa) {
  switch (isa) {
  case DPD_ISA_AUTO:
    return "auto";
  case DPD_ISA_SCALAR:
    return "scalar";
  case DPD_ISA_AVX2:
    return "avx2";
  case DPD_ISA_AVX512:
    return "avx512";
  }
  return "unknown";
}
