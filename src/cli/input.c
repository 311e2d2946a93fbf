/* Bounded reader of the INI files the user hands to dpdyn (data tables: src/core/table.c).
 * SPDX-License-Identifier: MIT
 *
 * INI files: at most CLI_MAX_INI_BYTES bytes, read whole; comment lines of any length are
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

void cli_ini_text_free(cli_ini_text *t) {
  free(t->text);
  free(t->key_lines);
  memset(t, 0, sizeof *t);
}

/* Reads the whole file (at most CLI_MAX_INI_BYTES), rejecting NUL bytes. */
static int slurp(const char *path, char **text, size_t *len, dpd_err *err) {
  FILE *f;
  size_t cap = 4096, n = 0;
  char *buf;
  int status;
  *text = NULL;
  if ((status = dpd_io_file_open("INI file", 0, path, CLI_MAX_INI_BYTES, &f, NULL, err)) < 0) {
    return status;
  }
  buf = malloc(cap);
  if (buf == NULL) {
    fclose(f);
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  for (;;) {
    size_t got;
    if (n + 1 >= cap) {
      char *grown;
      if (cap > CLI_MAX_INI_BYTES) {
        fclose(f);
        free(buf);
        return CLI_FAIL(err, DPD_EINVAL,
                        "INI file '%s' is larger than %d bytes (allowed: INI files up to %d "
                        "bytes)",
                        path, CLI_MAX_INI_BYTES, CLI_MAX_INI_BYTES);
      }
      grown = realloc(buf, 2 * cap);
      if (grown == NULL) {
        fclose(f);
        free(buf);
        return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
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
      return CLI_FAIL(err, DPD_EINVAL,
                      "INI file '%s' has a NUL byte on line %zu (allowed: a text file of "
                      "'key = value' lines)",
                      path, line);
    }
    n += got;
    if (n > CLI_MAX_INI_BYTES) {
      fclose(f);
      free(buf);
      return CLI_FAIL(err, DPD_EINVAL,
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
    return CLI_FAIL(err, DPD_EINVAL, "cannot read INI file '%s': %s", path, strerror(e));
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
        return CLI_FAIL(err, DPD_EINVAL,
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
            return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
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
