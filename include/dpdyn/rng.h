/* Counter-based random streams (Random123 Philox-4x64-10) and fast Gaussians.
 * SPDX-License-Identifier: MIT
 *
 * A stream is identified by the pair (seed, stream): the Philox key. Values
 * are produced block by block from a 64-bit block counter, so every stream is
 * independent of every other and of the thread that consumes it. dpdyn's rule:
 * replicate r of a run with master seed s uses stream (s, r); the problem
 * itself (the random direction of theta*) uses stream (s, DPD_RNG_STREAM_PROBLEM).
 *
 * A dpd_rng is a small value type: it may live on the stack, needs no free,
 * and is not shared between threads (each thread owns its own streams). */
#ifndef DPD_RNG_H
#define DPD_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPD_RNG_STREAM_PROBLEM UINT64_MAX

typedef struct {
  uint64_t key[2];   /* (seed, stream) */
  uint64_t counter;  /* index of the next Philox block */
  double cache[4];   /* unused values of the last block for scalar calls */
  int cached;        /* number of valid entries left in cache */
  int cache_kind;    /* 0 none, 1 uniforms, 2 Gaussians */
} dpd_rng;

/* Positions `rng` at the start of stream (seed, stream). */
DPD_API void dpd_rng_init(dpd_rng *rng, uint64_t seed, uint64_t stream);

/* One uniform double in the open interval (0, 1), 53-bit resolution. */
DPD_API double dpd_rng_uniform(dpd_rng *rng);

/* One standard Gaussian. */
DPD_API double dpd_rng_gaussian(dpd_rng *rng);

/* Fills out[0..n) with independent standard Gaussians (vectorised
 * Box-Muller). Consumes whole blocks; the result depends only on the stream
 * position, never on the number of threads. */
DPD_API void dpd_rng_gaussian_fill(dpd_rng *rng, double *out, size_t n);

/* Fills out[0..n) with uniforms on (0, 1). */
DPD_API void dpd_rng_uniform_fill(dpd_rng *rng, double *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* DPD_RNG_H */
