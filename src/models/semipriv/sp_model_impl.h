/* model=semipriv: the context setup makes (sp_model.c) and the commands run on (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_SP_MODEL_IMPL_H
#define DPD_SP_MODEL_IMPL_H

#include "core/model_impl.h"
#include "semipriv/sp_files_impl.h"

/* dpd_model_command.uses: replicates of Algorithm 1 (seeds ...); the theory (beta, alpha). */
#define DPD__SP_USES_RUN 1u
#define DPD__SP_USES_THEORY 2u

typedef struct {
  dpd_semipriv_gen_config gc; /* features = law */
  double lambda[64];          /* gc.lambda (k_true - 1 entries) */
  dpd_semipriv_run_config rc;
  dpd__sp_files files; /* features = file:PATH, read by setup */
  double alpha;        /* compare */
  int plot, save_replicates;
  dpd__progress_bridge progress;
} dpd__sp_ctx;

/* The commands (sp_commands.c), dpd_model_command.run on a dpd__sp_ctx. */
#define DPD__SP_COMMAND(name)                                                                      \
  DPD_HIDDEN_FN int name(void *ctx, const dpd_keys *keys, const dpd_run_env *env,                  \
                         dpd_output **out, dpd_err *err)
DPD__SP_COMMAND(dpd__sp_cmd_simulate);
DPD__SP_COMMAND(dpd__sp_cmd_compare);
DPD__SP_COMMAND(dpd__sp_cmd_account);

#endif
