/* Shared helpers of the fuzz harnesses (fuzz_ini.c, fuzz_flags.c, fuzz_table.c, fuzz_npy.c).
 * SPDX-License-Identifier: MIT
 *
 * Every harness reads one input file (argv[1], AFL's @@), runs the CLI's parsing and
 * validation on it exactly as `dpdyn` would, frees everything and exits 0: an input error is a
 * normal outcome, not a finding. Only a crash, a sanitizer report or a hang is. The harnesses
 * print nothing themselves (the CLI's own notes may appear on stderr, e.g. for a flag without
 * effect) and nothing is written (the output directory is never created: no command runs). */
#ifndef DPD_FUZZ_COMMON_H
#define DPD_FUZZ_COMMON_H

/* cli/cli.h uses POSIX types (sigset_t); include this header before any other. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli/cli.h"
#include "models/linreg/linreg_impl.h"

/* Memory limit of every fuzz run (the last flag, so it overrides the input's own). */
#define FUZZ_MAX_MEMORY_FLAG "--max_memory=64M"
#define FUZZ_MAX_MEMORY ((size_t)64 << 20)
/* Largest input read (AFL's own default limit is 1 MiB). */
#define FUZZ_MAX_INPUT ((size_t)1 << 20)

/* The end of main: `return fuzz_done();`. A plain build returns (LeakSanitizer checks at exit
 * under DPD_SANITIZE). An AFL build without ASan ends with _Exit, skipping the exit handlers of the
 * twenty-odd shared libraries: in afl-fuzz's fork server their copy-on-write page faults cost as
 * much as the run itself (measured: twice the executions per second). Everything is freed
 * before either way. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_HAVE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_HAVE_ASAN 1
#endif
static inline int fuzz_done(void) {
#if defined(__AFL_COMPILER) && !defined(FUZZ_HAVE_ASAN)
  _Exit(0);
#else
  return 0;
#endif
}

/* Common start of main: no GSL abort handler (as in dpdyn), stdin at /dev/null (an input may
 * name /dev/stdin as a file, which must not wait on a terminal). */
static inline void fuzz_init(void) {
  gsl_set_error_handler_off();
  if (freopen("/dev/null", "r", stdin) == NULL) {
    exit(2);
  }
}

/* Reads the whole input file, NUL-terminated (*len excludes the terminator); exits 2 if it
 * cannot (a harness failure, not a finding). */
static inline char *fuzz_read_input(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf;
  size_t n;
  if (f == NULL) {
    exit(2);
  }
  buf = malloc(FUZZ_MAX_INPUT + 1);
  if (buf == NULL) {
    fclose(f);
    exit(2);
  }
  n = fread(buf, 1, FUZZ_MAX_INPUT, f);
  fclose(f);
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* With DPD_FUZZ_VERBOSE set in the environment, prints the outcome of a step on stderr (to see
 * what an input reaches); silent otherwise. */
static inline void fuzz_note(const char *step, int status, const dpd_err *err) {
  if (getenv("DPD_FUZZ_VERBOSE") != NULL) {
    fprintf(stderr, "%s: %s\n", step, status == DPD_OK ? "ok" : err->reason);
  }
}

/* What `dpdyn COMMAND` does with parsed parameters before it runs anything: the validation of
 * a model of the registry, account's --sequence file, or the linreg set-up (which builds the
 * problem, within max_memory). Returns the DPD status (ignored by the harnesses). */
static inline int fuzz_validate(cli_params *p, const char *command, dpd_err *err) {
  if (p->help) {
    return DPD_OK;
  }
  if (strcmp(p->model->name, "linreg") == 0 && strcmp(command, "tune") != 0 &&
      !(strcmp(command, "account") == 0 && cli_is_given(p, "sequence"))) {
    /* the linreg set-up with the build (problem and schedule), within max_memory */
    dpd_run_env env = dpd_run_env_default();
    const dpd_model_command *c = dpd_model_command_get(p->model, command);
    const char *driver = NULL;
    void *run = NULL;
    int status;
    env.max_memory = p->max_memory;
    status = p->model->setup(c, p->keys, &env, &run, err);
    if (status == DPD_OK &&
        (status = dpd__model_memory_check(p->keys, &env, p->model->workspace_bytes(run, c, &driver),
                                          driver, err)) == DPD_OK) {
      status = dpd__linreg_build(run, err);
    }
    fuzz_note("linreg set-up", status, err);
    p->model->release(run);
    return status;
  }
  {
    int status = cli_model_validate(p, err);
    fuzz_note("model validation", status, err);
    return status;
  }
}

#endif
