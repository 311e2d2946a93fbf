/* model=nc: the context setup (nc_setup.c) makes and the commands (nc_commands.c) run on.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NC_MODEL_IMPL_H
#define DPD_NC_MODEL_IMPL_H

#include "core/model_impl.h"
#include "dpdyn/nc.h"
#include "dpdyn/nc_pca.h"
#include "nc/nc_impl.h"

/* What a command uses (dpd_model_command.uses): setup validates and prepares that. */
enum {
  NC_USES_TRAIN = 1u,    /* the training and privacy keys (simulate, compare, account) */
  NC_USES_REPLICAS = 2u, /* replicates on test rows: test_features required with files */
  NC_USES_DIAGNOSE = 4u  /* the diagnostics: the law's keys alone, x_bound optional */
};

typedef struct {
  unsigned uses;
  dpd_nc_problem_config pc;
  dpd_nc_sim_config sc;
  dpd_nc_pca_config pca; /* the PCA fix (pca_on: pca_k > 0) */
  int pca_on;
  double delta;      /* of the reported epsilon */
  double multiplier; /* noise multiplier m = sigma / G (0: non-private) */
  int budget; /* the key that set the noise: 0 epsilon, 1 mu, 2 zcdp, 3 sigma; -1: none */
  const char *budget_name; /* its name */
  int plot;
  int save_replicates; /* 1: replicates.tsv */
  dpd__progress_bridge progress;
  const dpd_run_env *env;
  int from_file;      /* features = file:PATH (0: the ETF law) */
  double file_bytes;  /* memory the files take once read (estimate, before reading) */
  dpd__nc_files files; /* read by setup */
  dpd__nc_dpsgd dpsgd;  /* trainer = dpsgd */
  dpd__nc_resize resize;
} nc_ctx;

DPD_HIDDEN_FN int dpd__nc_setup(const dpd_model_command *c, dpd_keys *keys,
                                const dpd_run_env *env, void **ctx, dpd_err *err);
DPD_HIDDEN_FN void dpd__nc_release(void *ctx);
DPD_HIDDEN_FN double dpd__nc_workspace_bytes(const void *ctx, const dpd_model_command *c,
                                             const char **driver);

/* The commands (nc_commands.c), dpd_model_command.run. */
#define NC_COMMAND(name)                                                                           \
  DPD_HIDDEN_FN int name(void *ctx, const dpd_keys *keys, const dpd_run_env *env,                  \
                         dpd_output **out, dpd_err *err)
NC_COMMAND(dpd__nc_simulate);
NC_COMMAND(dpd__nc_compare);
NC_COMMAND(dpd__nc_account);
NC_COMMAND(dpd__nc_diagnose);

#endif
