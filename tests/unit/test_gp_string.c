/* Unit tests for cli_gp_string, the one function through which text goes into gnuplot code
 * (src/cli/gp_string.c, docs/output.md "Figures").
 * SPDX-License-Identifier: MIT
 *
 * References: gnuplot 5's string syntax. Inside a double-quoted literal gnuplot substitutes
 * `command` (backticks), and a line break ends the command; outside quotes it expands @macros and
 * $datablocks. The literal must hold none of these characters, and must read back as the same
 * bytes: decoded here with gnuplot's escape rules (\ooo octal, 1 to 3 digits). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "dpd_test.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The text a double-quoted gnuplot literal stands for (gnuplot's parse_esc rules, the subset
 * cli_gp_string may write); fails the test on anything else. */
static void decode(const char *lit, char *out, size_t cap) {
  size_t n = 0, len = strlen(lit);
  assert_true(len >= 2);
  assert_int_equal(lit[0], '"');
  assert_int_equal(lit[len - 1], '"');
  for (size_t i = 1; i + 1 < len; i++) {
    unsigned char c = (unsigned char)lit[i];
    assert_true(n + 1 < cap);
    if (c == '\\') {
      unsigned v = 0;
      int k;
      for (k = 0; k < 3 && lit[i + 1] >= '0' && lit[i + 1] <= '7'; k++) {
        v = v * 8 + (unsigned)(lit[++i] - '0');
      }
      assert_int_equal(k, 3); /* always three digits: a digit after it cannot join the escape */
      out[n++] = (char)v;
    } else {
      out[n++] = (char)c;
    }
  }
  out[n] = '\0';
}

/* No byte of the literal (quotes aside) that gnuplot substitutes or reads as a line end. */
static void assert_inert(const char *lit) {
  size_t len = strlen(lit);
  for (size_t i = 1; i + 1 < len; i++) {
    unsigned char c = (unsigned char)lit[i];
    assert_true(c >= 0x80 || (c >= 0x20 && c < 0x7F));
    assert_true(c != '"' && c != '`' && c != '@' && c != '$' && c != '\'');
    if (c == '\\') { /* only as the start of an octal escape */
      assert_true(lit[i + 1] >= '0' && lit[i + 1] <= '3');
      i += 3;
    }
  }
}

static void plain_text_is_kept(void **state) {
  char buf[128];
  (void)state;
  assert_int_equal(cli_gp_string("d = 20, n = 60 (sqrt schedule)", buf, sizeof buf), 32);
  assert_string_equal(buf, "\"d = 20, n = 60 (sqrt schedule)\"");
  cli_gp_string("ρ = 1, ε = ∞", buf, sizeof buf); /* UTF-8 as it is */
  assert_string_equal(buf, "\"ρ = 1, ε = ∞\"");
  cli_gp_string("", buf, sizeof buf);
  assert_string_equal(buf, "\"\"");
}

static void code_characters_are_escaped(void **state) {
  char buf[256];
  (void)state;
  cli_gp_string("a`touch X`b", buf, sizeof buf);
  assert_string_equal(buf, "\"a\\140touch X\\140b\"");
  cli_gp_string("$(id)@m'q\"\\", buf, sizeof buf);
  assert_string_equal(buf, "\"\\044(id)\\100m\\047q\\042\\134\"");
  cli_gp_string("x\ny\r\t\x7f", buf, sizeof buf);
  assert_string_equal(buf, "\"x\\012y\\015\\011\\177\"");
  cli_gp_string("\\1", buf, sizeof buf); /* a digit after an escape stays a digit */
  assert_string_equal(buf, "\"\\1341\"");
}

/* Every byte 1..255, alone and in a run: inert, and read back as itself. */
static void every_byte_round_trips(void **state) {
  char text[300], lit[1300], back[300];
  size_t n = 0;
  (void)state;
  for (int c = 1; c < 256; c++) {
    char one[2] = {(char)c, '\0'};
    cli_gp_string(one, lit, sizeof lit);
    assert_inert(lit);
    decode(lit, back, sizeof back);
    assert_string_equal(back, one);
    text[n++] = (char)c;
  }
  text[n] = '\0';
  assert_true(cli_gp_string(text, lit, sizeof lit) < sizeof lit);
  assert_inert(lit);
  decode(lit, back, sizeof back);
  assert_string_equal(back, text);
}

/* snprintf's contract: the whole length returned, at most cap bytes written, NUL-terminated, and
 * cap = 0 writes nothing. */
static void short_buffers(void **state) {
  char buf[8];
  (void)state;
  memset(buf, 'Z', sizeof buf);
  assert_int_equal(cli_gp_string("abc`def", buf, 6), 12);
  assert_string_equal(buf, "\"abc\\");
  assert_int_equal(buf[7], 'Z');
  memset(buf, 'Z', sizeof buf);
  assert_int_equal(cli_gp_string("abc", buf, 0), 5);
  assert_int_equal(buf[0], 'Z');
}

/* The FILE form writes the same literal, also past its internal buffer. */
static void write_matches(void **state) {
  char *text = malloc(5001), *mem = NULL, *want = malloc(20010);
  size_t len = 0;
  FILE *f = open_memstream(&mem, &len);
  (void)state;
  assert_non_null(text);
  assert_non_null(want);
  assert_non_null(f);
  for (int i = 0; i < 5000; i++) {
    text[i] = "a`b$\n"[i % 5];
  }
  text[5000] = '\0';
  cli_gp_string_write(f, text);
  assert_int_equal(fclose(f), 0);
  assert_int_equal(cli_gp_string(text, want, 20010), strlen(mem));
  assert_string_equal(mem, want);
  free(mem);
  free(want);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plain_text_is_kept),     cmocka_unit_test(code_characters_are_escaped),
      cmocka_unit_test(every_byte_round_trips), cmocka_unit_test(short_buffers),
      cmocka_unit_test(write_matches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
