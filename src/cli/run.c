/* dpdyn: the command table, usage and help texts, and the dispatch of one command run.
 * SPDX-License-Identifier: MIT
 *
 * cli_run is everything main() does after its checks, callable once per run: main() calls it
 * for the command on its command line, `dpdyn sweep` for every point of a grid (cmd_sweep.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error_impl.h"

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
    {"sweep", "run any command above over a grid of parameters (dpdyn sweep COMMAND ...; "
              "threads locally, Open MPI across machines)"},
    {"plot", "render an output directory with gnuplot (dpdyn plot DIR [--format=svg])"},
    {NULL, NULL}};

/* The commands cli_run runs (every command but sweep and plot). */
static const char *const run_commands[] = {"simulate", "sde",     "ode",  "ou",
                                           "compare",  "account", "tune", NULL};

void cli_usage(FILE *f) {
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

void cli_print_error(const char *command, const char *reason) {
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

int cli_is_run_command(const char *command) {
  for (size_t k = 0; run_commands[k] != NULL; k++) {
    if (strcmp(run_commands[k], command) == 0) {
      return 1;
    }
  }
  return 0;
}

/* The implementation that runs `command` with `p`. */
typedef enum { IMPL_LINREG, IMPL_RF, IMPL_TUNE } impl_kind;

static impl_kind impl_of(const char *command, const cli_params *p) {
  if (strcmp(command, "ou") == 0 || strcmp(cli_get_text(p, "model"), "rf") == 0) {
    return IMPL_RF;
  }
  return strcmp(command, "tune") == 0 ? IMPL_TUNE : IMPL_LINREG;
}

static int unknown_command(const char *command, dpd_err *err) {
  DPD_FAIL(err, DPD_EINVAL,
           "unknown command '%s' (allowed: simulate, sde, ode, ou, compare, account, tune, "
           "sweep, plot)",
           command);
  return CLI_EXIT_USAGE;
}

int cli_run(int argc, char **argv, int notes, dpd_err *err) {
  double start = cli_now();
  const char *command = argv[0];
  cli_params params;
  int code;
  if (!cli_is_run_command(command)) {
    return unknown_command(command, err);
  }
  if (cli_params_parse(&params, command, argc - 1, argv + 1, err) < 0) {
    cli_params_free(&params);
    return CLI_EXIT_USAGE;
  }
  if (params.help) {
    command_help(command);
    cli_params_free(&params);
    return CLI_EXIT_OK;
  }
  switch (impl_of(command, &params)) {
  case IMPL_RF:
    code = cli_cmd_rf(command, &params, start, err);
    break;
  case IMPL_TUNE:
    code = cli_cmd_tune(&params, start, err);
    break;
  default:
    code = cli_cmd_linreg(command, &params, start, err);
    break;
  }
  if (code == CLI_EXIT_OK && notes && strcmp(command, "ou") != 0 &&
      strcmp(cli_get_text(&params, "model"), "linreg") == 0) {
    cli_linreg_note_unused(&params, command); /* after success: never before an error line */
  }
  cli_params_free(&params);
  return code;
}

int cli_validate(const char *command, cli_params *p, dpd_err *err) {
  int status = DPD_OK;
  cli_linreg_run *run = NULL;
  switch (impl_of(command, p)) {
  case IMPL_RF:
    if (strcmp(command, "simulate") != 0 && strcmp(command, "ou") != 0 &&
        strcmp(command, "compare") != 0 && strcmp(command, "account") != 0) {
      return DPD_FAIL(err, DPD_EINVAL,
                      "invalid value for 'model': 'rf' (allowed for %s: linreg; model=rf has "
                      "simulate, ou, compare and account)",
                      command);
    }
    return cli_rf_validate(p, command, err);
  case IMPL_TUNE:
    return cli_tune_validate(p, err);
  default:
    if (strcmp(command, "account") == 0 && cli_is_given(p, "sequence")) {
      return DPD_OK; /* account --sequence reads its file when it runs */
    }
    status = cli_linreg_setup(p, command, &run, err);
    cli_linreg_free(run);
    return status;
  }
}
