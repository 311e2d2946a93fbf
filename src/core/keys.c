/* Keys: parameters as `key = text` pairs validated from tables of descriptors (keys.h).
 * SPDX-License-Identifier: MIT */
#define _DEFAULT_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error_impl.h"
#include "core/text_impl.h"
#include "dpdyn/keys.h"
#include "dpdyn/noise.h"
#include "dpdyn/schedule.h"

typedef struct {
  const dpd_key_desc *desc; /* borrowed from a table */
  char *value;              /* owned, NULL: unset */
  int given;
} key_slot;

struct dpd_keys {
  char *command;
  key_slot *slots;
  size_t n;
};

int dpd_key_desc_applies(const dpd_key_desc *d, const char *command) {
  const char *s = d->commands;
  size_t len = strlen(command);
  if (s == NULL) {
    return 1;
  }
  while (*s != '\0') {
    size_t w = strcspn(s, " ");
    if (w == len && strncmp(s, command, len) == 0) {
      return 1;
    }
    s += w;
    while (*s == ' ') {
      s++;
    }
  }
  return 0;
}

void dpd_keys_free(dpd_keys *keys) {
  if (keys == NULL) {
    return;
  }
  if (keys->slots != NULL) {
    for (size_t i = 0; i < keys->n; i++) {
      free(keys->slots[i].value);
    }
  }
  free(keys->slots);
  free(keys->command);
  free(keys);
}

long dpd_keys_find(const dpd_keys *keys, const char *name) {
  for (size_t i = 0; i < keys->n; i++) {
    if (strcmp(keys->slots[i].desc->name, name) == 0) {
      return (long)i;
    }
  }
  return -1;
}

int dpd_keys_create(const dpd_key_desc *const *tables, size_t ntables, const char *command,
                    dpd_keys **out, dpd_err *err) {
  dpd_keys *k = calloc(1, sizeof *k);
  size_t total = 0;
  *out = NULL;
  if (k == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t t = 0; t < ntables; t++) {
    for (const dpd_key_desc *d = tables[t]; d->name != NULL; d++) {
      total++;
    }
  }
  k->command = dpd__text_dup(command != NULL ? command : "");
  k->slots = calloc(total > 0 ? total : 1, sizeof *k->slots);
  if (k->command == NULL || k->slots == NULL) {
    dpd_keys_free(k);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t t = 0; t < ntables; t++) {
    for (const dpd_key_desc *d = tables[t]; d->name != NULL; d++) {
      key_slot *s;
      if (dpd_keys_find(k, d->name) >= 0) {
        continue; /* the first table's descriptor wins */
      }
      s = &k->slots[k->n++];
      s->desc = d;
      if (d->def != NULL && (s->value = dpd__text_dup(d->def)) == NULL) {
        dpd_keys_free(k);
        return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      }
    }
  }
  *out = k;
  return DPD_OK;
}

int dpd_keys_copy(const dpd_keys *keys, dpd_keys **out, dpd_err *err) {
  dpd_keys *k = calloc(1, sizeof *k);
  *out = NULL;
  if (k == NULL || (k->command = dpd__text_dup(keys->command)) == NULL ||
      (k->slots = calloc(keys->n > 0 ? keys->n : 1, sizeof *k->slots)) == NULL) {
    dpd_keys_free(k);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < keys->n; i++) {
    k->slots[i] = keys->slots[i];
    k->slots[i].value = NULL;
    k->n = i + 1;
    if (keys->slots[i].value != NULL &&
        (k->slots[i].value = dpd__text_dup(keys->slots[i].value)) == NULL) {
      dpd_keys_free(k);
      return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    }
  }
  *out = k;
  return DPD_OK;
}

const char *dpd_keys_command_get(const dpd_keys *keys) {
  return keys->command;
}

size_t dpd_keys_count(const dpd_keys *keys) {
  return keys->n;
}

const dpd_key_desc *dpd_keys_desc_get(const dpd_keys *keys, size_t i) {
  return i < keys->n ? keys->slots[i].desc : NULL;
}

const char *dpd_keys_value_get(const dpd_keys *keys, size_t i) {
  return i < keys->n ? keys->slots[i].value : NULL;
}

