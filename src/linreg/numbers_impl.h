/* The numbers each linreg command's summary can hold besides LR_BASE_NUMBERS (internal), as
 * dpdyn sweep names them (dpd_model_command.numbers, src/models/linreg/linreg_model.c): the
 * union over the command's configurations, checked by tests/cli/test_sweep_plot_y.sh.
 * SPDX-License-Identifier: MIT */
#ifndef DPD_LINREG_NUMBERS_IMPL_H
#define DPD_LINREG_NUMBERS_IMPL_H

#define DPD__LINREG_SIMULATE_NUMBERS                                                               \
  "final_excess_risk final_excess_risk_se excess_risk_before_release "                             \
  "excess_risk_before_release_se release_jump clipped_fraction seeds delta "                       \
  "epsilon_bun_steinke epsilon_tight noise_nu"

#define DPD__LINREG_SDE_NUMBERS                                                                    \
  "final_excess_risk final_excess_risk_se excess_risk_before_release "                             \
  "excess_risk_before_release_se release_jump expected_clipped_fraction seeds dt "                 \
  "finite_size m2 lambda_max_over_d delta epsilon_bun_steinke epsilon_tight noise_nu"

#define DPD__LINREG_ODE_NUMBERS                                                                    \
  "final_excess_risk final_excess_risk_se excess_risk_before_release release_jump "                \
  "lower_bound_before_release upper_bound_before_release ode_steps distinct_eigenvalues "          \
  "ode_groups compressed compress_error_estimate ode_error_estimate finite_size m2 "               \
  "lambda_max_over_d delta epsilon_bun_steinke epsilon_tight noise_nu "                            \
  "compress_nodes_per_band compressed_bands"

#define DPD__LINREG_COMPARE_NUMBERS                                                                \
  "final_excess_risk final_excess_risk_se excess_risk_before_release "                             \
  "excess_risk_before_release_se release_jump clipped_fraction seeds ode_final_excess_risk "       \
  "ode_excess_risk_before_release ode_release_jump ode_lower_bound_before_release "                \
  "ode_upper_bound_before_release ode_steps distinct_eigenvalues ode_groups compressed "           \
  "compress_error_estimate ode_error_estimate finite_size m2 lambda_max_over_d sup_gap "           \
  "sup_gap_in_se final_gap final_gap_se final_gap_in_se delta epsilon_bun_steinke "                \
  "epsilon_tight noise_nu sde_final_excess_risk sde_final_excess_risk_se "                         \
  "sde_excess_risk_before_release sde_excess_risk_before_release_se sde_release_jump "             \
  "sde_expected_clipped_fraction sde_sup_gap sde_sup_gap_in_se sde_final_gap "                     \
  "sde_final_gap_se sde_final_gap_in_se sde_vs_simulate_final_gap_in_se "                          \
  "compress_nodes_per_band compressed_bands"

#define DPD__LINREG_TUNE_NUMBERS                                                                   \
  "finite_size m2 lambda_max_over_d optimum.c optimum.eta0 optimum.eta_at_0 "                      \
  "optimum.eta_at_1 optimum.eta_sup optimum.stability_limit final_excess_risk "                    \
  "final_excess_risk_se excess_risk_before_release release_jump lower_bound_before_release "       \
  "upper_bound_before_release confirm_seeds ode_groups compressed confirm_final_excess_risk "      \
  "confirm_final_excess_risk_se confirm_gap confirm_gap_in_se confirm_sup_gap "                    \
  "confirm_sup_gap_in_se clipped_fraction heatmap heatmap_points heatmap_failed "                  \
  "heatmap_beating_optimum heatmap_best_excess_risk heatmap_best_c heatmap_best_eta0 "             \
  "iterations evaluations failed_evaluations local_searches converged start_spread "               \
  "prescan_best tuner.safety tuner.eta_min_fraction tuner.shape_min tuner.shape_max "              \
  "tuner.prescan tuner.starts tuner.xtol tuner.max_iter tuner.restarts delta "                     \
  "epsilon_bun_steinke epsilon_tight optimum.a optimum.c1 optimum.c2 optimum.c3 "                  \
  "optimum.offset_scale noise_nu compress_nodes_per_band compressed_bands"

#endif
