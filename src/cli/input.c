/* Bounded readers of every file the user hands to dpdyn: data tables (spectrum, theta_star,
 * schedule, account --sequence) and INI files.
 * SPDX-License-Identifier: MIT
 *
 * Every reader has a clear limit and says which one was hit:
 *   data files  at most CLI_MAX_DATA_BYTES bytes; a data line (what precedes '#') at most
 *               CLI_MAX_DATA_LINE bytes; comments may be of any length (they are skipped
 *               without being stored); rows are counted against the run's memory limit;
 *   INI files   at most CLI_MAX_INI_BYTES bytes, read whole; comment lines of any length are
 *               blanked before libinih sees the text, and a key line longer than libinih's line
 *               buffer is an error naming the line (libinih would split it silently).
 * A NUL byte anywhere is an error (a binary file, /dev/zero): nothing waits on endless input. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ini.h>

#include "cli/cli.h"
#include "core/text_impl.h"
#include "core/error_impl.h"

/* ---- data lines ---- */

int cli_lines_open(cli_lines *r, const char *key, const char *path, dpd_err *err) {
  memset(r, 0, sizeof *r);
  r->key = key;
  r->path = path;
  r->f = fopen(path, "r");
  if (r->f == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': cannot open '%s': %s", key, path,
                    strerror(errno));
  }
  r->cap = 256;
  r->line = malloc(r->cap);
  if (r->line == NULL) {
    fclose(r->f);
    r->f = NULL;
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  return DPD_OK;
}

void cli_lines_close(cli_lines *r) {
  if (r->f != NULL) {
    fclose(r->f);
  }
  free(r->line);
  memset(r, 0, sizeof *r);
}

/* Next line with data: the text before '#', NUL-terminated, at least one non-space character.
 * Returns 1 (a line in *line, its number in r->lineno), 0 at the end, < 0 on error. */
int cli_lines_next(cli_lines *r, char **line, dpd_err *err) {
  size_t len = 0;
  int in_comment = 0, blank = 1;
  for (;;) {
    int c = getc(r->f);
    if (c == EOF) {
      if (ferror(r->f)) {
        return DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': error reading '%s': %s", r->key,
                        r->path, strerror(errno));
      }
      if (len > 0 && !blank) {
        r->lineno++;
        r->line[len] = '\0';
        *line = r->line;
        r->at_eof = 1;
        return 1;
      }
      return 0;
    }
    if (++r->bytes > CLI_MAX_DATA_BYTES) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': file '%s' is larger than %llu bytes (allowed: "
                      "data files up to %llu bytes)",
                      r->key, r->path, (unsigned long long)CLI_MAX_DATA_BYTES,
                      (unsigned long long)CLI_MAX_DATA_BYTES);
    }
    if (c == '\0') {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': file '%s' has a NUL byte on line %zu (allowed: "
                      "a text file of numbers)",
                      r->key, r->path, r->lineno + 1);
    }
    if (c == '\n') {
      r->lineno++;
      if (!blank) {
        r->line[len] = '\0';
        *line = r->line;
        return 1;
      }
      len = 0;
      in_comment = 0;
      continue;
    }
    if (in_comment) {
      continue;
    }
    if (c == '#') {
      in_comment = 1;
      continue;
    }
    if (len + 1 >= CLI_MAX_DATA_LINE) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for '%s': line %zu of '%s' is longer than %d bytes "
                      "(allowed: data lines up to %d bytes; comments may be longer)",
                      r->key, r->lineno + 1, r->path, CLI_MAX_DATA_LINE - 1, CLI_MAX_DATA_LINE - 1);
    }
    if (len + 1 >= r->cap) {
      size_t cap = 2 * r->cap;
      char *grown = realloc(r->line, cap);
      if (grown == NULL) {
        return DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", r->path);
      }
      r->line = grown;
      r->cap = cap;
    }
    if (!isspace(c) && c != ',') {
      blank = 0;
    }
    r->line[len++] = (char)c;
  }
}

