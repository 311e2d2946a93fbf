/* Shared helpers of the model=nc tests: build a problem or run replicates, failing the test
 * with the library's reason when the call fails.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_NC_TEST_H
#define DPD_NC_TEST_H

#include "dpd_test.h"
#include "dpdyn/nc.h"

static inline dpd_nc_problem *make(const dpd_nc_problem_config *cfg) {
  dpd_nc_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_nc_problem_create(cfg, &pr, &err);
  if (st != DPD_OK) {
    print_error("dpd_nc_problem_create: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return pr;
}

static inline dpd_nc_problem *make_data(const dpd_nc_data_config *dc) {
  dpd_nc_problem *pr = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_nc_problem_from_data(dc, &pr, &err);
  if (st != DPD_OK) {
    print_error("dpd_nc_problem_from_data: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  return pr;
}

static inline dpd_nc_sim_result *run_ok(const dpd_nc_problem *pr, const dpd_nc_sim_config *cfg) {
  dpd_nc_sim_result *res = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  int st = dpd_nc_sim_run(pr, cfg, &res, &err);
  if (st != DPD_OK) {
    print_error("dpd_nc_sim_run: %s\n", err.reason);
  }
  assert_int_equal(st, DPD_OK);
  assert_non_null(res);
  return res;
}

#endif
