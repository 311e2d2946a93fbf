/* The end of a run's output: its figure drawn into the staging directory, then the directory
 * published. Above both output.c (the staging directory) and plot.c (gnuplot), which uses
 * output.c's names and temporaries, so that neither of the two calls the other back.
 * SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "cli/cli.h"

int cli_out_finish(cli_out *o, const char *figure, dpd_err *err) {
  int code = CLI_EXIT_OK, status;
  dpd_err plot_err;
  dpd_err_reset(&plot_err);
  if (figure != NULL && o->stage != NULL) {
    char name[96];
    /* the figure's final names inside the stage, for the signal handler */
    for (int k = 0; k < 2; k++) {
      snprintf(name, sizeof name, "%s.%s", figure, k == 0 ? "gp" : "png");
      cli_out_expect(o, name);
    }
    code = cli_plot_render(o->stage, figure, &plot_err);
  }
  if ((status = cli_out_publish(o, err)) < 0) {
    return cli_exit_code(status);
  }
  if (code != CLI_EXIT_OK && err != NULL) {
    *err = plot_err;
  }
  return code;
}
