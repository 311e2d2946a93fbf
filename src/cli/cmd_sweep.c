/* dpdyn sweep: any command over a grid of parameters, on one machine or over Open MPI ranks.
 * SPDX-License-Identifier: MIT
 *
 * dpdyn sweep COMMAND [FILE.ini] [--key=SPEC ...] [--out=DIR] [--plot_y=NAME]
 *
 * A key given a list (V1,V2,... for numeric keys, V1|V2|... for any key) or a range (lin:A:B:N,
 * log:A:B:N), or listed in the [sweep] section of the INI file, spans one axis of the grid; the
 * grid is the product of the axes, the first axis varying slowest (docs/sweep.md). Every point is
 * an ordinary run of COMMAND (cli_run) with the point's values, into OUT/points/<index>/, published
 * atomically by the output code of every command (output.c). Then OUT/sweep.tsv (one row per point:
 * the varied keys, the point's status, every number of its summary.json), OUT/summary.json (the
 * grid) and a figure (one axis: a line plot; two: a heat map).
 *
 * Order of the work, each step before the next:
 *   1. the arguments and the [sweep] section: the axes and the fixed keys (malformed lists or
 *      ranges: exit 1 naming the key);
 *   2. every point's parameters validated as its command validates them (cli_validate), so that an
 *      invalid point stops the sweep before anything runs;
 *   3. OUT: new, empty, or holding the same sweep (its configuration, OUT/.sweep, is the '#'
 *      header of sweep.tsv); another configuration is refused, naming the first key that differs;
 *   4. the points not yet complete (OUT/points/<index>/ holding summary.json, or failed.json for a
 *      point whose run failed numerically) run; the others are skipped, which resumes a killed
 *      sweep;
 *   5. OUT/sweep.tsv, OUT/summary.json and the figure, from the points' files.
 * Launched by mpirun (the environment says so), rank 0 does steps 2, 3 and 5 and the ranks share
 * step 4: the k-th pending point runs on rank k mod size. sweep.tsv is made from the points' files
 * alone, so it is the same byte for byte for any number of ranks and any interruption. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <ini.h>
#ifdef DPD_HAVE_MPI
#include <mpi.h>
#endif

#include "cli/cli.h"

/* Most points of one grid, and most values of one axis. */
#define SWEEP_MAX_POINTS ((size_t)1000000)
/* The configuration of the sweep in OUT (the '#' header of sweep.tsv). */
static const char manifest_name[] = ".sweep";
/* The record of a point whose run failed numerically (exit 2), in its point directory. */
static const char failed_name[] = "failed.json";
/* Numbers of a summary that describe the run, not its result: left out of sweep.tsv. */
static const char *const run_only[] = {"wall_seconds", "memory_estimate_bytes", NULL};
/* The summary number the figure shows by default: the first of these that the points have. */
static const char *const default_y[] = {"final_excess_risk", "final_test_risk", "rho_eff", "sigma",
                                        NULL};
/* Base keys named in the figure's title ("privacy": the privacy as the user gave it,
 * cli_plot_privacy). */
static const char *const title_keys[] = {"model",    "d",        "n",    "gamma", "p",
                                         "spectrum", "schedule", "c",    "clip",  "privacy",
                                         "eta",      "steps",    "zeta", "seeds", NULL};

/* One axis of the grid. */
typedef struct {
  const dpd_key_desc *key;
  char *spec;      /* as given (owned) */
  char **values;   /* the values as text, numbers in the form summaries record (owned) */
  double *numbers; /* numeric key: the values (owned); NULL for a text key */
  size_t n;
  int log;         /* given as a log: range */
  size_t ini_line; /* its line in the [sweep] section (0: a flag) */
} axis;

/* A key with one value for every point. */
typedef struct {
  const dpd_key_desc *key;
  char *value; /* owned */
} fixed_key;

typedef struct {
  const char *command; /* borrowed from argv */
  const char *ini;     /* borrowed from argv; NULL: none */
  fixed_key *fixed;
  size_t nfixed;
  axis *axes; /* the [sweep] section's axes (file order), then the flags' (command-line order) */
  size_t naxes;
  size_t npoints;
  int width;    /* digits of a point's directory name */
  char *out;    /* OUT (owned) */
  char *points; /* OUT/points (owned) */
  char *plot_y; /* NULL: the default; "none": no figure (owned) */
  int plot_y_flag;
  char *plot_log; /* the figure's log axes: auto (NULL), x, y, xy or none (owned) */
  int plot_log_flag;
} sweep;

/* The ranks of an mpirun launch (size 1 and no MPI otherwise). */
typedef struct {
  int rank, size;
  int mpi; /* MPI_Init was called */
} ranks;

/* ---------------------------------------------------------------- small helpers */

static const dpd_key_desc *find_key(const char *name) {
  return cli_key_find(name);
}

static int is_numeric(const dpd_key_desc *k) {
  return k->kind == DPD_KEY_INT || k->kind == DPD_KEY_REAL;
}

static int has_control(const char *s) {
  for (; *s != '\0'; s++) {
    if ((unsigned char)*s < 0x20 || *s == 0x7f) {
      return 1;
    }
  }
  return 0;
}

static void axis_free(axis *a) {
  if (a->values != NULL) {
    for (size_t i = 0; i < a->n; i++) {
      free(a->values[i]);
    }
  }
  free(a->values);
  free(a->numbers);
  free(a->spec);
  memset(a, 0, sizeof *a);
}

static void sweep_free(sweep *s) {
  for (size_t i = 0; i < s->nfixed; i++) {
    free(s->fixed[i].value);
  }
  for (size_t i = 0; i < s->naxes; i++) {
    axis_free(&s->axes[i]);
  }
  free(s->fixed);
  free(s->axes);
  free(s->out);
  free(s->points);
  free(s->plot_y);
  free(s->plot_log);
  memset(s, 0, sizeof *s);
}

/* Formats a number as summaries and sweep.tsv write it: shortest round trip, inf, -inf, nan. */
static void format_number(char *buf, size_t cap, double x) {
  if (isnan(x)) {
    snprintf(buf, cap, "nan");
  } else if (isinf(x)) {
    snprintf(buf, cap, x > 0 ? "inf" : "-inf");
  } else {
    dpd_io_number_format(buf, cap, x + 0.0);
  }
}

/* A whole file as a string (NULL if unreadable or larger than `limit`). */
static char *read_text(const char *path, size_t limit) {
  FILE *f;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  dpd_err ignored;
  dpd_err_reset(&ignored);
  /* a regular file only: a FIFO or device planted in a sweep directory must not block */
  if (dpd_io_file_open("file", 0, path, limit, &f, NULL, &ignored) < 0) {
    errno = EINVAL;
    return NULL;
  }
  for (;;) {
    size_t got;
    if (cap - len < 4096) {
      char *grown;
      cap = cap == 0 ? 8192 : 2 * cap;
      if (cap > limit + 4096 || (grown = realloc(buf, cap + 1)) == NULL) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = grown;
    }
    got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) {
      break;
    }
  }
  if (ferror(f) || len > limit) {
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[len] = '\0';
  return buf;
}

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ---------------------------------------------------------------- values of an axis */

static int bad_spec(dpd_err *err, const char *key, const char *spec, const char *why) {
  return CLI_FAIL(err, DPD_EINVAL,
                  "invalid value for '%s': '%.160s' (%s; allowed to sweep a key: V1,V2,... of "
                  "numbers or V1|V2|... of any values, lin:A:B:N or log:A:B:N for a numeric key "
                  "(N >= 2 values, both ends included; log: A, B > 0), or one value)",
                  key, spec, why);
}

