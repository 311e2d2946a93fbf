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
#include "core/error_impl.h"

static const cli_key key_table[] = {
    {"model", KEY_STRING, "linreg",
     "linreg (one-pass DP-SGD) | rf (random features, full-batch DP-GD: simulate, ou, compare, "
     "account)"},
    {"p", KEY_INT, NULL, "rf: number of random features p >= 1 [4000]"},
    {"n_test", KEY_INT, NULL, "rf: test samples >= 1 [1000]"},
    {"activation", KEY_STRING, NULL, "rf: tanh | relu_centered | hermite13 [tanh]"},
    {"target", KEY_STRING, NULL, "rf: linear | sign | hermite2 [sign]"},
    {"input", KEY_STRING, NULL, "rf: gaussian | sphere (radius sqrt(d)) [gaussian]"},
    {"eta", KEY_REAL, NULL, "rf: DP-GD step size > 0 [1/p]"},
    {"steps", KEY_INT, NULL, "rf: DP-GD iterations T >= 1 [5 d, i.e. tau = eta T = 5 d/p]"},
    {"clip", KEY_REAL, NULL, "rf: C_clip / sqrt(p) > 0; inf = no clipping [inf]"},
    {"sigma", KEY_REAL, NULL, "rf: noise multiplier given directly instead of epsilon"},
    {"calibration", KEY_STRING, NULL,
     "rf: sigma from epsilon by exact (mu-GDP composition) | moments (seed's bound) [exact]"},
    {"d", KEY_INT, NULL, "dimension d >= 1 [rf: 100]"},
    {"n", KEY_INT, NULL, "samples = steps n >= 1 (or give gamma) [rf: 2000]"},
    {"gamma", KEY_REAL, NULL, "d/n > 0 (replaces n)"},
    {"zeta", KEY_REAL, "0.5", "label-noise standard deviation >= 0 (rf default: 0)"},
    {"noise", KEY_STRING, "gaussian",
     "label-noise law (variance zeta^2): gaussian | laplace | rademacher | student:NU (NU > 2)"},
    {"spectrum", KEY_STRING, "iso",
     "iso | levels:L1*M1,L2*M2,... | powerlaw:ALPHA | file:PATH (renormalised to mean 1)"},
    {"theta_star", KEY_STRING, "random", "random | flat | file:PATH (eigenbasis components)"},
    {"theta_norm", KEY_REAL, "1", "|theta*| > 0"},
    {"c", KEY_REAL, "inf", "clipping scale, C = c sqrt(d); inf = no clipping"},
    {"rho", KEY_REAL, "inf", "privacy rho (rho^2/2-zCDP); inf = non-private"},
    {"epsilon", KEY_REAL, NULL, "target epsilon (with delta) instead of rho"},
    {"delta", KEY_REAL, NULL, "delta in (0, 1) for (epsilon, delta) conversions [rf: 1/n]"},
    {"schedule", KEY_STRING, "const",
     "const | sqrt | hyperbolic | optimal | step | cosine | file:PATH (columns t eta)"},
    {"eta0", KEY_REAL, "1", "eta~(0) for const, sqrt, hyperbolic"},
    {"a", KEY_REAL, "1", "hyperbolic decay: eta~(t) = eta0/(1 + a t)"},
    {"c1", KEY_REAL, "1", "optimal: eta~(t) = c1/(t + gamma max(c2, c3/rho))"},
    {"c2", KEY_REAL, "1", "optimal schedule constant c2 > 0"},
    {"c3", KEY_REAL, "0", "optimal schedule constant c3 >= 0"},
    {"factor", KEY_REAL, "0.5", "step: multiplier of eta~ at each drop, > 0"},
    {"drops", KEY_INT, "1", "step: number of equally spaced drops, >= 1"},
    {"eta_min", KEY_REAL, "0", "cosine: eta~(t) = eta_min + (eta0 - eta_min)(1 + cos(pi t))/2"},
    {"dt", KEY_REAL, NULL, "sde: Euler-Maruyama step in (0, 1] (default 1/n)"},
    {"sde", KEY_INT, "0", "compare: 1 = also integrate the SDE (three-way comparison)"},
    {"sequence", KEY_STRING, NULL,
     "account: file of (eta_k, sigma_k) rows; reports rho_eff of that sequence"},
    {"seeds", KEY_INT, "16", "replicates >= 1"},
    {"seed", KEY_INT, "1", "master seed"},
    {"threads", KEY_INT, "0", "worker threads (0 = all cores); results do not depend on it"},
    {"grid", KEY_INT, "101", "recorded time points on [0, 1], >= 2"},
    {"out", KEY_STRING, "./dpdyn-out", "output directory"},
    {"max_memory", KEY_BYTES, NULL,
     "most memory a run may allocate, in bytes or with K/M/G/T (default: half the RAM)"},
    {"method", KEY_STRING, "bdf",
     "ODE method: bdf | adams | volterra (FFT, constant schedules without clipping)"},
    {"rtol", KEY_REAL, "1e-8", "ODE relative tolerance"},
    {"atol", KEY_REAL, "1e-12", "ODE absolute tolerance on the risk"},
    {"plot", KEY_INT, NULL, "1 = render a PNG with gnuplot (default 1 for compare, 0 otherwise)"},
    {"tune", KEY_STRING, NULL, "tune: what to optimise (default c,eta0; optimal: c,c1,c2,c3)"},
    {"c_min", KEY_REAL, NULL, "tune: smallest clipping scale searched (default 0.01)"},
    {"c_max", KEY_REAL, NULL, "tune: largest clipping scale searched (default 100)"},
    {"heatmap", KEY_INT, NULL, "tune: (c, eta~(0)) surface points per axis, 0 = none (default 41)"},
    {"heatmap_eta", KEY_STRING, NULL,
     "tune: eta~(0) axis of the surface: log | linear (default log)"},
    {"confirm_seeds", KEY_INT, NULL,
     "tune: replicates of the confirmation simulation, 0 = skip (default 64)"},
    {NULL, KEY_STRING, NULL, NULL}};

