/* Models as plug-ins: a model type is a `const` table (name, keys, commands), the registry
 * lists them, and one generic runner serves every command of every model.
 * SPDX-License-Identifier: MIT
 *
 * The shape follows GSL's algorithm types (gsl_odeiv2_step_type) and Lua's luaL_Reg: a family of
 * algorithms is a table of `const` type structs, written once against the generic driver, and
 * every list a user sees (models, commands, keys, "allowed: ...") is generated from the tables.
 *
 *   const dpd_model_type *m = dpd_model_lookup("rf");
 *   dpd_keys *keys;  dpd_output *out;
 *   dpd_model_keys_create(m, "simulate", &keys, &err);     // every default in place
 *   dpd_keys_set(keys, "p", "500", &err);                  // what the user gives
 *   dpd_model_run(m, "simulate", keys, &env, &out, &err);  // validate, run, tables + summary
 *   ... out->tables[k], out->summary ...
 *   dpd_output_free(out);  dpd_keys_free(keys);
 *
 * A model's own typed API (linreg.h, rf.h, ...) stays available; its type is a small adapter.
 * Adding a model = its folder under src/models/ + one line in src/models/registry.c. */
#ifndef DPD_MODEL_H
#define DPD_MODEL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "dpdyn/keys.h"
#include "dpdyn/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One data table of a run: `rows` rows of `ncols` named columns (column-major). */
typedef struct {
  char *name;   /* file name, e.g. "trajectory.tsv" */
  char *figure; /* the gnuplot script that renders it (plots/<figure>.gp) */
  size_t rows, ncols;
  char **columns; /* [ncols] column names */
  double *data;   /* [ncols * rows]: column k is data + k * rows */
  size_t block;   /* rows per block (a blank line between blocks: gnuplot's scan lines for
                     splot); 0: one block */
  char *comment;  /* one more line for the file's header (NULL: none) */
} dpd_table;

/* What a run produces: a summary (JSON object: scalars, the parameters in effect under
 * "params", null members explained under "not_available"; in memory an infinite value is a
 * number, written as null + "nonfinite" by dpd_output_summary_print), tables, and the figure to
 * draw. */
typedef struct {
  char *headline; /* one line naming the run (model, sizes, seed) */
  cJSON *summary; /* owned */
  dpd_table *tables;
  size_t ntables;
  char *figure; /* the figure of the run (NULL: none) */
  int plot;     /* whether the user asked for the figure (key plot, or the command's default) */
  char *report; /* text for a reader (the CLI prints it on stdout); NULL: the summary's scalars,
                   one per line */
  char **notes; /* notes and warnings about the run ("warning: ..." / "note: ..."), one line
                   each: the CLI prints them on stderr after the output is published */
  size_t nnotes;
} dpd_output;

/* Creates an empty output (summary: an empty object). *out: returned-owned. */
DPD_API int dpd_output_create(dpd_output **out, dpd_err *err);
DPD_API void dpd_output_free(dpd_output *out);
/* Appends a table: `columns` is the space-separated list of the `ncols` names; the data of
 * cols[k][0..rows) are copied (cols: borrowed). */
DPD_API int dpd_output_table_add(dpd_output *out, const char *name, const char *figure,
                                 const char *columns, size_t rows, size_t ncols,
                                 const double *const *cols, dpd_err *err);
/* The table called `name`, NULL if none; the column called `column` of a table, NULL if none. */
DPD_API const dpd_table *dpd_output_table_get(const dpd_output *out, const char *name);
DPD_API const double *dpd_table_column_get(const dpd_table *t, const char *column);
/* Summary helpers: a number (finite or +-inf), NaN as null with a reason under
 * "not_available" (a summary never holds NaN). */
DPD_API void dpd_output_number_set(dpd_output *out, const char *key, double v);
DPD_API void dpd_output_na_set(dpd_output *out, const char *key, const char *reason);
/* The summary as the text of summary.json (docs/output.md): one type per key, every non-finite
 * number null and its value ("inf", "-inf", "nan") under the top-level object "nonfinite" by
 * dotted path ("params.rho"). Returned-owned (free()); NULL when out of memory. */
DPD_API char *dpd_output_summary_print(const dpd_output *out);
/* Records every key in effect (dpd_keys_record_get) under "params". */
DPD_API int dpd_output_params_set(dpd_output *out, const dpd_keys *keys, dpd_err *err);

/* Progress of a long run: `done` of `total` units (replicates, steps). Called from the calling
 * thread only. Return 0 to go on. */
typedef int (*dpd_run_progress_fn)(void *user, const char *what, size_t done, size_t total);

