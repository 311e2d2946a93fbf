/* Gaussian linear regression in the eigenbasis of Sigma (docs/math.md §1.1-1.3).
 * SPDX-License-Identifier: MIT
 *
 * A dpd_linreg_problem holds everything a run needs about the data law:
 * the eigenvalues lambda_i of Sigma (normalised to mean 1, Tr Sigma = d), the
 * components of theta* in the eigenbasis, and the same spectrum grouped into
 * distinct eigenvalues with multiplicities (for the ODE). Nothing d x d is ever
 * formed: simulation in the eigenbasis has the same law for every risk. */
#ifndef DPD_LINREG_H
#define DPD_LINREG_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/noise.h"
#include "dpdyn/replicate.h"
#include "dpdyn/schedule.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DPD_SPECTRUM_ISO = 0,  /* lambda_i = 1 */
  DPD_SPECTRUM_LEVELS,   /* values[k] with multiplicity mult[k] */
  DPD_SPECTRUM_POWERLAW, /* lambda_i proportional to i^-alpha */
  DPD_SPECTRUM_LIST      /* values[k] with multiplicity mult[k] (from a file) */
} dpd_spectrum_kind;

typedef enum {
  DPD_THETA_RANDOM = 0, /* uniform direction, stream (seed, DPD_RNG_STREAM_PROBLEM) */
  DPD_THETA_FLAT,       /* (u_i^T theta*)^2 = |theta*|^2 / d */
  DPD_THETA_GIVEN /* components in the eigenbasis (rescaled to theta_norm unless theta_norm <= 0) */
} dpd_theta_kind;

typedef struct {
  size_t d; /* dimension, >= 1 */
  dpd_spectrum_kind spectrum;
  double alpha;         /* powerlaw exponent, > 0 */
  const double *values; /* levels/list: eigenvalues > 0 (borrowed during create) */
  const size_t *mult;   /* levels/list: multiplicities >= 1, summing to d (borrowed) */
  size_t nvalues;
  dpd_theta_kind theta;
  double theta_norm;         /* |theta*| > 0 */
  const double *theta_given; /* DPD_THETA_GIVEN: d components in the eigenbasis (borrowed) */
  uint64_t seed;             /* master seed (theta* draw) */
} dpd_linreg_problem_config;

typedef struct {
  size_t d;
  double *lambda;       /* [d] eigenvalues, mean 1, non-increasing */
  double *sqrt_lambda;  /* [d] */
  double *theta_star;   /* [d] theta* in the eigenbasis, in the order of lambda */
  size_t ngroups;       /* distinct eigenvalues */
  double *group_lambda; /* [ngroups] */
  double *group_mult;   /* [ngroups] multiplicities (as doubles) */
  double *group_S0; /* [ngroups] sum over the group of (d/2) (theta0_i - theta*_i)^2, theta0 = 0 */
  double lambda_min, lambda_max;
  double mean_lambda_sq; /* (1/d) sum lambda_i^2 */
  int isotropic;         /* all lambda_i == 1 */
  /* Spectral problems (dpd_linreg_problem_compress, dpd_linreg_problem_create_spectral) carry
   * only the groups, for the ODE: lambda, sqrt_lambda and theta_star are NULL, and a group may
   * be a quadrature node of one of the two spectral measures (see "Spectral compression"). */
  int spectral;            /* 1: groups only */
  double *group_tol;       /* [ngroups] share of the ODE's absolute tolerance of each group (the
                              group's multiplicity for exact groups); NULL: group_mult */
  size_t compressed_bands; /* bands replaced by Gauss nodes (0: every group is exact) */
  int nodes_per_band;      /* the nodes per band and measure used (0: none compressed) */
} dpd_linreg_problem;

DPD_API dpd_linreg_problem_config dpd_linreg_problem_config_default(void);

/* Builds the problem. *out is returned-owned (dpd_linreg_problem_free).
 * DPD_EINVAL with a reason naming the field, value and allowed range. */
DPD_API int dpd_linreg_problem_create(const dpd_linreg_problem_config *cfg,
                                      dpd_linreg_problem **out, dpd_err *err);
DPD_API void dpd_linreg_problem_free(dpd_linreg_problem *p);

