/* dpdyn: the command list (the commands of the registry's models, then sweep and plot), usage
 * and help texts, and the run of one command.
 * SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* The commands that are not a model's: they act on output directories. */
typedef struct {
  const char *name;
  const char *summary;
} command_info;

static const command_info own_commands[] = {
    {"sweep", "run a command over a grid of parameters (dpdyn sweep COMMAND ...; threads "
              "locally, Open MPI across machines)"},
    {"plot", "render an output directory with gnuplot (dpdyn plot DIR [--format=png|svg|pdf])"},
    {NULL, NULL}};

/* The commands every model may have, described independently of the model (a model's own
 * commands, its theories, are described by the model). */
static const command_info generic_commands[] = {
    {"simulate", "the model's algorithm over `seeds` replicates: risks with standard errors"},
    {"compare", "simulation against the model's theory: gaps in standard errors, figure"},
    {"account", "the privacy of a run: every guarantee it satisfies, the noise calibration"},
    {NULL, NULL}};

static const char *generic_summary(const char *name) {
  for (const command_info *c = generic_commands; c->name != NULL; c++) {
    if (strcmp(c->name, name) == 0) {
      return c->summary;
    }
  }
  return NULL;
}

/* Whether a model of the registry has `command`. */
int cli_is_run_command(const char *command) {
  const dpd_model_type *m;
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    if (dpd_model_command_get(m, command) != NULL) {
      return 1;
    }
  }
  return 0;
}

/* Every command once, in registry order, with the models that have it. */
void cli_usage(FILE *f) {
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
      fprintf(f, "  %-10s %s (model:", c->name,
              generic_summary(c->name) != NULL ? generic_summary(c->name) : c->summary);
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

/* dpdyn COMMAND [--model=M] --help: the keys that apply to this command of this model, with
 * default and allowed values, the files it writes and an example. Help texts come with the
 * lists of the library's tables (dpd_key_desc_help_get); the common key `plot` shows the
 * command's own default. */
static void command_help(const cli_params *p) {
  const dpd_model_command *c = dpd_model_command_get(p->model, p->command);
  printf("usage: dpdyn %s [FILE.ini] [--key=value ...]   (model=%s)\n%s.\n\nkeys:\n", p->command,
         p->model->name, c->summary);
  for (size_t i = 0; i < dpd_keys_count(p->keys); i++) {
    const dpd_key_desc *d = dpd_keys_desc_get(p->keys, i);
    char allowed[512], help[1024];
    if (!dpd_key_desc_applies(d, p->command)) {
      continue;
    }
    dpd_key_desc_allowed(d, allowed, sizeof allowed);
    (void)dpd_key_desc_help_get(d, help, sizeof help);
    printf("  %-13s %s", d->name, help);
    if (d->def != NULL) {
      printf(" [%s]", d->def);
    } else if (strcmp(d->name, "plot") == 0) {
      printf(" [%d]", c->plot_default);
    }
    if (d->kind != DPD_KEY_TEXT || d->choices != NULL) {
      printf("\n  %-13s allowed: %s", "", allowed);
    }
    putchar('\n');
  }
  printf("\nwrites (in the directory `out`): %s\nexample: %s\n", c->files, c->example);
  printf("\nOther models: dpdyn %s --model=NAME --help; dpdyn --help lists them.\n", p->command);
}

/* "simulate, sde, ..., sweep, plot": every command, for the unknown-command message. */
static void command_list(char *list, size_t cap) {
  size_t len = 0;
  const dpd_model_type *m;
  list[0] = '\0';
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    for (const dpd_model_command *c = m->commands; c->name != NULL && len < cap; c++) {
      int seen = 0;
      for (size_t j = 0; j < i && !seen; j++) {
        seen = dpd_model_command_get(dpd_model_at(j), c->name) != NULL;
      }
      if (!seen) {
        len += (size_t)snprintf(list + len, cap - len, "%s, ", c->name);
      }
    }
  }
  for (const command_info *c = own_commands; c->name != NULL && len < cap; c++) {
    len += (size_t)snprintf(list + len, cap - len, "%s%s", c->name, c[1].name != NULL ? ", " : "");
  }
}

int cli_unknown_command(const char *command, dpd_err *err) {
  char list[512];
  command_list(list, sizeof list);
  CLI_FAIL(err, DPD_EINVAL, "unknown command '%s' (allowed: %s)", command, list);
  return CLI_EXIT_USAGE;
}

int cli_run(int argc, char **argv, int notes, dpd_err *err) {
  double start = cli_now();
  const char *command = argv[0];
  cli_params params;
  int code;
  if (!cli_is_run_command(command)) {
    return cli_unknown_command(command, err);
  }
  if (cli_params_parse(&params, command, argc - 1, argv + 1, err) < 0) {
    cli_params_free(&params);
    return CLI_EXIT_USAGE;
  }
  if (params.help) {
    command_help(&params);
    cli_params_free(&params);
    return CLI_EXIT_OK;
  }
  code = cli_cmd_model(&params, start, notes, err);
  cli_params_free(&params);
  return code;
}

int cli_validate(const char *command, cli_params *p, dpd_err *err) {
  (void)command; /* p->command */
  return cli_model_validate(p, err);
}

const dpd_key_desc *cli_key_find(const char *name) {
  const dpd_model_type *m;
  for (size_t i = 0; (m = dpd_model_at(i)) != NULL; i++) {
    for (const dpd_key_desc *d = m->keys; d->name != NULL; d++) {
      if (strcmp(d->name, name) == 0) {
        return d;
      }
    }
  }
  for (const dpd_key_desc *d = dpd_model_common_keys(); d->name != NULL; d++) {
    if (strcmp(d->name, name) == 0) {
      return d;
    }
  }
  return NULL;
}
