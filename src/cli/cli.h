/* Internal interface of the dpdyn command-line shell (not installed).
 * SPDX-License-Identifier: MIT
 *
 * The CLI is the impure layer around libdpdyn: it reads parameters from an
 * INI file and --key=value flags, validates them with messages that name the
 * key, the value and the allowed range, runs the library, and writes the
 * output directory atomically. Exit codes: 0 ok, 1 bad input, 2 numerical
 * failure, 3 I/O failure. */
#ifndef DPD_CLI_H
#define DPD_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "dpdyn/dpd.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_USAGE = 1, CLI_EXIT_NUMERIC = 2, CLI_EXIT_IO = 3 };

/* ---- parameters (params.c) ---- */

/* KEY_BYTES: a resource limit in bytes (suffix K, M, G or T = 2^10..2^40); it does not change
 * any result and is not recorded in summaries or headers. */
typedef enum { KEY_INT, KEY_REAL, KEY_STRING, KEY_BYTES } cli_key_type;

typedef struct {
  const char *name;
  cli_key_type type;
  const char *def; /* default as text; NULL = unset unless given */
  const char *help;
} cli_key;

typedef struct {
  const char *key;  /* points into the key table */
  char *value;      /* owned */
  int given;        /* 1 if from the INI file or a flag */
  size_t ini_line;  /* line of the INI file that set it (0: none) */
  const char *flag; /* the flag that set it (borrowed from argv; NULL: none) */
} cli_value;

typedef struct {
  const char *command;
  const char *ini_path; /* borrowed from argv, may be NULL */
  cli_value *values;    /* one per known key, in table order */
  size_t nvalues;
  int help;
  size_t max_memory; /* bytes a run may allocate (key max_memory; default half the RAM) */
} cli_params;

/* The table of every key the CLI knows (terminated by a NULL name). */
const cli_key *cli_key_table(void);

/* Parses argv[2..] (INI path and flags) for `command`. On error returns
 * CLI_EXIT_USAGE with the one-line message in err->reason. */
int cli_params_parse(cli_params *p, const char *command, int argc, char **argv, dpd_err *err);
void cli_params_free(cli_params *p);

/* The shortest of %.15g / %.17g that reads back as the same double. */
void cli_format_shortest(char *buf, size_t cap, double x);

/* Raw text of a key (given or default), NULL if unset. */
const char *cli_get_text(const cli_params *p, const char *key);
int cli_is_given(const cli_params *p, const char *key);

/* Records the value a key actually took (e.g. rho computed from epsilon, n
 * from gamma) so that summaries and headers show the parameters in effect. */
int cli_set_effective(cli_params *p, const char *key, double value);
/* The same for a text value (e.g. a model's own default of a string key). */
int cli_set_text(cli_params *p, const char *key, const char *text);

/* Keeps only the keys in `allowed` (NULL-terminated): a given key outside the list is an
 * input error ("key 'c' does not apply to <what>"); defaults of the others are dropped so
 * that headers and summaries list only the keys in effect. */
int cli_params_restrict(cli_params *p, const char *const *allowed, const char *what, dpd_err *err);

/* Prints one note on stderr for each key given as a flag that is not in `allowed` (it has no
 * effect on <what>); keys of the INI file may serve other commands and are not reported. */
void cli_params_note_unused(const cli_params *p, const char *const *allowed, const char *what);

/* Typed getters with validation. The range is lo..hi (inclusive flags);
 * `allow_inf` also accepts "inf". Errors name the key, value and range. */
int cli_get_real(const cli_params *p, const char *key, double lo, int lo_incl, double hi,
                 int hi_incl, int allow_inf, double *out, dpd_err *err);
int cli_get_size(const cli_params *p, const char *key, size_t lo, size_t hi, size_t *out,
                 dpd_err *err);
int cli_get_u64(const cli_params *p, const char *key, unsigned long long *out, dpd_err *err);

/* Physical memory of the machine in bytes (0 if unknown). */
size_t cli_physical_memory(void);

/* Checks a run's memory estimate against p->max_memory before anything large is allocated:
 * an input error naming `driver` (the key whose value drives the size, with its value) and the
 * bytes needed. */
int cli_check_memory(const cli_params *p, double bytes, const char *driver, dpd_err *err);

/* Adds every key in effect to a JSON object (numbers as numbers). */
void cli_params_to_json(const cli_params *p, cJSON *obj);
/* Writes "# key = value" lines for every key in effect. */
void cli_params_to_header(const cli_params *p, FILE *f);

/* Largest dimension (d, sum of multiplicities) a run accepts. */
#define CLI_MAX_DIM ((size_t)1 << 31)

/* ---- bounded input readers (input.c) ---- */

/* Limits of the readers (documented in docs/input.md). */
#define CLI_MAX_INI_BYTES (1 << 20)                      /* an INI file */
#define CLI_MAX_DATA_BYTES ((unsigned long long)1 << 32) /* a data file */
#define CLI_MAX_DATA_LINE 65536                          /* a data line, comment excluded */
#define CLI_TABLE_MAX_COLS 16

