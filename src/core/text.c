/* Number grammar shared by keys and data files (text_impl.h).
 * SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text_impl.h"
#include "dpdyn/io.h"

int dpd__decimal_span(const char *s, const char *end) {
  int digits = 0;
  if (s < end && (*s == '+' || *s == '-')) {
    s++;
  }
  while (s < end && isdigit((unsigned char)*s)) {
    s++;
    digits++;
  }
  if (s < end && *s == '.') {
    s++;
    while (s < end && isdigit((unsigned char)*s)) {
      s++;
      digits++;
    }
  }
  if (digits == 0) {
    return 0;
  }
  if (s < end && (*s == 'e' || *s == 'E')) {
    s++;
    if (s < end && (*s == '+' || *s == '-')) {
      s++;
    }
    if (!(s < end && isdigit((unsigned char)*s))) {
      return 0;
    }
    while (s < end && isdigit((unsigned char)*s)) {
      s++;
    }
  }
  return s == end;
}

int dpd__is_inf_literal(const char *s) {
  return strcmp(s, "inf") == 0 || strcmp(s, "+inf") == 0 || strcmp(s, "Inf") == 0 ||
         strcmp(s, "INF") == 0;
}

int dpd__trim_copy(char *dst, size_t cap, const char *src) {
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

int dpd__parse_u64(const char *text, unsigned long long *out) {
  char buf[256];
  char *end;
  const char *digits = buf;
  int negative = 0;
  if (dpd__trim_copy(buf, sizeof buf, text) < 0) {
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

void dpd__format_shortest(char *buf, size_t cap, double x) {
  snprintf(buf, cap, "%.15g", x);
  if (strtod(buf, NULL) != x) {
    snprintf(buf, cap, "%.17g", x);
  }
}

char *dpd__text_dup(const char *s) {
  size_t len = strlen(s);
  char *d = malloc(len + 1);
  if (d != NULL) {
    memcpy(d, s, len + 1);
  }
  return d;
}

int dpd_io_number_is_decimal(const char *s, const char *end) {
  return dpd__decimal_span(s, end);
}

void dpd_io_number_format(char *buf, size_t cap, double x) {
  dpd__format_shortest(buf, cap, x);
}
