/* Helpers shared by the model adapters (core/model_impl.h).
 * SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"
#include "core/text_impl.h"

int dpd__model_memory_check(const dpd_keys *keys, const dpd_run_env *env, double bytes,
                            const char *driver, dpd_err *err) {
  if (env->max_memory > 0 && !(bytes <= (double)env->max_memory)) {
    const char *value = dpd_keys_text_get(keys, driver);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %s needs about %.3g bytes (%.3g GiB) of memory "
                    "(allowed: at most max_memory = %zu bytes (%.3g GiB); %s '%s' or raise "
                    "max_memory)",
                    driver, value != NULL ? value : "?", bytes, bytes / 1073741824.0,
                    env->max_memory, (double)env->max_memory / 1073741824.0,
                    strcmp(driver, "gamma") == 0 ? "raise" : "lower", driver);
  }
  return DPD_OK;
}

const char *dpd__model_file_path(const char *value) {
  return value != NULL && strncmp(value, "file:", 5) == 0 ? value + 5 : NULL;
}

int dpd__model_features_key(const dpd_keys *keys, const char *law, const char *const *file_keys,
                            size_t n, const char **path, dpd_err *err) {
  const char *features = dpd_keys_text_get(keys, "features");
  *path = NULL;
  if (features == NULL || strcmp(features, law) == 0) {
    for (size_t k = 0; k < n; k++) {
      if (dpd_keys_given(keys, file_keys[k])) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': given with features = %s (allowed: only with "
                        "features = file:PATH)",
                        file_keys[k], law);
      }
    }
    return DPD_OK;
  }
  if ((*path = dpd__model_file_path(features)) == NULL || **path == '\0') {
    *path = NULL;
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'features': '%s' (allowed: %s, file:PATH)",
                    features, law);
  }
  return DPD_OK;
}

int dpd__model_file_key(const dpd_keys *keys, const char *key, const char **path, dpd_err *err) {
  const char *v = dpd_keys_given(keys, key) ? dpd_keys_text_get(keys, key) : NULL;
  *path = NULL;
  if (v == NULL) {
    return DPD_OK;
  }
  *path = dpd__model_file_path(v);
  if (*path == NULL || **path == '\0') {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': '%s' (allowed: file:PATH)", key, v);
  }
  return DPD_OK;
}

int dpd__model_plot_get(const dpd_keys *keys, int def, int *plot, dpd_err *err) {
  size_t v;
  int status;
  if (!dpd_keys_given(keys, "plot")) {
    *plot = def;
    return DPD_OK;
  }
  if ((status = dpd_keys_size_range_get(keys, "plot", 0, 1, &v, err)) < 0) {
    return status;
  }
  *plot = (int)v;
  return DPD_OK;
}

int dpd__output_headline_set(dpd_output *out, dpd_err *err, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  free(out->headline);
  if ((out->headline = dpd__text_dup(buf)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

int dpd__output_figure_set(dpd_output *out, const char *figure, dpd_err *err) {
  free(out->figure);
  out->figure = NULL;
  if (figure != NULL && (out->figure = dpd__text_dup(figure)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

int dpd__output_figure_record(dpd_output *out, const char *figure, const char *data0,
                              const char *data1, dpd_err *err) {
  cJSON *fig = cJSON_AddObjectToObject(out->summary, "figure");
  cJSON *list = fig != NULL && cJSON_AddStringToObject(fig, "name", figure)
                    ? cJSON_AddArrayToObject(fig, "data")
                    : NULL;
  if (list == NULL || !cJSON_AddItemToArray(list, cJSON_CreateString(data0)) ||
      !cJSON_AddItemToArray(list, cJSON_CreateString(data1))) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return dpd__output_figure_set(out, figure, err);
}

int dpd__output_note_add(dpd_output *out, dpd_err *err, const char *fmt, ...) {
  char buf[512], **grown;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  grown = realloc(out->notes, (out->nnotes + 1) * sizeof *grown);
  if (grown == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  out->notes = grown;
  if ((out->notes[out->nnotes] = dpd__text_dup(buf)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  out->nnotes++;
  return DPD_OK;
}

int dpd__output_report_add(dpd_output *out, dpd_err *err, const char *fmt, ...) {
  char buf[1024], *grown;
  size_t have = out->report != NULL ? strlen(out->report) : 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  grown = realloc(out->report, have + strlen(buf) + 1);
  if (grown == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  memcpy(grown + have, buf, strlen(buf) + 1);
  out->report = grown;
  return DPD_OK;
}

int dpd__output_table_comment_set(dpd_output *out, const char *comment, dpd_err *err) {
  dpd_table *t = &out->tables[out->ntables - 1];
  free(t->comment);
  if ((t->comment = dpd__text_dup(comment)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

int dpd__model_validated(const dpd_run_env *env, dpd_err *err) {
  int status;
  if (env->validate_only) {
    return 1;
  }
  if (env->validated != NULL && (status = env->validated(env->validated_user, err)) < 0) {
    return status;
  }
  return 0;
}

int dpd__model_progress(void *bridge, size_t done, size_t total) {
  const dpd__progress_bridge *b = bridge;
  return b->env->progress(b->env->progress_user, b->unit, done, total);
}

void dpd__output_guarantee(dpd_output *out, const dpd_privacy_guarantee *g) {
  cJSON *p = cJSON_AddObjectToObject(out->summary, "privacy");
  if (p == NULL) {
    return;
  }
  if (!isnan(g->mu)) {
    dpd__json_number(p, "mu", g->mu);
  }
  dpd__json_number(p, "zcdp", g->zcdp);
  dpd__json_number(p, "delta", g->delta);
  dpd__json_number(p, "epsilon", g->epsilon);
  cJSON_AddStringToObject(p, "epsilon_conversion",
                          dpd_privacy_conversion_name(g->epsilon_conversion));
  if (!isnan(g->mu)) {
    dpd__json_number(p, "epsilon_gdp", g->epsilon_gdp);
  }
  dpd__json_number(p, "epsilon_zcdp_tight", g->epsilon_zcdp);
  dpd__json_number(p, "epsilon_bun_steinke", g->epsilon_bun_steinke);
}

int dpd__output_begin(const char *command, const char *model, int plot, uint64_t seed,
                      dpd_output **out, dpd_err *err) {
  int status = dpd_output_create(out, err);
  if (status < 0) {
    return status;
  }
  (*out)->plot = plot;
  cJSON_AddStringToObject((*out)->summary, "command", command);
  cJSON_AddStringToObject((*out)->summary, "model", model);
  cJSON_AddStringToObject((*out)->summary, "version", dpd_version());
  cJSON_AddNumberToObject((*out)->summary, "seed", (double)seed);
  return DPD_OK;
}

int dpd__model_save_replicates_get(const dpd_keys *keys, size_t max, int *level, dpd_err *err) {
  size_t v;
  int status;
  *level = 0;
  if (!dpd_keys_applies(keys, "save_replicates")) {
    return DPD_OK;
  }
  if ((status = dpd_keys_size_range_get(keys, "save_replicates", 0, max, &v, err)) < 0) {
    return status;
  }
  *level = (int)v;
  return DPD_OK;
}

double dpd__model_replicates_bytes(int level, size_t seeds, size_t grid, size_t nfinal,
                                   size_t ntrajectory) {
  /* each table is built, then copied by dpd_output_table_add: twice its doubles */
  double bytes = 0.0;
  if (level >= 1) {
    bytes += 16.0 * (double)seeds * (double)(nfinal + 1);
  }
  if (level >= 2) {
    bytes += 16.0 * (double)seeds * (double)grid * (double)(ntrajectory + 1);
  }
  return bytes;
}