/* Data-line iterator over a text file: '#' starts a comment (of any length) that runs to the
 * end of the line; blank lines are skipped; NUL bytes, over-long data lines and files larger
 * than CLI_MAX_DATA_BYTES are errors naming `key`. */
typedef struct {
  FILE *f;
  const char *key, *path;
  char *line;
  size_t cap;
  size_t lineno;            /* number of the line last returned (1-based) */
  unsigned long long bytes; /* bytes read so far */
  int at_eof;
} cli_lines;

int cli_lines_open(cli_lines *r, const char *key, const char *path, dpd_err *err);
int cli_lines_next(cli_lines *r, char **line, dpd_err *err); /* 1 line, 0 end, < 0 error */
void cli_lines_close(cli_lines *r);

/* Whether [s, end) is a decimal number as keys and data files take it,
 * [+-]digits[.digits][e[+-]digits] (strtod also reads hexadecimal, inf and nan). */
int cli_decimal_span(const char *s, const char *end);

/* Reads a whitespace- (or comma-) separated numeric table with `ncols` columns per row
 * (ncols_min..ncols_max accepted, the same on every row), '#' comments allowed. The rows may
 * take at most `max_bytes` of memory. Returns column-major arrays owned by the caller (free
 * each). */
int cli_read_table(const char *key, const char *path, size_t ncols_min, size_t ncols_max,
                   size_t max_bytes, double **cols, size_t *nrows, size_t *ncols_found,
                   dpd_err *err);

/* An INI file prepared for libinih: read whole (at most CLI_MAX_INI_BYTES, no NUL byte),
 * comment lines blanked, indentation removed, no key line longer than libinih's buffer. The
 * line numbers of the text are those of the file; key_lines[k] is the line of the k-th
 * 'key = value' line (the k-th call of the handler). */
typedef struct {
  char *text;
  size_t *key_lines;
  size_t nkeys;
} cli_ini_text;

int cli_ini_text_read(const char *path, cli_ini_text *t, dpd_err *err);
void cli_ini_text_free(cli_ini_text *t);

/* ---- output (output.c) ---- */

/* "dir/name", malloc'ed (NULL when out of memory). */
char *cli_path_join(const char *dir, const char *name);
/* mkdir -p `path`; an I/O error names it. Returns a DPD status. */
int cli_make_dirs(const char *path, dpd_err *err);

/* Marker file of every published output directory. */
#define CLI_OUT_MARKER ".dpdyn"

typedef struct {
  char *dir;   /* output directory */
  char *stage; /* hidden staging directory beside it (NULL until the first write) */
  int published;
} cli_out;

/* Records the output directory and checks that it may be replaced (absent, or holding only
 * dpdyn output): an input error otherwise. Nothing is created until the first write. */
int cli_out_init(cli_out *o, const char *dir, dpd_err *err);
/* Discards an unpublished run (the previous result stays) and frees `o`. */
void cli_out_free(cli_out *o);

/* Opens `name` in the staging directory (created at the first call); cli_out_commit closes
 * it and checks for write errors. */
FILE *cli_out_open(cli_out *o, const char *name, char **tmp_path, dpd_err *err);
int cli_out_commit(cli_out *o, FILE *f, char *tmp_path, const char *name, dpd_err *err);
/* The staging directory (created if needed), NULL on error. */
const char *cli_out_stage(cli_out *o, dpd_err *err);
/* Renders `figure` (NULL: none) into the staging directory, then publishes the run as the
 * output directory in one atomic step. Returns a CLI_EXIT_* code; a failed figure is reported
 * (exit 3) after the data are published. */
int cli_out_finish(cli_out *o, const char *figure, dpd_err *err);

/* Signal handling: SIGINT, SIGTERM and SIGHUP remove the staging files of the run, print one
 * line and exit with 128 + the signal. */
void cli_signals_install(void);
/* Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (the old mask in *old; restore it with
 * sigprocmask(SIG_SETMASK, old, NULL)). */
void cli_signals_block(sigset_t *old);
/* The child process (gnuplot) to stop on a signal (0: none). */
void cli_child_set(long pid);
/* A temporary path for writing `name` in place inside `dir` (removed on a signal; stale ones
 * of dead processes are removed first); cli_temp_end forgets it once renamed. */
char *cli_temp_begin(const char *dir, const char *name);
void cli_temp_end(char *path);

/* Writes a JSON object as `name` atomically. */
int cli_out_json(cli_out *o, const char *name, const cJSON *obj, dpd_err *err);

/* CLI exit code of a DPD status (EINVAL -> 1, EIO -> 3, else 2). */
int cli_exit_code(int status);

/* Prints every number and string of a summary object on stdout, one "key value" line each
 * (except `seed` and `version`, which the caller's header line names). */
void cli_print_summary(const cJSON *root);

/* Adds a number (finite) or the strings "inf"/"-inf" to a JSON object; NaN never appears: it
 * becomes null with a generic reason (cli_json_na). */
void cli_json_number(cJSON *obj, const char *key, double v);
/* Sets `key` to null and records `reason` in the object's "not_available" member. */
void cli_json_na(cJSON *obj, const char *key, const char *reason);

