/* model=nc: the keys and outputs of the PCA fix (nc_pca.h).
 * SPDX-License-Identifier: MIT
 *
 * pca_k = 0 leaves the model as it is. pca_k >= 1 draws the public sample of n_public features
 * (part of the problem: fixed by `seed`, shared by the replicates), projects on its top pca_k
 * principal directions (centred by default, pca_center) and trains privately in pca_k
 * dimensions; `normalize` then acts on the projected features. Replicates redraw the private
 * training shifts, the noise and the test points. */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/nc_theory.h"
#include "models/nc/nc_pca_model.h"

int dpd__nc_pca_keys(dpd_keys *keys, const dpd_nc_problem_config *pc, dpd_nc_pca_config *cfg,
                     int *on, dpd_err *err) {
  size_t choice;
  int status;
  *cfg = dpd_nc_pca_config_default();
  if ((status = dpd_keys_size_get(keys, "pca_k", &cfg->k, err)) < 0 ||
      (status = dpd_keys_size_get(keys, "n_public", &cfg->n_public, err)) < 0 ||
      (status = dpd_keys_choice_get(keys, "pca_center", &choice, err)) < 0) {
    return status;
  }
  cfg->center = choice == 1; /* no|yes */
  cfg->normalize = pc->normalize;
  *on = cfg->k > 0;
  if (!*on) {
    return DPD_OK;
  }
  if (cfg->k > pc->p) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'pca_k': %zu (allowed: 0 = off, or 1 <= pca_k <= p = %zu)",
                    cfg->k, pc->p);
  }
  if (cfg->center && cfg->n_public < 2) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'n_public': %zu (allowed: n_public >= 2 with pca_center = "
                    "yes: a sample covariance needs two samples)",
                    cfg->n_public);
  }
  if (pc->test_shift == DPD_NC_SHIFT_ADVERSARIAL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'test_shift': adversarial (allowed with pca_k > 0: none, "
                    "cube or rademacher: the adversarial point is defined in R^p against a "
                    "classifier on R^p, not one trained on projected features)");
  }
  return DPD_OK;
}

double dpd__nc_pca_bytes(const dpd_nc_problem_config *pc, const dpd_nc_pca_config *cfg, int on,
                         size_t threads) {
  const double t = (double)(threads > 0 ? threads : 2);
  if (!on) {
    return 0.0;
  }
  return dpd_nc_pca_memory(pc->K, pc->p, cfg, threads > 0 ? threads : 2) +
         8.0 * t * (double)(pc->n + pc->n_test) * (double)cfg->k;
}

int dpd__nc_problem_build(const dpd_nc_problem_config *pc, const dpd_nc_pca_config *cfg, int on,
                          dpd_nc_problem **problem, dpd_nc_problem **base, dpd_nc_pca **pca,
                          dpd_err *err) {
  dpd_nc_problem_config bc = *pc;
  int status;
  *problem = NULL;
  *base = NULL;
  *pca = NULL;
  if (!on) {
    return dpd_nc_problem_create(pc, problem, err);
  }
  /* The PCA's dsyrk/dsyevr and the projection's dgemm: one OpenBLAS thread, so the bits do not
   * depend on OpenBLAS's split (model=rf does the same). */
  openblas_set_num_threads(1);
  bc.normalize = DPD_NC_NORMALIZE_NONE; /* normalize acts on the projected features */
  if ((status = dpd_nc_problem_create(&bc, base, err)) < 0 ||
      (status = dpd_nc_pca_create(*base, cfg, pca, err)) < 0) {
    dpd_nc_problem_free(*base);
    *base = NULL;
    return status;
  }
  *problem = (*pca)->problem;
  return DPD_OK;
}

int dpd__nc_pca_output(const dpd_nc_pca *pca, double rho, dpd_output *out, dpd_err *err) {
  const dpd_pca_result *res;
  cJSON *ev;
  if (pca == NULL) {
    return DPD_OK;
  }
  res = pca->pca;
  cJSON_AddNumberToObject(out->summary, "pca_k", (double)pca->cfg.k);
  cJSON_AddNumberToObject(out->summary, "n_public", (double)pca->cfg.n_public);
  cJSON_AddStringToObject(out->summary, "pca_center", pca->cfg.center ? "yes" : "no");
  cJSON_AddStringToObject(out->summary, "pca_route",
                          res->route == DPD_PCA_ROUTE_GRAM ? "gram" : "covariance");
  ev = cJSON_CreateDoubleArray(res->eigenvalues, (int)res->k);
  if (ev == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  cJSON_AddItemToObject(out->summary, "pca_eigenvalues", ev);
  dpd_output_number_set(out, "pca_trace", res->trace);
  dpd_output_number_set(out, "pca_x_bound", pca->x_bound);
  dpd_output_number_set(out, "pca_etf_residual", pca->etf_residual);
  dpd_output_number_set(out, "pca_etf_energy", pca->etf_energy);
  dpd_output_number_set(out, "pca_beta0", pca->beta0);
  if (pca->base->K == 2 && isfinite(rho) && rho > 0.0) {
    const double b = pca->base->cfg.shift == DPD_NC_SHIFT_NONE ? 0.0 : pca->base->cfg.beta;
    const double s = dpd_nc_samples_thm41(b, pca->beta0, (double)pca->base->p, rho, 0.05);
    if (isfinite(s)) {
      dpd_output_number_set(out, "samples_thm41", s);
    } else {
      dpd_output_na_set(out, "samples_thm41",
                        "Thm 4.1 needs M(beta, beta0, p) > 0 (beta0 too large for its proof)");
    }
    dpd_output_number_set(out, "samples_thm41_gamma", 0.05);
  }
  return DPD_OK;
}
