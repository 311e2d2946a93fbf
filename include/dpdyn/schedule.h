/* Learning-rate schedules eta~(t) on [0, 1] and the calibrated noise (docs/math.md §1.4, §1.8).
 * SPDX-License-Identifier: MIT
 *
 * Families (t in [0, 1]; the table of families is below, their formulas in families.c):
 *   const       eta0                               (output perturbation when private)
 *   sqrt        eta0 sqrt(1 - t)                   (constant noise)
 *   hyperbolic  eta0 / (1 + a t)
 *   optimal     c1 / (t + gamma max(c2, c3/rho))   (c3/rho = 0 when rho = inf)
 *   file        linear interpolation of a table (t_k, eta_k) covering [0, 1]
 *   step        eta0 factor^j on [t_j, t_{j+1}), drop times t_j = j/(drops+1), j = 1..drops
 *   cosine      eta_min + (eta0 - eta_min)(1 + cos(pi t))/2
 * Discrete steps (n steps, k = 0..n-1): eta_k = eta~(k/n)/n and, for privacy
 * rho, rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2 with eta_n := 0.
 * Continuous noise: rho^2 sigma~^2(t) = -d/dt[eta~(t)^2]. */
#ifndef DPD_SCHEDULE_H
#define DPD_SCHEDULE_H

#include <stddef.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DPD_SCHEDULE_CONST = 0,
  DPD_SCHEDULE_SQRT,
  DPD_SCHEDULE_HYPERBOLIC,
  DPD_SCHEDULE_OPTIMAL,
  DPD_SCHEDULE_TABLE,
  DPD_SCHEDULE_STEP,
  DPD_SCHEDULE_COSINE,
  DPD_SCHEDULE_KIND_USER = 100 /* the first kind for families registered at run time */
} dpd_schedule_kind;

typedef struct {
  dpd_schedule_kind kind;
  double eta0;    /* const, sqrt, hyperbolic: eta~(0) > 0 */
  double a;       /* hyperbolic: decay rate, a > -1 (a < 0 increases) */
  double c1, c2, c3; /* optimal: c1 > 0, c2 > 0, c3 >= 0 */
  double factor;  /* step: multiplier at each drop, > 0 (<= 1 for a decreasing schedule) */
  size_t drops;   /* step: number of equally spaced drops, >= 1 */
  double eta_min; /* cosine: final value, 0 <= eta_min (<= eta0 for a decreasing schedule) */
  double gamma;   /* optimal: d/n */
  double rho;     /* optimal: privacy (INFINITY allowed) */
  const double *table_t;   /* table: borrowed during create only (copied) */
  const double *table_eta; /* table: borrowed during create only (copied) */
  size_t table_len;        /* table: >= 2, t strictly increasing from 0 to 1 */
} dpd_schedule_config;

typedef struct dpd_schedule dpd_schedule; /* opaque */

/* Defaults: const, eta0 = 1, a = 1, c1 = 1, c2 = 1, c3 = 0, gamma = 1, rho = inf. */
DPD_API dpd_schedule_config dpd_schedule_config_default(void);

/* Validates and copies `cfg`. On DPD_EINVAL, `err` names the parameter, its
 * value and the allowed range. *out is returned-owned (dpd_schedule_free). */
DPD_API int dpd_schedule_create(const dpd_schedule_config *cfg, dpd_schedule **out, dpd_err *err);
DPD_API void dpd_schedule_free(dpd_schedule *s);

/* Name of the family ("const", "sqrt", "hyperbolic", "optimal", "file", ..., or a registered
 * family's). */
DPD_API const char *dpd_schedule_name(const dpd_schedule *s);

/* eta~(t), t in [0, 1]. */
DPD_API double dpd_schedule_eval(const dpd_schedule *s, double t);

/* d/dt [eta~(t)^2] (finite at t = 1 for sqrt, where it equals -eta0^2). */
DPD_API double dpd_schedule_dsq_eval(const dpd_schedule *s, double t);

/* Discontinuities of eta~ inside (0, 1) (step schedules only): returns their
 * number and writes the first min(number, cap) jump times t[k] (increasing)
 * and jumps of eta~^2, dsq[k] = eta~(t-)^2 - eta~(t+)^2 (positive for a drop);
 * cap = 0 (t, dsq may be NULL) only counts. The calibrated noise of a
 * drop is an impulse: the risk jumps by 2 c^2 gamma^2 dsq / rho^2 there, as at
 * the release (docs/math.md §1.7). dpd_schedule_dsq_eval excludes these impulses. */
DPD_API size_t dpd_schedule_jumps(const dpd_schedule *s, double *t, double *dsq, size_t cap);

/* Supremum of eta~ over [0, 1] (for the stability limit 2/gamma). */
DPD_API double dpd_schedule_sup(const dpd_schedule *s);

/* 1 if eta~ is non-increasing on [0, 1] (required when rho is finite). */
DPD_API int dpd_schedule_is_nonincreasing(const dpd_schedule *s);

/* Per-step sizes eta[0..n) and noise sigma[0..n) for n steps at privacy rho
 * (sigma = 0 everywhere when rho = INFINITY). Arrays are caller-owned. */
