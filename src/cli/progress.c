/* Progress lines on stderr: the callbacks the CLI installs in the library's configs
 * (dpdyn/replicate.h). The library calls them from the thread that started the run only, so
 * they write to stderr without locking.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_progress_replicates(void *what, size_t done, size_t total) {
  fprintf(stderr, "\rdpdyn %s: %zu/%zu replicates", (const char *)what, done, total);
  if (done == total) {
    fputc('\n', stderr);
  }
  return 0;
}

int cli_progress_percent_draw(void *state, size_t done, size_t total) {
  cli_progress_percent *line = state;
  const size_t percent = done * 100 / total;
  if (percent != line->percent || done == total) {
    fprintf(stderr, "\rdpdyn %s: %3zu%% of %zu %s", line->what, percent, total, line->unit);
    if (done == total) {
      fputc('\n', stderr);
    }
  }
  line->percent = percent;
  return 0;
}

int cli_progress_draw(void *state, const char *unit, size_t done, size_t total) {
  cli_progress_percent *line = state;
  if (strcmp(unit, "replicates") == 0) {
    return cli_progress_replicates((void *)line->what, done, total);
  }
  line->unit = unit;
  return cli_progress_percent_draw(state, done, total);
}