/* The environment of a run: resources and callbacks, none of which changes a result. */
typedef struct {
  size_t max_memory;            /* bytes a run may allocate: larger estimates are refused
                                   (DPD_EINVAL naming the key that drives the size) before
                                   anything large is allocated; 0: no limit */
  dpd_run_progress_fn progress; /* NULL: silent */
  void *progress_user;
  int validate_only; /* 1: validate every key, build nothing, return DPD_OK */
  /* Called once every key is valid, before anything large is built or computed (the CLI
   * prepares its output directory there): a negative return stops the run with that status
   * and err filled. NULL: none. */
  int (*validated)(void *user, dpd_err *err);
  void *validated_user;
} dpd_run_env;

DPD_API dpd_run_env dpd_run_env_default(void);

/* A ready-made progress callback for a binding's Ctrl-C (python/dpdyn): `flag` points to an int
 * that another thread sets to non-zero to stop the run (DPD_ECANCELLED); it returns that int.
 * The library never installs signal handlers: the binding sets the flag from its own. */
DPD_API int dpd_run_progress_flag(void *flag, const char *what, size_t done, size_t total);

/* A model type is a set of per-operation functions over a per-model context (the shape of
 * SUNDIALS' solver objects): `setup` turns the keys into validated configurations (the context),
 * `workspace_bytes` says what a command will allocate, each command's `run` computes on the
 * context, `release` frees it. dpd_model_run drives them in this order:
 *
 *   setup(c, keys, env, &ctx)          every key validated, values in effect recorded in keys,
 *                                      keys not in effect dropped; nothing large built
 *   workspace_bytes(ctx, c, &driver)   refused (DPD_EINVAL naming `driver`) above max_memory
 *   (env->validate_only: stop here, *out = NULL)
 *   env->validated(...)                the CLI prepares its output directory
 *   c->run(ctx, keys, env, &out)       build, compute, tables + summary
 *   release(ctx)
 *
 * No function of a model branches on the command's name: what differs between commands is in
 * the command's entry (`uses`, `replicates_key`, `plot_default`). */
typedef struct dpd_model_command dpd_model_command;

/* One command of a model. */
struct dpd_model_command {
  const char *name;    /* "simulate", "ou", ... */
  const char *summary; /* one line for dpdyn --help */
  const char *files;   /* the files it writes, space-separated (summary.json included) */
  const char *example; /* one command line */
  /* The names of the numbers its summary can hold, space-separated, as dpdyn sweep names the
   * columns of sweep.tsv: the top-level numbers, then "object.key" for the numbers one level
   * down in objects other than params and not_available; wall_seconds and
   * memory_estimate_bytes left out. The union over every configuration of the command (text
   * keys, files, privacy keys): dpdyn sweep refuses a plot_y outside it before any point runs,
   * so it must never miss a name a run can produce (tests/cli/test_sweep_plot_y.sh checks). */
  const char *numbers;
  /* Runs the command on the context made by the model's setup (keys: the keys in effect, for
   * the record). *out: returned-owned. */
  int (*run)(void *ctx, const dpd_keys *keys, const dpd_run_env *env, dpd_output **out,
             dpd_err *err);
  unsigned uses;              /* model-defined bits: what setup validates and prepares for it */
  const char *replicates_key; /* the key counting the replicates behind the summary's standard
                                 errors (NULL: "seeds"); one replicate makes them null */
  int plot_default;           /* 1: the figure is drawn unless plot = 0 */
  const char *selected_by;    /* keys (space-separated) that pick this model for this command
                                 when the user names no model (dpd_model_find_keyed); NULL */
};

typedef struct dpd_model_type {
  const char *name;                  /* the value of the key `model` */
  const char *summary;               /* one line */
  const dpd_key_desc *keys;          /* the model's keys (NULL-name terminated) */
  const dpd_model_command *commands; /* NULL-name terminated */
  const char *const *small;          /* key, value, key, value, ..., NULL: a problem small enough
                                        for the registry contract test (tests/unit/
                                        test_models.c) and quick examples */
  /* Validates every key for command `c` (reading c->uses, never c->name): records the values in
   * effect in `keys` (dpd_keys_effective_*), drops the keys not in effect, and makes the context
   * (*ctx: returned-owned, freed by release). May read small files and bounded file headers;
   * builds nothing large. */
  int (*setup)(const dpd_model_command *c, dpd_keys *keys, const dpd_run_env *env, void **ctx,
               dpd_err *err);
  void (*release)(void *ctx); /* NULL-safe in ctx */
  /* Bytes command `c` will allocate at most on this context (0: nothing to check), and in
   * *driver the key whose value drives the size (named in the refusal). */
  double (*workspace_bytes)(const void *ctx, const dpd_model_command *c, const char **driver);
} dpd_model_type;

/* Adds a model type to the registry at run time (after the built-in models; a plug-in or a
 * test). `m` is borrowed and must outlive every use of the registry; its name must be new and
 * it must have setup, release, workspace_bytes and commands with `run`. Not thread-safe: call
 * it before runs start. DPD_EINVAL for a taken name or a missing function, DPD_ENOMEM past 64
 * registered models. */