int dpd__output_replicates_add(dpd_output *out, const char *figure, const char *columns,
                               size_t seeds, size_t ncols, const double *const *cols,
                               dpd_err *err) {
  char names[1024];
  const double **cc = malloc((ncols + 1) * sizeof *cc);
  double *index = malloc((seeds > 0 ? seeds : 1) * sizeof *index);
  int status;
  if (cc == NULL || index == NULL) {
    free(cc);
    free(index);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory (seeds = %zu)", seeds);
  }
  for (size_t r = 0; r < seeds; r++) {
    index[r] = (double)r;
  }
  cc[0] = index;
  for (size_t k = 0; k < ncols; k++) {
    cc[k + 1] = cols[k];
  }
  snprintf(names, sizeof names, "replicate %s", columns);
  status = dpd_output_table_add(out, "replicates.tsv", figure, names, seeds, ncols + 1, cc, err);
  free(cc);
  free(index);
  return status;
}

int dpd__output_replicate_trajectory_add(dpd_output *out, const char *figure, const char *columns,
                                         size_t seeds, size_t grid, size_t nshared,
                                         const double *const *shared, size_t nper,
                                         const double *const *per, dpd_err *err) {
  char names[1024];
  const size_t rows = seeds * grid;
  const double **cc = malloc((1 + nshared + nper) * sizeof *cc);
  double *built = NULL;
  int status;
  if (seeds > 0 && grid > SIZE_MAX / sizeof *built / (nshared + 1) / seeds) {
    free(cc);
    return DPD_FAIL(err, DPD_ENOMEM, "replicates_trajectory.tsv too large (seeds = %zu)", seeds);
  }
  built = malloc((rows > 0 ? rows : 1) * (nshared + 1) * sizeof *built);
  if (cc == NULL || built == NULL) {
    free(cc);
    free(built);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory for replicates_trajectory.tsv (seeds = %zu)",
                    seeds);
  }
  /* replicate-major rows: row r grid + j is replicate r at grid point j, the order of the
   * [seeds * grid] row-major arrays, which are therefore columns as they are */
  for (size_t r = 0; r < seeds; r++) {
    for (size_t j = 0; j < grid; j++) {
      built[r * grid + j] = (double)r;
      for (size_t k = 0; k < nshared; k++) {
        built[(k + 1) * rows + r * grid + j] = shared[k][j];
      }
    }
  }
  for (size_t k = 0; k <= nshared; k++) {
    cc[k] = built + k * rows;
  }
  for (size_t k = 0; k < nper; k++) {
    cc[1 + nshared + k] = per[k];
  }
  snprintf(names, sizeof names, "replicate %s", columns);
  status = dpd_output_table_add(out, "replicates_trajectory.tsv", figure, names, rows,
                                1 + nshared + nper, cc, err);
  free(cc);
  free(built);
  return status;
}

void dpd__output_numbers_set(dpd_output *out, const char *prefix, const char *names,
                             const double *v, const char *why) {
  for (size_t k = 0, w; *names != '\0'; k++, names += w + (names[w] == ' ')) {
    char key[64];
    w = strcspn(names, " ");
    snprintf(key, sizeof key, "%s%.*s", prefix, (int)w, names);
    if (why != NULL && isnan(v[k])) {
      dpd_output_na_set(out, key, why);
    } else {
      dpd_output_number_set(out, key, v[k]);
    }
  }
}

int dpd__table_builder_add_named(dpd_table_builder *tb, const char *prefix, const char *names,
                                 const double *const *cols, dpd_err *err) {
  int status = DPD_OK;
  for (size_t k = 0, w; status == DPD_OK && *names != '\0'; k++, names += w + (names[w] == ' ')) {
    char name[64];
    w = strcspn(names, " ");
    snprintf(name, sizeof name, "%s%.*s", prefix, (int)w, names);
    status = dpd_table_builder_add(tb, name, cols[k], err);
  }
  return status;
}