int dpd_keys_given_at(const dpd_keys *keys, size_t i) {
  return i < keys->n && keys->slots[i].given;
}

int dpd_keys_applies(const dpd_keys *keys, const char *name) {
  long i = dpd_keys_find(keys, name);
  return i >= 0 && dpd_key_desc_applies(keys->slots[i].desc, keys->command);
}

static int store(dpd_keys *keys, const char *name, const char *text, int given, dpd_err *err) {
  long i = dpd_keys_find(keys, name);
  char *copy;
  if (i < 0) {
    return DPD_FAIL(err, DPD_EINVAL, "unknown key '%s'", name);
  }
  if ((copy = dpd__text_dup(text)) == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  free(keys->slots[i].value);
  keys->slots[i].value = copy;
  if (given) {
    keys->slots[i].given = 1;
  }
  return DPD_OK;
}

int dpd_keys_set(dpd_keys *keys, const char *name, const char *text, dpd_err *err) {
  return store(keys, name, text, 1, err);
}

int dpd_keys_effective_set(dpd_keys *keys, const char *name, const char *text, dpd_err *err) {
  return store(keys, name, text, 0, err);
}

int dpd_keys_effective_real_set(dpd_keys *keys, const char *name, double value, dpd_err *err) {
  char text[64];
  dpd__format_shortest(text, sizeof text, value);
  return store(keys, name, text, 0, err);
}

int dpd_keys_default_set(dpd_keys *keys, const char *name, const char *text, dpd_err *err) {
  return dpd_keys_given(keys, name) ? DPD_OK : store(keys, name, text, 0, err);
}

void dpd_keys_unset(dpd_keys *keys, const char *name) {
  long i = dpd_keys_find(keys, name);
  if (i >= 0) {
    free(keys->slots[i].value);
    keys->slots[i].value = NULL;
    keys->slots[i].given = 0;
  }
}

int dpd_keys_restrict(dpd_keys *keys, int strict, const char *what, dpd_err *err) {
  for (size_t i = 0; i < keys->n; i++) {
    key_slot *s = &keys->slots[i];
    if (dpd_key_desc_applies(s->desc, keys->command)) {
      continue;
    }
    if (s->given && strict) {
      char list[1024];
      size_t len = 0;
      list[0] = '\0';
      for (size_t k = 0; k < keys->n && len < sizeof list; k++) {
        if (dpd_key_desc_applies(keys->slots[k].desc, keys->command)) {
          len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                                  keys->slots[k].desc->name);
        }
      }
      return DPD_FAIL(err, DPD_EINVAL, "key '%s' does not apply to %s (allowed keys: %s)",
                      s->desc->name, what, list);
    }
    free(s->value);
    s->value = NULL;
    s->given = 0;
  }
  return DPD_OK;
}

const char *dpd_keys_text_get(const dpd_keys *keys, const char *name) {
  long i = dpd_keys_find(keys, name);
  return i < 0 ? NULL : keys->slots[i].value;
}

int dpd_keys_given(const dpd_keys *keys, const char *name) {
  long i = dpd_keys_find(keys, name);
  return i >= 0 && keys->slots[i].given;
}

static void format_range(char *buf, size_t cap, const char *key, double lo, int lo_incl, double hi,
                         int hi_incl, int allow_inf) {
  char lo_s[64] = "", hi_s[64] = "";
  if (isfinite(lo)) {
    snprintf(lo_s, sizeof lo_s, "%g %s ", lo, lo_incl ? "<=" : "<");
  }
  if (isfinite(hi)) {
    snprintf(hi_s, sizeof hi_s, " %s %g", hi_incl ? "<=" : "<", hi);
  }
  snprintf(buf, cap, "%s%s%s%s", lo_s, key, hi_s, allow_inf ? ", or inf" : "");
}

/* Integer bound of an INT descriptor as size_t (saturating). */
static size_t size_bound(double x) {
  if (!(x > 0.0)) {
    return 0;
  }
  if (x >= 18446744073709551615.0 || x >= (double)SIZE_MAX) {
    return SIZE_MAX;
  }
  return (size_t)x;
}

