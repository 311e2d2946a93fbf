/* Counter-based random streams: Random123 Philox-4x64-10 (Salmon et al., SC'11).
 * SPDX-License-Identifier: MIT
 *
 * Scalar reference implementation: block b of stream (seed, stream) is
 * philox4x64({b, 0, 0, 0}, {seed, stream}); each 64-bit word gives a uniform
 * (w >> 11 + 0.5) 2^-53 in (0, 1); pairs of uniforms give Gaussians by
 * Box-Muller (Box & Muller 1958). */
#include <math.h>

#include <Random123/philox.h>

#include "dpdyn/rng.h"

static const double two_pi = 6.283185307179586476925286766559;

void dpd_rng_init(dpd_rng *rng, uint64_t seed, uint64_t stream) {
  rng->key[0] = seed;
  rng->key[1] = stream;
  rng->counter = 0;
  rng->cached = 0;
  rng->cache_kind = 0;
}

static void next_uniforms(dpd_rng *rng, double u[4]) {
  philox4x64_ctr_t ctr = {{rng->counter++, 0, 0, 0}};
  philox4x64_key_t key = {{rng->key[0], rng->key[1]}};
  philox4x64_ctr_t w = philox4x64(ctr, key);
  for (int i = 0; i < 4; i++) {
    u[i] = ((double)(w.v[i] >> 11) + 0.5) * 0x1.0p-53;
  }
}

static void box_muller(const double u[4], double g[4]) {
  for (int i = 0; i < 4; i += 2) {
    double radius = sqrt(-2.0 * log(u[i]));
    double angle = two_pi * u[i + 1];
    g[i] = radius * cos(angle);
    g[i + 1] = radius * sin(angle);
  }
}

double dpd_rng_uniform(dpd_rng *rng) {
  if (rng->cache_kind != 1 || rng->cached == 0) {
    next_uniforms(rng, rng->cache);
    rng->cache_kind = 1;
    rng->cached = 4;
  }
  return rng->cache[4 - rng->cached--];
}

double dpd_rng_gaussian(dpd_rng *rng) {
  if (rng->cache_kind != 2 || rng->cached == 0) {
    double u[4];
    next_uniforms(rng, u);
    box_muller(u, rng->cache);
    rng->cache_kind = 2;
    rng->cached = 4;
  }
  return rng->cache[4 - rng->cached--];
}

void dpd_rng_uniform_fill(dpd_rng *rng, double *out, size_t n) {
  double u[4];
  for (size_t i = 0; i < n; i += 4) {
    next_uniforms(rng, u);
    for (size_t j = 0; j < 4 && i + j < n; j++) {
      out[i + j] = u[j];
    }
  }
}

void dpd_rng_gaussian_fill(dpd_rng *rng, double *out, size_t n) {
  double u[4], g[4];
  for (size_t i = 0; i < n; i += 4) {
    next_uniforms(rng, u);
    box_muller(u, g);
    for (size_t j = 0; j < 4 && i + j < n; j++) {
      out[i + j] = g[j];
    }
  }
}
