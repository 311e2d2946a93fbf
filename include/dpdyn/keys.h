/* Keys: the parameters of a run as `key = text` pairs, validated from a table of key
 * descriptors.
 * SPDX-License-Identifier: MIT
 *
 * Every model (dpdyn/model.h) describes its parameters in one table of dpd_key_desc: name,
 * kind, default, allowed range or choices, the commands the key applies to, and one line of
 * help. The same table drives the command line's parsing, `dpdyn COMMAND --help`, every
 * "allowed: ..." of an error message, the records of summaries and data headers, and the
 * Python package, so a key is declared once.
 *
 * A dpd_keys object holds one value (text) per key of its tables. Values come from the user
 * (dpd_keys_set: "given"), from the table's default, or from the model, which records the value
 * a key took in effect (dpd_keys_effective_set: n computed from gamma, a grid clamped to the
 * number of steps). Typed getters parse and validate; their errors name the key, the value and
 * the allowed range (DPD_EINVAL). Numbers are decimal ([+-]digits[.digits][e[+-]digits]) or
 * `inf` where the key allows it; hexadecimal floats, nan and trailing text are refused. */
#ifndef DPD_KEYS_H
#define DPD_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  DPD_KEY_REAL = 0, /* a double in [lo, hi] (flags: open ends, inf allowed) */
  DPD_KEY_INT,      /* an integer in [lo, hi] (read as size_t or uint64_t) */
  DPD_KEY_TEXT,     /* text: one of `choices`, or free form (a spec the model parses) */
  DPD_KEY_BYTES     /* a resource limit (bytes, suffix K/M/G/T): never changes a result, not
                       recorded in summaries */
} dpd_key_kind;

/* Range flags of REAL keys. */
#define DPD_KEY_LO_OPEN 1u /* lo itself is not allowed */
#define DPD_KEY_HI_OPEN 2u /* hi itself is not allowed */
#define DPD_KEY_INF 4u     /* the literal inf is allowed */

typedef struct {
  const char *name;
  dpd_key_kind kind;
  const char *def;      /* default text; NULL: unset unless given or set by the model (the help
                           says what applies then) */
  double lo, hi;        /* REAL, INT: the allowed range (+-INFINITY: unbounded) */
  unsigned flags;       /* DPD_KEY_* range flags */
  const char *choices;  /* TEXT: the allowed values separated by '|', NULL: free form */
  const char *commands; /* the commands the key applies to, separated by spaces; NULL: all */
  const char *help;     /* one line; may name lists of the library's tables by placeholders
                           (dpd_key_desc_help_get) */
} dpd_key_desc;

/* Whether `command` is one of d->commands. */
DPD_API int dpd_key_desc_applies(const dpd_key_desc *d, const char *command);

typedef struct dpd_keys dpd_keys;

/* Creates a key set for `command` from `ntables` tables (each terminated by a NULL name),
 * with every table default in place. A name in two tables keeps the first descriptor.
 * tables: borrowed, must outlive the object; *out: returned-owned, free with dpd_keys_free. */
DPD_API int dpd_keys_create(const dpd_key_desc *const *tables, size_t ntables, const char *command,
                            dpd_keys **out, dpd_err *err);
DPD_API void dpd_keys_free(dpd_keys *keys);
/* A copy with the same values (returned-owned). */
DPD_API int dpd_keys_copy(const dpd_keys *keys, dpd_keys **out, dpd_err *err);

/* The command the set was created for (borrowed). */
DPD_API const char *dpd_keys_command_get(const dpd_keys *keys);
/* Number of keys, and the descriptor / value (NULL: unset) / given flag of the i-th one, in
 * table order. */
DPD_API size_t dpd_keys_count(const dpd_keys *keys);
DPD_API const dpd_key_desc *dpd_keys_desc_get(const dpd_keys *keys, size_t i);
DPD_API const char *dpd_keys_value_get(const dpd_keys *keys, size_t i);
DPD_API int dpd_keys_given_at(const dpd_keys *keys, size_t i);
/* Index of `name`, or -1 when no table has it. */
DPD_API long dpd_keys_find(const dpd_keys *keys, const char *name);
/* Whether the key exists and applies to the set's command. */
DPD_API int dpd_keys_applies(const dpd_keys *keys, const char *name);

