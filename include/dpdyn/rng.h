/* Counter-based random streams (Random123 Philox-4x32-10) and fast Gaussians.
 * SPDX-License-Identifier: MIT
 *
 * A stream is identified by the pair (seed, stream). Values are produced block
 * by block from a 64-bit block counter, so every stream is independent of every
 * other and of the thread that consumes it. dpdyn's rule: replicate r of a run
 * with master seed s uses stream (s, r); the problem itself (the random
 * direction of theta*) uses stream (s, DPD_RNG_STREAM_PROBLEM).
 *
 * Exact stream rule (so that any value can be regenerated elsewhere): block b
 * of stream (seed, stream) is the Random123 bijection
 *   w[0..3] = philox4x32_10(ctr = {lo32(b), hi32(b), lo32(stream), hi32(stream)},
 *                           key = {lo32(seed), hi32(seed)}).
 * It yields two 64-bit words a = w0 | w1 << 32 and b = w2 | w3 << 32, and each
 * word W the uniform u = (floor(W / 2^12) + 1/2) 2^-52: an odd multiple of
 * 2^-53, so never 0 or 1 and symmetric about 1/2.
 *  - Uniforms: block b gives (u_a, u_b), in that order.
 *  - Gaussians: block b gives the Box-Muller pair
 *      z0 = sqrt(-2 ln u_a) cos(2 pi u_b),  z1 = sqrt(-2 ln u_a) sin(2 pi u_b).
 *  - dpd_rng_uniform / dpd_rng_gaussian consume one block per two calls; the
 *    second value waits in the cache. A Gaussian call discards cached uniforms
 *    and vice versa.
 *  - The bulk fills always start at the next unused block (a cached scalar
 *    value is discarded) and consume ceil(n/2) blocks; for odd n the second
 *    value of the last block is dropped. So, from a fresh position, 2m scalar
 *    calls return exactly the values of one fill of 2m, and fill(n1) followed
 *    by fill(n2) equals fill(n1 + n2) when n1 is even.
 * The Gaussian transform uses only IEEE-exact operations (our own log, sin,
 * cos kernels), so the scalar, AVX2 and AVX-512 paths return bit-identical
 * values: results depend on the stream position only, not on the CPU or the
 * number of threads.
 *
 * A dpd_rng is a small value type: it may live on the stack, needs no free,
 * and is not shared between threads (each thread owns its own streams). */
#ifndef DPD_RNG_H
#define DPD_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/isa.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPD_RNG_STREAM_PROBLEM UINT64_MAX

typedef struct {
  uint64_t key[2];  /* (seed, stream); see the stream rule above */
  uint64_t counter; /* index of the next Philox block */
  double cache[4];  /* unused values of the last block for scalar calls */
  int cached;       /* number of valid entries left in cache */
  int cache_kind;   /* 0 none, 1 uniforms, 2 Gaussians */
} dpd_rng;

/* Positions `rng` at the start of stream (seed, stream). */
DPD_API void dpd_rng_init(dpd_rng *rng, uint64_t seed, uint64_t stream);

/* One uniform double in the open interval (0, 1), 53-bit resolution. */
DPD_API double dpd_rng_uniform(dpd_rng *rng);

/* One standard Gaussian. */
DPD_API double dpd_rng_gaussian(dpd_rng *rng);

/* Fills out[0..n) with independent standard Gaussians (vectorised
 * Box-Muller, see the stream rule above). Consumes whole blocks; the result
 * depends only on the stream position, never on the number of threads. */
DPD_API void dpd_rng_gaussian_fill(dpd_rng *rng, double *out, size_t n);

/* Fills out[0..n) with uniforms on (0, 1). */
DPD_API void dpd_rng_uniform_fill(dpd_rng *rng, double *out, size_t n);

/* One Gamma(shape, 1) variate (density x^{shape-1} e^{-x} / Gamma(shape), mean and
 * variance `shape`) by the Marsaglia-Tsang squeeze method (ACM TOMS 26 (2000) 363), with
 * the boost Gamma(a) = Gamma(a + 1) U^{1/a} for shape < 1 (for very small shapes the result
 * may underflow to 0). `shape` must be finite and > 0; otherwise the result is NaN and the
 * stream is not touched. Consumes a random number of scalar dpd_rng_gaussian and
 * dpd_rng_uniform calls (at least one of each; one Philox block per call, since the two
 * kinds discard each other's cached value), so the stream position afterwards depends on
 * the values drawn but only on the stream position before. */
DPD_API double dpd_rng_gamma_sample(dpd_rng *rng, double shape);

/* Instruction-set paths of the bulk fills (for tests and benchmarks; all give bit-identical
 * values): the library-wide dpd_isa of isa.h under their former names. */
typedef dpd_isa dpd_rng_isa;
#define DPD_RNG_ISA_AUTO DPD_ISA_AUTO     /* the fastest path this CPU supports */
#define DPD_RNG_ISA_SCALAR DPD_ISA_SCALAR /* portable C */
#define DPD_RNG_ISA_AVX2 DPD_ISA_AVX2
#define DPD_RNG_ISA_AVX512 DPD_ISA_AVX512 /* AVX-512F + DQ */

/* dpd_isa_get() (isa.h): the path DPD_RNG_ISA_AUTO selects on this CPU. Thread-safe. */
DPD_API dpd_rng_isa dpd_rng_isa_get(void);

/* dpd_isa_name() (isa.h): "auto", "scalar", "avx2", "avx512". */
DPD_API const char *dpd_rng_isa_name(dpd_rng_isa isa);

/* dpd_rng_gaussian_fill on a chosen path. Returns DPD_EINVAL (and leaves rng
 * unchanged) if this CPU cannot run `isa`, DPD_OK otherwise. */
DPD_API int dpd_rng_gaussian_fill_isa(dpd_rng *rng, double *out, size_t n, dpd_rng_isa isa);

#ifdef __cplusplus
}
#endif
#endif /* DPD_RNG_H */