int cli_read_table(const char *key, const char *path, size_t ncols_min, size_t ncols_max,
                   size_t max_bytes, double **cols, size_t *nrows, size_t *ncols_found,
                   dpd_err *err) {
  cli_lines rd;
  char *line;
  size_t cap = 0, rows = 0, ncols = 0;
  int status, got;
  for (size_t c = 0; c < ncols_max; c++) {
    cols[c] = NULL;
  }
  if ((status = cli_lines_open(&rd, key, path, err)) < 0) {
    return status;
  }
  while ((got = cli_lines_next(&rd, &line, err)) > 0) {
    char *s = line;
    double vals[CLI_TABLE_MAX_COLS];
    size_t k = 0;
    for (;;) {
      char *end;
      double v;
      while (isspace((unsigned char)*s) || *s == ',') {
        s++;
      }
      if (*s == '\0') {
        break;
      }
      v = strtod(s, &end);
      if (end == s || !dpd__decimal_span(s, end) || !isfinite(v) || k >= ncols_max ||
          k >= CLI_TABLE_MAX_COLS ||
          !(*end == '\0' || isspace((unsigned char)*end) || *end == ',')) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': file '%s' line %zu is malformed (allowed: "
                          "%zu to %zu finite decimal numbers per line)",
                          key, path, rd.lineno, ncols_min, ncols_max);
        goto done;
      }
      vals[k++] = v;
      s = end;
    }
    if (ncols == 0) {
      ncols = k;
    }
    if (k != ncols || k < ncols_min) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': file '%s' line %zu has %zu columns (allowed: "
                        "%zu to %zu, the same on every line)",
                        key, path, rd.lineno, k, ncols_min, ncols_max);
      goto done;
    }
    if (rows == cap) {
      size_t grown_cap = cap ? 2 * cap : 256;
      if (grown_cap > max_bytes / sizeof(double) / ncols_max) {
        status = DPD_FAIL(err, DPD_EINVAL,
                          "invalid value for '%s': file '%s' has more than %zu rows, which "
                          "needs more than max_memory = %zu bytes (allowed: raise max_memory)",
                          key, path, rows, max_bytes);
        goto done;
      }
      cap = grown_cap;
      for (size_t c = 0; c < ncols_max; c++) {
        double *grown = realloc(cols[c], cap * sizeof *grown);
        if (grown == NULL) {
          status = DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", path);
          goto done;
        }
        cols[c] = grown;
      }
    }
    for (size_t c = 0; c < k; c++) {
      cols[c][rows] = vals[c];
    }
    rows++;
  }
  status = got;
  if (status == DPD_OK && rows == 0) {
    status =
        DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': file '%s' has no data rows", key, path);
  }
done:
  cli_lines_close(&rd);
  if (status < 0) {
    for (size_t c = 0; c < ncols_max; c++) {
      free(cols[c]);
      cols[c] = NULL;
    }
    return status;
  }
  *nrows = rows;
  *ncols_found = ncols;
  return DPD_OK;
}

/* ---- INI files ---- */

void cli_ini_text_free(cli_ini_text *t) {
  free(t->text);
  free(t->key_lines);
  memset(t, 0, sizeof *t);
}