const cli_key *cli_key_table(void) {
  return key_table;
}

static int trim_copy(char *dst, size_t cap, const char *src);
static void format_shortest(char *buf, size_t cap, double x);

static cli_value *find_value(const cli_params *p, const char *key) {
  for (size_t i = 0; i < p->nvalues; i++) {
    if (strcmp(p->values[i].key, key) == 0) {
      return &p->values[i];
    }
  }
  return NULL;
}

static char *dup_string(const char *s) {
  size_t len = strlen(s);
  char *d = malloc(len + 1);
  if (d != NULL) {
    memcpy(d, s, len + 1);
  }
  return d;
}

static int set_value(cli_params *p, const char *key, const char *value, size_t ini_line,
                     const char *flag, dpd_err *err) {
  cli_value *v = find_value(p, key);
  char *copy;
  if (v == NULL) {
    if (ini_line > 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "unknown key '%s' in the INI file '%s' line %zu (see 'dpdyn %s --help' "
                      "for the keys)",
                      key, p->ini_path, ini_line, p->command);
    }
    return DPD_FAIL(err, DPD_EINVAL, "unknown key '%s' (see 'dpdyn %s --help' for the keys)", key,
                    p->command);
  }
  if (ini_line > 0 && v->ini_line > 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "key '%s' is set twice in the INI file '%s', on lines %zu and %zu (allowed: "
                    "each key once; a --%s flag overrides the file)",
                    key, p->ini_path, v->ini_line, ini_line, key);
  }
  copy = dup_string(value);
  if (copy == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  free(v->value);
  v->value = copy;
  v->given = 1;
  if (ini_line > 0) {
    v->ini_line = ini_line;
  }
  if (flag != NULL) {
    v->flag = flag;
  }
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
  if (set_value(ctx->p, name, value, line > 0 ? line : 1, NULL, ctx->err) < 0) {
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
    return DPD_FAIL(err, DPD_EINVAL,
                    "malformed INI file '%s' at line %d (allowed: 'key = value' lines, "
                    "[sections], ';' or '#' comments)",
                    p->ini_path, line);
  }
  if (line < 0) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory parsing the INI file '%s'", p->ini_path);
  }
  return DPD_OK;
}

void cli_params_free(cli_params *p) {
  if (p->values != NULL) {
    for (size_t i = 0; i < p->nvalues; i++) {
      free(p->values[i].value);
    }
    free(p->values);
  }
  memset(p, 0, sizeof *p);
}

