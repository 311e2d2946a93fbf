/* Fuzz harness: the input is a command line, one argument per line ('\n' or NUL separates
 * them; a final empty piece is dropped). Argument 0 is the command (simulate, ode, sde,
 * compare, account, tune, ou; anything else means ode), the rest are the flags and the optional
 * INI path of `dpdyn COMMAND ...`; --max_memory=64M is appended. The arguments are parsed and
 * validated as dpdyn does before it runs anything.
 * SPDX-License-Identifier: MIT */
#include "fuzz_common.h"

static const char *const commands[] = {"simulate", "ode",  "sde", "compare",
                                       "account",  "tune", "ou",  NULL};

int main(int argc, char **argv) {
  size_t len, ntok = 1, k = 0;
  char *buf, **tok;
  const char *command = "ode";
  cli_params p;
  int status;
  dpd_err err;
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  fuzz_init();
  dpd_err_reset(&err);
  buf = fuzz_read_input(argv[1], &len);
  for (size_t i = 0; i < len; i++) {
    ntok += buf[i] == '\n' || buf[i] == '\0';
  }
  tok = malloc((ntok + 1) * sizeof *tok); /* + the memory flag */
  if (tok == NULL) {
    free(buf);
    return 2;
  }
  tok[k++] = buf;
  for (size_t i = 0; i < len; i++) {
    if (buf[i] == '\n' || buf[i] == '\0') {
      buf[i] = '\0';
      tok[k++] = buf + i + 1;
    }
  }
  if (k > 1 && tok[k - 1] == buf + len) {
    k--; /* the input ends with a separator */
  }
  for (size_t c = 0; commands[c] != NULL; c++) {
    if (strcmp(tok[0], commands[c]) == 0) {
      command = commands[c];
    }
  }
  tok[k++] = FUZZ_MAX_MEMORY_FLAG;
  status = cli_params_parse(&p, command, (int)(k - 1), tok + 1, &err);
  fuzz_note("parse", status, &err);
  if (status == DPD_OK) {
    (void)fuzz_validate(&p, command, &err);
  }
  cli_params_free(&p);
  free(tok);
  free(buf);
  return fuzz_done();
}
