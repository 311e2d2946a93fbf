/* Tests of the counter-based RNG (include/dpdyn/rng.h): stream rule, reproducibility,
 * instruction-set paths, and the Gaussian law (moments, tails, histogram, independence).
 * SPDX-License-Identifier: MIT
 *
 * Statistical checks use fixed seeds; every tolerance is a multiple of the standard error of
 * the statistic under the null hypothesis (GSL randist style: interval frequencies within a
 * few sigma, histogram against the integrated pdf). */
#include <stdlib.h>
#include <string.h>

#include <Random123/philox.h>

#include "dpd_test.h"
#include "dpdyn/isa.h"
#include "dpdyn/rng.h"
#include "rng/rng_impl.h"

#define SEED UINT64_C(0x5eed2385)

/* Large samples are drawn in chunks (even length: consecutive fills continue the stream). */
#define CHUNK ((size_t)1 << 16)

/* Standard normal CDF. */
static double Phi(double x) {
  return 0.5 * erfc(-x / sqrt(2.0));
}

static double *alloc_doubles(size_t n) {
  double *p = malloc(n * sizeof *p);
  assert_non_null(p);
  return p;
}

/* The documented stream rule, from Random123 directly: uniforms (u_a, u_b) of block b. */
static void reference_uniforms(uint64_t seed, uint64_t stream, uint64_t block, double *ua,
                               double *ub) {
  philox4x32_ctr_t ctr = {
      {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)stream, (uint32_t)(stream >> 32)}};
  philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
  philox4x32_ctr_t w = philox4x32(ctr, key);
  uint64_t a = (uint64_t)w.v[0] | ((uint64_t)w.v[1] << 32);
  uint64_t b = (uint64_t)w.v[2] | ((uint64_t)w.v[3] << 32);
  *ua = ((double)(a >> 12) + 0.5) * 0x1p-52;
  *ub = ((double)(b >> 12) + 0.5) * 0x1p-52;
}

static void uniforms_follow_the_documented_philox4x32_stream_rule(void **state) {
  (void)state;
  const uint64_t streams[] = {0, 1, 77, UINT64_C(0x123456789ab), UINT64_MAX};
  for (size_t s = 0; s < sizeof streams / sizeof streams[0]; s++) {
    dpd_rng rng;
    dpd_rng_init(&rng, SEED, streams[s]);
    for (uint64_t b = 0; b < 300; b++) {
      double ua, ub;
      reference_uniforms(SEED, streams[s], b, &ua, &ub);
      assert_true(dpd_rng_uniform(&rng) == ua);
      assert_true(dpd_rng_uniform(&rng) == ub);
    }
  }
  /* A block counter beyond 2^32 uses the high counter word. */
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 5);
  rng.counter = UINT64_C(0x1234567890);
  double ua, ub;
  reference_uniforms(SEED, 5, UINT64_C(0x1234567890), &ua, &ub);
  assert_true(dpd_rng_uniform(&rng) == ua);
  assert_true(dpd_rng_uniform(&rng) == ub);
}

/* On every path this CPU has (forced with dpd_isa_set, as DPD_ISA does), across a counter whose
 * high word changes inside a vector register. */
static void uniform_fill_matches_scalar_uniforms(void **state) {
  (void)state;
  static const dpd_isa paths[] = {DPD_ISA_SCALAR, DPD_ISA_AVX2, DPD_ISA_AVX512};
  const dpd_isa before = dpd_isa_get();
  const size_t n = 1001;
  double *fill = alloc_doubles(n);
  for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
    if (!dpd_isa_available(paths[p])) {
      continue;
    }
    assert_int_equal(dpd_isa_set(paths[p]), DPD_OK);
    for (int crossing = 0; crossing < 2; crossing++) {
      const uint64_t start = crossing ? UINT64_C(0xFFFFFFFF) - 5 : 0;
      dpd_rng a, b;
      dpd_rng_init(&a, SEED, 3);
      dpd_rng_init(&b, SEED, 3);
      a.counter = b.counter = start;
      dpd_rng_uniform_fill(&a, fill, n);
      for (size_t i = 0; i < n; i++) {
        assert_true(dpd_rng_uniform(&b) == fill[i]);
      }
      /* Odd n consumed ceil(n/2) blocks. */
      assert_int_equal(a.counter, start + (n + 1) / 2);
    }
  }
  assert_int_equal(dpd_isa_set(before), DPD_OK);
  free(fill);
}