size_t cli_physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || size <= 0) {
    return 0;
  }
  return (size_t)pages * (size_t)size;
}

/* max_memory = BYTES[K|M|G|T]; default half the physical memory (4 GiB if unknown). */
static int parse_max_memory(cli_params *p, dpd_err *err) {
  const cli_value *v = find_value(p, "max_memory");
  char buf[64], *end;
  unsigned long long x, mult = 1;
  size_t len;
  if (v == NULL || v->value == NULL) {
    size_t ram = cli_physical_memory();
    p->max_memory = ram > 0 ? ram / 2 : (size_t)1 << 32;
    return DPD_OK;
  }
  if (trim_copy(buf, sizeof buf, v->value) < 0 || !isdigit((unsigned char)buf[0])) {
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
  p->max_memory = (size_t)(x * mult);
  return DPD_OK;
bad:
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for 'max_memory': '%s' (allowed: bytes >= 1M, an integer "
                  "with an optional suffix K, M, G or T)",
                  v->value);
}

int cli_check_memory(const cli_params *p, double bytes, const char *driver, dpd_err *err) {
  if (!(bytes <= (double)p->max_memory)) {
    const char *value = cli_get_text(p, driver);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %s needs about %.3g bytes (%.3g GiB) of memory "
                    "(allowed: at most max_memory = %zu bytes (%.3g GiB); %s '%s' or raise "
                    "max_memory)",
                    driver, value != NULL ? value : "?", bytes, bytes / 1073741824.0, p->max_memory,
                    (double)p->max_memory / 1073741824.0,
                    strcmp(driver, "gamma") == 0 ? "raise" : "lower", driver);
  }
  return DPD_OK;
}

int cli_params_parse(cli_params *p, const char *command, int argc, char **argv, dpd_err *err) {
  size_t nkeys = 0;
  int status;
  memset(p, 0, sizeof *p);
  p->command = command;
  while (key_table[nkeys].name != NULL) {
    nkeys++;
  }
  p->values = calloc(nkeys, sizeof *p->values);
  if (p->values == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  p->nvalues = nkeys;
  for (size_t i = 0; i < nkeys; i++) {
    p->values[i].key = key_table[i].name;
    if (key_table[i].def != NULL) {
      p->values[i].value = dup_string(key_table[i].def);
      if (p->values[i].value == NULL) {
        return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      }
    }
  }
  /* First pass: the INI file (a single positional argument). */
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      p->help = 1;
      return DPD_OK;
    }
    if (strncmp(arg, "--", 2) == 0) {
      if (strchr(arg, '=') == NULL) {
        i++; /* "--key value": skip the value */
      }
      continue;
    }
    if (p->ini_path != NULL) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "unexpected argument '%s' (allowed: one INI file, then --key=value flags)",
                      arg);
    }
    p->ini_path = arg;
  }
  if (p->ini_path != NULL && (status = parse_ini(p, err)) < 0) {
    return status;
  }
  /* Second pass: flags override the file. */
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    char key[128];
    const char *value;
    const char *eq;
    if (strncmp(arg, "--", 2) != 0) {
      continue;
    }
    eq = strchr(arg, '=');
    if (eq != NULL) {
      size_t len = (size_t)(eq - arg - 2);
      if (len == 0 || len >= sizeof key) {
        return DPD_FAIL(err, DPD_EINVAL, "malformed flag '%s' (allowed: --key=value)", arg);
      }
      memcpy(key, arg + 2, len);
      key[len] = '\0';
      value = eq + 1;
    } else {
      size_t len = strlen(arg + 2);
      if (len == 0 || len >= sizeof key) {
        return DPD_FAIL(err, DPD_EINVAL, "malformed flag '%s' (allowed: --key=value)", arg);
      }
      memcpy(key, arg + 2, len + 1);
      if (i + 1 >= argc) {
        return DPD_FAIL(err, DPD_EINVAL, "flag '--%s' has no value (allowed: --%s=VALUE)", key,
                        key);
      }
      value = argv[++i];
    }
    if ((status = set_value(p, key, value, 0, arg, err)) < 0) {
      return status;
    }
  }
  return parse_max_memory(p, err);
}

