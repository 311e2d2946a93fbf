/* Parameters of the dpdyn CLI: INI file (libinih) + --key=value flags.
 * SPDX-License-Identifier: MIT
 *
 * Flags override the INI file; section names in the INI file are ignored, except [sweep]
 * (the grid of `dpdyn sweep`), whose keys no single run reads.
 * Every key must be known: an unknown key is an input error, as is a value
 * that does not parse completely or lies outside its allowed range. */
#define _DEFAULT_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "cli/cli.h"

/* The last raw entry that set `key` (flags come after the INI file), NULL if none. */
static const cli_raw *raw_find(const cli_params *p, const char *key) {
  for (size_t i = p->nraw; i > 0; i--) {
    if (strcmp(p->raw[i - 1].key, key) == 0) {
      return &p->raw[i - 1];
    }
  }
  return NULL;
}

/* Records a key = value of the INI file (ini_line > 0) or of a flag; checked once the model is
 * known. */
static int raw_add(cli_params *p, const char *key, const char *value, size_t ini_line,
                   const char *flag, dpd_err *err) {
  cli_raw *grown;
  if (ini_line > 0) {
    for (size_t i = 0; i < p->nraw; i++) {
      if (p->raw[i].ini_line > 0 && strcmp(p->raw[i].key, key) == 0) {
        return CLI_FAIL(err, DPD_EINVAL,
                        "key '%s' is set twice in the INI file '%s', on lines %zu and %zu "
                        "(allowed: each key once; a --%s flag overrides the file)",
                        key, p->ini_path, p->raw[i].ini_line, ini_line, key);
      }
    }
  }
  grown = realloc(p->raw, (p->nraw + 1) * sizeof *grown);
  if (grown == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  p->raw = grown;
  p->raw[p->nraw].key = strdup(key);
  p->raw[p->nraw].value = strdup(value);
  p->raw[p->nraw].ini_line = ini_line;
  p->raw[p->nraw].flag = flag;
  if (p->raw[p->nraw].key == NULL || p->raw[p->nraw].value == NULL) {
    free(p->raw[p->nraw].key);
    free(p->raw[p->nraw].value);
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  p->nraw++;
  return DPD_OK;
}

typedef struct {
  cli_params *p;
  const cli_ini_text *text;
  size_t calls;
  dpd_err *err;
  int failed;
} ini_ctx;

static int on_ini_entry(void *user, const char *section, const char *name, const char *value) {
  ini_ctx *ctx = user;
  size_t line;
  if (ctx->failed) {
    return 0;
  }
  /* libinih calls the handler once per key line, in order (comment lines are blanked and
   * indentation removed, so no line continues another). */
  line = ctx->calls < ctx->text->nkeys ? ctx->text->key_lines[ctx->calls] : 0;
  ctx->calls++;
  if (strcmp(section, "sweep") == 0) {
    return 1; /* the grid of `dpdyn sweep` (cmd_sweep.c), not a parameter of one run */
  }
  if (raw_add(ctx->p, name, value, line > 0 ? line : 1, NULL, ctx->err) < 0) {
    ctx->failed = 1;
    return 0;
  }
  return 1;
}

static int parse_ini(cli_params *p, dpd_err *err) {
  cli_ini_text text;
  ini_ctx ctx = {p, &text, 0, err, 0};
  int status, line;
  if ((status = cli_ini_text_read(p->ini_path, &text, err)) < 0) {
    return status;
  }
  ini_allow_multiline = false;
  line = ini_parse_string(text.text, on_ini_entry, &ctx);
  cli_ini_text_free(&text);
  if (ctx.failed) {
    return DPD_EINVAL;
  }
  if (line > 0) {
    return CLI_FAIL(err, DPD_EINVAL,
                    "malformed INI file '%s' at line %d (allowed: 'key = value' lines, "
                    "[sections], ';' or '#' comments)",
                    p->ini_path, line);
  }
  if (line < 0) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory parsing the INI file '%s'", p->ini_path);
  }
  return DPD_OK;
}

void cli_params_free(cli_params *p) {
  for (size_t i = 0; i < p->nraw; i++) {
    free(p->raw[i].key);
    free(p->raw[i].value);
  }
  free(p->raw);
  dpd_keys_free(p->keys);
  memset(p, 0, sizeof *p);
}

size_t cli_physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || size <= 0) {
    return 0;
  }
  return (size_t)pages * (size_t)size;
}

