/* Number grammar shared by keys and data files (internal).
 * SPDX-License-Identifier: MIT */
#ifndef DPD_TEXT_IMPL_H
#define DPD_TEXT_IMPL_H

#include <stddef.h>

#define DPD_HIDDEN __attribute__((visibility("hidden")))

/* Whether [s, end) is a decimal number as keys and data files take it,
 * [+-]digits[.digits][e[+-]digits] (strtod also reads hexadecimal, inf and nan). */
DPD_HIDDEN int dpd__decimal_span(const char *s, const char *end);
/* inf, +inf, Inf or INF. */
DPD_HIDDEN int dpd__is_inf_literal(const char *s);
/* Copies `src` without its surrounding white space; -1 if it does not fit in `cap`. */
DPD_HIDDEN int dpd__trim_copy(char *dst, size_t cap, const char *src);
/* An unsigned decimal integer (surrounding space allowed; +N is N; -0 is 0); -1 otherwise. */
DPD_HIDDEN int dpd__parse_u64(const char *text, unsigned long long *out);
/* A malloc'ed copy of s (NULL when out of memory). */
DPD_HIDDEN char *dpd__text_dup(const char *s);
/* The shortest of %.15g / %.17g that reads back as the same double. */
DPD_HIDDEN void dpd__format_shortest(char *buf, size_t cap, double x);

#endif