/* Appends a value (text taken) to an axis being built. */
static int axis_push(axis *a, char *text, double x, dpd_err *err) {
  char **values = text != NULL ? realloc(a->values, (a->n + 1) * sizeof *values) : NULL;
  if (values == NULL) {
    free(text);
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  a->values = values;
  if (is_numeric(a->key)) {
    double *numbers = realloc(a->numbers, (a->n + 1) * sizeof *numbers);
    if (numbers == NULL) {
      free(text);
      return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    a->numbers = numbers;
    a->numbers[a->n] = x;
  }
  a->values[a->n++] = text;
  return DPD_OK;
}

/* [s, s + len) without surrounding white space. */
static void trim_span(const char **s, size_t *len) {
  while (*len > 0 && (**s == ' ' || **s == '\t')) {
    (*s)++;
    (*len)--;
  }
  while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t')) {
    (*len)--;
  }
}

/* One value of a numeric key in the form summaries record it (7 for +7 or 007, 0.5 for .5e0,
 * inf); 0 if [s, s + len) is no such value. */
static int numeric_value(const dpd_key_desc *k, const char *s, size_t len, char *buf, size_t cap,
                         double *x) {
  char t[128];
  if (len == 0 || len >= sizeof t) {
    return 0;
  }
  memcpy(t, s, len);
  t[len] = '\0';
  if (k->kind == DPD_KEY_INT) {
    const char *d = t[0] == '+' ? t + 1 : t;
    unsigned long long u;
    char *end;
    if (*d < '0' || *d > '9') {
      return 0;
    }
    errno = 0;
    u = strtoull(d, &end, 10);
    if (*end != '\0' || errno == ERANGE) {
      return 0;
    }
    snprintf(buf, cap, "%llu", u);
    *x = (double)u;
    return 1;
  }
  if (strcmp(t, "inf") == 0 || strcmp(t, "+inf") == 0 || strcmp(t, "Inf") == 0 ||
      strcmp(t, "INF") == 0) {
    *x = INFINITY;
  } else if (dpd_io_number_is_decimal(t, t + len)) {
    *x = strtod(t, NULL) + 0.0;
    if (!isfinite(*x)) {
      return 0;
    }
  } else {
    return 0;
  }
  format_number(buf, cap, *x);
  return 1;
}

/* lin:A:B:N or log:A:B:N */
static int parse_range(axis *a, const char *spec, dpd_err *err) {
  const char *key = a->key->name;
  const int lg = strncmp(spec, "log:", 4) == 0;
  const char *f[3];
  size_t len[3], npts;
  double lo, hi;
  char buf[64], *end;
  const char *s = spec + 4;
  for (int k = 0; k < 3; k++) {
    f[k] = s;
    len[k] = strcspn(s, ":");
    s += len[k];
    if (k < 2) {
      if (*s != ':') {
        return bad_spec(err, key, spec, "a range has the form lin:A:B:N");
      }
      s++;
    }
  }
  if (*s != '\0') {
    return bad_spec(err, key, spec, "a range has the form lin:A:B:N");
  }
  for (int k = 0; k < 2; k++) {
    if (len[k] == 0 || len[k] >= sizeof buf || !dpd_io_number_is_decimal(f[k], f[k] + len[k])) {
      return bad_spec(err, key, spec, k == 0 ? "A is not a number" : "B is not a number");
    }
  }
  memcpy(buf, f[0], len[0]);
  buf[len[0]] = '\0';
  lo = strtod(buf, NULL) + 0.0;
  memcpy(buf, f[1], len[1]);
  buf[len[1]] = '\0';
  hi = strtod(buf, NULL) + 0.0;
  if (!isfinite(lo) || !isfinite(hi)) {
    return bad_spec(err, key, spec, "A or B overflows a double");
  }
  if (len[2] == 0 || len[2] >= sizeof buf || f[2][0] < '0' || f[2][0] > '9') {
    return bad_spec(err, key, spec, "N is not a whole number");
  }
  memcpy(buf, f[2], len[2]);
  buf[len[2]] = '\0';
  errno = 0;
  npts = (size_t)strtoull(buf, &end, 10);
  if (*end != '\0' || errno == ERANGE || npts < 2 || npts > SWEEP_MAX_POINTS) {
    return bad_spec(err, key, spec, "N must be a whole number, 2 <= N <= 1000000");
  }
  if (lg && !(lo > 0.0 && hi > 0.0)) {
    return bad_spec(err, key, spec, "a log range needs A > 0 and B > 0");
  }
  a->log = lg;
  for (size_t i = 0; i < npts; i++) {
    /* Both ends exact; between them the weighted mean of the ends (of their log10 for log:), so
     * that log:0.1:10:3 gives 0.1, 1, 10 exactly. */
    double w = (double)i, rest = (double)(npts - 1 - i), x;
    char text[64];
    int status;
    if (i == 0) {
      x = lo;
    } else if (i == npts - 1) {
      x = hi;
    } else if (lg) {
      x = pow(10.0, (log10(lo) * rest + log10(hi) * w) / (double)(npts - 1));
    } else {
      x = (lo * rest + hi * w) / (double)(npts - 1);
    }
    {
      /* to 15 significant digits (changes x by at most 5e-16 relatively): 2, not
       * 1.9999999999999998, in log:0.5:8:3 */
      char digits[64];
      snprintf(digits, sizeof digits, "%.15g", x);
      x = strtod(digits, NULL);
    }
    if (a->key->kind == DPD_KEY_INT) {
      x = nearbyint(x);
      if (!(x >= 0.0 && x <= 9007199254740992.0)) {
        return bad_spec(err, key, spec, "an integer key takes whole numbers 0 <= V <= 2^53");
      }
      snprintf(text, sizeof text, "%.0f", x);
    } else {
      format_number(text, sizeof text, x);
    }
    if ((status = axis_push(a, strdup(text), x, err)) < 0) {
      return status;
    }
  }
  return DPD_OK;
}

/* V1,V2,... or V1|V2|... (',' separates numeric values only) */
static int parse_list(axis *a, const char *spec, dpd_err *err) {
  const char *key = a->key->name;
  const char *seps = is_numeric(a->key) ? ",|" : "|";
  const char *s = spec;
  for (;;) {
    size_t len = strcspn(s, seps);
    const char *item = s;
    int status;
    trim_span(&item, &len);
    if (len == 0) {
      return bad_spec(err, key, spec, "an empty value");
    }
    if (is_numeric(a->key)) {
      char text[64];
      double x;
      if (!numeric_value(a->key, item, len, text, sizeof text, &x)) {
        char why[160];
        snprintf(why, sizeof why, "'%.*s' is not %s", (int)(len < 60 ? len : 60), item,
                 a->key->kind == DPD_KEY_INT ? "a whole number >= 0" : "a number or inf");
        return bad_spec(err, key, spec, why);
      }
      status = axis_push(a, strdup(text), x, err);
    } else {
      status = axis_push(a, strndup(item, len), NAN, err);
    }
    if (status < 0) {
      return status;
    }
    s = item + len;
    s += strcspn(s, seps);
    if (*s == '\0') {
      break;
    }
    s++;
  }
  return DPD_OK;
}

/* Parses the value of key `k`: 1 with *a filled when it spans an axis (always, with `force`: a
 * key of the [sweep] section), 0 when it is one value (a fixed key), < 0 on error. */
static int parse_spec(const dpd_key_desc *k, const char *spec, int force, size_t ini_line, axis *a,
                      dpd_err *err) {
  int status, range, list;
  memset(a, 0, sizeof *a);
  if (has_control(spec)) {
    return CLI_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': it holds a control character (allowed: printable "
                    "text)",
                    k->name);
  }
  range = is_numeric(k) && (strncmp(spec, "lin:", 4) == 0 || strncmp(spec, "log:", 4) == 0);
  list = strchr(spec, '|') != NULL || (is_numeric(k) && strchr(spec, ',') != NULL);
  if (!force && !range && !list) {
    return 0;
  }
  if (k->kind == DPD_KEY_BYTES) {
    return CLI_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%.160s' (allowed: one value; %s changes no result "
                    "and is not swept)",
                    k->name, spec, k->name);
  }
  a->key = k;
  a->ini_line = ini_line;
  if ((a->spec = strdup(spec)) == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  status = range ? parse_range(a, spec, err) : parse_list(a, spec, err);
  if (status == DPD_OK) {
    for (size_t i = 0; i < a->n && status == DPD_OK; i++) {
      for (size_t j = 0; j < i; j++) {
        if (strcmp(a->values[i], a->values[j]) == 0) {
          char why[128];
          snprintf(why, sizeof why, "the value %.60s comes twice%s", a->values[i],
                   range && k->kind == DPD_KEY_INT ? " after rounding to whole numbers" : "");
          status = bad_spec(err, k->name, spec, why);
          break;
        }
      }
    }
  }
  if (status < 0) {
    axis_free(a);
    return status;
  }
  return 1;
}

/* ---------------------------------------------------------------- arguments and [sweep] */

/* Forgets what an earlier flag set for `key` (a later flag wins). */
static void forget_key(sweep *s, const char *key) {
  for (size_t i = 0; i < s->nfixed; i++) {
    if (strcmp(s->fixed[i].key->name, key) == 0) {
      free(s->fixed[i].value);
      memmove(&s->fixed[i], &s->fixed[i + 1], (s->nfixed - i - 1) * sizeof *s->fixed);
      s->nfixed--;
      i--;
    }
  }
  for (size_t i = 0; i < s->naxes; i++) {
    if (strcmp(s->axes[i].key->name, key) == 0) {
      axis_free(&s->axes[i]);
      memmove(&s->axes[i], &s->axes[i + 1], (s->naxes - i - 1) * sizeof *s->axes);
      s->naxes--;
      i--;
    }
  }
}