/* The choices "a|b|c" as "a, b, c". */
static void format_choices(char *buf, size_t cap, const char *choices) {
  size_t len = 0;
  buf[0] = '\0';
  for (const char *c = choices; *c != '\0' && len + 3 < cap; c++) {
    if (*c == '|') {
      buf[len++] = ',';
      buf[len++] = ' ';
    } else {
      buf[len++] = *c;
    }
  }
  buf[len] = '\0';
}

/* ---- Help texts: placeholders expanded from the tables ------------------------------------ */

/* A text written into buf[0..cap) that counts the whole length (as snprintf). */
typedef struct {
  char *buf;
  size_t cap, len;
} help_text;

static void help_put(help_text *h, const char *s, size_t n) {
  if (h->len + 1 < h->cap) {
    size_t room = h->cap - 1 - h->len;
    memcpy(h->buf + h->len, s, n < room ? n : room);
  }
  h->len += n;
}

static void help_puts(help_text *h, const char *s) {
  help_put(h, s, strlen(s));
}

/* {schedules}: every family as its value ("file:PATH"), " | "; {schedules:KEY}: the families
 * that read KEY, ", ". */
static void schedules_put(help_text *h, const char *key, size_t keylen) {
  char name[64];
  const dpd_schedule_family *f;
  int first = 1;
  snprintf(name, sizeof name, "%.*s", (int)(keylen < 63 ? keylen : 63), key != NULL ? key : "");
  for (size_t i = 0; (f = dpd_schedule_family_at(i)) != NULL; i++) {
    if (key != NULL && !dpd_schedule_family_reads(f, name)) {
      continue;
    }
    help_puts(h, first ? "" : key != NULL ? ", " : " | ");
    help_puts(h, f->name);
    if (key == NULL && f->takes_path) {
      help_puts(h, ":PATH");
    }
    first = 0;
  }
}

/* {noise_laws}: every law as its value, with its parameter's range ("student:NU (NU > 2)"). */
static void noise_laws_put(help_text *h) {
  const dpd_noise_law_type *t;
  for (size_t i = 0; (t = dpd_noise_law_type_at(i)) != NULL; i++) {
    help_puts(h, i > 0 ? " | " : "");
    help_puts(h, t->name);
    if (t->parameter != NULL) {
      help_puts(h, ":");
      help_puts(h, t->parameter);
      if (t->parameter_allowed != NULL) {
        help_puts(h, " (");
        help_puts(h, t->parameter);
        help_puts(h, " ");
        help_puts(h, t->parameter_allowed);
        help_puts(h, ")");
      }
    }
  }
}

size_t dpd_key_desc_help_get(const dpd_key_desc *d, char *buf, size_t cap) {
  static const char schedules[] = "{schedules", noise_laws[] = "{noise_laws}";
  help_text h = {buf, cap, 0};
  const char *s = d->help != NULL ? d->help : "";
  while (*s != '\0') {
    const char *open = strchr(s, '{'), *close;
    if (open == NULL) {
      help_puts(&h, s);
      break;
    }
    help_put(&h, s, (size_t)(open - s));
    close = strchr(open, '}');
    if (close != NULL && strncmp(open, noise_laws, sizeof noise_laws - 1) == 0) {
      noise_laws_put(&h);
    } else if (close != NULL && strncmp(open, schedules, sizeof schedules - 1) == 0 &&
               (open[sizeof schedules - 1] == '}' || open[sizeof schedules - 1] == ':')) {
      const char *key = open[sizeof schedules - 1] == ':' ? open + sizeof schedules : NULL;
      schedules_put(&h, key, key != NULL ? (size_t)(close - key) : 0);
    } else { /* not a placeholder: the brace itself */
      help_put(&h, open, 1);
      s = open + 1;
      continue;
    }
    s = close + 1;
  }
  if (cap > 0) {
    buf[h.len < cap ? h.len : cap - 1] = '\0';
  }
  return h.len;
}

