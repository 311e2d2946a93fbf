/* What the user gives a run: the model of a command and the keys, with the messages the command
 * line prints (model.h). The CLI (src/cli/params.c) and the Python package (python/dpdyn) both
 * call these, so a name the model lacks reads the same in both.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "core/error_impl.h"
#include "dpdyn/model.h"

/* The models that have `command`, as "a, b" (empty if none). */
static void models_with(const char *command, char *buf, size_t cap) {
  size_t len = 0;
  const dpd_model_type *m;
  buf[0] = '\0';
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL && len < cap; i++) {
    if (dpd_model_command_get(m, command) != NULL) {
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", m->name);
    }
  }
}

/* Whether `word` is one of the space-separated words of `list`. */
static int word_in(const char *list, const char *word) {
  size_t len = strlen(word);
  for (const char *w = list; *w != '\0'; w += strspn(w, " ")) {
    size_t wl = strcspn(w, " ");
    if (wl == len && strncmp(w, word, len) == 0) {
      return 1;
    }
    w += wl;
  }
  return 0;
}

int dpd_model_find_keyed(const char *name, const char *command, const char *const *keys,
                         size_t nkeys, const dpd_model_type **out, dpd_err *err) {
  const dpd_model_type *m;
  for (size_t i = 0; name == NULL && (m = dpd_model_at(i)) != NULL; i++) {
    const dpd_model_command *c = dpd_model_command_get(m, command);
    for (size_t k = 0; c != NULL && c->selected_by != NULL && k < nkeys; k++) {
      if (word_in(c->selected_by, keys[k])) {
        *out = m;
        return DPD_OK;
      }
    }
  }
  return dpd_model_find(name, command, out, err);
}

int dpd_model_find(const char *name, const char *command, const dpd_model_type **out,
                   dpd_err *err) {
  const dpd_model_type *m;
  char list[256], cmds[256];
  *out = NULL;
  if (name == NULL) {
    m = dpd_model_lookup("linreg");
    for (size_t i = 0; m == NULL || dpd_model_command_get(m, command) == NULL; i++) {
      if ((m = dpd_model_at(i)) == NULL) {
        return DPD_FAIL(err, DPD_EINVAL, "unknown command '%s'", command);
      }
    }
    *out = m;
    return DPD_OK;
  }
  if ((m = dpd_model_lookup(name)) == NULL) {
    dpd_model_list(list, sizeof list);
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'model': '%s' (allowed: %s)", name, list);
  }
  if (dpd_model_command_get(m, command) == NULL) {
    models_with(command, list, sizeof list);
    dpd_model_command_list(m, cmds, sizeof cmds);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for 'model': '%s' (allowed for %s: %s; model=%s has %s)", name,
                    command, list, m->name, cmds);
  }
  *out = m;
  return DPD_OK;
}

int dpd_model_key_known(const char *name) {
  const dpd_model_type *m;
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    for (const dpd_key_desc *d = m->keys; d->name != NULL; d++) {
      if (strcmp(d->name, name) == 0) {
        return 1;
      }
    }
  }
  return 0;
}

int dpd_model_key_set(const dpd_model_type *m, dpd_keys *keys, const char *name, const char *value,
                      dpd_err *err) {
  const char *command = dpd_keys_command_get(keys);
  if (dpd_keys_find(keys, name) >= 0) {
    return dpd_keys_set(keys, name, value, err);
  }
  if (dpd_model_key_known(name)) {
    char list[1024];
    size_t len = 0;
    list[0] = '\0';
    for (size_t k = 0; k < dpd_keys_count(keys) && len < sizeof list; k++) {
      const dpd_key_desc *own = dpd_keys_desc_get(keys, k);
      if (dpd_key_desc_applies(own, command)) {
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", own->name);
      }
    }
    return DPD_FAIL(err, DPD_EINVAL, "key '%s' does not apply to model=%s %s (allowed keys: %s)",
                    name, m->name, command, list);
  }
  return DPD_FAIL(err, DPD_EINVAL, "unknown key '%s' (see 'dpdyn %s --help' for the keys)", name,
                  command);
}