static int add_axis(sweep *s, axis *a, dpd_err *err) {
  axis *axes = realloc(s->axes, (s->naxes + 1) * sizeof *axes);
  if (axes == NULL) {
    axis_free(a);
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  s->axes = axes;
  s->axes[s->naxes++] = *a;
  return DPD_OK;
}

static int set_owned(char **slot, const char *value, dpd_err *err) {
  char *copy = strdup(value);
  if (copy == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  free(*slot);
  *slot = copy;
  return DPD_OK;
}

/* The figure's log axes (plot_log): auto (a decade or more of positive values), x, y, xy or
 * none; x is the varied key of a line figure, y the plotted number (a heat map's colours). */
static const char *const plot_log_values[] = {"auto", "x", "y", "xy", "none", NULL};

static int plot_log_set(sweep *s, const char *value, dpd_err *err) {
  for (size_t k = 0; plot_log_values[k] != NULL; k++) {
    if (strcmp(plot_log_values[k], value) == 0) {
      return set_owned(&s->plot_log, value, err);
    }
  }
  return CLI_FAIL(err, DPD_EINVAL,
                  "invalid value for 'plot_log': '%.100s' (allowed: auto, x, y, xy, none)", value);
}

/* COMMAND [FILE.ini] [--key=SPEC | --key SPEC ...] */
static int parse_args(sweep *s, int argc, char **argv, dpd_err *err) {
  s->command = argv[0];
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *eq, *value;
    const dpd_key_desc *k;
    char key[128];
    size_t len;
    axis a;
    int status;
    if (strncmp(arg, "--", 2) != 0) {
      if (s->ini != NULL) {
        return CLI_FAIL(err, DPD_EINVAL,
                        "unexpected argument '%s' (allowed: one INI file, then --key=value "
                        "flags)",
                        arg);
      }
      s->ini = arg;
      continue;
    }
    eq = strchr(arg, '=');
    len = eq != NULL ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (len == 0 || len >= sizeof key) {
      return CLI_FAIL(err, DPD_EINVAL, "malformed flag '%s' (allowed: --key=value)", arg);
    }
    memcpy(key, arg + 2, len);
    key[len] = '\0';
    if (eq != NULL) {
      value = eq + 1;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return CLI_FAIL(err, DPD_EINVAL, "flag '--%s' has no value (allowed: --%s=VALUE)", key, key);
    }
    if (strcmp(key, "plot_log") == 0) {
      if ((status = plot_log_set(s, value, err)) < 0) {
        return status;
      }
      s->plot_log_flag = 1;
      continue;
    }
    if (strcmp(key, "out") == 0 || strcmp(key, "plot_y") == 0) {
      if (has_control(value) || value[0] == '\0') {
        return CLI_FAIL(err, DPD_EINVAL, "invalid value for '%s': '%s' (allowed: %s)", key, value,
                        key[0] == 'o' ? "a directory path" : "none, or a column of sweep.tsv");
      }
      if (key[0] == 'p') {
        s->plot_y_flag = 1;
      }
      if ((status = set_owned(key[0] == 'o' ? &s->out : &s->plot_y, value, err)) < 0) {
        return status;
      }
      continue;
    }
    if ((k = find_key(key)) == NULL) {
      return CLI_FAIL(err, DPD_EINVAL,
                      "unknown key '%s' (see 'dpdyn %s --help' for the keys, 'dpdyn sweep "
                      "--help' for out, plot_y and plot_log)",
                      key, s->command);
    }
    forget_key(s, key);
    if ((status = parse_spec(k, value, 0, 0, &a, err)) < 0) {
      return status;
    }
    if (status == 1) {
      if ((status = add_axis(s, &a, err)) < 0) {
        return status;
      }
    } else {
      fixed_key *fixed = realloc(s->fixed, (s->nfixed + 1) * sizeof *fixed);
      if (fixed == NULL) {
        return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
      }
      s->fixed = fixed;
      s->fixed[s->nfixed].key = k;
      if ((s->fixed[s->nfixed].value = strdup(value)) == NULL) {
        return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
      }
      s->nfixed++;
    }
  }
  return DPD_OK;
}

/* Whether a flag set `key` (fixed or swept). */
static int flag_sets(const sweep *s, const char *key) {
  for (size_t i = 0; i < s->nfixed; i++) {
    if (strcmp(s->fixed[i].key->name, key) == 0) {
      return 1;
    }
  }
  for (size_t i = 0; i < s->naxes; i++) {
    if (s->axes[i].ini_line == 0 && strcmp(s->axes[i].key->name, key) == 0) {
      return 1;
    }
  }
  return 0;
}

typedef struct {
  sweep *s;
  const cli_ini_text *text;
  size_t calls;
  dpd_err *err;
  int failed;
  axis *found; /* the [sweep] section's axes, in file order */
  size_t nfound;
  char **main_keys; /* keys of the other sections, with their lines */
  size_t *main_lines;
  size_t nmain;
  size_t plot_y_line;
} ini_ctx;

static int on_ini_entry(void *user, const char *section, const char *name, const char *value) {
  ini_ctx *c = user;
  size_t line = c->calls < c->text->nkeys ? c->text->key_lines[c->calls] : 1;
  const dpd_key_desc *k;
  axis a;
  int status;
  c->calls++;
  if (c->failed) {
    return 0;
  }
  if (strcmp(section, "sweep") != 0) {
    char **keys = realloc(c->main_keys, (c->nmain + 1) * sizeof *keys);
    size_t *lines = keys != NULL ? realloc(c->main_lines, (c->nmain + 1) * sizeof *lines) : NULL;
    if (keys != NULL) {
      c->main_keys = keys;
    }
    if (lines == NULL || (keys[c->nmain] = strdup(name)) == NULL) {
      CLI_FAIL(c->err, DPD_ENOMEM, "out of memory");
      c->failed = 1;
      return 0;
    }
    c->main_lines = lines;
    c->main_lines[c->nmain++] = line;
    return 1;
  }
  if (strcmp(name, "plot_log") == 0) {
    if (!c->s->plot_log_flag && plot_log_set(c->s, value, c->err) < 0) {
      c->failed = 1;
      return 0;
    }
    return 1;
  }
  if (strcmp(name, "plot_y") == 0) {
    if (!c->s->plot_y_flag && set_owned(&c->s->plot_y, value, c->err) < 0) {
      c->failed = 1;
      return 0;
    }
    c->plot_y_line = line;
    return 1;
  }
  if (strcmp(name, "out") == 0 || (k = find_key(name)) == NULL) {
    CLI_FAIL(c->err, DPD_EINVAL,
             "%s '%s' in the [sweep] section of the INI file '%s' line %zu (allowed there: keys "
             "to sweep, plot_y and plot_log; see 'dpdyn %s --help' for the keys)",
             strcmp(name, "out") == 0 ? "key" : "unknown key", name, c->s->ini, line,
             c->s->command);
    c->failed = 1;
    return 0;
  }
  for (size_t i = 0; i < c->nfound; i++) {
    if (c->found[i].key == k) {
      CLI_FAIL(c->err, DPD_EINVAL,
               "key '%s' is set twice in the [sweep] section of the INI file '%s', on lines %zu "
               "and %zu (allowed: each key once)",
               name, c->s->ini, c->found[i].ini_line, line);
      c->failed = 1;
      return 0;
    }
  }
  if ((status = parse_spec(k, value, 1, line, &a, c->err)) < 0) {
    char reason[sizeof c->err->reason];
    snprintf(reason, sizeof reason, "%s", c->err->reason);
    CLI_FAIL(c->err, status, "%s [INI file '%s' line %zu]", reason, c->s->ini, line);
    c->failed = 1;
    return 0;
  }
  {
    axis *found = realloc(c->found, (c->nfound + 1) * sizeof *found);
    if (found == NULL) {
      axis_free(&a);
      CLI_FAIL(c->err, DPD_ENOMEM, "out of memory");
      c->failed = 1;
      return 0;
    }
    c->found = found;
    c->found[c->nfound++] = a;
  }
  return 1;
}

/* The [sweep] section: its keys become the first axes (a flag for the same key wins). */
static int read_sweep_section(sweep *s, dpd_err *err) {
  cli_ini_text text;
  ini_ctx c;
  int status = DPD_OK, line;
  if (s->ini == NULL) {
    return DPD_OK;
  }
  memset(&c, 0, sizeof c);
  c.s = s;
  c.text = &text;
  c.err = err;
  if ((status = cli_ini_text_read(s->ini, &text, err)) < 0) {
    return status;
  }
  ini_allow_multiline = false;
  line = ini_parse_string(text.text, on_ini_entry, &c);
  cli_ini_text_free(&text);
  if (c.failed) {
    status = err->status;
  } else if (line != 0) {
    status = CLI_FAIL(err, DPD_EINVAL,
                      "malformed INI file '%s' at line %d (allowed: 'key = value' lines, "
                      "[sections], ';' or '#' comments)",
                      s->ini, line);
  }
  for (size_t i = 0; i < c.nfound && status == DPD_OK; i++) {
    for (size_t j = 0; j < c.nmain; j++) {
      if (strcmp(c.main_keys[j], c.found[i].key->name) == 0) {
        status = CLI_FAIL(err, DPD_EINVAL,
                          "key '%s' is set on line %zu of the INI file '%s' and swept in its "
                          "[sweep] section on line %zu (allowed: each key once)",
                          c.main_keys[j], c.main_lines[j], s->ini, c.found[i].ini_line);
        break;
      }
    }
  }
  if (status == DPD_OK) {
    /* the section's axes first, in file order, then those of the flags */
    size_t keep = 0;
    axis *axes = realloc(s->axes, (s->naxes + c.nfound + 1) * sizeof *axes);
    if (axes == NULL) {
      status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    } else {
      s->axes = axes;
      for (size_t i = 0; i < c.nfound; i++) {
        if (flag_sets(s, c.found[i].key->name)) {
          axis_free(&c.found[i]);
        } else {
          c.found[keep++] = c.found[i];
        }
      }
      memmove(s->axes + keep, s->axes, s->naxes * sizeof *s->axes);
      memcpy(s->axes, c.found, keep * sizeof *s->axes);
      s->naxes += keep;
      c.nfound = 0;
    }
  }
  for (size_t i = 0; i < c.nfound; i++) {
    axis_free(&c.found[i]);
  }
  for (size_t j = 0; j < c.nmain; j++) {
    free(c.main_keys[j]);
  }
  free(c.found);
  free(c.main_keys);
  free(c.main_lines);
  return status;
}

/* The number of points, the width of their names, OUT and OUT/points. OUT by default:
 * ./dpdyn-out/sweep-<command>-<model> (as a run's ./dpdyn-out/<command>-<model>), or
 * ./dpdyn-out/sweep-<command> when the model is an axis. */
static int grid_setup(sweep *s, const char *ini_out, const char *model, dpd_err *err) {
  size_t digits = 1;
  char default_out[256];
  s->npoints = 1;
  for (size_t i = 0; i < s->naxes; i++) {
    if (s->axes[i].n > SWEEP_MAX_POINTS / s->npoints) {
      return CLI_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': '%.80s' makes a grid of more than %zu points "
                      "(allowed: at most %zu points in all)",
                      s->axes[i].key->name, s->axes[i].spec, SWEEP_MAX_POINTS, SWEEP_MAX_POINTS);
    }
    s->npoints *= s->axes[i].n;
  }
  for (size_t m = s->npoints - 1; m >= 10; m /= 10) {
    digits++;
  }
  s->width = digits < 4 ? 4 : (int)digits;
  for (size_t i = 0; i < s->naxes; i++) {
    if (strcmp(s->axes[i].key->name, "model") == 0) {
      model = NULL;
    }
  }
  if (model != NULL) {
    snprintf(default_out, sizeof default_out, "./dpdyn-out/sweep-%s-%s", s->command, model);
  } else {
    snprintf(default_out, sizeof default_out, "./dpdyn-out/sweep-%s", s->command);
  }
  if (s->out == NULL && set_owned(&s->out, ini_out != NULL ? ini_out : default_out, err) < 0) {
    return DPD_ENOMEM;
  }
  {
    size_t len = strlen(s->out);
    while (len > 1 && s->out[len - 1] == '/') {
      s->out[--len] = '\0';
    }
  }
  if ((s->points = cli_path_join(s->out, "points")) == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

/* ---------------------------------------------------------------- points */

static size_t axis_index(const sweep *s, size_t point, size_t a) {
  size_t stride = 1;
  for (size_t b = a + 1; b < s->naxes; b++) {
    stride *= s->axes[b].n;
  }
  return point / stride % s->axes[a].n;
}

static void point_name(const sweep *s, size_t point, char *buf, size_t cap) {
  snprintf(buf, cap, "%0*zu", s->width, point);
}

/* "c=0.5 eta0=1" */
static void point_label(const sweep *s, size_t point, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t a = 0; a < s->naxes && len < cap; a++) {
    len += (size_t)snprintf(buf + len, cap - len, "%s%s=%s", a ? " " : "", s->axes[a].key->name,
                            s->axes[a].values[axis_index(s, point, a)]);
  }
  if (s->naxes == 0) {
    snprintf(buf, cap, "no varied key");
  }
}

static void argv_free(char **argv) {
  if (argv != NULL) {
    for (char **a = argv; *a != NULL; a++) {
      free(*a);
    }
    free(argv);
  }
}

static char *flag_text(const char *key, const char *value) {
  size_t cap = strlen(key) + strlen(value) + 4;
  char *t = malloc(cap);
  if (t != NULL) {
    snprintf(t, cap, "--%s=%s", key, value);
  }
  return t;
}

/* The command line of a point: COMMAND [FILE.ini] fixed flags, the point's values,
 * --out=OUT/points/ <index> (NULL-terminated, owned). */
static char **point_argv(const sweep *s, size_t point, int *argc) {
  size_t n = 0, cap = s->nfixed + s->naxes + 4;
  char **argv = calloc(cap, sizeof *argv);
  char name[32], *dir;
  int ok;
  if (argv == NULL) {
    return NULL;
  }
  ok = (argv[n++] = strdup(s->command)) != NULL;
  if (ok && s->ini != NULL) {
    ok = (argv[n++] = strdup(s->ini)) != NULL;
  }
  for (size_t i = 0; ok && i < s->nfixed; i++) {
    ok = (argv[n++] = flag_text(s->fixed[i].key->name, s->fixed[i].value)) != NULL;
  }
  for (size_t a = 0; ok && a < s->naxes; a++) {
    ok = (argv[n++] =
              flag_text(s->axes[a].key->name, s->axes[a].values[axis_index(s, point, a)])) != NULL;
  }
  point_name(s, point, name, sizeof name);
  dir = ok ? cli_path_join(s->points, name) : NULL;
  ok = ok && dir != NULL && (argv[n++] = flag_text("out", dir)) != NULL;
  free(dir);
  if (!ok) {
    argv_free(argv);
    return NULL;
  }
  *argc = (int)n;
  return argv;
}

/* Prefixes err's reason with the point ("point 3 (c=0.5): ..."). */
static void point_context(const sweep *s, size_t point, dpd_err *err) {
  char reason[sizeof err->reason], label[256];
  point_label(s, point, label, sizeof label);
  snprintf(reason, sizeof reason, "%s", err->reason);
  CLI_FAIL(err, err->status < 0 ? err->status : DPD_EINVAL, "point %zu (%s): %s", point, label,
           reason);
}

/* Parses point `point`'s parameters (p owned by the caller on success). */
static int point_params(const sweep *s, size_t point, cli_params *p, dpd_err *err) {
  int argc, status;
  char **argv = point_argv(s, point, &argc);
  if (argv == NULL) {
    memset(p, 0, sizeof *p);
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  status = cli_params_parse(p, s->command, argc - 1, argv + 1, err);
  /* flags point into argv: the values were copied, only `flag` pointers remain, unused here */
  for (size_t i = 0; i < p->nraw; i++) {
    p->raw[i].flag = NULL;
  }
  argv_free(argv);
  if (status < 0) {
    cli_params_free(p);
  }
  return status;
}

/* The models the points run (`model` may be a varied key): at most SWEEP_MAX_MODELS. */
#define SWEEP_MAX_MODELS 16
typedef struct {
  const dpd_model_type *m[SWEEP_MAX_MODELS];
  size_t n;
} model_set;

static void model_set_add(model_set *ms, const dpd_model_type *m) {
  for (size_t k = 0; k < ms->n; k++) {
    if (ms->m[k] == m) {
      return;
    }
  }
  if (m != NULL && ms->n < SWEEP_MAX_MODELS) {
    ms->m[ms->n++] = m;
  }
}

/* Step 2: every point as its command validates it; *models: the models of the points. */
static int validate_points(const sweep *s, model_set *models, dpd_err *err) {
  models->n = 0;
  for (size_t i = 0; i < s->npoints; i++) {
    cli_params p;
    int status = point_params(s, i, &p, err);
    if (status == DPD_OK) {
      model_set_add(models, p.model);
      status = cli_validate(s->command, &p, err);
      cli_params_free(&p);
    }
    if (status < 0) {
      point_context(s, i, err);
      return status;
    }
  }
  return DPD_OK;
}

/* ---------------------------------------------------------------- plot_y before any point */

/* Whether the space-separated `list` holds the word `name`. */
static int word_in(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *w = list; w != NULL && *w != '\0';) {
    size_t wl = strcspn(w, " ");
    if (wl == len && len > 0 && strncmp(w, name, len) == 0) {
      return 1;
    }
    w += wl;
    w += strspn(w, " ");
  }
  return 0;
}

/* Edit distance of a[0..la) and b[0..lb) (insertions, deletions, substitutions), capped at
 * 99; the words of a summary are short (at most 63 characters are compared). */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb) {
  size_t row[64];
  la = la < 63 ? la : 63;
  lb = lb < 63 ? lb : 63;
  for (size_t j = 0; j <= lb; j++) {
    row[j] = j;
  }
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      best = up + 1 < best ? up + 1 : best;
      best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb] < 99 ? row[lb] : 99;
}

