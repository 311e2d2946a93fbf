/* The keys `input` and `target` of a model=rf run, with the data files they may name, and the
 * data's lines of the run's summary (rf_run_impl.h; docs/rf.md, "Inputs from a file").
 * SPDX-License-Identifier: MIT */
#include <string.h>

#include "core/datamat_impl.h"
#include "core/error_impl.h"
#include "core/model_impl.h"
#include "rf/rf_run_impl.h"

/* The key `input` or `target`: one of the law's names or file:PATH (*path: its PATH, else NULL;
 * *value: the enumerator, DPD_RF_INPUT_FILE / DPD_RF_TARGET_FILE for a file). */
static int law_or_file(const dpd_keys *keys, const char *key, const char *names, int *value,
                       const char **path, dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, key);
  dpd_rf_input input;
  dpd_rf_target target;
  int status;
  *path = dpd__model_file_path(text);
  if (*path != NULL) {
    *value = key[0] == 'i' ? (int)DPD_RF_INPUT_FILE : (int)DPD_RF_TARGET_FILE;
    return **path != '\0' ? DPD_OK
                          : DPD_FAIL(err, DPD_EINVAL,
                                     "invalid value for '%s': 'file:' (allowed: %s, file:PATH "
                                     "with a non-empty PATH)",
                                     key, names);
  }
  status =
      key[0] == 'i' ? dpd_rf_input_get(text, &input, NULL) : dpd_rf_target_get(text, &target, NULL);
  if (status < 0 || strcmp(text, "file") == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': '%s' (allowed: %s, file:PATH)", key,
                    text != NULL ? text : "", names);
  }
  *value = key[0] == 'i' ? (int)input : (int)target;
  return DPD_OK;
}

/* input = file:PATH: the files read and preprocessed (bounded by max_memory), d from the file
 * (a d given must agree), and the sizes checked against its rows, before any work. */
static int data_open(dpd_keys *keys, const dpd_run_env *env, const char *inputs,
                     const char *targets, dpd_rf_config *pc, dpd_rf_data **data, dpd_err *err) {
  dpd_rf_data_info info;
  double bytes = 0.0;
  int status;
  if ((status = dpd__datamat_bytes("input", inputs, &bytes, err)) < 0 ||
      (status = dpd__model_memory_check(keys, env, bytes, "input", err)) < 0 ||
      (status = dpd_rf_data_create(inputs, targets, env->max_memory, data, err)) < 0) {
    return status;
  }
  dpd_rf_data_info_get(*data, &info);
  if (dpd_keys_given(keys, "d") && pc->d != info.d) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'd': %zu (allowed: d = %zu, the columns of the input file "
                    "%s; or leave d out)",
                    pc->d, info.d, inputs);
  }
  pc->d = info.d;
  pc->data = *data;
  if ((status = dpd_keys_effective_real_set(keys, "d", (double)info.d, err)) < 0) {
    return status;
  }
  return dpd__rf_config_check(pc, err);
}

int dpd__rf_inputs_keys(dpd_keys *keys, const dpd_run_env *env, int open, dpd_rf_config *pc,
                        dpd_rf_data **data, dpd_err *err) {
  int status, input, target;
  const char *inputs = NULL, *targets = NULL;
  *data = NULL;
  if ((status = law_or_file(keys, "target", "linear, sign, hermite2", &target, &targets, err)) <
          0 ||
      (status = law_or_file(keys, "input", "gaussian, sphere", &input, &inputs, err)) < 0) {
    return status;
  }
  pc->input = (dpd_rf_input)input;
  pc->target = (dpd_rf_target)target;
  if (targets != NULL && inputs == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'target': 'file:%s' with input = %s (allowed: file:PATH "
                    "only with input = file:PATH, whose rows it labels; or linear, sign, "
                    "hermite2)",
                    targets, dpd_rf_input_name(pc->input));
  }
  return inputs != NULL && open ? data_open(keys, env, inputs, targets, pc, data, err) : DPD_OK;
}

int dpd__rf_data_report(dpd_output *out, const dpd_rf_config *pc, size_t draws, dpd_err *err) {
  dpd_rf_data_info info;
  const char *targets = dpd__rf_data_path(pc->data, 1);
  dpd_rf_data_info_get(pc->data, &info);
  cJSON_AddStringToObject(out->summary, "data_input_file", dpd__rf_data_path(pc->data, 0));
  cJSON_AddStringToObject(out->summary, "data_input_dtype", info.f32 ? "float32" : "float64");
  dpd_output_number_set(out, "data_rows", (double)info.rows);
  dpd_output_number_set(out, "data_input_scale", info.input_scale);
  dpd_output_number_set(out, "data_input_mean_norm", info.input_mean_norm);
  if (targets != NULL) {
    cJSON_AddStringToObject(out->summary, "data_target_file", targets);
    dpd_output_number_set(out, "data_target_mean", info.target_mean);
    dpd_output_number_set(out, "data_target_scale", info.target_scale);
  }
  return dpd__output_note_add(
      out, err,
      "note: input = file: %s (%zu here) takes n = %zu training and n_test = %zu test rows, "
      "distinct, drawn at random from the N = %zu rows (centred, scaled by %.6g to mean "
      "|x|^2 = d = %zu)%s",
      draws > 1 ? "every data draw" : "the data draw", draws, pc->n, pc->n_test, info.rows,
      info.input_scale, info.d,
      targets != NULL ? "; targets from the file, centred and scaled to unit variance" : "");
}
