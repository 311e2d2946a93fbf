/* dpdyn: command-line entry point and subcommand dispatch.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli/cli.h"

typedef struct {
  const char *name;
  const char *summary;
} command_info;

static const command_info commands[] = {
    {"simulate", "Monte-Carlo simulation of the algorithm over `seeds` replicates (linreg: "
                 "one-pass DP-SGD; rf: full-batch DP-GD)"},
    {"sde", "homogenized SDE (H-DP-SGD) by Euler-Maruyama over `seeds` replicates"},
    {"ode", "deterministic equivalent: coupled risk ODEs, bounds, last-iterate jump"},
    {"ou", "model=rf: Ornstein-Uhlenbeck theory of DP-GD (test risk, exit from no-clip set)"},
    {"compare", "simulation against theory (linreg: ode, + sde with --sde=1; rf: ou): gaps, "
                "figure"},
    {"account", "privacy of the schedule: rho_eff, (epsilon, delta), calibration"},
    {"tune", "optimise c and the schedule on the ODE; heat map; confirm by simulation"},
    {"plot", "render an output directory with gnuplot (dpdyn plot DIR [--format=svg])"},
    {NULL, NULL}};

static void usage(FILE *f) {
  fprintf(f, "usage: dpdyn COMMAND [FILE.ini] [--key=value ...]\n"
             "       dpdyn COMMAND --help | dpdyn --version\n\ncommands:\n");
  for (const command_info *c = commands; c->name != NULL; c++) {
    fprintf(f, "  %-10s %s\n", c->name, c->summary);
  }
  fprintf(f, "\nParameters come from an optional INI file and from --key=value flags\n"
             "(flags win). Outputs go to the directory `out`, published as one unit.\n"
             "Exit status: 0 ok, 1 invalid input, 2 numerical failure, 3 I/O failure,\n"
             "130/143/129 stopped by SIGINT/SIGTERM/SIGHUP (output unchanged).\n");
}

/* Prints "dpdyn COMMAND: reason" as one line: control characters of the user's input quoted in
 * the reason (a newline in a value) are shown as escapes. */
static void print_error(const char *command, const char *reason) {
  fprintf(stderr, "dpdyn %s: ", command);
  for (const unsigned char *c = (const unsigned char *)reason; *c != '\0'; c++) {
    if (*c == '\n') {
      fputs("\\n", stderr);
    } else if (*c == '\r') {
      fputs("\\r", stderr);
    } else if (*c == '\t') {
      fputs("\\t", stderr);
    } else if (*c < 0x20 || *c == 0x7f) {
      fprintf(stderr, "\\x%02x", *c);
    } else {
      fputc(*c, stderr);
    }
  }
  fputc('\n', stderr);
}

static void command_help(const char *command) {
  printf("usage: dpdyn %s [FILE.ini] [--key=value ...]\n\nkeys (default in brackets):\n", command);
  for (const cli_key *k = cli_key_table(); k->name != NULL; k++) {
    printf("  %-11s %s%s%s%s\n", k->name, k->help, k->def ? " [" : "", k->def ? k->def : "",
           k->def ? "]" : "");
  }
}

int main(int argc, char **argv) {
  double start = cli_now();
  const char *command;
  dpd_err err;
  cli_params params;
  int code;
  gsl_set_error_handler_off();
  cli_signals_install();
  dpd_err_reset(&err);
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  command = argv[1];
  if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
      strcmp(command, "help") == 0) {
    usage(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(command, "--version") == 0) {
    printf("dpdyn %s\n", dpd_version());
    return CLI_EXIT_OK;
  }
  if (strcmp(command, "plot") == 0) {
    if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
      printf("usage: dpdyn plot DIR [--format=png|svg]\n"
             "Renders DIR/trajectory.tsv and DIR/release.tsv with the gnuplot script of the\n"
             "command that made them; writes DIR/<command>.gp and DIR/<command>.<format>.\n");
      return CLI_EXIT_OK;
    }
    code = cli_cmd_plot(argc - 2, argv + 2, &err);
    if (code != CLI_EXIT_OK) {
      print_error("plot", err.reason);
    }
    return code;
  }
  if (strcmp(command, "simulate") != 0 && strcmp(command, "ode") != 0 &&
      strcmp(command, "sde") != 0 && strcmp(command, "tune") != 0 &&
      strcmp(command, "compare") != 0 && strcmp(command, "account") != 0 &&
      strcmp(command, "ou") != 0) {
    fprintf(stderr,
            "dpdyn: unknown command '%s' (allowed: simulate, sde, ode, ou, compare, account, "
            "tune, plot)\n",
            command);
    return CLI_EXIT_USAGE;
  }
  if (cli_params_parse(&params, command, argc - 2, argv + 2, &err) < 0) {
    print_error(command, err.reason);
    cli_params_free(&params);
    return CLI_EXIT_USAGE;
  }
  if (params.help) {
    command_help(command);
    cli_params_free(&params);
    return CLI_EXIT_OK;
  }
  if (strcmp(command, "ou") == 0 || strcmp(cli_get_text(&params, "model"), "rf") == 0) {
    code = cli_cmd_rf(command, &params, start, &err);
  } else if (strcmp(command, "tune") == 0) {
    code = cli_cmd_tune(&params, start, &err);
  } else {
    code = cli_cmd_linreg(command, &params, start, &err);
  }
  if (code != CLI_EXIT_OK) {
    print_error(command, err.reason);
  } else if (strcmp(command, "ou") != 0 && strcmp(cli_get_text(&params, "model"), "linreg") == 0) {
    cli_linreg_note_unused(&params, command); /* after success: never before an error line */
  }
  cli_params_free(&params);
  return code;
}
