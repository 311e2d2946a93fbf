/* Fuzz harness: the input is an INI file, parsed as `dpdyn ode FILE --max_memory=64M` would,
 * then validated: the linreg set-up for ode (which builds the problem), or the model=rf
 * validation for simulate when the file sets model = rf.
 * SPDX-License-Identifier: MIT */
#include "fuzz_common.h"

int main(int argc, char **argv) {
  char *args[2];
  cli_params p;
  int status;
  dpd_err err;
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE.ini\n", argv[0]);
    return 2;
  }
  fuzz_init();
  dpd_err_reset(&err);
  args[0] = argv[1];
  args[1] = FUZZ_MAX_MEMORY_FLAG;
  /* ode (model linreg); a file naming a model without ode is run as simulate */
  status = cli_params_parse(&p, "ode", 2, args, &err);
  fuzz_note("parse", status, &err);
  if (status < 0 && strstr(err.reason, "'model'") != NULL) {
    cli_params_free(&p);
    status = cli_params_parse(&p, "simulate", 2, args, &err);
    fuzz_note("parse as simulate", status, &err);
  }
  if (status == DPD_OK) {
    (void)fuzz_validate(&p, p.command, &err);
  }
  cli_params_free(&p);
  return fuzz_done();
}
