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
#include "dpdyn/io.h"
#include "dpdyn/model.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_USAGE = 1, CLI_EXIT_NUMERIC = 2, CLI_EXIT_IO = 3 };

/* Records a failure of the CLI in `err` (may be NULL) with its source location and a
 * printf-style reason, and returns `status` (the library's public dpd_err_set). */
#define CLI_FAIL(err, status, ...) dpd_err_set((err), (status), __FILE__, __LINE__, __VA_ARGS__)

/* ---- parameters (params.c) ---- */

/* One key = value of the INI file (ini_line > 0) or of a flag, as read. */
typedef struct {
  char *key, *value; /* owned */
  size_t ini_line;   /* line of the INI file that set it (0: a flag) */
  const char *flag;  /* the flag that set it (borrowed from argv; NULL: the INI file) */
} cli_raw;

typedef struct {
  const char *command;
  const char *ini_path;        /* borrowed from argv, may be NULL */
  const dpd_model_type *model; /* the model of the run (registry) */
  dpd_keys *keys;              /* the model's keys with the values given (owned) */
  cli_raw *raw;                /* every key = value read, in order (INI first, then flags) */
  size_t nraw;
  int help;
  size_t max_memory; /* bytes a run may allocate (key max_memory; default half the RAM) */
} cli_params;

/* Parses argv[2..] (INI path and flags) for `command`. On error returns
 * CLI_EXIT_USAGE with the one-line message in err->reason. */
int cli_params_parse(cli_params *p, const char *command, int argc, char **argv, dpd_err *err);
void cli_params_free(cli_params *p);

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

/* Writes "# key = value" lines for every key in effect. */
void cli_keys_to_header(const dpd_keys *keys, FILE *f);
/* One number of a data file: %.10g, or the tokens inf, -inf, nan (docs/output.md). */
void cli_tsv_number(FILE *f, double v);

/* Largest dimension (d, sum of multiplicities) a run accepts. */
#define CLI_MAX_DIM ((size_t)1 << 31)

/* ---- bounded input readers (input.c) ---- */

/* Limit of the INI reader (documented in docs/input.md). */
#define CLI_MAX_INI_BYTES (1 << 20) /* an INI file */

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
/* Registers stage/`name` (a file another process, gnuplot, is about to write into the staging
 * directory) with the signal handler, which removes it on SIGINT, SIGTERM and SIGHUP. Nothing
 * when no staging directory exists. */
void cli_out_expect(cli_out *o, const char *name);
/* Publishes the staging directory as the output directory in one atomic step (signals blocked).
 * DPD_OK, or a failure (DPD_EIO, DPD_ENOMEM) with the reason in err. */
int cli_out_publish(cli_out *o, dpd_err *err);
/* Renders `figure` (NULL: none) into the staging directory (cli_plot_render), then publishes
 * the run (cli_out_publish). Returns a CLI_EXIT_* code; a failed figure is reported (exit 3)
 * after the data are published. (publish.c: above both output.c and plot.c.) */
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

/* Writes a JSON object as `name` atomically, in its written form (docs/output.md: every
 * non-finite number null, its value under the top-level "nonfinite"). */
int cli_out_json(cli_out *o, const char *name, const cJSON *obj, dpd_err *err);

/* CLI exit code of a DPD status (EINVAL -> 1, EIO -> 3, else 2). */
int cli_exit_code(int status);

/* Prints every number and string of a summary object on stdout, one "key value" line each
 * (except `seed` and `version`, which the caller's header line names). */
void cli_print_summary(const cJSON *root);

/* Adds a number (finite, or +-inf: written as null + "nonfinite") to a JSON object; NaN never
 * appears: it becomes null with a generic reason (cli_json_na). */
void cli_json_number(cJSON *obj, const char *key, double v);
/* Sets `key` to null and records `reason` in the object's "not_available" member. */
void cli_json_na(cJSON *obj, const char *key, const char *reason);

/* ---- progress lines (progress.c) ---- */

/* The library reports progress through a dpd_progress_fn (dpdyn/replicate.h) and prints
 * nothing; these callbacks draw the line on stderr, redrawn in place with '\r' and ended with a
 * newline at done == total. They never ask for a stop (return 0). */

/* "dpdyn <what>: <done>/<total> replicates" at every call; `what` is the command's name (a
 * string, only read), e.g. progress_user = "simulate". */
int cli_progress_replicates(void *what, size_t done, size_t total);

/* State of a percentage line: "dpdyn <what>: <P>% of <total> <unit>", drawn when the whole
 * percentage changes and at the end. */
typedef struct {
  const char *what; /* "rf" */
  const char *unit; /* "DP-GD steps" */
  size_t percent;   /* percentage of the last call (0 before the first) */
} cli_progress_percent;

/* Draws the line of `state` (a cli_progress_percent, updated). */
int cli_progress_percent_draw(void *state, size_t done, size_t total);

/* The run environment's progress (dpdyn/model.h): `state` is a cli_progress_percent whose
 * `what` is the command; replicates are counted, other units drawn as a percentage. */