void dpd_key_desc_allowed(const dpd_key_desc *d, char *buf, size_t cap) {
  switch (d->kind) {
  case DPD_KEY_REAL:
    format_range(buf, cap, d->name, d->lo, !(d->flags & DPD_KEY_LO_OPEN), d->hi,
                 !(d->flags & DPD_KEY_HI_OPEN), (d->flags & DPD_KEY_INF) != 0);
    break;
  case DPD_KEY_INT:
    if (d->hi >= 18446744073709551615.0) {
      snprintf(buf, cap, "integer %zu <= %s < 2^64", size_bound(d->lo), d->name);
    } else {
      snprintf(buf, cap, "integer %zu <= %s <= %zu", size_bound(d->lo), d->name, size_bound(d->hi));
    }
    break;
  case DPD_KEY_TEXT:
    if (d->choices != NULL) {
      format_choices(buf, cap, d->choices);
    } else {
      if (d->help == NULL) {
        snprintf(buf, cap, "text");
      } else {
        (void)dpd_key_desc_help_get(d, buf, cap);
      }
    }
    break;
  case DPD_KEY_BYTES:
    snprintf(buf, cap, "bytes >= 1M, an integer with an optional suffix K, M, G or T");
    break;
  }
}

static const dpd_key_desc *desc_of(const dpd_keys *keys, const char *name) {
  long i = dpd_keys_find(keys, name);
  return i < 0 ? NULL : keys->slots[i].desc;
}

int dpd_keys_real_range_get(const dpd_keys *keys, const char *name, double lo, int lo_incl,
                            double hi, int hi_incl, int allow_inf, double *out, dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, name);
  char buf[256], range[160];
  double v;
  format_range(range, sizeof range, name, lo, lo_incl, hi, hi_incl, allow_inf);
  if (text == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "missing value for '%s' (allowed: %s)", name, range);
  }
  if (dpd__trim_copy(buf, sizeof buf, text) < 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %zu characters (allowed: a number of at most %zu "
                    "characters, %s)",
                    name, strlen(text), sizeof buf - 1, range);
  }
  if (dpd__is_inf_literal(buf)) {
    v = INFINITY;
  } else if (dpd__decimal_span(buf, buf + strlen(buf))) {
    errno = 0;
    v = strtod(buf, NULL);
    if (isinf(v)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' overflows a double (allowed: %s)", name, buf,
                      range);
    }
  } else {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': '%s' (allowed: a number, %s)", name,
                    text, range);
  }
  if (isinf(v) ? !allow_inf : ((lo_incl ? v < lo : v <= lo) || (hi_incl ? v > hi : v >= hi))) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %s (allowed: %s)", name, buf, range);
  }
  *out = v + 0.0; /* -0 is 0 */
  return DPD_OK;
}

int dpd_keys_real_get(const dpd_keys *keys, const char *name, double *out, dpd_err *err) {
  const dpd_key_desc *d = desc_of(keys, name);
  if (d == NULL || d->kind != DPD_KEY_REAL) {
    return DPD_FAIL(err, DPD_EINVAL, "internal: '%s' is not a real key", name);
  }
  return dpd_keys_real_range_get(keys, name, d->lo, !(d->flags & DPD_KEY_LO_OPEN), d->hi,
                                 !(d->flags & DPD_KEY_HI_OPEN), (d->flags & DPD_KEY_INF) != 0, out,
                                 err);
}

int dpd_keys_size_range_get(const dpd_keys *keys, const char *name, size_t lo, size_t hi,
                            size_t *out, dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, name);
  unsigned long long v;
  if (text == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "missing value for '%s' (allowed: integer %zu <= %s <= %zu)",
                    name, lo, name, hi);
  }
  if (dpd__parse_u64(text, &v) < 0 || v < lo || v > hi) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' (allowed: integer %zu <= %s <= %zu)", name, text,
                    lo, name, hi);
  }
  *out = (size_t)v;
  return DPD_OK;
}

int dpd_keys_size_get(const dpd_keys *keys, const char *name, size_t *out, dpd_err *err) {
  const dpd_key_desc *d = desc_of(keys, name);
  if (d == NULL || d->kind != DPD_KEY_INT) {
    return DPD_FAIL(err, DPD_EINVAL, "internal: '%s' is not an integer key", name);
  }
  return dpd_keys_size_range_get(keys, name, size_bound(d->lo), size_bound(d->hi), out, err);
}