/* Gaussians follow z0 = sqrt(-2 ln u_a) cos(2 pi u_b), z1 = ... sin(...) up to rounding of
 * our log/sin/cos kernels (reference in long double). */
static void gaussians_follow_the_documented_box_muller_rule(void **state) {
  (void)state;
  const size_t nblocks = 20000;
  double *z = alloc_doubles(2 * nblocks);
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 11);
  dpd_rng_gaussian_fill(&rng, z, 2 * nblocks);
  double worst = 0.0;
  for (size_t b = 0; b < nblocks; b++) {
    double ua, ub;
    reference_uniforms(SEED, 11, b, &ua, &ub);
    long double r = sqrtl(-2.0L * logl((long double)ua));
    long double ang = 6.283185307179586476925286766559005768L * (long double)ub;
    double e0 = fabs(z[2 * b] - (double)(r * cosl(ang))) / (double)(1.0L + r);
    double e1 = fabs(z[2 * b + 1] - (double)(r * sinl(ang))) / (double)(1.0L + r);
    worst = fmax(worst, fmax(e0, e1));
  }
  if (!(worst < 4e-16)) {
    print_error("worst |z - ref| / (1 + r) = %g (seed %llu)\n", worst, (unsigned long long)SEED);
  }
  assert_true(worst < 4e-16);
  free(z);
}

static void reinit_reproduces_identical_bits(void **state) {
  (void)state;
  const size_t n = 4099;
  double *x = alloc_doubles(n), *y = alloc_doubles(n);
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 9);
  dpd_rng_gaussian_fill(&rng, x, n);
  dpd_rng_init(&rng, SEED, 9);
  dpd_rng_gaussian_fill(&rng, y, n);
  assert_memory_equal(x, y, n * sizeof *x);
  dpd_rng_init(&rng, SEED, 9);
  double g1 = dpd_rng_gaussian(&rng), u1 = dpd_rng_uniform(&rng);
  dpd_rng_init(&rng, SEED, 9);
  assert_true(dpd_rng_gaussian(&rng) == g1);
  assert_true(dpd_rng_uniform(&rng) == u1);
  /* A different seed or stream gives different values. */
  dpd_rng_init(&rng, SEED + 1, 9);
  dpd_rng_gaussian_fill(&rng, y, n);
  assert_true(memcmp(x, y, n * sizeof *x) != 0);
  dpd_rng_init(&rng, SEED, 10);
  dpd_rng_gaussian_fill(&rng, y, n);
  assert_true(memcmp(x, y, n * sizeof *x) != 0);
  free(x);
  free(y);
}

/* Every instruction-set path gives the same bits, for lengths that exercise the vector
 * bodies, the scalar tails and odd counts, from a non-zero counter. */
static void all_instruction_set_paths_are_bit_identical(void **state) {
  (void)state;
  const size_t lengths[] = {1,   2,   3,   15,   16,   17,   31,    33,
                            511, 512, 513, 1000, 2001, 5003, 65537, 300001};
  /* From a non-zero counter, and from one whose high word changes inside a vector register. */
  const uint64_t starts[] = {12345, (UINT64_C(1) << 32) - 37};
  const dpd_rng_isa paths[] = {DPD_RNG_ISA_AVX2, DPD_RNG_ISA_AVX512, DPD_RNG_ISA_AUTO};
  double *ref = alloc_doubles(300001), *got = alloc_doubles(300001);
  int tested = 0;
  for (size_t c = 0; c < sizeof starts / sizeof starts[0]; c++) {
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
      size_t n = lengths[l];
      dpd_rng a;
      dpd_rng_init(&a, SEED, 21);
      a.counter = starts[c];
      assert_int_equal(dpd_rng_gaussian_fill_isa(&a, ref, n, DPD_RNG_ISA_SCALAR), DPD_OK);
      for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        dpd_rng b;
        dpd_rng_init(&b, SEED, 21);
        b.counter = starts[c];
        int st = dpd_rng_gaussian_fill_isa(&b, got, n, paths[p]);
        if (st != DPD_OK) {
          assert_int_equal(st, DPD_EINVAL);
          assert_int_equal(b.counter, starts[c]); /* unsupported: rng untouched */
          continue;
        }
        tested++;
        if (memcmp(ref, got, n * sizeof *ref) != 0) {
          print_error("path %s differs from scalar at n = %zu, counter %llu\n",
                      dpd_rng_isa_name(paths[p]), n, (unsigned long long)starts[c]);
          fail();
        }
        assert_int_equal(b.counter, a.counter);
      }
    }
  }
  assert_true(tested >= 2 * (int)(sizeof lengths / sizeof lengths[0])); /* AUTO always runs */
  assert_string_equal(dpd_rng_isa_name(DPD_RNG_ISA_SCALAR), "scalar");
  free(ref);
  free(got);
}