int cli_check_memory(const cli_params *p, double bytes, const char *driver, dpd_err *err) {
  if (!(bytes <= (double)p->max_memory)) {
    const char *value = cli_get_text(p, driver);
    return CLI_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %s needs about %.3g bytes (%.3g GiB) of memory "
                    "(allowed: at most max_memory = %zu bytes (%.3g GiB); %s '%s' or raise "
                    "max_memory)",
                    driver, value != NULL ? value : "?", bytes, bytes / 1073741824.0, p->max_memory,
                    (double)p->max_memory / 1073741824.0,
                    strcmp(driver, "gamma") == 0 ? "raise" : "lower", driver);
  }
  return DPD_OK;
}

/* The model of the run: the key `model` (a flag wins over the INI file), or, when it is not
 * given, the model that has the command and takes every key given (dpd_model_find_keyed: linreg
 * first; dpdyn ou is model=rf). */
static int choose_model(cli_params *p, dpd_err *err) {
  const cli_raw *given = raw_find(p, "model");
  const char **names = NULL;
  int status;
  if (given == NULL && p->nraw > 0 && (names = malloc(p->nraw * sizeof *names)) == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t i = 0; names != NULL && i < p->nraw; i++) {
    names[i] = p->raw[i].key;
  }
  status = dpd_model_find_keyed(given != NULL ? given->value : NULL, p->command,
                                (const char *const *)names, names != NULL ? p->nraw : 0,
                                &p->model, err);
  free(names);
  return status;
}

/* A key of the INI file that no model has (the message names the file and the line); any other
 * name the model lacks is dpd_model_key_set's message. */
static int ini_key_error(const cli_params *p, const cli_raw *r, dpd_err *err) {
  return CLI_FAIL(err, DPD_EINVAL,
                  "unknown key '%s' in the INI file '%s' line %zu (see 'dpdyn %s --help' "
                  "for the keys)",
                  r->key, p->ini_path, r->ini_line, p->command);
}

int cli_params_parse(cli_params *p, const char *command, int argc, char **argv, dpd_err *err) {
  int status;
  size_t ram;
  memset(p, 0, sizeof *p);
  p->command = command;
  /* First pass: the INI file (a single positional argument). */
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      p->help = 1;
    }
  }
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (strncmp(arg, "--", 2) == 0) {
      if (strchr(arg, '=') == NULL && strcmp(arg, "--help") != 0) {
        i++; /* "--key value": skip the value */
      }
      continue;
    }
    if (strcmp(arg, "-h") == 0) {
      continue;
    }
    if (p->ini_path != NULL) {
      return CLI_FAIL(err, DPD_EINVAL,
                      "unexpected argument '%s' (allowed: one INI file, then --key=value flags)",
                      arg);
    }
    p->ini_path = arg;
  }
  if (p->ini_path != NULL && !p->help && (status = parse_ini(p, err)) < 0) {
    return status;
  }
  /* Second pass: flags override the file. */
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    char key[128];
    const char *value;
    const char *eq;
    if (strncmp(arg, "--", 2) != 0 || strcmp(arg, "--help") == 0) {
      continue;
    }
    eq = strchr(arg, '=');
    if (eq != NULL) {
      size_t len = (size_t)(eq - arg - 2);
      if (len == 0 || len >= sizeof key) {
        return CLI_FAIL(err, DPD_EINVAL, "malformed flag '%s' (allowed: --key=value)", arg);
      }
      memcpy(key, arg + 2, len);
      key[len] = '\0';
      value = eq + 1;
    } else {
      size_t len = strlen(arg + 2);
      if (len == 0 || len >= sizeof key) {
        return CLI_FAIL(err, DPD_EINVAL, "malformed flag '%s' (allowed: --key=value)", arg);
      }
      memcpy(key, arg + 2, len + 1);
      if (i + 1 >= argc) {
        return CLI_FAIL(err, DPD_EINVAL, "flag '--%s' has no value (allowed: --%s=VALUE)", key,
                        key);
      }
      value = argv[++i];
    }
    if ((status = raw_add(p, key, value, 0, arg, err)) < 0) {
      return status;
    }
  }
  if ((status = choose_model(p, err)) < 0 ||
      (status = dpd_model_keys_create(p->model, command, &p->keys, err)) < 0) {
    return status;
  }
  if (p->help) {
    return DPD_OK;
  }
  for (size_t i = 0; i < p->nraw; i++) {
    const cli_raw *r = &p->raw[i];
    if (r->ini_line > 0 && dpd_keys_find(p->keys, r->key) < 0 && !dpd_model_key_known(r->key)) {
      return ini_key_error(p, r, err);
    }
    if ((status = dpd_model_key_set(p->model, p->keys, r->key, r->value, err)) < 0) {
      return status;
    }
  }
  ram = cli_physical_memory();
  return dpd_keys_bytes_get(p->keys, "max_memory", ram > 0 ? ram / 2 : (size_t)1 << 32,
                            &p->max_memory, err);
}