/* ---- Spectral compression (docs/ode.md, "Spectral compression") ----
 *
 * Given the scalar path P(t), the ODE of docs/math.md §1.7 is linear in each group, and R(t) needs
 * only integrals of exp(-2 lambda A) (A >= 0) against two spectral measures: the initial energy
 * mu_0 = sum_i lambda_i D_i(0)/d delta_{lambda_i} and the forcing measure
 * mu_f = sum_i (lambda_i/d) delta_{lambda_i} (the SGD-noise term is lambda times the privacy
 * term's integrand). Per logarithmic band of the spectrum (bands_per_decade per factor 10 down
 * from lambda_max), a band with at most `nodes` distinct eigenvalues keeps them as exact groups;
 * a larger band is replaced by the `nodes`-point Gauss rule of each measure restricted to the
 * band (modified Chebyshev moments on the band, Gautschi's modified Chebyshev algorithm, the
 * eigen-decomposition of the Jacobi matrix by LAPACK dstev). A node (x, W) of mu_0 becomes a
 * group with lambda = x, multiplicity 0 and S_0 = d W / x; a node of mu_f a group with
 * lambda = x, multiplicity d W / x and S_0 = 0. lambda_min, lambda_max and R(0) are those of the
 * full spectrum, so the bounds and the release jump are unchanged. */
typedef struct {
  int nodes;            /* Gauss nodes per band and measure, 1 .. DPD_COMPRESS_MAX_NODES
                           (default 6) */
  int bands_per_decade; /* >= 1 (default 3) */
} dpd_linreg_compress_config;

#define DPD_COMPRESS_MAX_NODES 32

DPD_API dpd_linreg_compress_config dpd_linreg_compress_config_default(void);

/* A spectrum ready for compression: per band, its exact eigenvalues (bands of at most
 * cc->nodes) or the first 2 cc->nodes Chebyshev moments of both measures. Built once (the only
 * pass over the eigenvalues), it gives the spectral problem at any nodes <= cc->nodes cheaply
 * (dpd_linreg_spectrum_problem): the a-posteriori estimate (2 more nodes) costs no second pass.
 * Opaque; dpd_linreg_spectrum_free. */
typedef struct dpd_linreg_spectrum dpd_linreg_spectrum;

/* From a built problem: O(ngroups). */
DPD_API int dpd_linreg_spectrum_from_problem(const dpd_linreg_problem *p,
                                             const dpd_linreg_compress_config *cc,
                                             dpd_linreg_spectrum **out, dpd_err *err);
/* Straight from a configuration (see dpd_linreg_problem_create_spectral); the pass over the
 * Gaussians of a random theta* runs on `threads` OpenMP threads (<= 0: all) in fixed chunks
 * added in order, so the result does not depend on the thread count. */
DPD_API int dpd_linreg_spectrum_from_config(const dpd_linreg_problem_config *cfg,
                                            const dpd_linreg_compress_config *cc, int threads,
                                            dpd_linreg_spectrum **out, dpd_err *err);
/* The spectral problem with `nodes` (1 .. the spectrum's cc->nodes) Gauss nodes per band. */
DPD_API int dpd_linreg_spectrum_problem(const dpd_linreg_spectrum *s, int nodes,
                                        dpd_linreg_problem **out, dpd_err *err);
DPD_API void dpd_linreg_spectrum_free(dpd_linreg_spectrum *s);

/* The spectral problem of a built problem (any spectrum and theta*): O(ngroups) time and
 * memory. *out is returned-owned (dpd_linreg_problem_free). */
DPD_API int dpd_linreg_problem_compress(const dpd_linreg_problem *p,
                                        const dpd_linreg_compress_config *cc,
                                        dpd_linreg_problem **out, dpd_err *err);

/* The spectral problem straight from a configuration, without any array of d numbers:
 * iso, levels and powerlaw spectra with theta* flat or random. Powerlaw bands of many
 * eigenvalues take their moments from Gregory's summation formula (an integral by
 * Gauss-Legendre in log i plus end corrections up to fifth differences), so with theta* flat the
 * cost does not grow with d; a random theta* needs its d Gaussians, drawn in one streaming pass
 * (the same draws as dpd_linreg_problem_create). Other spectra and a given theta*: DPD_EINVAL
 * (build the problem, then compress it). */
DPD_API int dpd_linreg_problem_create_spectral(const dpd_linreg_problem_config *cfg,
                                               const dpd_linreg_compress_config *cc,
                                               dpd_linreg_problem **out, dpd_err *err);