int cli_set_text(cli_params *p, const char *key, const char *text) {
  cli_value *v = find_value(p, key);
  char *copy;
  if (v == NULL) {
    return DPD_EINVAL;
  }
  if ((copy = dup_string(text)) == NULL) {
    return DPD_ENOMEM;
  }
  free(v->value);
  v->value = copy;
  return DPD_OK;
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
  for (size_t i = 0; i < p->nvalues; i++) {
    cli_value *v = &p->values[i];
    if (in_list(allowed, v->key)) {
      continue;
    }
    if (v->given) {
      char list[1024];
      size_t len = 0;
      list[0] = '\0';
      for (size_t k = 0; allowed[k] != NULL && len < sizeof list; k++) {
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", allowed[k]);
      }
      return DPD_FAIL(err, DPD_EINVAL, "key '%s' does not apply to %s (allowed keys: %s)", v->key,
                      what, list);
    }
    free(v->value);
    v->value = NULL;
  }
  return DPD_OK;
}

void cli_params_note_unused(const cli_params *p, const char *const *allowed, const char *what) {
  for (size_t i = 0; i < p->nvalues; i++) {
    const cli_value *v = &p->values[i];
    if (v->flag != NULL && !in_list(allowed, v->key)) {
      fprintf(stderr, "dpdyn %s: note: '%s' has no effect on %s\n", p->command, v->flag, what);
    }
  }
}

int cli_set_effective(cli_params *p, const char *key, double value) {
  cli_value *v = find_value(p, key);
  char text[64], *copy;
  if (v == NULL) {
    return DPD_EINVAL;
  }
  format_shortest(text, sizeof text, value);
  copy = dup_string(text);
  if (copy == NULL) {
    return DPD_ENOMEM;
  }
  free(v->value);
  v->value = copy;
  return DPD_OK;
}

const char *cli_get_text(const cli_params *p, const char *key) {
  const cli_value *v = find_value(p, key);
  return v == NULL ? NULL : v->value;
}

int cli_is_given(const cli_params *p, const char *key) {
  const cli_value *v = find_value(p, key);
  return v != NULL && v->given;
}

/* Copies `src` without its surrounding white space; -1 if it does not fit in `cap`. */
static int trim_copy(char *dst, size_t cap, const char *src) {
  size_t len;
  while (isspace((unsigned char)*src)) {
    src++;
  }
  len = strlen(src);
  while (len > 0 && isspace((unsigned char)src[len - 1])) {
    len--;
  }
  if (len >= cap) {
    return -1;
  }
  memcpy(dst, src, len);
  dst[len] = '\0';
  return 0;
}

/* A decimal number as people write it (cli_decimal_span: no hex, no nan), or the literal inf. */
static int is_decimal(const char *s) {
  return cli_decimal_span(s, s + strlen(s));
}

static int is_inf_literal(const char *s) {
  return strcmp(s, "inf") == 0 || strcmp(s, "+inf") == 0 || strcmp(s, "Inf") == 0 ||
         strcmp(s, "INF") == 0;
}

/* The shortest of %.15g / %.17g that reads back as the same double. */
static void format_shortest(char *buf, size_t cap, double x) {
  snprintf(buf, cap, "%.15g", x);
  if (strtod(buf, NULL) != x) {
    snprintf(buf, cap, "%.17g", x);
  }
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

int cli_get_real(const cli_params *p, const char *key, double lo, int lo_incl, double hi,
                 int hi_incl, int allow_inf, double *out, dpd_err *err) {
  const char *text = cli_get_text(p, key);
  char buf[256], range[160];
  double v;
  format_range(range, sizeof range, key, lo, lo_incl, hi, hi_incl, allow_inf);
  if (text == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "missing value for '%s' (allowed: %s)", key, range);
  }
  if (trim_copy(buf, sizeof buf, text) < 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': %zu characters (allowed: a number of at most %zu "
                    "characters, %s)",
                    key, strlen(text), sizeof buf - 1, range);
  }
  if (is_inf_literal(buf)) {
    v = INFINITY;
  } else if (is_decimal(buf)) {
    errno = 0;
    v = strtod(buf, NULL);
    if (isinf(v)) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%s' overflows a double (allowed: %s)", key, buf,
                      range);
    }
  } else {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': '%s' (allowed: a number, %s)", key,
                    text, range);
  }
  if (isinf(v) ? !allow_inf : ((lo_incl ? v < lo : v <= lo) || (hi_incl ? v > hi : v >= hi))) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': %s (allowed: %s)", key, buf, range);
  }
  *out = v + 0.0; /* -0 is 0 */
  return DPD_OK;
}

