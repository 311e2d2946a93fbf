/* Any command of any model of the registry: validate, run, write the output directory.
 * SPDX-License-Identifier: MIT
 *
 * The model's command (dpdyn/model.h) validates every key first and then calls env.validated,
 * where the output directory is checked, so a bad value is reported before the directory is
 * touched or anything large is built; then it runs and returns its summary and tables, which
 * are written here, staged and published as one unit (output.c), with the figure when asked. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* One number of a data file: %.10g, the non-finite values as the tokens inf, -inf and nan
 * (never glibc's "-nan"), which NumPy, pandas and gnuplot read. */
void cli_tsv_number(FILE *f, double v) {
  if (isnan(v)) {
    fputs("nan", f);
  } else if (isinf(v)) {
    fputs(v > 0 ? "inf" : "-inf", f);
  } else {
    fprintf(f, "%.10g", v);
  }
}

/* A data file (docs/output.md): the `#` metadata lines, one header row of the column names,
 * then the rows; every field separated by one tab. */
static int write_table(cli_out *o, const dpd_keys *keys, const dpd_table *t, dpd_err *err) {
  char *tmp;
  FILE *f = cli_out_open(o, t->name, &tmp, err);
  if (f == NULL) {
    return err->status;
  }
  fprintf(f, "# dpdyn %s\n", dpd_version());
  fprintf(f, "# command: %s\n", dpd_keys_command_get(keys));
  fprintf(f, "# figure: %s\n", t->figure);
  cli_keys_to_header(keys, f);
  if (t->comment != NULL) {
    fprintf(f, "# %s\n", t->comment);
  }
  for (size_t k = 0; k < t->ncols; k++) {
    fprintf(f, k == 0 ? "%s" : "\t%s", t->columns[k]);
  }
  fputc('\n', f);
  for (size_t i = 0; i < t->rows; i++) {
    for (size_t k = 0; k < t->ncols; k++) {
      if (k > 0) {
        fputc('\t', f);
      }
      cli_tsv_number(f, t->data[k * t->rows + i]);
    }
    fputc('\n', f);
    if (t->block > 0 && (i + 1) % t->block == 0) {
      fputc('\n', f); /* gnuplot: the end of a scan line */
    }
  }
  return cli_out_commit(o, f, tmp, t->name, err);
}

typedef struct {
  cli_out *o;
  const char *dir;
} out_ready;

/* Every key is valid: check the output directory before any heavy work. */
static int prepare_output(void *user, dpd_err *err) {
  out_ready *r = user;
  return cli_out_init(r->o, r->dir, err);
}

int cli_cmd_model(cli_params *p, double start, int notes, dpd_err *err) {
  dpd_run_env env = dpd_run_env_default();
  dpd_output *res = NULL;
  cli_out o = {0};
  out_ready ready = {&o, NULL};
  int status, code = CLI_EXIT_OK;
  if (cli_get_text(p, "out") == NULL) { /* the default: one directory per command and model */
    char def[256];
    snprintf(def, sizeof def, "./dpdyn-out/%s-%s", p->command, p->model->name);
    if ((status = dpd_keys_effective_set(p->keys, "out", def, err)) < 0) {
      return cli_exit_code(status);
    }
  }
  ready.dir = cli_get_text(p, "out");
  env.max_memory = p->max_memory;
  cli_progress_percent line = {p->command, "", 0};
  env.progress = isatty(STDERR_FILENO) ? cli_progress_draw : NULL;
  env.progress_user = &line;
  env.validated = prepare_output;
  env.validated_user = &ready;
  if ((status = dpd_model_run(p->model, p->command, p->keys, &env, &res, err)) < 0 ||
      (status = dpd_output_params_set(res, p->keys, err)) < 0) {
    goto done;
  }
  cli_json_number(res->summary, "wall_seconds", cli_now() - start);
  for (size_t k = 0; k < res->ntables; k++) {
    if ((status = write_table(&o, p->keys, &res->tables[k], err)) < 0) {
      goto done;
    }
  }
  if ((status = cli_out_json(&o, "summary.json", res->summary, err)) < 0) {
    goto done;
  }
  printf("# dpdyn %s %s (%s)\n", dpd_version(), p->command,
         res->headline != NULL ? res->headline : p->model->name);
  if (res->report != NULL) {
    fputs(res->report, stdout);
  } else {
    cli_print_summary(res->summary);
  }
  code = cli_out_finish(&o, res->plot ? res->figure : NULL, err);
  if (code == CLI_EXIT_OK) {
    if (res->ntables > 0) {
      printf("# wrote %s/\n", o.dir);
    }
  }
  if (code == CLI_EXIT_OK && notes) {
    fflush(stdout);
    for (size_t k = 0; k < res->nnotes; k++) {
      fprintf(stderr, "dpdyn %s: %s\n", p->command, res->notes[k]);
    }
    /* a flag whose key the run did not use (another command's, another schedule family's) */
    for (size_t k = 0; k < p->nraw; k++) {
      if (p->raw[k].flag != NULL && dpd_keys_text_get(p->keys, p->raw[k].key) == NULL) {
        fprintf(stderr, "dpdyn %s: note: '%s' has no effect on %s (%s)\n", p->command,
                p->raw[k].flag, p->command, res->headline != NULL ? res->headline : "");
      }
    }
  }
done:
  if (status < 0) {
    code = cli_exit_code(status);
  }
  dpd_output_free(res);
  cli_out_free(&o);
  return code;
}

int cli_model_validate(cli_params *p, dpd_err *err) {
  dpd_run_env env = dpd_run_env_default();
  dpd_output *res = NULL;
  env.max_memory = p->max_memory;
  env.validate_only = 1;
  return dpd_model_run(p->model, p->command, p->keys, &env, &res, err);
}