DPD_API void dpd_schedule_steps(const dpd_schedule *s, size_t n, double rho, double *eta,
                                double *sigma);

/* The families as a table. A family is one entry: its name, the config fields it reads, its
 * tunable parameters, one line of help and its behaviour. The key `schedule` of a model, its
 * "allowed" list, the keys that apply to each family, --help, the schedule object above (and so
 * simulate, sde, ode) and `tune` all learn the families from the table. Adding a family: one
 * block of formulas and one table line in families.c, or one dpd_schedule_family_register call
 * from outside the library (docs/architecture.md). */
typedef struct {
  const char *key;    /* "eta0" */
  size_t offset;      /* offsetof(dpd_schedule_config, eta0) */
  int integer;        /* 1: a size_t field (drops), 0: a double */
} dpd_schedule_param;

/* The behaviour of a family is a set of pure functions of a config whose `kind` is the family's
 * (thread-safe, no allocation). The schedule object calls them on its own copy of the config,
 * in which table_t and table_eta point to its own copies of the table (families with
 * takes_path). */
typedef struct dpd_schedule_family {
  const char *name;     /* "const", ..., "file": what users type; unique */
  int takes_path;       /* 1: written name:PATH (file); the table comes in table_t/table_eta */
  dpd_schedule_kind kind; /* its value of dpd_schedule_config.kind; unique */
  const dpd_schedule_param *params; /* NULL-key terminated: the parameters it reads */
  const char *summary;  /* one line of help */
  /* The parameters `tune` may vary, space-separated names of dpd_tune_param ("c eta0",
   * "c eta0 a", "c c1 c2 c3"; "c" is the clipping scale), and the set it tunes when none is
   * asked. NULL: tune does not support the family (file). */
  const char *tunables;
  const char *tune_default;
  /* DPD_OK, or DPD_EINVAL naming the parameter, its value and the allowed range. Called by
   * dpd_schedule_create before anything else; the functions below see a valid config. */
  int (*validate)(const dpd_schedule_config *cfg, dpd_err *err);
  double (*eval)(const dpd_schedule_config *cfg, double t);     /* eta~(t), t in [0, 1] */
  double (*dsq_eval)(const dpd_schedule_config *cfg, double t); /* d/dt eta~^2 between jumps */
  /* The jumps of eta~ inside (0, 1), as dpd_schedule_jumps; NULL: none (continuous). */
  size_t (*jumps)(const dpd_schedule_config *cfg, double *t, double *dsq, size_t cap);
  double (*sup)(const dpd_schedule_config *cfg);           /* sup of eta~ over [0, 1] */
  int (*is_nonincreasing)(const dpd_schedule_config *cfg); /* 1 if eta~ never increases */
  /* tune: sup eta~ / eta~(0) where it does not depend on the amplitude eta0 (hyperbolic with
   * a < 0: 1/(1 + a)); NULL: 1 (tune then checks the limit at each point). */
  double (*sup_ratio)(const dpd_schedule_config *cfg);
} dpd_schedule_family;

/* The i-th family (NULL past the end): the built-in families in a fixed order, then the
 * registered ones in the order of registration. */
DPD_API const dpd_schedule_family *dpd_schedule_family_at(size_t i);
/* The family of a `schedule` value ("sqrt", "file:PATH"), NULL if none. */
DPD_API const dpd_schedule_family *dpd_schedule_family_lookup(const char *spec);
/* The family of kind `kind`, NULL if none. */
DPD_API const dpd_schedule_family *dpd_schedule_family_get(dpd_schedule_kind kind);
/* Whether `key` is a parameter of family f. */
DPD_API int dpd_schedule_family_reads(const dpd_schedule_family *f, const char *key);
/* "const, sqrt, ..., file:PATH": the allowed values, for messages (truncated to cap). */
DPD_API void dpd_schedule_family_list(char *buf, size_t cap);
/* The tunable parameters of family f, space-separated ("c eta0 a"); "" when tune does not
 * support it (file) or f is NULL. Static. dpd_tune_family_params_get (tune.h) turns them into
 * dpd_tune_param flags. */
DPD_API const char *dpd_schedule_family_tunables_get(const dpd_schedule_family *f);

/* Registers a family (borrowed: f, its params and strings must outlive every use: static
 * storage in practice). Its kind is DPD_SCHEDULE_KIND_USER or above; a config with that kind
 * then creates schedules of the family, and its name is a value of the key `schedule`.
 * Returns DPD_OK; DPD_EINVAL naming the field for an empty or ':'-holding name, a name or kind
 * already in use, a kind below DPD_SCHEDULE_KIND_USER, or a missing params, validate, eval,
 * dsq_eval, sup or is_nonincreasing; DPD_ENOMEM when the registry (32 families) is full.
 * Registration is process-wide, the documented exception to "no mutable globals" (as FFTW's
 * planner): register before the runs that use the family; it is safe against concurrent
 * registrations and lookups, and a family cannot be removed. */
DPD_API int dpd_schedule_family_register(const dpd_schedule_family *f, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_SCHEDULE_H */