DPD_API int dpd_model_register(const dpd_model_type *m, dpd_err *err);

/* A table built column by column (growable: no fixed column arrays in the models): create it
 * with its number of rows, add named columns (copied), then move it into an output. */
typedef struct dpd_table_builder dpd_table_builder;
/* *b: returned-owned (dpd_table_builder_free, or consumed by dpd_output_table_add_built). */
DPD_API int dpd_table_builder_create(size_t rows, dpd_table_builder **b, dpd_err *err);
DPD_API void dpd_table_builder_free(dpd_table_builder *b);
/* Appends the column `name` with the values col[0..rows) (copied; col may be NULL: zeros).
 * DPD_EINVAL for an empty name, a name with a blank or one already in the table. */
DPD_API int dpd_table_builder_add(dpd_table_builder *b, const char *name, const double *col,
                                  dpd_err *err);
/* Appends a column and returns its storage to fill (rows doubles, zeroed; NULL on failure with
 * err filled). The pointer stays valid until the builder is freed or consumed. */
DPD_API double *dpd_table_builder_column(dpd_table_builder *b, const char *name, dpd_err *err);
/* The number of rows of the builder's columns. */
DPD_API size_t dpd_table_builder_rows(const dpd_table_builder *b);
/* The column called `name` of the builder, NULL if none. */
DPD_API double *dpd_table_builder_find(dpd_table_builder *b, const char *name);
/* Appends the built table to `out` as table `name` drawn by `figure` (NULL: none) and frees the
 * builder (also on failure). */
DPD_API int dpd_output_table_add_built(dpd_output *out, const char *name, const char *figure,
                                       dpd_table_builder *b, dpd_err *err);

/* The keys every model takes (model, out, plot, max_memory): NULL-name terminated. */
DPD_API const dpd_key_desc *dpd_model_common_keys(void);

/* The registry: the i-th model (NULL past the end), and lookup by name (NULL: unknown). */
DPD_API const dpd_model_type *dpd_model_at(size_t i);
DPD_API const dpd_model_type *dpd_model_lookup(const char *name);
/* The command `name` of a model, NULL if it has none. */
DPD_API const dpd_model_command *dpd_model_command_get(const dpd_model_type *m, const char *name);
/* "simulate, ou, compare" (the model's commands) and "linreg, rf" (the registry). */
DPD_API void dpd_model_command_list(const dpd_model_type *m, char *buf, size_t cap);
DPD_API void dpd_model_list(char *buf, size_t cap);

/* The key set of a command of a model: the model's keys, then the common keys, defaults in
 * place (model = m->name). *keys: returned-owned (dpd_keys_free). */
DPD_API int dpd_model_keys_create(const dpd_model_type *m, const char *command, dpd_keys **keys,
                                  dpd_err *err);
/* What a user gives, with the command line's messages (the CLI and python/dpdyn call these).
 * dpd_model_find: the model that runs `command`: the one called `name`, or for name NULL
 * linreg when it has the command, else the first model of the registry that has it (*m:
 * borrowed, static). DPD_EINVAL naming the models for an unknown name, the models that have the
 * command and the commands of the named one when it lacks the command, or "unknown command"
 * when no model has it. */
DPD_API int dpd_model_find(const char *name, const char *command, const dpd_model_type **m,
                           dpd_err *err);
/* dpd_model_find with the names of the keys the user gave (keys[0..nkeys), borrowed): with
 * name NULL, the first model of the registry whose command lists one of those keys in its
 * `selected_by` (dpdyn account --mechanism=... is model=dpsgd), else as dpd_model_find. */
DPD_API int dpd_model_find_keyed(const char *name, const char *command, const char *const *keys,
                                 size_t nkeys, const dpd_model_type **m, dpd_err *err);
/* Whether a model of the registry has a key called `name` (the common keys aside). */
DPD_API int dpd_model_key_known(const char *name);
/* Sets a key the user gave (dpd_keys_set) in a set made by dpd_model_keys_create for `m`. A name
 * the set lacks is DPD_EINVAL: "key 'K' does not apply to model=M COMMAND (allowed keys: ...)"
 * for another model's key, "unknown key 'K' (see 'dpdyn COMMAND --help' for the keys)" else. */
DPD_API int dpd_model_key_set(const dpd_model_type *m, dpd_keys *keys, const char *name,
                              const char *value, dpd_err *err);
/* Runs a command (DPD_EINVAL naming the commands the model has when it lacks `command`). */
DPD_API int dpd_model_run(const dpd_model_type *m, const char *command, dpd_keys *keys,
                          const dpd_run_env *env, dpd_output **out, dpd_err *err);

#ifdef __cplusplus
}
#endif
#endif /* DPD_MODEL_H */