/* The transform alone on crafted uniforms, every path against the scalar one bit for bit: the
 * ends of (0, 1) (the largest radii, log near 0), the sqrt(2) boundary of the log reduction at
 * several exponents, the quadrant and octant boundaries of sincos (4u near an integer or a half
 * integer), generator uniforms, and random normal doubles in (0, 1). Odd lengths reach the
 * scalar tails of the vector bodies. */
static void transform_paths_are_bit_identical_on_crafted_uniforms(void **state) {
  (void)state;
  enum { N = 6007 };
  double *u = alloc_doubles(N), *ua = alloc_doubles(N), *ub = alloc_doubles(N);
  double *ref = alloc_doubles(2 * N), *got = alloc_doubles(2 * N);
  size_t m = 0;
  for (int j = 0; j < 64; j++) {
    u[m++] = (2.0 * j + 1.0) * 0x1p-53;       /* the smallest uniforms */
    u[m++] = 1.0 - (2.0 * j + 1.0) * 0x1p-53; /* the largest */
  }
  const int expos[] = {-1, -2, -3, -7, -20, -40, -52};
  for (size_t e = 0; e < sizeof expos / sizeof expos[0]; e++) {
    for (int64_t d = -4; d <= 4; d++) { /* m = 1.mant around sqrt(2) */
      uint64_t mant = UINT64_C(0x6A09E667F3BCD) + (uint64_t)d;
      u[m++] = ldexp(1.0 + (double)mant * 0x1p-52, expos[e]);
    }
    u[m++] = ldexp(1.0, expos[e]); /* mantissa 0: f = 0 */
    u[m++] = ldexp(0x1.fffffffffffffp0, expos[e] - 1);
  }
  for (int k = 1; k < 8; k++) { /* 4u near k/2: the quadrant changes or |f| = 1/2 */
    for (int j = -5; j <= 5; j++) {
      u[m++] = k / 8.0 + j * 0x1p-53;
    }
  }
  size_t crafted = m;
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 31);
  dpd_rng_uniform_fill(&rng, u + m, 2048);
  m += 2048;
  uint64_t x = UINT64_C(0x9E3779B97F4A7C15);
  while (m < N) { /* random normal doubles in (0, 1): exponent field 1 ... 1022 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint64_t bits = (x & UINT64_C(0x000FFFFFFFFFFFFF)) | (((x >> 52) % 1022 + 1) << 52);
    double v;
    memcpy(&v, &bits, sizeof v);
    u[m++] = v;
  }
  assert_int_equal(crafted, 282);
  /* Every value is u1 once and u2 once, paired with a shifted partner. */
  for (size_t i = 0; i < N; i++) {
    ua[i] = u[i];
    ub[i] = u[(i * 7 + 3) % N];
  }
  assert_int_equal(dpd__rng_box_muller_isa(ua, ub, ref, N, DPD_ISA_SCALAR), DPD_OK);
  for (size_t i = 0; i < 2 * N; i++) {
    assert_true(isfinite(ref[i]));
  }
  const dpd_isa paths[] = {DPD_ISA_AVX2, DPD_ISA_AVX512};
  const size_t lengths[] = {N, N - 1, 17, 16, 15, 1};
  for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
      size_t n = lengths[l];
      /* From an offset of 1 as well: unaligned loads and stores. */
      for (size_t off = 0; off < 2 && off + n <= N; off++) {
        int st = dpd__rng_box_muller_isa(ua + off, ub + off, got, n, paths[p]);
        if (st != DPD_OK) {
          assert_int_equal(st, DPD_EINVAL);
          continue;
        }
        for (size_t i = 0; i < 2 * n; i++) {
          if (memcmp(&got[i], &ref[2 * off + i], sizeof got[i]) != 0) {
            print_error("path %s, n = %zu, offset %zu: value %zu (u1 = %a, u2 = %a) is %a, "
                        "scalar %a\n",
                        dpd_isa_name(paths[p]), n, off, i, ua[off + i / 2], ub[off + i / 2], got[i],
                        ref[2 * off + i]);
            fail();
          }
        }
      }
    }
  }
  free(u);
  free(ua);
  free(ub);
  free(ref);
  free(got);
}