/* Excess risk R(theta) = (1/2) sum lambda_i e_i^2 of an error vector e = theta - theta*. */
DPD_API double dpd_linreg_excess_risk(const dpd_linreg_problem *p, const double *e);

/* Excess risk at theta_0 = 0: (1/2) sum lambda_i theta*_i^2 (spectral problems: from the
 * groups, (1/d) sum_j lambda_j S_j(0)). */
DPD_API double dpd_linreg_initial_risk(const dpd_linreg_problem *p);

/* ---- The setting: what the simulation, the SDE and the ODE share ----
 *
 * The parameters of the learning problem that every description of DP-SGD on a given
 * dpd_linreg_problem must agree on: the sample count (gamma = d/n with the problem's d), the
 * label noise, the clipping scale and the privacy. Build the three configurations from one
 * setting (dpd_linreg_sim_config_init, dpd_linreg_sde_config_init in sde.h, dpd_ode_config_init
 * in ode.h) and they cannot disagree; configurations built separately can be checked against
 * each other or against a setting with dpd_linreg_setting_check (linreg_setting.h). Every result
 * records what it was computed with (dpd_linreg_sim_result.setting, dpd_ode_result.config). */
typedef struct {
  size_t n;            /* samples = steps, >= 1 (default 1000); the ODE's gamma is d/n */
  double zeta;         /* label-noise standard deviation, finite >= 0 (default 0.5) */
  dpd_noise_law noise; /* label-noise law (default DPD_NOISE_GAUSSIAN) */
  double noise_nu;     /* Student-t degrees of freedom, finite > 2, read only when noise =
                          DPD_NOISE_STUDENT (default 5) */
  double c;            /* clipping scale > 0, C = c sqrt(d); INFINITY = no clipping (default) */
  double rho;          /* privacy > 0 (rho^2/2-zCDP); INFINITY = no noise (default); a finite rho
                          needs a finite c */
} dpd_linreg_setting;

/* The default setting (values listed next to each field): those of the default simulation,
 * SDE and ODE configurations. */
DPD_API dpd_linreg_setting dpd_linreg_setting_default(void);

/* ---- The algorithm: one-pass DP-SGD with per-sample clipping (docs/math.md §1.3) ---- */

/* The fields n, zeta, noise, noise_nu, c and rho are those of dpd_linreg_setting (same meaning,
 * same defaults); dpd_linreg_sim_config_init sets them from one. */
typedef struct {
  size_t n;                 /* samples = steps, >= 1 */
  double zeta;              /* label-noise standard deviation, >= 0 */
  dpd_noise_law noise;      /* label-noise law (default DPD_NOISE_GAUSSIAN) */
  double noise_nu;          /* Student-t degrees of freedom, finite > 2, used when noise =
                               DPD_NOISE_STUDENT (default 5) */
  double c;                 /* clipping scale, C = c sqrt(d); INFINITY = no clipping */
  double rho;               /* privacy; INFINITY = no noise */
  size_t seeds;             /* replicates, >= 1 */
  uint64_t seed;            /* master seed: replicate r uses stream (seed, r) */
  size_t grid;              /* recorded times t_j = j/(grid-1), j = 0..grid-1, grid >= 2 */
  int threads;              /* OpenMP threads (<= 0: all); results do not depend on it */
  dpd_progress_fn progress; /* replicates done, from the calling thread (replicate.h); NULL:
                               none (default). Returning non-zero stops the run (DPD_ECANCELLED) */
  void *progress_user;      /* passed to progress (borrowed; default NULL) */
} dpd_linreg_sim_config;

/* Release convention (docs/math.md §1.7, "Last iterate"), the same for the simulation, the
 * SDE and the ODE (dpd_ode_result): the trajectory is the training path *before release*. The
 * released iterate theta_n carries the last step's privacy noise (sigma_{n-1}, large: rho^2
 * sigma_{n-1}^2 = eta_{n-1}^2), which the ODE describes as a jump at t = 1 and not as part of
 * R(t). So risk_mean/risk_se/risk_replicates at a grid point of step n (always the last one,
 * t = 1) hold theta_n without that noise, before_release; the released value is final_risk
 * (final_replicates per replicate), and release_jump = final_risk - before_release. Compare
 * risk_mean[grid-1] with dpd_ode_result.risk[grid-1] (both R(1-)), and final_risk with
 * dpd_ode_result.final_risk (both R_out). Without privacy noise (rho = inf) the two agree. */
