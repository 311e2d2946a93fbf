/* model=semipriv: the context its setup makes and its commands run on (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_SP_MODEL_IMPL_H
#define DPD_SP_MODEL_IMPL_H

#include <stddef.h>

#include "core/model_impl.h"
#include "dpdyn/semipriv.h"
#include "semipriv/sp_files_impl.h"

/* What a command uses (dpd_model_command.uses): replicates of Algorithm 1 (the public and test
 * sets, seeds, center, threads), the theory beside them (beta, alpha). */
#define DPD__SP_USES_RUN 1u
#define DPD__SP_USES_THEORY 2u
#define DPD__SP_MAX_LAMBDA 64 /* entries of the lambda list (k_true - 1) */

typedef struct {
  dpd_semipriv_gen_config gc; /* features = law */
  double lambda[DPD__SP_MAX_LAMBDA];
  dpd_semipriv_run_config rc;
  dpd__sp_files files; /* features = file:PATH, read by setup */
  size_t steps_given;  /* 0: n^2 */
  double alpha;        /* compare */
  int plot;
  int save_replicates; /* 1: replicates.tsv */
  dpd__progress_bridge progress;
} dpd__sp_ctx;

/* The commands (sp_commands.c): dpd_model_command.run on a dpd__sp_ctx. */
DPD_HIDDEN_FN int dpd__sp_cmd_simulate(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                   dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__sp_cmd_compare(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                  dpd_output **out, dpd_err *err);
DPD_HIDDEN_FN int dpd__sp_cmd_account(void *ctx, const dpd_keys *keys, const dpd_run_env *env,
                                  dpd_output **out, dpd_err *err);

#endif