/* Rules of rng.h: 2m scalar calls == fill(2m); fills start at a block boundary; fill(n1 even)
 * then fill(n2) == fill(n1 + n2); an odd fill drops the last block's second value. */
static void scalar_and_fill_follow_the_consistency_rules(void **state) {
  (void)state;
  const size_t n = 64;
  double all[64], part[64];
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 4);
  dpd_rng_gaussian_fill(&rng, all, n);

  dpd_rng_init(&rng, SEED, 4);
  for (size_t i = 0; i < n; i++) {
    assert_true(dpd_rng_gaussian(&rng) == all[i]);
  }
  dpd_rng_init(&rng, SEED, 4);
  dpd_rng_gaussian_fill(&rng, part, 10);
  dpd_rng_gaussian_fill(&rng, part + 10, 54);
  assert_memory_equal(all, part, n * sizeof *all);

  /* Odd fill: 3 values use blocks 0, 1; the next fill starts at block 2 (value 4). */
  dpd_rng_init(&rng, SEED, 4);
  dpd_rng_gaussian_fill(&rng, part, 3);
  assert_memory_equal(all, part, 3 * sizeof *all);
  dpd_rng_gaussian_fill(&rng, part, 2);
  assert_true(part[0] == all[4] && part[1] == all[5]);

  /* A fill after one scalar call discards the cached second value of block 0. */
  dpd_rng_init(&rng, SEED, 4);
  assert_true(dpd_rng_gaussian(&rng) == all[0]);
  dpd_rng_gaussian_fill(&rng, part, 2);
  assert_true(part[0] == all[2] && part[1] == all[3]);

  /* Scalar Gaussian after a uniform discards the cached uniform (a new block). */
  dpd_rng_init(&rng, SEED, 4);
  (void)dpd_rng_uniform(&rng);
  assert_true(dpd_rng_gaussian(&rng) == all[2]);

  /* n = 0 consumes nothing. */
  dpd_rng_init(&rng, SEED, 4);
  dpd_rng_gaussian_fill(&rng, NULL, 0);
  dpd_rng_uniform_fill(&rng, NULL, 0);
  assert_int_equal(rng.counter, 0);
}

static void uniforms_lie_strictly_inside_the_unit_interval(void **state) {
  (void)state;
  const size_t n = 1u << 22;
  double *u = alloc_doubles(n);
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 13);
  dpd_rng_uniform_fill(&rng, u, n);
  double lo = 1.0, hi = 0.0, sum = 0.0, sumsq = 0.0;
  for (size_t i = 0; i < n; i++) {
    /* u 2^53 is an odd integer in (0, 2^53): 53-bit resolution, never 0 or 1. */
    double k = u[i] * 0x1p53;
    assert_true(u[i] > 0.0 && u[i] < 1.0);
    assert_true(k == floor(k) && fmod(k, 2.0) == 1.0);
    lo = fmin(lo, u[i]);
    hi = fmax(hi, u[i]);
    sum += u[i];
    sumsq += (u[i] - 0.5) * (u[i] - 0.5);
  }
  double N = (double)n;
  assert_true(lo < 1e-5 && hi > 1.0 - 1e-5);
  assert_abs(sum / N, 0.5, 4.0 * sqrt(1.0 / 12.0 / N));
  /* Var((u - 1/2)^2) = 1/80 - 1/144. */
  assert_abs(sumsq / N, 1.0 / 12.0, 4.0 * sqrt((1.0 / 80.0 - 1.0 / 144.0) / N));
  /* The extreme words map to the extreme odd multiples of 2^-53. */
  assert_true(((double)(UINT64_C(0) >> 12) + 0.5) * 0x1p-52 == 0x1p-53);
  assert_true(((double)(UINT64_MAX >> 12) + 0.5) * 0x1p-52 == 1.0 - 0x1p-53);
  free(u);
}