/* How close the word w[0..wl) is to the name x (lower: closer; 0: not close): a few typos, a
 * part of the word, or a long common prefix. */
static size_t closeness(const char *w, size_t wl, const char *x) {
  size_t xl = strlen(x), prefix = 0, d = edit_distance(w, wl, x, xl);
  while (prefix < wl && prefix < xl && w[prefix] == x[prefix]) {
    prefix++;
  }
  if (d <= 2 || (xl >= 3 && d <= xl / 3)) {
    return 1 + d;
  }
  if (xl >= 3) {
    for (size_t k = 0; k + xl <= wl; k++) {
      if (strncmp(w + k, x, xl) == 0) {
        return 10 + wl - xl;
      }
    }
  }
  if (prefix >= 4 || (prefix >= 3 && prefix * 2 >= xl)) {
    return 100 + wl - prefix;
  }
  return 0;
}

/* Appends to buf up to `most` words of the lists (the first of equal closeness first) close to
 * x, ", "-separated; returns how many. */
static size_t close_names(const char *const *lists, size_t nlists, const char *x, size_t most,
                          char *buf, size_t cap) {
  size_t shown = 0, len = strlen(buf);
  const char *picked[8];
  size_t npicked = 0;
  most = most < 8 ? most : 8;
  while (shown < most) {
    const char *best = NULL;
    size_t best_wl = 0, best_score = 0;
    for (size_t l = 0; l < nlists; l++) {
      for (const char *w = lists[l]; w != NULL && *w != '\0';) {
        size_t wl = strcspn(w, " "), score = closeness(w, wl, x), seen = 0;
        for (size_t k = 0; k < npicked; k++) {
          seen |= strlen(picked[k]) >= wl && strncmp(picked[k], w, wl) == 0 &&
                  (picked[k][wl] == ' ' || picked[k][wl] == '\0');
        }
        if (score > 0 && !seen && (best == NULL || score < best_score)) {
          best = w;
          best_wl = wl;
          best_score = score;
        }
        w += wl;
        w += strspn(w, " ");
      }
    }
    if (best == NULL) {
      break;
    }
    picked[npicked++] = best;
    if (len < cap) {
      len +=
          (size_t)snprintf(buf + len, cap - len, "%s%.*s", shown ? ", " : "", (int)best_wl, best);
    }
    shown++;
  }
  return shown;
}

/* plot_y, before any point runs: none, or a number the summary of the command can hold for
 * one of the points' models (dpd_model_command.numbers), and not a varied key (sweep.tsv
 * holds those as the grid's columns, not the summary's). Whether these points produce it is
 * known after they ran (assemble). */
static int plot_y_check(const sweep *s, const model_set *models, dpd_err *err) {
  const char *lists[SWEEP_MAX_MODELS];
  char whose[256], close[512];
  size_t nlists = 0, len = 0;
  int found = 0;
  if (s->plot_y == NULL || strcmp(s->plot_y, "none") == 0) {
    return DPD_OK;
  }
  whose[0] = close[0] = '\0';
  for (size_t k = 0; k < models->n; k++) {
    const dpd_model_command *c = dpd_model_command_get(models->m[k], s->command);
    if (c == NULL || c->numbers == NULL) {
      return DPD_OK; /* no list to check against: assemble checks */
    }
    lists[nlists++] = c->numbers;
    found |= word_in(c->numbers, s->plot_y);
    if (len < sizeof whose) {
      len += (size_t)snprintf(whose + len, sizeof whose - len, "%s%s", k ? "|" : "",
                              models->m[k]->name);
    }
  }
  if (nlists == 0) {
    return DPD_OK;
  }
  for (size_t a = 0; a < s->naxes && found; a++) {
    if (strcmp(s->axes[a].key->name, s->plot_y) == 0) {
      return CLI_FAIL(err, DPD_EINVAL,
                      "invalid value for 'plot_y': '%.100s' is a varied key of the sweep (allowed: "
                      "none, or a number of the points' summaries other than the varied keys; see "
                      "'dpdyn sweep %s --model=%s --help')",
                      s->plot_y, s->command, whose);
    }
  }
  if (found) {
    return DPD_OK;
  }
  close_names(lists, nlists, s->plot_y, 4, close, sizeof close);
  return CLI_FAIL(err, DPD_EINVAL,
                  "invalid value for 'plot_y': '%.100s' (allowed: none, or a number of the summary "
                  "of model=%s %s%s%s; see 'dpdyn sweep %s --model=%s --help' for the list)",
                  s->plot_y, whose, s->command, close[0] ? ", e.g. " : "", close, s->command,
                  whose);
}

/* ---------------------------------------------------------------- configuration (OUT/.sweep) */

/* The '#' header of sweep.tsv, which is also OUT/.sweep: the version, the command, every key in
 * effect but the varied ones, out and threads (results do not depend on it), then the axes. */
static char *config_text(const sweep *s, cli_params *base, dpd_err *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    return NULL;
  }
  fprintf(f, "# dpdyn %s\n# command: sweep %s\n", dpd_version(), s->command);
  cli_keys_to_header(base->keys, f);
  for (size_t a = 0; a < s->naxes; a++) {
    const int numeric = s->axes[a].numbers != NULL;
    fprintf(f, "# vary: %s = ", s->axes[a].key->name);
    for (size_t i = 0; i < s->axes[a].n; i++) {
      fprintf(f, "%s%s", i ? (numeric ? "," : "|") : "", s->axes[a].values[i]);
    }
    fputc('\n', f);
  }
  fprintf(f, "# points: %zu (point i at row i; the first varied key varies slowest)\n", s->npoints);
  if (fclose(f) != 0 || text == NULL) {
    free(text);
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    return NULL;
  }
  return text;
}

/* The parameters every point shares: point 0's less the varied keys, out and threads. */
static int base_params(const sweep *s, cli_params *p, dpd_err *err) {
  int status = point_params(s, 0, p, err);
  if (status < 0) {
    return status;
  }
  dpd_keys_unset(p->keys, "out");
  dpd_keys_unset(p->keys, "threads");
  for (size_t a = 0; a < s->naxes; a++) {
    dpd_keys_unset(p->keys, s->axes[a].key->name);
  }
  return DPD_OK;
}

/* The key a header line sets ("dpdyn", "command", "points" or the key), its length. */
static size_t line_key(const char *line, const char **key) {
  const char *s = line + (strncmp(line, "# ", 2) == 0 ? 2 : 0);
  if (strncmp(s, "vary: ", 6) == 0) {
    s += 6;
  }
  *key = s;
  return strcspn(s, " :=\n");
}

/* The line of `text` that sets key [key, key + klen), NULL if none; its length in *len. */
static const char *find_line(const char *text, const char *key, size_t klen, size_t *len) {
  for (const char *l = text; *l != '\0'; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0')) {
    const char *k;
    size_t kl = line_key(l, &k);
    if (kl == klen && strncmp(k, key, klen) == 0) {
      *len = strcspn(l, "\n");
      return l;
    }
  }
  return NULL;
}

/* A header line without its "# " (at most 120 characters), or "(none)". */
static const char *shown(const char *line) {
  return line != NULL ? line + 2 : "(none)";
}

static int shown_len(const char *line, size_t len) {
  return line != NULL ? (int)(len - 2 > 120 ? 120 : len - 2) : 6;
}

/* Refuses a sweep in OUT of another configuration, naming the first key that differs. */
static int config_compare(const sweep *s, const char *old, const char *now, dpd_err *err) {
  for (int pass = 0; pass < 2; pass++) {
    const char *a = pass == 0 ? now : old, *b = pass == 0 ? old : now;
    for (const char *l = a; *l != '\0'; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0')) {
      const char *k, *other;
      size_t kl = line_key(l, &k), len = strcspn(l, "\n"), olen = 0;
      other = find_line(b, k, kl, &olen);
      if (other == NULL || olen != len || strncmp(other, l, len) != 0) {
        const char *was = pass == 0 ? other : l, *is = pass == 0 ? l : other;
        size_t was_len = pass == 0 ? olen : len, is_len = pass == 0 ? len : olen;
        return CLI_FAIL(err, DPD_EINVAL,
                        "invalid value for 'out': '%s' holds a sweep of another configuration "
                        "(key '%.*s': '%.*s' there, '%.*s' now; allowed: the same configuration, "
                        "which resumes that sweep, or another --out)",
                        s->out, (int)kl, k, shown_len(was, was_len), shown(was),
                        shown_len(is, is_len), shown(is));
      }
    }
  }
  return DPD_OK;
}

/* Step 3: OUT new, empty, or holding this sweep; writes OUT/.sweep and creates OUT/points. */
static int prepare_out(const sweep *s, const char *config, dpd_err *err) {
  struct stat st;
  char *manifest = cli_path_join(s->out, manifest_name);
  int status = DPD_OK;
  if (manifest == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if (lstat(s->out, &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      status = CLI_FAIL(err, DPD_EINVAL,
                        "invalid value for 'out': '%s' exists and is not a directory (allowed: a "
                        "new path, an empty directory, or the directory of the same sweep)",
                        s->out);
    } else if (file_exists(manifest)) {
      char *old = read_text(manifest, (size_t)64 << 20);
      if (old == NULL) {
        status = CLI_FAIL(err, DPD_EIO, "cannot read '%s': %s", manifest, strerror(errno));
      } else {
        status = config_compare(s, old, config, err);
        free(old);
      }
    } else {
      DIR *dp = opendir(s->out);
      struct dirent *e;
      if (dp == NULL) {
        status = CLI_FAIL(err, DPD_EINVAL, "invalid value for 'out': cannot read '%s': %s", s->out,
                          strerror(errno));
      } else {
        while ((e = readdir(dp)) != NULL && status == DPD_OK) {
          if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            status = CLI_FAIL(err, DPD_EINVAL,
                              "invalid value for 'out': '%s' holds '%s' and no sweep (allowed: "
                              "a new path, an empty directory, or the directory of a sweep of "
                              "the same configuration, which resumes it)",
                              s->out, e->d_name);
          }
        }
        closedir(dp);
      }
    }
  } else if (errno != ENOENT) {
    status =
        CLI_FAIL(err, DPD_EINVAL, "invalid value for 'out': '%s': %s", s->out, strerror(errno));
  }
  if (status == DPD_OK && (status = cli_make_dirs(s->points, err)) == DPD_OK &&
      !file_exists(manifest)) {
    status = cli_write_in_place(s->out, manifest_name, config, err);
  }
  free(manifest);
  return status;
}