int dpd_keys_u64_get(const dpd_keys *keys, const char *name, uint64_t *out, dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, name);
  unsigned long long v;
  if (text == NULL || dpd__parse_u64(text, &v) < 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' (allowed: integer 0 <= %s < 2^64)", name,
                    text == NULL ? "" : text, name);
  }
  *out = (uint64_t)v;
  return DPD_OK;
}

int dpd_keys_choice_get(const dpd_keys *keys, const char *name, size_t *index, dpd_err *err) {
  const dpd_key_desc *d = desc_of(keys, name);
  const char *text = dpd_keys_text_get(keys, name);
  char allowed[512];
  size_t k = 0, len;
  if (d == NULL || d->choices == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "internal: '%s' has no choices", name);
  }
  format_choices(allowed, sizeof allowed, d->choices);
  if (text == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "missing value for '%s' (allowed: %s)", name, allowed);
  }
  len = strlen(text);
  for (const char *c = d->choices; *c != '\0'; k++) {
    size_t w = strcspn(c, "|");
    if (w == len && strncmp(c, text, len) == 0) {
      *index = k;
      return DPD_OK;
    }
    c += w;
    if (*c == '|') {
      c++;
    }
  }
  return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': '%s' (allowed: %s)", name, text,
                  allowed);
}

int dpd_keys_bytes_get(const dpd_keys *keys, const char *name, size_t def, size_t *out,
                       dpd_err *err) {
  const char *text = dpd_keys_text_get(keys, name);
  char buf[64], *end;
  unsigned long long x, mult = 1;
  size_t len;
  if (text == NULL) {
    *out = def;
    return DPD_OK;
  }
  if (dpd__trim_copy(buf, sizeof buf, text) < 0 || !isdigit((unsigned char)buf[0])) {
    goto bad;
  }
  len = strlen(buf);
  switch (buf[len - 1]) {
  case 'K':
    mult = 1ULL << 10;
    break;
  case 'M':
    mult = 1ULL << 20;
    break;
  case 'G':
    mult = 1ULL << 30;
    break;
  case 'T':
    mult = 1ULL << 40;
    break;
  default:
    break;
  }
  if (mult > 1) {
    buf[--len] = '\0';
  }
  errno = 0;
  x = strtoull(buf, &end, 10);
  if (*end != '\0' || errno == ERANGE || x == 0 || x > (unsigned long long)SIZE_MAX / mult ||
      x * mult < (1ULL << 20)) {
    goto bad;
  }
  *out = (size_t)(x * mult);
  return DPD_OK;
bad:
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for '%s': '%s' (allowed: bytes >= 1M, an integer with an "
                  "optional suffix K, M, G or T)",
                  name, text);
}

int dpd_keys_record_get(const dpd_keys *keys, size_t i, char *buf, size_t cap, double *x) {
  const dpd_key_desc *d = keys->slots[i].desc;
  const char *value = keys->slots[i].value;
  char t[256];
  unsigned long long u;
  buf[0] = '\0';
  if (value == NULL) {
    return 0;
  }
  snprintf(buf, cap, "%s", value);
  if (d->kind == DPD_KEY_TEXT || d->kind == DPD_KEY_BYTES ||
      dpd__trim_copy(t, sizeof t, value) < 0) {
    return 0;
  }
  if (d->kind == DPD_KEY_INT) {
    if (dpd__parse_u64(t, &u) < 0) {
      return 0;
    }
    snprintf(buf, cap, "%llu", u);
    *x = (double)u;
    return 1;
  }
  if (dpd__is_inf_literal(t)) {
    snprintf(buf, cap, "inf");
    *x = INFINITY;
    return 2;
  }
  if (!dpd__decimal_span(t, t + strlen(t))) {
    return 0;
  }
  *x = strtod(t, NULL) + 0.0; /* -0 is 0 */
  if (!isfinite(*x)) {
    return 0;
  }
  dpd__format_shortest(buf, cap, *x);
  return 1;
}
