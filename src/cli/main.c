/* dpdyn: command-line entry point.
 * SPDX-License-Identifier: MIT
 *
 * The process-wide set-up (GSL's error handler off, the signal handlers, the DPD_ISA check),
 * then one command:
 * --help, --version, plot, sweep, or a run of any other command through cli_run (run.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli/cli.h"
#include "dpdyn/isa.h"

int main(int argc, char **argv) {
  const char *command;
  dpd_err err;
  int code;
  gsl_set_error_handler_off();
  cli_signals_install();
  dpd_err_reset(&err);
  if (argc < 2) {
    cli_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  command = argv[1];
  if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
      strcmp(command, "help") == 0) {
    cli_usage(stdout);
    return CLI_EXIT_OK;
  }
  {
    char why[256];
    if (dpd_isa_env_check(why, sizeof why) != DPD_OK) { /* before any work (docs/input.md) */
      fprintf(stderr, "dpdyn: %s\n", why);
      return CLI_EXIT_USAGE;
    }
  }
  if (strcmp(command, "--version") == 0) {
    printf("dpdyn %s\n", dpd_version());
    printf("kernel path: %s (this CPU has scalar%s%s; every path gives the same bits; the "
           "environment variable DPD_ISA=scalar|avx2|avx512 forces one)\n",
           dpd_isa_name(dpd_isa_get()), dpd_isa_available(DPD_ISA_AVX2) ? ", avx2" : "",
           dpd_isa_available(DPD_ISA_AVX512) ? ", avx512" : "");
    return CLI_EXIT_OK;
  }
  if (strcmp(command, "plot") == 0) {
    if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
      printf("usage: dpdyn plot DIR [--format=png|svg|pdf]\n"
             "Renders DIR/trajectory.tsv and DIR/release.tsv with the gnuplot script of the\n"
             "command that made them; writes DIR/<command>.gp and DIR/<command>.<format>\n"
             "(png: pngcairo, svg, pdf: pdfcairo). A sweep directory is re-rendered too.\n");
      return CLI_EXIT_OK;
    }
    code = cli_cmd_plot(argc - 2, argv + 2, &err);
    if (code != CLI_EXIT_OK) {
      cli_print_error("plot", err.reason);
    }
    return code;
  }
  if (strcmp(command, "sweep") == 0) {
    return cli_cmd_sweep(argc - 2, argv + 2); /* prints its own messages */
  }
  if (!cli_is_run_command(command)) {
    cli_unknown_command(command, &err);
    fprintf(stderr, "dpdyn: %s\n", err.reason);
    return CLI_EXIT_USAGE;
  }
  code = cli_run(argc - 1, argv + 1, 1, &err);
  if (code != CLI_EXIT_OK) {
    cli_print_error(command, err.reason);
  }
  return code;
}