int cli_set_text(cli_params *p, const char *key, const char *text) {
  return dpd_keys_effective_set(p->keys, key, text, NULL);
}

/* Whether `key` is in the NULL-terminated list. */
static int in_list(const char *const *list, const char *key) {
  for (size_t k = 0; list[k] != NULL; k++) {
    if (strcmp(list[k], key) == 0) {
      return 1;
    }
  }
  return 0;
}

int cli_params_restrict(cli_params *p, const char *const *allowed, const char *what, dpd_err *err) {
  for (size_t i = 0; i < dpd_keys_count(p->keys); i++) {
    const char *key = dpd_keys_desc_get(p->keys, i)->name;
    if (in_list(allowed, key)) {
      continue;
    }
    if (dpd_keys_given_at(p->keys, i)) {
      char list[1024];
      size_t len = 0;
      list[0] = '\0';
      for (size_t k = 0; allowed[k] != NULL && len < sizeof list; k++) {
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", allowed[k]);
      }
      return CLI_FAIL(err, DPD_EINVAL, "key '%s' does not apply to %s (allowed keys: %s)", key,
                      what, list);
    }
    dpd_keys_unset(p->keys, key);
  }
  return DPD_OK;
}

void cli_params_note_unused(const cli_params *p, const char *const *allowed, const char *what) {
  for (size_t i = 0; i < p->nraw; i++) {
    const cli_raw *r = &p->raw[i];
    if (r->flag != NULL && !in_list(allowed, r->key)) {
      fprintf(stderr, "dpdyn %s: note: '%s' has no effect on %s\n", p->command, r->flag, what);
    }
  }
}

int cli_set_effective(cli_params *p, const char *key, double value) {
  return dpd_keys_effective_real_set(p->keys, key, value, NULL);
}

const char *cli_get_text(const cli_params *p, const char *key) {
  return p->keys == NULL ? NULL : dpd_keys_text_get(p->keys, key);
}

int cli_is_given(const cli_params *p, const char *key) {
  return p->keys != NULL && dpd_keys_given(p->keys, key);
}

int cli_get_real(const cli_params *p, const char *key, double lo, int lo_incl, double hi,
                 int hi_incl, int allow_inf, double *out, dpd_err *err) {
  return dpd_keys_real_range_get(p->keys, key, lo, lo_incl, hi, hi_incl, allow_inf, out, err);
}

int cli_get_size(const cli_params *p, const char *key, size_t lo, size_t hi, size_t *out,
                 dpd_err *err) {
  return dpd_keys_size_range_get(p->keys, key, lo, hi, out, err);
}

int cli_get_u64(const cli_params *p, const char *key, unsigned long long *out, dpd_err *err) {
  uint64_t v;
  int status = dpd_keys_u64_get(p->keys, key, &v, err);
  if (status == DPD_OK) {
    *out = (unsigned long long)v;
  }
  return status;
}

void cli_params_to_json(const cli_params *p, cJSON *obj) {
  dpd_io_json_keys_set(p->keys, obj);
}

void cli_keys_to_header(const dpd_keys *keys, FILE *f) {
  for (size_t i = 0; i < dpd_keys_count(keys); i++) {
    const dpd_key_desc *d = dpd_keys_desc_get(keys, i);
    char buf[512];
    double x;
    if (dpd_keys_value_get(keys, i) == NULL || d->kind == DPD_KEY_BYTES) {
      continue;
    }
    /* a line break of a value (a path may hold one) is written as \n, \r: every line of the
     * header stays a `#` line, and the row of column names the first other line */
    const char *v = dpd_keys_record_get(keys, i, buf, sizeof buf, &x) > 0
                        ? buf
                        : dpd_keys_value_get(keys, i);
    fprintf(f, "# %s = ", d->name);
    for (; *v != '\0'; v++) {
      if (*v == '\n' || *v == '\r') {
        fputs(*v == '\n' ? "\\n" : "\\r", f);
      } else {
        fputc(*v, f);
      }
    }
    fputc('\n', f);
  }
}
