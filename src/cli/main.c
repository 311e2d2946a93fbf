/* dpdyn: command-line entry point and subcommand dispatch.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli/cli.h"

/* The commands that are not a model's: they act on output directories. */
typedef struct {
  const char *name;
  const char *summary;
} command_info;

static const command_info own_commands[] = {
    {"plot", "render an output directory with gnuplot (dpdyn plot DIR [--format=svg])"},
    {NULL, NULL}};

/* Whether a model of the registry has `command`. */
static int model_command(const char *command) {
  const dpd_model_type *m;
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    if (dpd_model_command_get(m, command) != NULL) {
      return 1;
    }
  }
  return 0;
}

/* Every command once, in registry order, with the models that have it. */
static void usage(FILE *f) {
  const dpd_model_type *m;
  fprintf(f, "usage: dpdyn COMMAND [FILE.ini] [--key=value ...]\n"
             "       dpdyn COMMAND --help | dpdyn --version\n\ncommands:\n");
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    for (const dpd_model_command *c = m->commands; c->name != NULL; c++) {
      const dpd_model_type *other;
      int first = 1;
      for (size_t j = 0; j < i && first; j++) {
        first = dpd_model_command_get(dpd_model_at(j), c->name) == NULL;
      }
      if (!first) {
        continue;
      }
      fprintf(f, "  %-10s %s (model:", c->name, c->summary);
      for (size_t j = i; (other = dpd_model_at(j)) != NULL; j++) {
        if (dpd_model_command_get(other, c->name) != NULL) {
          fprintf(f, " %s", other->name);
        }
      }
      fprintf(f, ")\n");
    }
  }
  for (const command_info *c = own_commands; c->name != NULL; c++) {
    fprintf(f, "  %-10s %s\n", c->name, c->summary);
  }
  fprintf(f, "\nmodels (key model):\n");
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    fprintf(f, "  %-10s %s\n", m->name, m->summary);
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

/* dpdyn COMMAND [--model=M] --help: the keys that apply to this command of this model, with
 * default and allowed values, the files it writes and an example. */
static void command_help(const cli_params *p) {
  const dpd_model_command *c = dpd_model_command_get(p->model, p->command);
  printf("usage: dpdyn %s [FILE.ini] [--key=value ...]   (model=%s)\n%s.\n\nkeys:\n", p->command,
         p->model->name, c->summary);
  for (size_t i = 0; i < dpd_keys_count(p->keys); i++) {
    const dpd_key_desc *d = dpd_keys_desc_get(p->keys, i);
    char allowed[512];
    if (!dpd_key_desc_applies(d, p->command)) {
      continue;
    }
    dpd_key_desc_allowed(d, allowed, sizeof allowed);
    printf("  %-13s %s", d->name, d->help);
    if (d->def != NULL) {
      printf(" [%s]", d->def);
    }
    if (d->kind != DPD_KEY_TEXT || d->choices != NULL) {
      printf("\n  %-13s allowed: %s", "", allowed);
    }
    putchar('\n');
  }
  printf("\nwrites (in the directory `out`): %s\nexample: %s\n", c->files, c->example);
  printf("\nOther models: dpdyn %s --model=NAME --help; dpdyn --help lists them.\n", p->command);
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
  if (!model_command(command)) {
    char list[512];
    size_t len = 0;
    const dpd_model_type *m;
    list[0] = '\0';
    for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
      for (const dpd_model_command *c = m->commands; c->name != NULL; c++) {
        if (strstr(list, c->name) == NULL) { /* no command name is part of another */
          len += (size_t)snprintf(list + len, sizeof list - len, "%s, ", c->name);
        }
      }
    }
    fprintf(stderr, "dpdyn: unknown command '%s' (allowed: %splot)\n", command, list);
    return CLI_EXIT_USAGE;
  }
  if (cli_params_parse(&params, command, argc - 2, argv + 2, &err) < 0) {
    print_error(command, err.reason);
    cli_params_free(&params);
    return CLI_EXIT_USAGE;
  }
  if (params.help) {
    command_help(&params);
    cli_params_free(&params);
    return CLI_EXIT_OK;
  }
  code = cli_cmd_model(&params, start, &err);
  if (code != CLI_EXIT_OK) {
    print_error(command, err.reason);
  }
  cli_params_free(&params);
  return code;
}