/* Writes the standard '#' header of a data file; `figure` names the gnuplot
 * script (plots/<figure>.gp) that `dpdyn plot` uses for the directory. */
void cli_write_header(FILE *f, const cli_params *p, const char *figure, const char *columns);

/* ---- plotting (plot.c) ---- */

/* Renders `dir` with the embedded gnuplot script `script`: writes
 * dir/<script>.gp and dir/<script>.png. Returns CLI_EXIT_* code. */
int cli_plot_render(const char *dir, const char *script, dpd_err *err);
/* Writes dir/<script>.gp, the embedded script `script` after the lines of `preamble` (the
 * settings of this figure), and runs `gnuplot -c dir/<script>.gp dir/DATA IMAGE FORMAT`, which
 * renders dir/<script>.<format> (in place). Returns a CLI_EXIT_* code. */
int cli_plot_script(const char *dir, const char *script, const char *preamble, const char *data,
                    const char *format, dpd_err *err);
/* Writes `text` as dir/name in place (a temporary name, then rename). Returns a DPD status. */
int cli_write_in_place(const char *dir, const char *name, const char *text, dpd_err *err);

/* ---- linreg set-up shared by the linreg commands (cmd_linreg.c) ---- */

/* Everything a linreg command needs, validated from the parameters: the problem,
 * the schedule and the numbers of the ODE and the simulation (opaque). */
typedef struct linreg_run cli_linreg_run;

/* Validates every linreg key of `p` for `command` and builds the run (*out owned,
 * free with cli_linreg_free). Returns a DPD status, the message in err. */
int cli_linreg_setup(cli_params *p, const char *command, cli_linreg_run **out, dpd_err *err);
void cli_linreg_free(cli_linreg_run *r);
const dpd_linreg_problem *cli_linreg_problem(const cli_linreg_run *r);
const dpd_schedule_config *cli_linreg_schedule_config(const cli_linreg_run *r);
/* ODE and simulation configurations of the parameters in effect (bounds off). */
dpd_ode_config cli_linreg_ode_config(const cli_linreg_run *r);
dpd_linreg_sim_config cli_linreg_sim_config(const cli_linreg_run *r);
/* The summary.json object every linreg command starts from (caller owns it). */
cJSON *cli_linreg_summary(const cli_params *p, const cli_linreg_run *r);
/* Writes a gnuplot-ready table: the standard header, then `rows` rows of `ncols`. */
int cli_write_table(cli_out *o, const cli_params *p, const char *name, const char *columns,
                    size_t rows, size_t ncols, const double *const *cols, dpd_err *err);
/* The same with the figure named in the header given explicitly. */
int cli_write_figure_table(cli_out *o, const cli_params *p, const char *name, const char *figure,
                           const char *columns, size_t rows, size_t ncols,
                           const double *const *cols, dpd_err *err);

/* After a successful linreg command: one note on stderr for each flag that had no effect on it
 * (a key of another command or schedule family). */
void cli_linreg_note_unused(const cli_params *p, const char *command);

/* ---- dispatch (run.c) ---- */

/* The usage text of `dpdyn` (every command, one line each). */
void cli_usage(FILE *f);
/* Prints "dpdyn COMMAND: reason" on stderr as one line (control characters escaped). */
void cli_print_error(const char *command, const char *reason);
/* Whether cli_run runs `command` (every command but sweep and plot). */
int cli_is_run_command(const char *command);
/* Runs one command: argv[0] = COMMAND, then an optional INI file and --key=value flags (argv
 * borrowed). `notes`: print the notes on flags without effect after success. Returns a CLI_EXIT_*
 * code; on failure err->reason holds the one-line message, not printed. */
int cli_run(int argc, char **argv, int notes, dpd_err *err);
/* Validates every key of a run of `command` with the parsed parameters `p` without running it
 * or writing anything (`p` may be changed: defaults filled in). Returns a DPD status, the
 * message in err. The mode `account --sequence` is checked when it runs. */
int cli_validate(const char *command, cli_params *p, dpd_err *err);

/* ---- commands ---- */
int cli_cmd_linreg(const char *command, cli_params *p, double start_seconds, dpd_err *err);
int cli_cmd_plot(int argc, char **argv, dpd_err *err);
/* model=rf: dpdyn simulate | ou | compare | account (random-features full-batch DP-GD). */
int cli_cmd_rf(const char *command, cli_params *p, double start, dpd_err *err);
/* Validates every model=rf key of `p` for `command` without building anything (the fuzz
 * harnesses). Returns a DPD status, the message in err. */
int cli_rf_validate(cli_params *p, const char *command, dpd_err *err);
int cli_cmd_tune(cli_params *p, double start_seconds, dpd_err *err);
/* Validates every key of `dpdyn tune` without running it. Returns a DPD status. */
int cli_tune_validate(cli_params *p, dpd_err *err);
/* dpdyn sweep COMMAND [FILE.ini] [--key=SPEC ...] (argv borrowed, after "sweep"): prints its own
 * messages; returns a CLI_EXIT_* code. */
int cli_cmd_sweep(int argc, char **argv);

double cli_now(void);

#endif