/* Mean, variance, third and fourth moments of N Gaussians against 0, 1, 0, 3 within 4 standard
 * errors (Var z = 1, Var z^2 = 2, Var z^3 = 15, Var z^4 = 96). */
static void gaussian_moments_match_the_standard_normal(void **state) {
  (void)state;
  const size_t n = CHUNK * 128;
  double *z = alloc_doubles(CHUNK);
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 1);
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
  for (size_t done = 0; done < n; done += CHUNK) {
    dpd_rng_gaussian_fill(&rng, z, CHUNK);
    for (size_t i = 0; i < CHUNK; i++) {
      double x = z[i], x2 = x * x;
      m1 += x;
      m2 += x2;
      m3 += x2 * x;
      m4 += x2 * x2;
    }
  }
  double N = (double)n;
  assert_abs(m1 / N, 0.0, 4.0 * sqrt(1.0 / N));
  assert_abs(m2 / N, 1.0, 4.0 * sqrt(2.0 / N));
  assert_abs(m3 / N, 0.0, 4.0 * sqrt(15.0 / N));
  assert_abs(m4 / N, 3.0, 4.0 * sqrt(96.0 / N));
  free(z);
}

/* Tail frequencies P(|Z| > 2), P(|Z| > 3), P(Z > 4), P(Z < -4) within 4 binomial standard
 * errors, separately for even positions (cos half of Box-Muller) and odd ones (sin half). */
static void gaussian_tail_frequencies_match_the_standard_normal(void **state) {
  (void)state;
  const size_t n = CHUNK * 256;
  double *z = alloc_doubles(CHUNK);
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 2);
  const double p2 = erfc(2.0 / sqrt(2.0)), p3 = erfc(3.0 / sqrt(2.0)),
               p4 = 0.5 * erfc(4.0 / sqrt(2.0));
  double c2[2] = {0, 0}, c3[2] = {0, 0}, c4[2] = {0, 0}, c4m[2] = {0, 0};
  for (size_t done = 0; done < n; done += CHUNK) {
    dpd_rng_gaussian_fill(&rng, z, CHUNK);
    for (size_t i = 0; i < CHUNK; i++) {
      double a = fabs(z[i]);
      c2[i & 1u] += a > 2.0;
      c3[i & 1u] += a > 3.0;
      c4[i & 1u] += z[i] > 4.0;
      c4m[i & 1u] += z[i] < -4.0;
    }
  }
  for (size_t parity = 0; parity < 2; parity++) {
    double N = (double)(n / 2);
    assert_abs(c2[parity] / N, p2, 4.0 * sqrt(p2 * (1 - p2) / N));
    assert_abs(c3[parity] / N, p3, 4.0 * sqrt(p3 * (1 - p3) / N));
    assert_abs(c4[parity] / N, p4, 4.0 * sqrt(p4 * (1 - p4) / N));
    assert_abs(c4m[parity] / N, p4, 4.0 * sqrt(p4 * (1 - p4) / N));
  }
  free(z);
}

/* Histogram against the integrated pdf: 60 equal bins on [-6, 6] plus two tails (bins with
 * expected count < 5 are merged into the tails), Pearson chi-square with k - 1 degrees of
 * freedom below k - 1 + 4 sqrt(2 (k - 1)) (4 sigma of its normal approximation). */
