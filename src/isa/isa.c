/* Which vectorised path this CPU runs: the public face of isa/isa_impl.h, which holds the one
 * definition of each instruction set's support (AVX-512 = AVX-512F and AVX-512DQ: the Gaussian
 * fills of rng.c are compiled for both, and one test for every kernel keeps the choice the same
 * across the library; CPUs with F but not DQ, the Xeon Phi family, run the AVX2 path), and the
 * process-wide choice of DPD_ISA_AUTO (dpd_isa_set, or the environment variable DPD_ISA).
 * src/isa is the lowest module of the library: it calls nothing of it, and src/rng (the
 * Gaussian fills) and the simulators dispatch through it.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/isa_impl.h"

int dpd__isa_auto_state = -1;

/* The path DPD_ISA names, as dpd_isa_parse reads it; DPD_ISA_AUTO when unset, empty, unknown
 * or not supported here (dpd_isa_env_check tells the caller which). */
static dpd_isa env_choice(void) {
  const char *text = getenv("DPD_ISA");
  dpd_isa isa = DPD_ISA_AUTO;
  if (text == NULL || dpd_isa_parse(text, &isa) != DPD_OK || !dpd__isa_supported(isa)) {
    return DPD_ISA_AUTO;
  }
  return isa;
}

int dpd__isa_auto_init(void) {
  int expected = -1;
  const int choice = (int)env_choice();
  /* A concurrent dpd_isa_set wins over the environment: store only over "not yet asked". */
  __atomic_compare_exchange_n(&dpd__isa_auto_state, &expected, choice, 0, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
  return __atomic_load_n(&dpd__isa_auto_state, __ATOMIC_RELAXED);
}

int dpd_isa_available(dpd_isa isa) {
  return dpd__isa_supported(isa);
}

dpd_isa dpd_isa_get(void) {
  return dpd__isa_resolve(DPD_ISA_AUTO);
}

dpd_isa dpd_isa_best(void) {
  if (dpd__isa_supported(DPD_ISA_AVX512)) {
    return DPD_ISA_AVX512;
  }
  return dpd__isa_supported(DPD_ISA_AVX2) ? DPD_ISA_AVX2 : DPD_ISA_SCALAR;
}

int dpd_isa_set(dpd_isa isa) {
  if (isa != DPD_ISA_AUTO && isa != DPD_ISA_SCALAR && isa != DPD_ISA_AVX2 &&
      isa != DPD_ISA_AVX512) {
    return DPD_EINVAL;
  }
  if (!dpd__isa_supported(isa)) {
    return DPD_EINVAL;
  }
  __atomic_store_n(&dpd__isa_auto_state, (int)isa, __ATOMIC_RELAXED);
  return DPD_OK;
}

int dpd_isa_parse(const char *text, dpd_isa *isa) {
  static const dpd_isa all[] = {DPD_ISA_AUTO, DPD_ISA_SCALAR, DPD_ISA_AVX2, DPD_ISA_AVX512};
  if (text == NULL || isa == NULL) {
    return DPD_EINVAL;
  }
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    if (strcmp(text, dpd_isa_name(all[i])) == 0) {
      *isa = all[i];
      return DPD_OK;
    }
  }
  return DPD_EINVAL;
}

/* The names of the paths this CPU has, "scalar, avx2, avx512" or a prefix of it. */
static void available_list(char *buf, size_t cap) {
  snprintf(buf, cap, "scalar%s%s", dpd__isa_supported(DPD_ISA_AVX2) ? ", avx2" : "",
           dpd__isa_supported(DPD_ISA_AVX512) ? ", avx512" : "");
}

int dpd_isa_env_check(char *msg, size_t cap) {
  const char *text = getenv("DPD_ISA");
  dpd_isa isa;
  char have[64];
  if (msg != NULL && cap > 0) {
    msg[0] = '\0';
  }
  if (text == NULL || text[0] == '\0') {
    return DPD_OK;
  }
  available_list(have, sizeof have);
  if (dpd_isa_parse(text, &isa) != DPD_OK) {
    if (msg != NULL && cap > 0) {
      snprintf(msg, cap,
               "environment variable DPD_ISA: unknown kernel path '%.64s' (allowed: auto, scalar, "
               "avx2, avx512; this CPU has %s)",
               text, have);
    }
    return DPD_EINVAL;
  }
  if (!dpd__isa_supported(isa)) {
    if (msg != NULL && cap > 0) {
      snprintf(msg, cap,
               "environment variable DPD_ISA: this CPU cannot run the %s path (%s; this CPU has "
               "%s)",
               text, isa == DPD_ISA_AVX2 ? "it needs AVX2" : "it needs AVX-512F and AVX-512DQ",
               have);
    }
    return DPD_EINVAL;
  }
  return DPD_OK;
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
