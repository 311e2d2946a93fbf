/* The one way text goes into gnuplot code: a double-quoted string literal in which nothing is
 * substituted.
 * SPDX-License-Identifier: MIT
 *
 * gnuplot substitutes `command` inside double-quoted strings (single-quoted ones end at a line
 * break, which would start a new command), expands @macros and $datablocks outside quotes, and
 * reads a line break as the end of a command. A literal written here holds none of these
 * characters: `"`, `\`, the backtick, `@`, `$`, `'`, every control character and DEL are written
 * as three-digit octal escapes (\042, \134, \140, ...), which gnuplot's string parser turns back
 * into the same bytes after every substitution has been done. Printable ASCII and the bytes of
 * UTF-8 sequences (>= 0x80: ρ, ε, ...) are written as they are, so the script stays readable. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

/* Whether byte `c` is written as it is. */
static int gp_plain(unsigned char c) {
  if (c >= 0x80) {
    return 1;
  }
  if (c < 0x20 || c == 0x7F) {
    return 0;
  }
  return c != '"' && c != '\\' && c != '`' && c != '@' && c != '$' && c != '\'';
}

size_t cli_gp_string(const char *s, char *buf, size_t cap) {
  size_t len = 0;
  /* `put` writes one byte when there is room for it and the final NUL */
#define put(ch)                                                                                    \
  do {                                                                                             \
    if (len + 1 < cap) {                                                                           \
      buf[len] = (char)(ch);                                                                       \
    }                                                                                              \
    len++;                                                                                         \
  } while (0)
  put('"');
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (gp_plain(*p)) {
      put(*p);
    } else {
      put('\\');
      put('0' + ((*p >> 6) & 7));
      put('0' + ((*p >> 3) & 7));
      put('0' + (*p & 7));
    }
  }
  put('"');
#undef put
  if (cap > 0) {
    buf[len < cap ? len : cap - 1] = '\0';
  }
  return len;
}

void cli_gp_string_write(FILE *f, const char *s) {
  char small[256];
  size_t need = cli_gp_string(s, small, sizeof small);
  if (need < sizeof small) {
    fputs(small, f);
    return;
  }
  {
    char *big = malloc(need + 1);
    if (big != NULL) {
      cli_gp_string(s, big, need + 1);
      fputs(big, f);
      free(big);
    } else {
      fputs("\"\"", f); /* out of memory: an empty string, never the raw text */
    }
  }
}