/* Sets a value the user gave (text copied). DPD_EINVAL when no table has `name` (the message
 * names it); the value itself is checked by the getters. */
DPD_API int dpd_keys_set(dpd_keys *keys, const char *name, const char *text, dpd_err *err);
/* Records the value a key takes in effect (a model default, a derived value): text, or a
 * number in its shortest round-trip form. The key stays "not given". */
DPD_API int dpd_keys_effective_set(dpd_keys *keys, const char *name, const char *text,
                                   dpd_err *err);
DPD_API int dpd_keys_effective_real_set(dpd_keys *keys, const char *name, double value,
                                        dpd_err *err);
/* The same, only when the user did not give the key (a model's own default). */
DPD_API int dpd_keys_default_set(dpd_keys *keys, const char *name, const char *text, dpd_err *err);
/* Drops the value of every key that does not apply to the command, so that records list only
 * the keys in effect. A given key that does not apply is an error when `strict` (the message
 * names it, `what` and the keys that do apply), else it is dropped too. */
DPD_API int dpd_keys_restrict(dpd_keys *keys, int strict, const char *what, dpd_err *err);
/* Drops the value of one key (as if never set). */
DPD_API void dpd_keys_unset(dpd_keys *keys, const char *name);

/* Raw text (given, default or in effect), NULL if unset or unknown. */
DPD_API const char *dpd_keys_text_get(const dpd_keys *keys, const char *name);
DPD_API int dpd_keys_given(const dpd_keys *keys, const char *name);

/* Typed getters: the table's range, or an explicit one (*_range_get). A missing value, a
 * malformed one and one out of range are DPD_EINVAL naming the key, the value and the range. */
DPD_API int dpd_keys_real_get(const dpd_keys *keys, const char *name, double *out, dpd_err *err);
DPD_API int dpd_keys_real_range_get(const dpd_keys *keys, const char *name, double lo, int lo_incl,
                                    double hi, int hi_incl, int allow_inf, double *out,
                                    dpd_err *err);
DPD_API int dpd_keys_size_get(const dpd_keys *keys, const char *name, size_t *out, dpd_err *err);
DPD_API int dpd_keys_size_range_get(const dpd_keys *keys, const char *name, size_t lo, size_t hi,
                                    size_t *out, dpd_err *err);
DPD_API int dpd_keys_u64_get(const dpd_keys *keys, const char *name, uint64_t *out, dpd_err *err);
/* TEXT with choices: the index of the value in the choices. */
DPD_API int dpd_keys_choice_get(const dpd_keys *keys, const char *name, size_t *index,
                                dpd_err *err);
/* BYTES: the limit in bytes (at least 1 MiB); unset: `def`. */
DPD_API int dpd_keys_bytes_get(const dpd_keys *keys, const char *name, size_t def, size_t *out,
                               dpd_err *err);

/* The value of a key as recorded in summaries and headers: a number in effect in its shortest
 * round-trip form (' 7 ', 007 -> 7, -0 -> 0, 1e3 -> 1000), else the text. Returns 1 with *x set
 * for a finite number, 2 for inf, 0 for text (buf holds the text then, truncated to cap). */
DPD_API int dpd_keys_record_get(const dpd_keys *keys, size_t i, char *buf, size_t cap, double *x);

/* "allowed: ..." text of a key from its table (range or choices; a free-form TEXT key: its help
 * as dpd_key_desc_help_get writes it), for messages. */
DPD_API void dpd_key_desc_allowed(const dpd_key_desc *d, char *buf, size_t cap);

/* The help line of a key with its placeholders replaced by lists read from the library's tables
 * at the time of the call, registered entries included (schedule.h, noise.h), so that a help
 * text never lists families or laws by hand:
 *   {schedules}      the values of a schedule key: "const | sqrt | ... | file:PATH"
 *   {schedules:KEY}  the schedule families that read the key KEY: "const, sqrt, ..."
 *   {noise_laws}     the values of a label-noise key: "gaussian | ... | student:NU (NU > 2)"
 * Other text, an unknown placeholder included, is copied as it is; d->help NULL is "". Writes
 * at most cap bytes (always terminated when cap > 0; a longer text is cut) and returns the
 * length of the whole text, as snprintf does. `buf` is caller-owned. */
DPD_API size_t dpd_key_desc_help_get(const dpd_key_desc *d, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* DPD_KEYS_H */
