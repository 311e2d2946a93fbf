/* The registry of models (model.h): the built-in model types and those registered at run time.
 * SPDX-License-Identifier: MIT
 *
 * Adding a model: its folder under src/models/ with an adapter filling a dpd_model_type, and one
 * line in `builtin` below (or, from outside the library, one dpd_model_register call). */
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/model_impl.h"

/* The model types, one per folder of src/models/ (each adapter defines its dpd__model_<name>). */
extern const dpd_model_type dpd__model_linreg DPD_HIDDEN_FN;
extern const dpd_model_type dpd__model_rf DPD_HIDDEN_FN;
extern const dpd_model_type dpd__model_nc DPD_HIDDEN_FN;
extern const dpd_model_type dpd__model_semipriv DPD_HIDDEN_FN;
extern const dpd_model_type dpd__model_privacy DPD_HIDDEN_FN;

static const dpd_model_type *const builtin[] = {&dpd__model_linreg, &dpd__model_rf, &dpd__model_nc,
                                                &dpd__model_semipriv, &dpd__model_privacy};
#define NBUILTIN (sizeof builtin / sizeof builtin[0])
#define MAX_REGISTERED 64

static const dpd_model_type *registered[MAX_REGISTERED];
static size_t nregistered;

const dpd_model_type *dpd_model_at(size_t i) {
  if (i < NBUILTIN) {
    return builtin[i];
  }
  i -= NBUILTIN;
  return i < nregistered ? registered[i] : NULL;
}

const dpd_model_type *dpd_model_lookup(const char *name) {
  const dpd_model_type *m;
  for (size_t k = 0; (m = dpd_model_at(k)) != NULL; k++) {
    if (strcmp(m->name, name) == 0) {
      return m;
    }
  }
  return NULL;
}

void dpd_model_list(char *buf, size_t cap) {
  const dpd_model_type *m;
  size_t len = 0;
  buf[0] = '\0';
  for (size_t k = 0; (m = dpd_model_at(k)) != NULL && len < cap; k++) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? ", " : "", m->name);
  }
}

int dpd_model_register(const dpd_model_type *m, dpd_err *err) {
  if (m == NULL || m->name == NULL || m->name[0] == '\0') {
    return DPD_FAIL(err, DPD_EINVAL, "dpd_model_register: a model type needs a name");
  }
  if (dpd_model_lookup(m->name) != NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "dpd_model_register: model '%s' exists already", m->name);
  }
  if (m->setup == NULL || m->release == NULL || m->workspace_bytes == NULL ||
      m->commands == NULL || m->keys == NULL) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "dpd_model_register: model '%s' needs keys, commands, setup, release and "
                    "workspace_bytes",
                    m->name);
  }
  for (const dpd_model_command *c = m->commands; c->name != NULL; c++) {
    if (c->run == NULL) {
      return DPD_FAIL(err, DPD_EINVAL, "dpd_model_register: command '%s' of model '%s' has no run",
                      c->name, m->name);
    }
  }
  if (nregistered == MAX_REGISTERED) {
    return DPD_FAIL(err, DPD_ENOMEM, "dpd_model_register: more than %d models registered",
                    MAX_REGISTERED);
  }
  registered[nregistered++] = m;
  return DPD_OK;
}