/* Reads the whole file (at most CLI_MAX_INI_BYTES), rejecting NUL bytes. */
static int slurp(const char *path, char **text, size_t *len, dpd_err *err) {
  FILE *f = fopen(path, "rb");
  size_t cap = 4096, n = 0;
  char *buf;
  *text = NULL;
  if (f == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "cannot open INI file '%s': %s", path, strerror(errno));
  }
  buf = malloc(cap);
  if (buf == NULL) {
    fclose(f);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (;;) {
    size_t got;
    if (n + 1 >= cap) {
      char *grown;
      if (cap > CLI_MAX_INI_BYTES) {
        fclose(f);
        free(buf);
        return DPD_FAIL(err, DPD_EINVAL,
                        "INI file '%s' is larger than %d bytes (allowed: INI files up to %d "
                        "bytes)",
                        path, CLI_MAX_INI_BYTES, CLI_MAX_INI_BYTES);
      }
      grown = realloc(buf, 2 * cap);
      if (grown == NULL) {
        fclose(f);
        free(buf);
        return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
      }
      buf = grown;
      cap *= 2;
    }
    got = fread(buf + n, 1, cap - 1 - n, f);
    if (memchr(buf + n, '\0', got) != NULL) {
      size_t line = 1;
      const char *nul = memchr(buf + n, '\0', got);
      for (const char *q = buf; q < nul; q++) {
        line += *q == '\n';
      }
      fclose(f);
      free(buf);
      return DPD_FAIL(err, DPD_EINVAL,
                      "INI file '%s' has a NUL byte on line %zu (allowed: a text file of "
                      "'key = value' lines)",
                      path, line);
    }
    n += got;
    if (n > CLI_MAX_INI_BYTES) {
      fclose(f);
      free(buf);
      return DPD_FAIL(err, DPD_EINVAL,
                      "INI file '%s' is larger than %d bytes (allowed: INI files up to %d bytes)",
                      path, CLI_MAX_INI_BYTES, CLI_MAX_INI_BYTES);
    }
    if (got == 0) {
      break;
    }
  }
  if (ferror(f)) {
    int e = errno;
    fclose(f);
    free(buf);
    return DPD_FAIL(err, DPD_EINVAL, "cannot read INI file '%s': %s", path, strerror(e));
  }
  fclose(f);
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return DPD_OK;
}

/* Whether libinih takes the line as 'key = value': a '=' or ':' before any inline comment (';'
 * after whitespace). */
static int is_key_line(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '=' || s[i] == ':') {
      return 1;
    }
    if (s[i] == ';' && i > 0 && isspace((unsigned char)s[i - 1])) {
      return 0;
    }
  }
  return 0;
}

int cli_ini_text_read(const char *path, cli_ini_text *t, dpd_err *err) {
  char *src;
  size_t len = 0, lineno = 0, kcap = 0;
  const size_t max_line = (size_t)ini_max_line - 3; /* '\r', '\n' and '\0' */
  int status;
  memset(t, 0, sizeof *t);
  if ((status = slurp(path, &src, &len, err)) < 0) {
    return status;
  }
  /* Rewrite in place, line by line: comment lines become empty (line numbers are kept), key
   * lines lose their indentation (so that none is taken as a continuation line). The output
   * never overtakes the input (out <= in): a line keeps its '\n' only if it had one, so the
   * text's terminator is not overwritten when the last line lacks a newline. */
  t->text = src;
  {
    char *in = src, *out = src;
    const char *end = src + len;
    while (in < end) {
      char *eol = strchr(in, '\n');
      size_t n = eol != NULL ? (size_t)(eol - in) : strlen(in);
      char *s = in;
      size_t body;
      lineno++;
      if (lineno == 1 && n >= 3 && (unsigned char)s[0] == 0xEF && (unsigned char)s[1] == 0xBB &&
          (unsigned char)s[2] == 0xBF) {
        s += 3; /* UTF-8 byte-order mark */
      }
      while (s < in + n && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\f' || *s == '\v')) {
        s++;
      }
      body = (size_t)(in + n - s);
      while (body > 0 && isspace((unsigned char)s[body - 1])) {
        body--;
      }
      if (body == 0 || *s == ';' || *s == '#') {
        body = 0;
      } else if (body > max_line) {
        cli_ini_text_free(t);
        return DPD_FAIL(err, DPD_EINVAL,
                        "INI file '%s' line %zu is longer than %zu characters (allowed: key "
                        "lines up to %zu characters; comment lines may be longer)",
                        path, lineno, max_line, max_line);
      } else if (*s != '[' && is_key_line(s, body)) {
        if (t->nkeys == kcap) {
          size_t *grown;
          kcap = kcap ? 2 * kcap : 64;
          grown = realloc(t->key_lines, kcap * sizeof *grown);
          if (grown == NULL) {
            cli_ini_text_free(t);
            return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
          }
          t->key_lines = grown;
        }
        t->key_lines[t->nkeys++] = lineno;
      }
      memmove(out, s, body);
      out += body;
      in += n;
      if (in < end) { /* *in == '\n' */
        *out++ = '\n';
        in++;
      }
    }
    *out = '\0';
  }
  return DPD_OK;
}
