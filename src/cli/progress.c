/* Progress lines on stderr: the callbacks the CLI installs in the library's configs
 * (dpdyn/replicate.h). The library calls them from the thread that started the run only, so
 * they write to stderr without locking.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"

dpd_progress_fn cli_progress_on_tty(dpd_progress_fn callback) {
  return isatty(STDERR_FILENO) ? callback : NULL;
}

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