static cJSON *point_summary(const sweep *s, size_t point, const char *file);

/* 0: to run; 1: complete (summary.json); 2: failed numerically (failed.json). A file that is
 * there but does not parse as a JSON object (truncated, edited) is damaged: the point is to run,
 * and with `damaged` non-NULL the file's name is stored there (else ""). */
static int point_state_ex(const sweep *s, size_t point, char *damaged, size_t cap) {
  char name[64], *path;
  int state = 0;
  if (damaged != NULL) {
    damaged[0] = '\0';
  }
  for (int k = 0; k < 2 && state == 0; k++) {
    const char *file = k == 0 ? "summary.json" : failed_name;
    snprintf(name, sizeof name, "%0*zu/%s", s->width, point, file);
    if ((path = cli_path_join(s->points, name)) != NULL) {
      if (file_exists(path)) {
        cJSON *root = point_summary(s, point, file);
        if (cJSON_IsObject(root)) {
          state = k + 1;
        } else if (damaged != NULL && damaged[0] == '\0') {
          snprintf(damaged, cap, "%s", path);
        }
        cJSON_Delete(root);
      }
      free(path);
    }
  }
  return state;
}

static int point_state(const sweep *s, size_t point) {
  return point_state_ex(s, point, NULL, 0);
}

/* ---------------------------------------------------------------- ranks (Open MPI) */

/* Whether mpirun (Open MPI, or another PMI launcher) started this process. */
static int launched_by_mpirun(void) {
  return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL ||
         getenv("PMI_RANK") != NULL;
}

static int ranks_begin(ranks *r, dpd_err *err) {
  r->rank = 0;
  r->size = 1;
  r->mpi = 0;
  if (!launched_by_mpirun()) {
    return DPD_OK;
  }
#ifdef DPD_HAVE_MPI
  {
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      return CLI_FAIL(err, DPD_EIO, "MPI_Init failed");
    }
    r->mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r->size);
    return DPD_OK;
  }
#else
  {
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    rank = rank != NULL ? rank : getenv("PMIX_RANK");
    rank = rank != NULL ? rank : getenv("PMI_RANK");
    r->rank = rank != NULL ? atoi(rank) : 0;
    return CLI_FAIL(err, DPD_EINVAL,
                    "launched by mpirun, but this dpdyn was built without MPI (allowed: run "
                    "it without mpirun; or install Open MPI (libopenmpi-dev) and rebuild, "
                    "with -DDPD_MPI=ON)");
  }
#endif
}