typedef struct {
  size_t grid;
  double *t;                /* [grid] */
  double *risk_mean;        /* [grid] mean excess risk over replicates at step round(t n), before
                               release: risk_mean[grid-1] == before_release */
  double *risk_se;          /* [grid] standard error of the mean */
  double *clip_fraction;    /* [grid] fraction of clipped steps in (t_{j-1}, t_j], 0 at j = 0 */
  double *risk_replicates;  /* [seeds * grid], row-major by replicate, before release */
  double *final_replicates; /* [seeds] released excess risk of each replicate */
  size_t seeds;
  double final_risk, final_risk_se;         /* released iterate theta_n (R_out) */
  double before_release, before_release_se; /* theta_n without the last step's noise (R(1-)) */
  double release_jump;                      /* final_risk - before_release */
  double release_jump_se;     /* standard error of the mean of the replicates' jumps (paired) */
  double clip_fraction_total; /* over all steps and replicates */
  /* Per replicate, for per-replicate output (row r is replicate r; the means above are their
   * averages, reduced in replicate order): */
  double *clip_replicates;           /* [seeds * grid]: replicate r's clip_fraction */
  double *clip_total_replicates;     /* [seeds]: replicate r's clip_fraction_total */
  double *before_release_replicates; /* [seeds]: replicate r's before_release (== its
                                        risk_replicates row's last value) */
  dpd_linreg_setting setting;        /* the setting it was computed with (from the config) */
} dpd_linreg_sim_result;

DPD_API dpd_linreg_sim_config dpd_linreg_sim_config_default(void);

/* dpd_linreg_sim_config_default() with n, zeta, noise, noise_nu, c and rho from `setting`
 * (borrowed for the call). Pure; validation happens in dpd_linreg_sim_run. */
DPD_API dpd_linreg_sim_config dpd_linreg_sim_config_init(const dpd_linreg_setting *setting);

/* The setting of a simulation configuration (its n, zeta, noise, noise_nu, c, rho). Pure. */
DPD_API dpd_linreg_setting dpd_linreg_sim_config_setting_get(const dpd_linreg_sim_config *cfg);

/* Runs cfg->seeds replicates of DP-SGD on `problem` with `schedule`.
 * Results are bit-identical for any thread count. *out is returned-owned
 * (dpd_linreg_sim_result_free). Returns DPD_EINVAL for bad config (n, seeds
 * or grid too small, c <= 0, rho <= 0, zeta < 0, finite rho with c = inf, an
 * increasing schedule with finite rho, an unknown noise law, noise_nu not
 * finite or <= 2 with the Student-t law) and DPD_ENONFINITE, naming the
 * replicate and step, if an iterate diverges.
 * Random numbers: replicate r uses stream (cfg->seed, r) (rng.h); step k
 * makes one Gaussian fill of d + 1 (+ d when sigma_k > 0) values used as g
 * (x = sqrt(lambda) .* g), the label-noise Gaussian G, and the privacy noise
 * xi. The label noise is z = zeta G for the Gaussian law; zeta sign(G) for
 * Rademacher; sign(G) (zeta/sqrt 2) (-log erfc(|G|/sqrt 2)) for Laplace (the
 * inverse CDF of the uniform erfc(|G|/sqrt 2)); so these three laws consume
 * the stream identically, and runs with the same seed share g and xi. For
 * Student-t, z = zeta sqrt((nu - 2)/V) G with V = 2 dpd_rng_gamma_sample(nu/2)
 * drawn from the blocks right after the fill (a random number of them); the
 * next step's fill starts at the next unused block.
 * Grid point j records the risk at step k_j = round(j n / (grid - 1)) (ties
 * up); k_{grid-1} = n, recorded before release (the release convention
 * above: final_risk is the released iterate). Prints nothing: progress goes
 * to the optional cfg->progress (replicate.h), and a stop it requests returns
 * DPD_ECANCELLED. Thread-safe: uses OpenMP internally, shares nothing between
 * calls. */
DPD_API int dpd_linreg_sim_run(const dpd_linreg_problem *problem, const dpd_schedule *schedule,
                               const dpd_linreg_sim_config *cfg, dpd_linreg_sim_result **out,
                               dpd_err *err);
DPD_API void dpd_linreg_sim_result_free(dpd_linreg_sim_result *r);

#ifdef __cplusplus
}
#endif
#endif /* DPD_LINREG_H */
