/* model=nc: the keys and outputs of the PCA fix (pca_k, n_public, pca_center); nc_pca_model.c.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NC_PCA_MODEL_H
#define DPD_NC_PCA_MODEL_H

#include "dpdyn/keys.h"
#include "dpdyn/nc_pca.h"
#include "core/model_impl.h"

/* The PCA keys of a run: *on = 0 when pca_k = 0. Validates pca_k <= p, n_public, and refuses
 * test_shift = adversarial with pca_k (naming the keys). */
DPD_HIDDEN_FN int dpd__nc_pca_keys(dpd_keys *keys, const dpd_nc_problem_config *pc,
                                   dpd_nc_pca_config *cfg, int *on, dpd_err *err);

/* Bytes the PCA fix adds to a run (0 when off): the PCA, the projection blocks and the
 * projected features of every replicate in flight. */
DPD_HIDDEN_FN double dpd__nc_pca_bytes(const dpd_nc_problem_config *pc,
                                       const dpd_nc_pca_config *cfg, int on, size_t threads);

/* The problem the simulator runs: the ETF problem of pc (off), or its projection (on; *base
 * and *pca receive the ETF problem and the PCA object, both returned-owned; *problem is
 * (*pca)->problem, not to be freed by itself). Pins OpenBLAS to one thread (bit-identical
 * results for any `threads`). */
DPD_HIDDEN_FN int dpd__nc_problem_build(const dpd_nc_problem_config *pc,
                                        const dpd_nc_pca_config *cfg, int on,
                                        dpd_nc_problem **problem, dpd_nc_problem **base,
                                        dpd_nc_pca **pca, dpd_err *err);

/* summary.json facts of the PCA: pca_k, n_public, pca_center, pca_route, pca_eigenvalues,
 * pca_trace, pca_x_bound, pca_etf_residual, pca_etf_energy, pca_beta0, and (K = 2, rho
 * finite) samples_thm41 at gamma = 0.05. rho: the zCDP of the whole run. */
DPD_HIDDEN_FN int dpd__nc_pca_output(const dpd_nc_pca *pca, double rho, dpd_output *out,
                                     dpd_err *err);

#endif