static void gaussian_histogram_passes_chi_square(void **state) {
  (void)state;
  const size_t n = CHUNK * 128;
  enum { NBINS = 60 };
  const double lo = -6.0, hi = 6.0, w = (hi - lo) / NBINS;
  double *z = alloc_doubles(CHUNK);
  double count[NBINS + 2] = {0};
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 6);
  for (size_t done = 0; done < n; done += CHUNK) {
    dpd_rng_gaussian_fill(&rng, z, CHUNK);
    for (size_t i = 0; i < CHUNK; i++) {
      double x = z[i];
      size_t b = x < lo ? 0 : x >= hi ? NBINS + 1 : 1 + (size_t)((x - lo) / w);
      if (b > NBINS) {
        b = NBINS + 1;
      }
      count[b] += 1.0;
    }
  }
  /* Merge sparse bins from both ends into the tails. */
  double chi2 = 0.0, N = (double)n;
  size_t k = 0;
  double obs = 0.0, expct = 0.0;
  for (size_t b = 0; b < NBINS + 2; b++) {
    double a = b == 0 ? -INFINITY : lo + (double)(b - 1) * w;
    double c = b == NBINS + 1 ? INFINITY : lo + (double)b * w;
    obs += count[b];
    expct += N * (Phi(c) - Phi(a));
    if (expct >= 5.0 && (b == NBINS + 1 || N * (1.0 - Phi(c)) >= 5.0)) {
      chi2 += (obs - expct) * (obs - expct) / expct;
      k++;
      obs = 0.0;
      expct = 0.0;
    }
  }
  double dof = (double)(k - 1);
  if (!(chi2 < dof + 4.0 * sqrt(2.0 * dof))) {
    print_error("chi2 = %g with %g dof (seed %llu)\n", chi2, dof, (unsigned long long)SEED);
  }
  assert_true(k > 40);
  assert_true(chi2 < dof + 4.0 * sqrt(2.0 * dof));
  free(z);
}

/* Sample correlation of x and y: under independence its standard error is 1/sqrt(n). */
static double correlation(const double *x, const double *y, size_t n, size_t stride) {
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  size_t m = 0;
  for (size_t i = 0; i < n; i += stride, m++) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    syy += y[i] * y[i];
    sxy += x[i] * y[i];
  }
  double M = (double)m;
  double cxy = sxy / M - (sx / M) * (sy / M);
  return cxy / sqrt((sxx / M - (sx / M) * (sx / M)) * (syy / M - (sy / M) * (sy / M)));
}

static void streams_and_seeds_are_uncorrelated(void **state) {
  (void)state;
  const size_t n = 1u << 21;
  double *a = alloc_doubles(n), *b = alloc_doubles(n);
  const double tol = 4.0 / sqrt((double)n);
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 0);
  dpd_rng_gaussian_fill(&rng, a, n);
  /* Streams (s, 0) and (s, 1). */
  dpd_rng_init(&rng, SEED, 1);
  dpd_rng_gaussian_fill(&rng, b, n);
  assert_abs(correlation(a, b, n, 1), 0.0, tol);
  /* Squares too (dependence that a linear correlation would miss). */
  for (size_t i = 0; i < n; i++) {
    b[i] = b[i] * b[i];
  }
  double *a2 = alloc_doubles(n);
  for (size_t i = 0; i < n; i++) {
    a2[i] = a[i] * a[i];
  }
  assert_abs(correlation(a2, b, n, 1), 0.0, tol);
  /* Seeds s and s + 1 on the same stream. */
  dpd_rng_init(&rng, SEED + 1, 0);
  dpd_rng_gaussian_fill(&rng, b, n);
  assert_abs(correlation(a, b, n, 1), 0.0, tol);
  /* Within a stream: lag 1 (the two halves of a Box-Muller pair), lag 2 (consecutive blocks),
   * and the squares of a pair (the radius is shared: r^2 cos^2 and r^2 sin^2 are uncorrelated
   * only if the law is right). */
  assert_abs(correlation(a, a + 1, n - 1, 1), 0.0, tol);
  assert_abs(correlation(a, a + 2, n - 2, 1), 0.0, tol);
  assert_abs(correlation(a2, a2 + 1, n - 1, 2), 0.0, 4.0 / sqrt((double)n / 2.0));
  free(a);
  free(a2);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(uniforms_follow_the_documented_philox4x32_stream_rule),
      cmocka_unit_test(uniform_fill_matches_scalar_uniforms),
      cmocka_unit_test(gaussians_follow_the_documented_box_muller_rule),
      cmocka_unit_test(reinit_reproduces_identical_bits),
      cmocka_unit_test(all_instruction_set_paths_are_bit_identical),
      cmocka_unit_test(transform_paths_are_bit_identical_on_crafted_uniforms),
      cmocka_unit_test(scalar_and_fill_follow_the_consistency_rules),
      cmocka_unit_test(uniforms_lie_strictly_inside_the_unit_interval),
      cmocka_unit_test(gaussian_moments_match_the_standard_normal),
      cmocka_unit_test(gaussian_tail_frequencies_match_the_standard_normal),
      cmocka_unit_test(gaussian_histogram_passes_chi_square),
      cmocka_unit_test(streams_and_seeds_are_uncorrelated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
