/* dpdyn account for model=rf: privacy calibration of full-batch DP-GD (MATH.md 2).
 * SPDX-License-Identifier: MIT
 *
 * T steps of size eta with noise sqrt(eta)(2C/n) sigma compose to mu-GDP with
 * mu = sqrt(eta T)/sigma. Given (epsilon, delta) it reports both calibrations
 * (the seed's moments bound and the exact GDP one), their ratio and the
 * epsilon that the moments sigma actually delivers; given sigma, the epsilon
 * it delivers at delta. */
#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error_impl.h"
#include "dpdyn/rf_privacy.h"

static int exit_code(int status) {
  return status == DPD_EIO ? CLI_EXIT_IO : status == DPD_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_NUMERIC;
}

int cli_cmd_rf_account(cli_params *p, double start, dpd_err *err) {
  double eta, delta, eps = 0.0, sigma = 0.0;
  size_t steps;
  int status, have_eps = cli_is_given(p, "epsilon"), have_sigma = cli_is_given(p, "sigma");
  cJSON *root, *params;
  cli_out o;
  if ((status = cli_get_real(p, "eta", 0.0, 0, INFINITY, 0, 0, &eta, err)) < 0 ||
      (status = cli_get_size(p, "steps", 1, (size_t)1 << 40, &steps, err)) < 0 ||
      (status = cli_get_real(p, "delta", 0.0, 0, 1.0, 0, 0, &delta, err)) < 0) {
    return exit_code(status);
  }
  if (have_eps == have_sigma) {
    DPD_FAIL(err, DPD_EINVAL,
             "invalid value for 'epsilon': give exactly one of epsilon (calibrate sigma) or sigma "
             "(report its epsilon) for model=rf");
    return CLI_EXIT_USAGE;
  }
  root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "command", "account");
  cJSON_AddStringToObject(root, "model", "rf");
  cJSON_AddStringToObject(root, "version", dpd_version());
  cli_json_number(root, "eta", eta);
  cJSON_AddNumberToObject(root, "steps", (double)steps);
  cli_json_number(root, "delta", delta);
  if (have_eps) {
    dpd_rf_privacy_report rep;
    if ((status = cli_get_real(p, "epsilon", 0.0, 0, INFINITY, 0, 0, &eps, err)) < 0 ||
        (status = dpd_rf_privacy_report_eval(eta, steps, eps, delta, &rep, err)) < 0) {
      cJSON_Delete(root);
      return exit_code(status);
    }
    cli_json_number(root, "epsilon", eps);
    cli_json_number(root, "sigma_exact", rep.sigma_exact);
    cli_json_number(root, "sigma_moments", rep.sigma_moments);
    cli_json_number(root, "sigma_ratio_moments_over_exact", rep.ratio);
    cli_json_number(root, "epsilon_of_sigma_moments", rep.eps_moments_exact);
    cli_json_number(root, "mu_exact", sqrt(eta * (double)steps) / rep.sigma_exact);
  } else {
    if ((status = cli_get_real(p, "sigma", 0.0, 0, INFINITY, 0, 0, &sigma, err)) < 0 ||
        (status = dpd_rf_privacy_eps_delivered(eta, steps, sigma, delta, &eps, err)) < 0) {
      cJSON_Delete(root);
      return exit_code(status);
    }
    cli_json_number(root, "sigma", sigma);
    cli_json_number(root, "mu", sqrt(eta * (double)steps) / sigma);
    cli_json_number(root, "epsilon_exact", eps);
  }
  params = cJSON_CreateObject();
  cli_params_to_json(p, params);
  cJSON_AddItemToObject(root, "params", params);
  cli_json_number(root, "wall_seconds", cli_now() - start);
  if ((status = cli_out_init(&o, cli_get_text(p, "out"), err)) == DPD_OK) {
    status = cli_out_json(&o, "summary.json", root, err);
    cli_out_free(&o);
  }
  if (status == DPD_OK) {
    const cJSON *item;
    printf("# dpdyn %s account (model rf, eta = %g, steps = %zu)\n", dpd_version(), eta, steps);
    cJSON_ArrayForEach(item, root) {
      if (cJSON_IsNumber(item)) {
        printf("%-32s %.10g\n", item->string, item->valuedouble);
      }
    }
  }
  cJSON_Delete(root);
  return status < 0 ? exit_code(status) : CLI_EXIT_OK;
}