int cli_progress_draw(void *state, const char *unit, size_t done, size_t total);

/* ---- plotting (plot.c) ---- */

/* Renders `dir` with the embedded gnuplot script `script`: writes
 * dir/<script>.gp and dir/<script>.png (title and caption from the data file's header). gnuplot
 * runs the embedded script (never the copy in `dir`) inside `dir` on fixed "./" names; the data
 * files must be regular files with a finite number. Returns a CLI_EXIT_* code. */
int cli_plot_render(const char *dir, const char *script, dpd_err *err);
/* Writes dir/<script>.gp, the embedded script `script` after the lines of `preamble` (the
 * settings of this figure, every text in them written by cli_gp_string), and runs that text in
 * gnuplot inside `dir` with the arguments ./DATA, the image's temporary name and FORMAT, which
 * renders dir/<script>.<format> (in place). Returns a CLI_EXIT_* code. */
int cli_plot_script(const char *dir, const char *script, const char *preamble, const char *data,
                    const char *format, dpd_err *err);
/* DPD_OK when `format` is an image format of the figures (png, svg, pdf); otherwise DPD_EINVAL
 * with a message naming them. */
int cli_plot_format_check(const char *format, dpd_err *err);
/* `s` as a gnuplot double-quoted string literal (quotes included) that gnuplot reads back as
 * exactly `s` and in which it substitutes nothing: every byte that gnuplot could take as code
 * (`"`, `\`, the backtick, `@`, `$`, `'`, control characters, DEL) is an octal escape \ooo.
 * Writes at most `cap` bytes with the NUL (always terminated when cap > 0) and returns the
 * length of the whole literal, as snprintf does. The only way text reaches gnuplot code. */
size_t cli_gp_string(const char *s, char *buf, size_t cap);
/* Writes cli_gp_string(s) to `f`. */
void cli_gp_string_write(FILE *f, const char *s);
/* A parameter's value as figures print it: a number in %g form, anything else as it is. */
void cli_plot_value(const char *v, char *buf, size_t cap);
/* The privacy a figure's title names, as the user asked for it (docs/output.md, Figures):
 * `given` holds the values given for epsilon, delta, zcdp, mu, sigma, rho in this order (NULL:
 * not given). "ε = 1, δ = 1e-05" when epsilon was given, else "0.5-zCDP", "1-GDP", "σ = 2" or
 * "ρ = 1" (numbers in %g form, inf as ∞); "" when none was given. */
void cli_plot_privacy(const char *const given[6], char *buf, size_t cap);
/* Writes `text` as dir/name in place (a temporary name, then rename). Returns a DPD status. */
int cli_write_in_place(const char *dir, const char *name, const char *text, dpd_err *err);

/* ---- dispatch (run.c) ---- */

/* The usage text of `dpdyn` (every command, one line each, from the registry). */
void cli_usage(FILE *f);
/* Prints "dpdyn COMMAND: reason" on stderr as one line (control characters escaped). */
void cli_print_error(const char *command, const char *reason);
/* Whether cli_run runs `command` (a command of a model of the registry; not sweep or plot). */
int cli_is_run_command(const char *command);
/* Fills err with "unknown command 'X' (allowed: every command)"; returns CLI_EXIT_USAGE. */
int cli_unknown_command(const char *command, dpd_err *err);
/* Runs one command: argv[0] = COMMAND, then an optional INI file and --key=value flags (argv
 * borrowed). `notes`: print the run's notes and those on flags without effect after success.
 * Returns a CLI_EXIT_* code; on failure err->reason holds the one-line message, not printed. */
int cli_run(int argc, char **argv, int notes, dpd_err *err);
/* Validates every key of a run of `command` with the parsed parameters `p` without running it
 * or writing anything (`p` may be changed: defaults filled in). Returns a DPD status, the
 * message in err. */
int cli_validate(const char *command, cli_params *p, dpd_err *err);
/* The descriptor of a key in any model's table or the common keys (NULL: unknown). */
const dpd_key_desc *cli_key_find(const char *name);

/* ---- commands ---- */
int cli_cmd_plot(int argc, char **argv, dpd_err *err);
/* A command of the registry (p->model has a run hook for p->command): validates, runs and
 * writes the output directory; `notes`: print the run's notes on stderr after success. Returns
 * a CLI_EXIT_* code. */
int cli_cmd_model(cli_params *p, double start, int notes, dpd_err *err);
/* Validates every key of `p` for its model and command without building anything (the fuzz
 * harnesses, sweep). Returns a DPD status, the message in err. */
int cli_model_validate(cli_params *p, dpd_err *err);
/* dpdyn sweep COMMAND [FILE.ini] [--key=SPEC ...] (argv borrowed, after "sweep"): prints its own
 * messages; returns a CLI_EXIT_* code. */
int cli_cmd_sweep(int argc, char **argv);
/* Adds every key in effect to a JSON object (numbers as numbers). */
void cli_params_to_json(const cli_params *p, cJSON *obj);

double cli_now(void);

#endif