static int parse_u64(const char *text, unsigned long long *out) {
  char buf[256];
  char *end;
  const char *digits = buf;
  int negative = 0;
  if (trim_copy(buf, sizeof buf, text) < 0) {
    return -1;
  }
  if (*digits == '+' || *digits == '-') { /* +7 is 7; -0 is 0, any other sign is an error */
    negative = *digits == '-';
    digits++;
  }
  if (!isdigit((unsigned char)digits[0])) {
    return -1;
  }
  errno = 0;
  *out = strtoull(digits, &end, 10);
  return (*end != '\0' || errno == ERANGE || (negative && *out != 0)) ? -1 : 0;
}

int cli_get_size(const cli_params *p, const char *key, size_t lo, size_t hi, size_t *out,
                 dpd_err *err) {
  const char *text = cli_get_text(p, key);
  unsigned long long v;
  if (text == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "missing value for '%s' (allowed: integer %zu <= %s <= %zu)",
                    key, lo, key, hi);
  }
  if (parse_u64(text, &v) < 0 || v < lo || v > hi) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' (allowed: integer %zu <= %s <= %zu)", key, text,
                    lo, key, hi);
  }
  *out = (size_t)v;
  return DPD_OK;
}

int cli_get_u64(const cli_params *p, const char *key, unsigned long long *out, dpd_err *err) {
  const char *text = cli_get_text(p, key);
  if (text == NULL || parse_u64(text, out) < 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' (allowed: integer 0 <= %s < 2^64)", key,
                    text == NULL ? "" : text, key);
  }
  return DPD_OK;
}

void cli_format_shortest(char *buf, size_t cap, double x) {
  format_shortest(buf, cap, x);
}

/* The value of a numeric key as recorded in summaries and headers: the number in effect in its
 * shortest form that reads back the same (' 7 ' and 007 as 7, -0 as 0, 1e3 as 1000), or the
 * text as given when it is not a valid number (then the run has already been refused). Returns
 * 1 with *x set for a finite number, 2 for inf, 0 otherwise. */
static int numeric_text(cli_key_type type, const char *value, char *buf, size_t cap, double *x) {
  char t[256];
  unsigned long long u;
  if (type == KEY_STRING || type == KEY_BYTES || trim_copy(t, sizeof t, value) < 0) {
    return 0;
  }
  if (type == KEY_INT) {
    if (parse_u64(t, &u) < 0) {
      return 0;
    }
    snprintf(buf, cap, "%llu", u);
    *x = (double)u;
    return 1;
  }
  if (is_inf_literal(t)) {
    snprintf(buf, cap, "inf");
    *x = INFINITY;
    return 2;
  }
  if (!is_decimal(t)) {
    return 0;
  }
  *x = strtod(t, NULL) + 0.0; /* -0 is 0 */
  if (!isfinite(*x)) {
    return 0;
  }
  format_shortest(buf, cap, *x);
  return 1;
}

void cli_params_to_json(const cli_params *p, cJSON *obj) {
  for (size_t i = 0; i < p->nvalues; i++) {
    const cli_value *v = &p->values[i];
    char buf[64];
    double x;
    if (v->value == NULL || key_table[i].type == KEY_BYTES) {
      continue;
    }
    if (numeric_text(key_table[i].type, v->value, buf, sizeof buf, &x) > 0) {
      cli_json_number(obj, v->key, x);
    } else {
      cJSON_AddStringToObject(obj, v->key, v->value);
    }
  }
}

void cli_params_to_header(const cli_params *p, FILE *f) {
  for (size_t i = 0; i < p->nvalues; i++) {
    const cli_value *v = &p->values[i];
    char buf[64];
    double x;
    if (v->value == NULL || key_table[i].type == KEY_BYTES) {
      continue;
    }
    fprintf(f, "# %s = %s\n", v->key,
            numeric_text(key_table[i].type, v->value, buf, sizeof buf, &x) > 0 ? buf : v->value);
  }
}