/* Rank 0's values of `n` numbers, on every rank. */
static void ranks_share(const ranks *r, long long *v, size_t n) {
#ifdef DPD_HAVE_MPI
  if (r->mpi && n > 0) {
    MPI_Bcast(v, (int)n, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  }
#else
  (void)r;
  (void)v;
  (void)n;
#endif
}

/* The largest `v` of all ranks. */
static int ranks_max(const ranks *r, int v) {
#ifdef DPD_HAVE_MPI
  int m = v;
  if (r->mpi) {
    MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  }
  return m;
#else
  (void)r;
  return v;
#endif
}

static void ranks_end(ranks *r) {
#ifdef DPD_HAVE_MPI
  if (r->mpi) {
    MPI_Finalize();
    r->mpi = 0;
  }
#else
  (void)r;
#endif
}

/* ---------------------------------------------------------------- running */

typedef struct {
  int on; /* stderr is a terminal, and this is rank 0 */
  double start, last;
  size_t total, skipped, done; /* points: all, complete before, complete since */
  int drawn;
} progress;

static void progress_clear(progress *pg) {
  if (pg->on && pg->drawn) {
    fputs("\r\033[K", stderr);
    pg->drawn = 0;
  }
}

static void clock_text(char *buf, size_t cap, double seconds) {
  long s = (long)(seconds + 0.5);
  if (s >= 3600) {
    snprintf(buf, cap, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    snprintf(buf, cap, "%ld:%02ld", s / 60, s % 60);
  }
}

static void progress_draw(progress *pg) {
  double now = cli_now(), elapsed = now - pg->start;
  char el[32], left[32] = "?";
  size_t all_done = pg->skipped + pg->done;
  if (!pg->on) {
    return;
  }
  if (pg->done > 0) {
    clock_text(left, sizeof left, elapsed / (double)pg->done * (double)(pg->total - all_done));
  }
  clock_text(el, sizeof el, elapsed);
  fprintf(stderr, "\r\033[Kdpdyn sweep: %zu/%zu points, %s elapsed, ~%s left", all_done, pg->total,
          el, left);
  fflush(stderr);
  pg->drawn = 1;
  pg->last = now;
}

/* Runs one point with the command's stdout silenced. Exit 2 (numerical failure) is recorded as
 * OUT/points/<index>/failed.json, published like any output. Returns the exit code. */
static int run_point(const sweep *s, size_t point, int notes, dpd_err *err) {
  int argc, code, saved, devnull;
  char **argv = point_argv(s, point, &argc);
  if (argv == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    return CLI_EXIT_NUMERIC;
  }
  fflush(stdout);
  saved = dup(STDOUT_FILENO);
  devnull = open("/dev/null", O_WRONLY);
  if (saved >= 0 && devnull >= 0) {
    dup2(devnull, STDOUT_FILENO);
  }
  if (devnull >= 0) {
    close(devnull);
  }
  dpd_err_reset(err);
  code = cli_run(argc, argv, notes, err);
  fflush(stdout);
  if (saved >= 0) {
    dup2(saved, STDOUT_FILENO);
    close(saved);
  }
  if (code == CLI_EXIT_NUMERIC) {
    /* a record of the failure, published as the point's output */
    cli_params p;
    cli_out o;
    cJSON *root = cJSON_CreateObject(), *params = cJSON_CreateObject();
    dpd_err werr;
    char label[256];
    int status;
    dpd_err_reset(&werr);
    point_label(s, point, label, sizeof label);
    cJSON_AddStringToObject(root, "command", s->command);
    cJSON_AddStringToObject(root, "version", dpd_version());
    cJSON_AddNumberToObject(root, "exit_status", code);
    cJSON_AddStringToObject(root, "error", err->reason);
    cJSON_AddStringToObject(root, "point", label);
    if (point_params(s, point, &p, &werr) == DPD_OK) {
      cli_params_to_json(&p, params);
      cli_params_free(&p);
    }
    cJSON_AddItemToObject(root, "params", params);
    {
      char name[32], *dir;
      point_name(s, point, name, sizeof name);
      dir = cli_path_join(s->points, name);
      status = dir != NULL ? cli_out_init(&o, dir, &werr) : DPD_ENOMEM;
      free(dir);
    }
    if (status == DPD_OK) {
      if ((status = cli_out_json(&o, failed_name, root, &werr)) == DPD_OK) {
        status = cli_out_finish(&o, NULL, &werr) == CLI_EXIT_OK ? DPD_OK : DPD_EIO;
      }
      cli_out_free(&o);
    }
    cJSON_Delete(root);
    if (status < 0) {
      *err = werr;
      code = CLI_EXIT_IO;
    }
  }
  argv_free(argv);
  return code;
}

/* ---------------------------------------------------------------- sweep.tsv and summary.json */

typedef struct {
  char **names;
  size_t n;
} columns;

static int is_excluded(const sweep *s, const char *name) {
  for (size_t k = 0; run_only[k] != NULL; k++) {
    if (strcmp(run_only[k], name) == 0) {
      return 1;
    }
  }
  for (size_t a = 0; a < s->naxes; a++) {
    if (strcmp(s->axes[a].key->name, name) == 0) {
      return 1;
    }
  }
  return strcmp(name, "status") == 0;
}

/* The value of a summary item as a number: 1 for a number (+-inf after decoding "nonfinite"),
 * null (nan), true/false, the strings "inf"/"-inf" (a failed point's record);
 * 0 for anything else (text, arrays, objects). */
static int item_number(const cJSON *item, double *x) {
  if (cJSON_IsNumber(item)) {
    *x = item->valuedouble;
  } else if (cJSON_IsNull(item)) {
    *x = NAN;
  } else if (cJSON_IsBool(item)) {
    *x = cJSON_IsTrue(item) ? 1.0 : 0.0;
  } else if (cJSON_IsString(item) && strcmp(item->valuestring, "inf") == 0) {
    *x = INFINITY;
  } else if (cJSON_IsString(item) && strcmp(item->valuestring, "-inf") == 0) {
    *x = -INFINITY;
  } else {
    return 0;
  }
  return 1;
}

/* Calls fn(name, value) for every number of a summary, in file order: the top-level ones, then
 * those one level down in objects other than params and not_available, named "object.key". */
typedef int (*number_fn)(void *user, const char *name, double x);

static int for_each_number(const sweep *s, const cJSON *root, number_fn fn, void *user) {
  const cJSON *item;
  cJSON_ArrayForEach(item, root) {
    double x;
    if (item->string == NULL) {
      continue;
    }
    if (cJSON_IsObject(item)) {
      const cJSON *sub;
      if (strcmp(item->string, "params") == 0 || strcmp(item->string, "not_available") == 0) {
        continue;
      }
      cJSON_ArrayForEach(sub, item) {
        char name[256];
        if (sub->string != NULL && item_number(sub, &x)) {
          snprintf(name, sizeof name, "%s.%s", item->string, sub->string);
          if (!is_excluded(s, name) && fn(user, name, x) < 0) {
            return -1;
          }
        }
      }
    } else if (item_number(item, &x) && !is_excluded(s, item->string) &&
               fn(user, item->string, x) < 0) {
      return -1;
    }
  }
  return 0;
}

static long column_find(const columns *c, const char *name) {
  for (size_t i = 0; i < c->n; i++) {
    if (strcmp(c->names[i], name) == 0) {
      return (long)i;
    }
  }
  return -1;
}

static int column_add(void *user, const char *name, double x) {
  columns *c = user;
  char **names;
  (void)x;
  if (column_find(c, name) >= 0) {
    return 0;
  }
  if ((names = realloc(c->names, (c->n + 1) * sizeof *names)) == NULL) {
    return -1;
  }
  c->names = names;
  if ((c->names[c->n] = strdup(name)) == NULL) {
    return -1;
  }
  c->n++;
  return 0;
}

typedef struct {
  const columns *c;
  double *row;
} row_fill;

static int row_set(void *user, const char *name, double x) {
  row_fill *r = user;
  long k = column_find(r->c, name);
  if (k >= 0) {
    r->row[k] = x;
  }
  return 0;
}

/* A point's summary.json (NULL for a failed point or an unreadable file). */
static cJSON *point_summary(const sweep *s, size_t point, const char *file) {
  char name[64], *path, *text;
  cJSON *root = NULL;
  snprintf(name, sizeof name, "%0*zu/%s", s->width, point, file);
  if ((path = cli_path_join(s->points, name)) == NULL) {
    return NULL;
  }
  if ((text = read_text(path, (size_t)256 << 20)) != NULL) {
    root = cJSON_Parse(text);
    free(text);
  }
  free(path);
  if (root != NULL) {
    dpd_io_json_nonfinite_decode(root); /* the numbers back in place (inf, -inf) */
  }
  return root;
}

static void columns_free(columns *c) {
  for (size_t i = 0; i < c->n; i++) {
    free(c->names[i]);
  }
  free(c->names);
  memset(c, 0, sizeof *c);
}

/* The tick labels of an axis as two gnuplot arrays (at most about 12 labelled): <name>_label,
 * the texts (each through cli_gp_string), and <name>_at, their positions 0, 1, ... */
static void gp_tics(FILE *f, const char *name, const axis *a) {
  size_t step = a->n > 12 ? (a->n + 11) / 12 : 1, count = (a->n + step - 1) / step;
  fprintf(f, "array %s_label[%zu] = [", name, count);
  for (size_t i = 0; i < a->n; i += step) {
    char shown[64];
    const char *label = a->values[i];
    if (a->numbers != NULL && isfinite(a->numbers[i])) {
      snprintf(shown, sizeof shown, "%.4g", a->numbers[i]); /* 0.316 for 0.31622776601683794 */
      label = shown;
    }
    fputs(i ? ", " : "", f);
    cli_gp_string_write(f, label);
  }
  fprintf(f, "]\narray %s_at[%zu] = [", name, count);
  for (size_t i = 0; i < a->n; i += step) {
    fprintf(f, "%s%zu", i ? ", " : "", i);
  }
  fputs("]\n", f);
}

/* Whether positive values spanning `ratio` or more call for a log axis. */
/* A figure axis goes logarithmic when its positive values span at least a decade (docs/sweep.md);
 * below that, linear ticks are easier to read. */
#define LOG_AXIS_RATIO 10.0

static int wants_log(const double *x, size_t n, size_t stride, double ratio) {
  double lo = INFINITY, hi = 0.0;
  size_t finite = 0;
  for (size_t i = 0; i < n; i++) {
    double v = x[i * stride];
    if (isnan(v) || isinf(v)) {
      continue;
    }
    if (v <= 0.0) {
      return 0;
    }
    lo = fmin(lo, v);
    hi = fmax(hi, v);
    finite++;
  }
  return finite >= 2 && hi >= ratio * lo;
}

/* The words a figure uses for a key or a summary number (its axis label); NULL: none known,
 * the name itself is shown. */
static const char *const human_labels[][2] = {
    /* keys */
    {"rho", "privacy ρ (the run is ρ²/2-zCDP)"},
    {"epsilon", "privacy ε"},
    {"delta", "privacy δ"},
    {"zcdp", "privacy: ρ of ρ-zCDP"},
    {"mu", "privacy: μ of μ-GDP"},
    {"c", "clipping scale c (C = c √d)"},
    {"clip", "clipping threshold C/√p"},
    {"eta0", "initial learning rate η̃(0)"},
    {"eta", "step size η"},
    {"steps", "DP-GD steps T"},
    {"d", "dimension d"},
    {"n", "samples n"},
    {"n_test", "test samples"},
    {"p", "random features p"},
    {"gamma", "γ = d / n"},
    {"zeta", "label-noise standard deviation ζ"},
    {"seeds", "replicates"},
    {"schedule", "learning-rate schedule"},
    {"spectrum", "spectrum"},
    {"noise", "label-noise law"},
    /* summary numbers */
    {"final_excess_risk", "final excess risk"},
    {"final_test_risk", "final test risk"},
    {"final_train_risk", "final train risk"},
    {"excess_risk_before_release", "excess risk before the release"},
    {"release_jump", "release jump (excess risk)"},
    {"rho_eff", "effective privacy ρ"},
    {"sigma", "noise multiplier σ"},
    {"sup_gap", "largest gap |simulation − ODE|"},
    {"final_gap", "final gap simulation − ODE"},
    {"sup_gap_in_se", "largest gap in standard errors"},
    {"clipped_fraction", "clipped fraction"},
    {"clipped_fraction_final", "clipped fraction at the end"},
    {"theta_star_test_risk", "test risk of θ* = Φ⁺y"},
    {"ou_final_test_risk", "final test risk, OU theory"},
    {"epsilon_tight", "privacy ε (tight)"},
    {NULL, NULL}};

static const char *human_label(const char *name) {
  for (size_t k = 0; human_labels[k][0] != NULL; k++) {
    if (strcmp(human_labels[k][0], name) == 0) {
      return human_labels[k][1];
    }
  }
  return name;
}

/* Whether an axis is logarithmic: plot_log (NULL or "auto": the data's rule `automatic`; "x",
 * "y", "xy", "none") for the axis `which` ('x' or 'y'). */
static int log_axis(const char *plot_log, char which, int automatic) {
  if (plot_log == NULL || strcmp(plot_log, "auto") == 0) {
    return automatic;
  }
  return strchr(plot_log, which) != NULL && strcmp(plot_log, "none") != 0;
}

/* The figure's settings (gnuplot variables written above the embedded script): the columns of
 * sweep.tsv it draws, by name; their labels; the title with the privacy as the user gave it. */
static char *figure_preamble(const sweep *s, const cli_params *base, const columns *c,
                             const double *table, size_t ycol, const char **script) {
  static const char *const forms[] = {"epsilon", "delta", "zcdp", "mu", "sigma", "rho"};
  char *text = NULL, title[512], privacy[512];
  const char *given[6];
  size_t len = 0, tl;
  const size_t nv = s->naxes + 1, ncol = nv + c->n;
  FILE *f = open_memstream(&text, &len);
  long se;
  char se_name[300];
  int logy;
  if (f == NULL) {
    return NULL;
  }
  /* the privacy as given (a varied privacy key is an axis, not in the title) */
  for (size_t i = 0; i < 6; i++) {
    given[i] = cli_is_given(base, forms[i]) ? cli_get_text(base, forms[i]) : NULL;
  }
  if (given[0] != NULL && given[1] == NULL) {
    given[1] = cli_get_text(base, "delta"); /* its default, when it has one */
  }
  cli_plot_privacy(given, privacy, sizeof privacy);
  tl = (size_t)snprintf(title, sizeof title, "dpdyn sweep %s:", s->command);
  for (size_t k = 0, first = 1; title_keys[k] != NULL && tl < sizeof title; k++) {
    const char *v;
    if (strcmp(title_keys[k], "privacy") == 0) {
      if (privacy[0] != '\0') {
        tl += (size_t)snprintf(title + tl, sizeof title - tl, "%s %s", first ? "" : ",", privacy);
        first = 0;
      }
    } else if ((v = cli_get_text(base, title_keys[k])) != NULL &&
               (cli_is_given(base, title_keys[k]) || strcmp(title_keys[k], "model") == 0)) {
      char value[208];
      cli_plot_value(v, value, sizeof value); /* 0.1, not 0.10000000000000001 */
      tl += (size_t)snprintf(title + tl, sizeof title - tl, "%s %s = %s", first ? "" : ",",
                             title_keys[k], value);
      first = 0;
    }
  }
  snprintf(se_name, sizeof se_name, "%s_se", c->names[ycol]);
  se = column_find(c, se_name);
  logy = log_axis(s->plot_log, 'y', wants_log(table + nv + ycol, s->npoints, ncol, LOG_AXIS_RATIO));
  fprintf(f,
          "# settings of this figure (dpdyn sweep); usage: gnuplot -c %s.gp sweep.tsv "
          "%s.png [png|svg|pdf]\n",
          s->naxes == 1 ? "sweep_line" : "sweep_heat", s->naxes == 1 ? "sweep_line" : "sweep_heat");
  fputs("title_text = ", f);
  cli_gp_string_write(f, title);
  fputc('\n', f);
  if (s->naxes == 1) {
    const axis *a = &s->axes[0];
    int logx = a->numbers != NULL &&
               log_axis(s->plot_log, 'x', a->log || wants_log(a->numbers, a->n, 1, LOG_AXIS_RATIO));
    *script = "sweep_line";
    fputs("xkey = ", f);
    cli_gp_string_write(f, a->key->name);
    fputs("\nxname = ", f);
    cli_gp_string_write(f, human_label(a->key->name));
    fprintf(f, "\nxstring = %d\nlogx = %d\nykey = ", a->numbers == NULL, logx);
    cli_gp_string_write(f, c->names[ycol]);
    fputs("\nyname = ", f);
    cli_gp_string_write(f, human_label(c->names[ycol]));
    fputs("\nsekey = ", f);
    cli_gp_string_write(f, se >= 0 ? se_name : "");
    fprintf(f, "\nlogy = %d\n", logy);
  } else {
    const axis *ay = &s->axes[0], *ax = &s->axes[1];
    *script = "sweep_heat";
    fputs("xname = ", f);
    cli_gp_string_write(f, human_label(ax->key->name));
    fprintf(f, "\nnx = %zu\n", ax->n);
    gp_tics(f, "xtic", ax);
    fputs("yname = ", f);
    cli_gp_string_write(f, human_label(ay->key->name));
    fprintf(f, "\nny = %zu\n", ay->n);
    gp_tics(f, "ytic", ay);
    fputs("zkey = ", f);
    cli_gp_string_write(f, c->names[ycol]);
    fputs("\nzname = ", f);
    cli_gp_string_write(f, human_label(c->names[ycol]));
    fputs("\nsekey = ", f);
    cli_gp_string_write(f, se >= 0 ? se_name : "");
    fprintf(f, "\nlogz = %d\nlabels = %d\n", logy, ax->n <= 12 && ay->n <= 16);
  }
  fputs("# ---- the script (plots/", f);
  fputs(*script, f);
  fputs(".gp) ----\n", f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* Step 5: sweep.tsv, summary.json and the figure, from the points' files. */
static int assemble(const sweep *s, const char *config, const cli_params *base, size_t skipped,
                    int nranks, double start, dpd_err *err) {
  columns c = {NULL, 0};
  double *table = NULL; /* npoints rows: the varied keys (nan), the status, the columns */
  char *tsv = NULL;
  size_t tsv_len = 0, nfailed = 0, ncol = 0;
  FILE *f = NULL;
  cJSON *root = NULL, *failed = NULL;
  long ycol = -1;
  int status = DPD_OK, code = CLI_EXIT_OK;
  const char *figure = NULL;
  char buf[64], no_figure[200] = "";

  /* the columns: every number of every summary, in order of first appearance */
  for (size_t i = 0; i < s->npoints && status == DPD_OK; i++) {
    cJSON *sum = point_summary(s, i, "summary.json");
    if (sum != NULL && for_each_number(s, sum, column_add, &c) < 0) {
      status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    }
    cJSON_Delete(sum);
  }
  ncol = s->naxes + 1 + c.n;
  if (status == DPD_OK &&
      (table = malloc((s->npoints * ncol > 0 ? s->npoints * ncol : 1) * sizeof *table)) == NULL) {
    status = CLI_FAIL(err, DPD_ENOMEM, "out of memory for sweep.tsv");
  }
  if (status == DPD_OK && (failed = cJSON_CreateArray()) == NULL) {
    status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < s->npoints && status == DPD_OK; i++) {
    double *row = table + i * ncol;
    cJSON *sum = point_summary(s, i, "summary.json");
    for (size_t k = 0; k < ncol; k++) {
      row[k] = NAN;
    }
    if (sum != NULL) {
      row_fill rf = {&c, row + s->naxes + 1};
      row[s->naxes] = 0.0;
      for_each_number(s, sum, row_set, &rf);
      cJSON_Delete(sum);
    } else if ((sum = point_summary(s, i, failed_name)) != NULL) {
      const cJSON *code_item = cJSON_GetObjectItemCaseSensitive(sum, "exit_status");
      const cJSON *why = cJSON_GetObjectItemCaseSensitive(sum, "error");
      cJSON *rec = cJSON_CreateObject();
      row[s->naxes] = cJSON_IsNumber(code_item) ? code_item->valuedouble : CLI_EXIT_NUMERIC;
      cJSON_AddNumberToObject(rec, "point", (double)i);
      cJSON_AddNumberToObject(rec, "exit_status", row[s->naxes]);
      cJSON_AddStringToObject(rec, "error", cJSON_IsString(why) ? why->valuestring : "");
      cJSON_AddItemToArray(failed, rec);
      cJSON_Delete(sum);
      nfailed++;
    } else {
      char name[32], damaged[PATH_MAX];
      point_name(s, i, name, sizeof name);
      point_state_ex(s, i, damaged, sizeof damaged);
      if (damaged[0] != '\0') {
        status = CLI_FAIL(err, DPD_EIO,
                          "point %zu: '%s' is damaged (not a JSON object; was it changed while "
                          "the sweep ran? rerun the same command to redo the point)",
                          i, damaged);
      } else {
        status = CLI_FAIL(err, DPD_EIO,
                          "'%s/%s' has neither summary.json nor %s (was it removed while the "
                          "sweep ran? rerun to redo it)",
                          s->points, name, failed_name);
      }
    }
  }
  /* the figure's number */
  if (status == DPD_OK && s->naxes >= 1 && s->naxes <= 2 &&
      (s->plot_y == NULL || strcmp(s->plot_y, "none") != 0)) {
    if (s->plot_y != NULL) {
      if ((ycol = column_find(&c, s->plot_y)) < 0) {
        status = CLI_FAIL(err, DPD_EINVAL,
                          "invalid value for 'plot_y': '%.100s' (allowed: none, or a number of "
                          "the points' summaries: a column of sweep.tsv after 'status'%s%.200s)",
                          s->plot_y, c.n > 0 ? ", e.g. " : "", c.n > 0 ? c.names[0] : "");
      }
    } else {
      for (size_t k = 0; default_y[k] != NULL && ycol < 0; k++) {
        ycol = column_find(&c, default_y[k]);
      }
      if (ycol < 0 && c.n > 0) {
        ycol = 0;
      }
    }
  }
  /* sweep.tsv */
  if (status == DPD_OK && (f = open_memstream(&tsv, &tsv_len)) == NULL) {
    status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  if (status == DPD_OK) {
    fputs(config, f);
    for (size_t a = 0; a < s->naxes; a++) {
      fprintf(f, "%s\t", s->axes[a].key->name);
    }
    fputs("status", f);
    for (size_t k = 0; k < c.n; k++) {
      fprintf(f, "\t%s", c.names[k]);
    }
    fputc('\n', f);
    for (size_t i = 0; i < s->npoints; i++) {
      const double *row = table + i * ncol;
      for (size_t a = 0; a < s->naxes; a++) {
        size_t v = axis_index(s, i, a);
        fprintf(f, "%s\t", s->axes[a].values[v]);
        table[i * ncol + a] = s->axes[a].numbers != NULL ? s->axes[a].numbers[v] : NAN;
      }
      fprintf(f, "%.0f", row[s->naxes]);
      for (size_t k = 0; k < c.n; k++) {
        format_number(buf, sizeof buf, row[s->naxes + 1 + k]);
        fprintf(f, "\t%s", buf);
      }
      fputc('\n', f);
    }
    if (fclose(f) != 0 || tsv == NULL) {
      status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    } else {
      status = cli_write_in_place(s->out, "sweep.tsv", tsv, err);
    }
  }
  /* the figure: none when plot_y has no finite value at any point (all null, e.g. an SE at
   * seeds = 1): the figure drops what it cannot draw, and the sweep still succeeds */
  if (status == DPD_OK && ycol >= 0) {
    int drawable = 0;
    for (size_t i = 0; i < s->npoints && !drawable; i++) {
      drawable = isfinite(table[i * ncol + s->naxes + 1 + (size_t)ycol]) != 0;
    }
    if (!drawable) {
      snprintf(no_figure, sizeof no_figure,
               "'%.100s' is not a finite number at any point (null in every summary.json)",
               c.names[ycol]);
      fprintf(stderr, "dpdyn sweep: note: no figure: %s\n", no_figure);
    }
  }
  if (status == DPD_OK && ycol >= 0 && no_figure[0] == '\0') {
    char *preamble = figure_preamble(s, base, &c, table, (size_t)ycol, &figure);
    dpd_err ferr;
    dpd_err_reset(&ferr);
    if (preamble == NULL) {
      status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    } else if ((code = cli_plot_script(s->out, figure, preamble, "sweep.tsv", "png", &ferr)) !=
               CLI_EXIT_OK) {
      figure = NULL;
    }
    free(preamble);
    if (code != CLI_EXIT_OK) {
      *err = ferr; /* reported after summary.json is written */
    }
  }
  /* summary.json */
  if (status == DPD_OK) {
    cJSON *params = cJSON_CreateObject(), *varied = cJSON_CreateArray(), *cols;
    char *text;
    root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "command", "sweep");
    cJSON_AddStringToObject(root, "sweep_command", s->command);
    cJSON_AddStringToObject(root, "version", dpd_version());
    cli_params_to_json(base, params);
    cJSON_AddItemToObject(root, "params", params);
    for (size_t a = 0; a < s->naxes; a++) {
      cJSON *v = cJSON_CreateObject(), *vals = cJSON_CreateArray();
      cJSON_AddStringToObject(v, "key", s->axes[a].key->name);
      cJSON_AddStringToObject(v, "spec", s->axes[a].spec);
      for (size_t i = 0; i < s->axes[a].n; i++) {
        if (s->axes[a].numbers != NULL && !isnan(s->axes[a].numbers[i])) {
          /* inf: written as null + "nonfinite" */
          cJSON_AddItemToArray(vals, cJSON_CreateNumber(s->axes[a].numbers[i]));
        } else {
          cJSON_AddItemToArray(vals, cJSON_CreateString(s->axes[a].values[i]));
        }
      }
      cJSON_AddItemToObject(v, "values", vals);
      cJSON_AddItemToArray(varied, v);
    }
    cJSON_AddItemToObject(root, "varied", varied);
    cJSON_AddStringToObject(root, "order",
                            "point i is row i of sweep.tsv and OUT/points/<i>; the first varied "
                            "key varies slowest");
    cJSON_AddNumberToObject(root, "points", (double)s->npoints);
    cJSON_AddNumberToObject(root, "points_complete", (double)(s->npoints - nfailed));
    cJSON_AddNumberToObject(root, "points_failed", (double)nfailed);
    cJSON_AddItemToObject(root, "failed", failed);
    failed = NULL;
    cJSON_AddNumberToObject(root, "points_skipped", (double)skipped);
    cJSON_AddNumberToObject(root, "ranks", nranks);
    cols = cJSON_CreateArray();
    for (size_t a = 0; a < s->naxes; a++) {
      cJSON_AddItemToArray(cols, cJSON_CreateString(s->axes[a].key->name));
    }
    cJSON_AddItemToArray(cols, cJSON_CreateString("status"));
    for (size_t k = 0; k < c.n; k++) {
      cJSON_AddItemToArray(cols, cJSON_CreateString(c.names[k]));
    }
    cJSON_AddItemToObject(root, "columns", cols);
    if (ycol >= 0) {
      cJSON_AddStringToObject(root, "plot_y", c.names[ycol]);
    } else {
      cJSON_AddNullToObject(root, "plot_y");
    }
    if (figure != NULL) {
      snprintf(buf, sizeof buf, "%s.png", figure);
      cJSON_AddStringToObject(root, "figure", buf);
    } else {
      cJSON_AddNullToObject(root, "figure");
      if (no_figure[0] != '\0') {
        cJSON *na = cJSON_CreateObject();
        cJSON_AddStringToObject(na, "figure", no_figure);
        cJSON_AddItemToObject(root, "not_available", na);
      }
    }
    cli_json_number(root, "wall_seconds", cli_now() - start);
    if ((text = dpd_io_json_print(root)) == NULL) {
      status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    } else {
      size_t tl = strlen(text);
      char *nl = realloc(text, tl + 2);
      if (nl != NULL) {
        text = nl;
        text[tl] = '\n';
        text[tl + 1] = '\0';
      }
      dpd_err serr;
      dpd_err_reset(&serr);
      if ((status = cli_write_in_place(s->out, "summary.json", text, &serr)) < 0) {
        *err = serr;
      }
      free(text);
    }
  }
  if (status == DPD_OK && code == CLI_EXIT_OK && nfailed > 0) {
    code = CLI_EXIT_NUMERIC;
    CLI_FAIL(err, DPD_ESOLVER,
             "%zu of %zu points failed numerically (status 2 in sweep.tsv; their messages in "
             "summary.json 'failed')",
             nfailed, s->npoints);
  }
  cJSON_Delete(root);
  cJSON_Delete(failed);
  free(tsv);
  free(table);
  columns_free(&c);
  return status < 0 ? cli_exit_code(status) : code;
}

/* ---------------------------------------------------------------- the command */

/* The numbers of COMMAND's summary for the model named by --model (or the command's default
 * model), wrapped, for 'dpdyn sweep COMMAND [--model=M] --help'. */
static void numbers_help(int argc, char **argv) {
  const char *name = NULL;
  const dpd_model_type *m;
  const dpd_model_command *c;
  dpd_err err;
  size_t col = 0;
  if (argc < 1 || !cli_is_run_command(argv[0])) {
    return;
  }
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--model=", 8) == 0) {
      name = argv[i] + 8;
    } else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
      name = argv[i + 1];
    }
  }
  if (dpd_model_find(name, argv[0], &m, &err) < 0 ||
      (c = dpd_model_command_get(m, argv[0])) == NULL || c->numbers == NULL) {
    return;
  }
  printf("\nvalues of plot_y for model=%s %s (the numbers its summary can hold), or none:\n",
         m->name, argv[0]);
  for (const char *w = c->numbers; *w != '\0';) {
    int wl = (int)strcspn(w, " ");
    if (col > 0 && col + 1 + (size_t)wl > 98) {
      printf("\n");
      col = 0;
    }
    col += (size_t)printf("%s%.*s", col == 0 ? "  " : " ", wl, w);
    w += wl;
    w += strspn(w, " ");
  }
  printf("\n");
}

static void sweep_help(int argc, char **argv) {
  printf(
      "usage: dpdyn sweep COMMAND [FILE.ini] [--key=SPEC ...] [--out=DIR] [--plot_y=NAME]\n"
      "                   [--plot_log=auto|x|y|xy|none]\n"
      "\n"
      "Runs COMMAND (simulate, sde, ode, ou, compare, account or tune) at every point of a grid\n"
      "of parameters. SPEC of a key is one value (the same for every point), or:\n"
      "  V1,V2,...     a list of numbers (numeric keys)\n"
      "  V1|V2|...     a list of any values (text keys too: --schedule='const|sqrt')\n"
      "  lin:A:B:N     N values from A to B, evenly spaced, both ends included (N >= 2)\n"
      "  log:A:B:N     N values from A to B, evenly spaced in log (A, B > 0)\n"
      "Keys of a [sweep] section of FILE.ini are swept too (key = SPEC; a flag wins). The grid\n"
      "is the product of the varied keys, the first slowest: those of [sweep] in file order,\n"
      "then those of the flags in command-line order. Integer keys round range values.\n"
      "\n"
      "keys of the sweep itself:\n"
      "  out         output directory [./dpdyn-out/sweep-COMMAND-MODEL, or out of FILE.ini]\n"
      "  plot_y      summary number to plot, or none [final_excess_risk, final_test_risk,\n"
      "              rho_eff or sigma, the first the points have]; checked before any point\n"
      "              runs against the numbers COMMAND's summary can hold ('dpdyn sweep\n"
      "              COMMAND --model=M --help' lists them), and after the points ran\n"
      "              against those they wrote\n"
      "  plot_log    log axes of the figure: auto | x | y | xy | none [auto: an axis whose\n"
      "              positive values span a decade or more]; x: the varied key of a line\n"
      "              figure, y: plot_y (a heat map's colour scale)\n"
      "  threads     (of every point) worker threads of each point; results do not depend on it\n"
      "every other key: as 'dpdyn COMMAND --help' lists it.\n"
      "\n"
      "files:\n"
      "  OUT/points/<i>/     point i's output, as COMMAND writes it (failed.json instead when its\n"
      "                      run failed numerically, exit 2: recorded, the sweep goes on)\n"
      "  OUT/sweep.tsv       '#' lines (version, command, fixed keys, varied keys), one row of\n"
      "                      tab-separated column names, then one row per point: the varied keys,\n"
      "                      status (0, or 2 for a failed point), every number of the point's\n"
      "                      summary.json (nan: null or absent; inf; wall time and memory "
      "estimate\n"
      "                      left out)\n"
      "  OUT/summary.json    the grid: command, fixed keys, varied keys and values, points\n"
      "  OUT/sweep_line.png  one varied key: plot_y against it (+- 2 SE when <plot_y>_se exists)\n"
      "  OUT/sweep_heat.png  two varied keys: plot_y as a heat map (first key vertical)\n"
      "\n"
      "Rerunning the same command resumes a stopped sweep: complete points are skipped (it says\n"
      "how many); another configuration in OUT is refused. Under mpirun the points are shared\n"
      "by the ranks (point k of those to run goes to rank k mod size); give each rank\n"
      "threads = cores / ranks. sweep.tsv is the same for any number of ranks.\n"
      "\n"
      "example:\n"
      "  dpdyn sweep simulate --d=100 --gamma=0.5 --rho=2 --c=0.25,0.5,1 --eta0=log:0.1:1:4 \\\n"
      "      --seeds=8 --out=sweep-c-eta0\n"
      "  mpirun -np 4 dpdyn sweep simulate ... --threads=4\n");
  numbers_help(argc, argv);
}

static int finish(ranks *r, int code, const char *reason) {
  if (code != CLI_EXIT_OK && reason != NULL && reason[0] != '\0') {
    cli_print_error("sweep", reason);
  }
  ranks_end(r);
  return code;
}

int cli_cmd_sweep(int argc, char **argv) {
  const double start = cli_now();
  sweep s;
  ranks r;
  dpd_err err;
  cli_params base;
  char *config = NULL;
  long long head[3] = {0, 0, 0}; /* code, points to run, points skipped */
  long long *pending = NULL;
  int code = CLI_EXIT_OK, hard = CLI_EXIT_OK, notes;
  size_t npending = 0, skipped = 0;
  progress pg;

  memset(&s, 0, sizeof s);
  memset(&base, 0, sizeof base);
  memset(&pg, 0, sizeof pg);
  dpd_err_reset(&err);
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      const char *rank = getenv("OMPI_COMM_WORLD_RANK");
      if (rank == NULL || strcmp(rank, "0") == 0) {
        sweep_help(argc, argv);
      }
      return CLI_EXIT_OK;
    }
  }
  if (ranks_begin(&r, &err) < 0) {
    return finish(&r, r.rank == 0 ? cli_exit_code(err.status) : CLI_EXIT_USAGE,
                  r.rank == 0 ? err.reason : NULL);
  }
  /* 1. the grid (every rank: it is a function of the arguments and the INI file) */
  if (argc < 1) {
    CLI_FAIL(&err, DPD_EINVAL,
             "missing command (usage: dpdyn sweep COMMAND [FILE.ini] [--key=SPEC ...]; allowed "
             "commands: simulate, sde, ode, ou, compare, account, tune)");
    code = CLI_EXIT_USAGE;
  } else if (!cli_is_run_command(argv[0])) {
    CLI_FAIL(&err, DPD_EINVAL,
             "unknown command '%s' (allowed: simulate, sde, ode, ou, compare, account, tune)",
             argv[0]);
    code = CLI_EXIT_USAGE;
  } else {
    int status = parse_args(&s, argc, argv, &err);
    if (status == DPD_OK) {
      status = read_sweep_section(&s, &err);
    }
    if (status == DPD_OK) {
      /* the fixed keys and the INI file as a plain run reads them (unknown keys, syntax) */
      cli_params p;
      char **pargv = NULL;
      int pargc = 0;
      size_t n = 0;
      memset(&p, 0, sizeof p);
      pargv = calloc(s.nfixed + 3, sizeof *pargv);
      if (pargv == NULL) {
        status = CLI_FAIL(&err, DPD_ENOMEM, "out of memory");
      } else {
        if (s.ini != NULL) {
          pargv[n++] = strdup(s.ini);
        }
        for (size_t i = 0; i < s.nfixed; i++) {
          pargv[n++] = flag_text(s.fixed[i].key->name, s.fixed[i].value);
        }
        pargc = (int)n;
        for (size_t i = 0; i < n; i++) {
          if (pargv[i] == NULL) {
            status = CLI_FAIL(&err, DPD_ENOMEM, "out of memory");
          }
        }
        if (status == DPD_OK &&
            (status = cli_params_parse(&p, s.command, pargc, pargv, &err)) == DPD_OK) {
          status = grid_setup(&s, cli_is_given(&p, "out") ? cli_get_text(&p, "out") : NULL,
                              p.model != NULL ? p.model->name : NULL, &err);
        }
        cli_params_free(&p);
        argv_free(pargv);
      }
    }
    if (status < 0) {
      code = cli_exit_code(status);
    }
  }
  /* 2.-3. rank 0: validation, OUT, the points to run */
  if (code == CLI_EXIT_OK && r.rank == 0) {
    model_set models;
    int status = validate_points(&s, &models, &err);
    if (status == DPD_OK) {
      status = plot_y_check(&s, &models, &err);
    }
    if (status == DPD_OK && (status = base_params(&s, &base, &err)) == DPD_OK &&
        (config = config_text(&s, &base, &err)) == NULL) {
      status = DPD_ENOMEM;
    }
    if (status == DPD_OK) {
      status = prepare_out(&s, config, &err);
    }
    if (status == DPD_OK && (pending = malloc(s.npoints * sizeof *pending)) == NULL) {
      status = CLI_FAIL(&err, DPD_ENOMEM, "out of memory");
    }
    for (size_t i = 0; status == DPD_OK && i < s.npoints; i++) {
      char damaged[PATH_MAX];
      if (point_state_ex(&s, i, damaged, sizeof damaged) == 0) {
        if (damaged[0] != '\0') {
          char label[256];
          point_label(&s, i, label, sizeof label);
          fprintf(stderr,
                  "dpdyn sweep: point %zu (%s): '%s' is damaged (not a JSON object): the point "
                  "runs again\n",
                  i, label, damaged);
        }
        pending[npending++] = (long long)i;
      } else {
        skipped++;
      }
    }
    if (status < 0) {
      code = cli_exit_code(status);
    }
  }
  head[0] = code;
  head[1] = (long long)npending;
  head[2] = (long long)skipped;
  ranks_share(&r, head, 3);
  if (head[0] != CLI_EXIT_OK) {
    code = (int)head[0];
    goto done;
  }
  npending = (size_t)head[1];
  skipped = (size_t)head[2];
  if (r.rank != 0 && npending > 0 && (pending = malloc(npending * sizeof *pending)) == NULL) {
    CLI_FAIL(&err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_NUMERIC; /* the ranks cannot agree on the work: stop them all */
#ifdef DPD_HAVE_MPI
    if (r.mpi) {
      MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_NUMERIC);
    }
#endif
    goto done;
  }
  ranks_share(&r, pending, npending);

  /* 4. the points */
  if (r.rank == 0) {
    printf("# dpdyn %s sweep %s: %zu points into %s/ (%zu to run, %zu complete; %d rank%s)\n",
           dpd_version(), s.command, s.npoints, s.out, npending, skipped, r.size,
           r.size > 1 ? "s" : "");
    fflush(stdout);
    if (skipped > 0) {
      fprintf(stderr, "dpdyn sweep: resuming '%s': skipped %zu of %zu points, already complete\n",
              s.out, skipped, s.npoints);
    }
  }
  pg.on = r.rank == 0 && isatty(STDERR_FILENO);
  pg.start = start;
  pg.total = s.npoints;
  pg.skipped = skipped;
  notes = r.rank == 0;
  for (size_t k = (size_t)r.rank; k < npending; k += (size_t)r.size) {
    size_t point = (size_t)pending[k];
    char label[256];
    int c;
    point_label(&s, point, label, sizeof label);
    c = run_point(&s, point, notes, &err);
    notes = 0;
    progress_clear(&pg);
    if (c == CLI_EXIT_OK) {
      printf("point %0*zu %s: done\n", s.width, point, label);
      fflush(stdout);
    } else if (c == CLI_EXIT_NUMERIC) {
      fprintf(stderr,
              "dpdyn sweep: point %zu (%s): %s (recorded as failed.json and status 2; the sweep "
              "goes on)\n",
              point, label, err.reason);
    } else {
      point_context(&s, point, &err);
      cli_print_error("sweep", err.reason);
      hard = c;
      break;
    }
    pg.done += r.size > 1 ? 0 : 1;
    if (r.size > 1 && pg.on) {
      /* the other ranks' points too: count them on disk */
      pg.done = 0;
      for (size_t j = 0; j < npending; j++) {
        pg.done += point_state(&s, (size_t)pending[j]) != 0;
      }
    }
    progress_draw(&pg);
  }
  progress_clear(&pg);
  hard = ranks_max(&r, hard);
  if (hard != CLI_EXIT_OK) {
    if (r.rank == 0) {
      fprintf(stderr, "dpdyn sweep: stopped after the failure above; the complete points are kept: "
                      "rerun the same command to resume\n");
    }
    code = hard;
    dpd_err_reset(&err);
    goto done;
  }
  /* 5. rank 0: the tables and the figure */
  if (r.rank == 0) {
    code = assemble(&s, config, &base, skipped, r.size, start, &err);
    if (code == CLI_EXIT_OK || code == CLI_EXIT_NUMERIC) {
      printf("# wrote %s/ (sweep.tsv: %zu rows)\n", s.out, s.npoints);
    }
  }
  head[0] = code;
  ranks_share(&r, head, 1);
  if (r.rank != 0) {
    code = (int)head[0];
    dpd_err_reset(&err);
  }
done:
  free(pending);
  free(config);
  cli_params_free(&base);
  sweep_free(&s);
  return finish(&r, code, r.rank == 0 ? err.reason : NULL);
}
