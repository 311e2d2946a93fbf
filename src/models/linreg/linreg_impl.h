/* model=linreg: the context its commands run on (internal).
 * SPDX-License-Identifier: MIT
 *
 * linreg_model.c holds the keys, the command table and the model type; linreg_setup.c turns
 * the keys into the context (setup, workspace_bytes, release) and the pieces every command
 * shares; linreg_run.c and linreg_tune.c hold one run function per command. The science lives
 * in src/linreg/ (problem_spec_impl.h: the problem's text forms and memory models;
 * ode_estimate_impl.h; tune_surface_impl.h). */
#ifndef DPD_LINREG_IMPL_H
#define DPD_LINREG_IMPL_H

#include "core/model_impl.h"
#include "dpdyn/noise.h"
#include "dpdyn/sde.h"
#include "linreg/audit_impl.h"
#include "linreg/dataset_impl.h"
#include "linreg/ode_estimate_impl.h"
#include "linreg/problem_spec_impl.h"
#include "linreg/tune_surface_impl.h"

/* What a command uses (dpd_model_command.uses): setup validates and prepares these. */
enum {
  LR_USES_SIM = 1u << 0,      /* the DP-SGD simulation (seeds, save_replicates) */
  LR_USES_SDE = 1u << 1,      /* the SDE (dt, finite_size) */
  LR_USES_SDE_KEY = 1u << 2,  /* the SDE beside the simulation when the key sde = 1 */
  LR_USES_ODE = 1u << 3,      /* the ODE: method, tolerances, compression, finite_size */
  LR_USES_ODE_ONLY = 1u << 4, /* nothing but the ODE: a spectral problem may do */
  LR_USES_TUNE = 1u << 5,     /* the tuner: its keys, thread-safe methods with bounds */
  LR_USES_SEQUENCE = 1u << 6, /* the step sequence (n-sized arrays), or the key sequence */
  LR_USES_AUDIT = 1u << 7     /* the privacy audit (linreg/audit_impl.h) */
};

/* Everything a linreg command needs, validated from the keys. */
typedef struct linreg_run {
  const dpd_run_env *env; /* borrowed for the run */
  dpd_keys *keys;         /* borrowed: tune records its optimum as the values in effect */
  int sequence;           /* account --sequence: only delta was read */
  size_t d, n;
  double gamma, zeta, c;
  dpd__linreg_privacy priv;
  dpd_noise_spec noise;
  double dt; /* sde step (0 = 1/n) */
  int with_sde, uses_ode;
  int full; /* the per-coordinate problem is built */
  size_t seeds, grid;
  int save_replicates; /* 0 none, 1 replicates.tsv, 2 also replicates_trajectory.tsv */
  uint64_t seed;
  int threads, plot;
  dpd_ode_method method;
  double rtol, atol;
  int compress;        /* 0 off, 1 on, 2 auto */
  int finite_size;     /* DPD_FINITE_OFF | ON | AUTO */
  double compress_tol; /* target of the a-posteriori compression error */
  dpd_linreg_problem_config pc;
  dpd__linreg_inputs inputs;       /* storage of file and list inputs */
  dpd__linreg_spectral spectral;   /* the bands' moments (its cc: nodes, bands per decade) */
  dpd_linreg_problem *problem;     /* the full problem; NULL when only the ODE runs, spectrally */
  dpd_linreg_problem *ode_problem; /* what the ODE solves: a spectral problem, or `problem` */
  dpd_schedule *schedule;
  dpd_schedule_config schedule_cfg; /* as created (table pointers into sched_cols) */
  double *sched_cols[2];
  double memory_estimate; /* bytes the command is expected to need */
  const char *driver;     /* the key whose value drives it */
  int d_from_spectrum;    /* d implied by a levels:/file: spectrum (not given) */
  dpd__progress_bridge progress;
  dpd_ode_config oc;          /* the ODE's (bounds off) */
  dpd_linreg_sim_config simc; /* the simulation's */
  dpd_linreg_sde_config sdec; /* the SDE's */
  dpd__tune_options tune;
  dpd__linreg_dataset ds; /* features=file: (ds.on) */
} linreg_run;

/* The model type's operations (model.h). */
DPD_HIDDEN_FN int dpd__linreg_setup(const dpd_model_command *c, dpd_keys *keys,
                                    const dpd_run_env *env, void **ctx, dpd_err *err);
DPD_HIDDEN_FN void dpd__linreg_release(void *ctx);
DPD_HIDDEN_FN double dpd__linreg_workspace_bytes(const void *ctx, const dpd_model_command *c,
                                                 const char **driver);
/* Builds the problem(s) of a set-up context (the first step of every run). */
DPD_HIDDEN_FN int dpd__linreg_build(linreg_run *r, dpd_err *err);
/* The output every linreg command starts from: headline, the run's scalars, privacy. */
DPD_HIDDEN_FN int dpd__linreg_output_begin(const dpd_keys *keys, const linreg_run *r,
                                           dpd_output **out, dpd_err *err);
/* The run of each command (dpd_model_command.run). */
#define LR_RUN(name)                                                                               \
  DPD_HIDDEN_FN int name(void *ctx, const dpd_keys *keys, const dpd_run_env *env,                  \
                         dpd_output **out, dpd_err *err)
LR_RUN(dpd__linreg_simulate);
LR_RUN(dpd__linreg_sde);
LR_RUN(dpd__linreg_ode);
LR_RUN(dpd__linreg_compare);
LR_RUN(dpd__linreg_account);
LR_RUN(dpd__linreg_tune);
LR_RUN(dpd__linreg_audit);

#endif
