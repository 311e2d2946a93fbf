/* Figures: runs gnuplot on an output directory with the embedded scripts of plots/.
 * SPDX-License-Identifier: MIT
 *
 * The script that makes a figure is written next to it (<name>.gp), so every
 * figure can be re-made or edited by hand: gnuplot -c <name>.gp trajectory.tsv
 * release.tsv <name>.png [png|svg|pdf] [title] [caption]. The image is rendered to a temporary
 * name and renamed into place. The title names the model, the command, the few parameters that
 * matter and the replicates; the caption under the plot lists every parameter in effect. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/error_impl.h"
#include "dpd_plots.h"

extern char **environ;

/* The embedded figures (generated from the scripts in plots/: dpd_plot_table), and the old names
 * that output directories may carry in their headers. */
typedef dpd_plot_entry plot_script;

static const struct { const char *name, *script; } aliases[] = {{"sde", "simulate"}, {NULL, NULL}};

static const plot_script *script_find(const char *name) {
  for (size_t k = 0; aliases[k].name != NULL; k++) {
    if (strcmp(aliases[k].name, name) == 0) {
      name = aliases[k].script;
    }
  }
  for (const plot_script *s = dpd_plot_table; s->name != NULL; s++) {
    if (strcmp(s->name, name) == 0) {
      return s;
    }
  }
  return NULL;
}

/* A parameter's value as the figures print it: a number in %g form (0.1, not the
 * 0.10000000000000001 that a round trip may record), anything else as it is. */
void cli_plot_value(const char *v, char *buf, size_t cap) {
  char *end;
  double x;
  errno = 0;
  x = strtod(v, &end);
  if (end != v && *end == '\0' && errno == 0 && strcmp(v, "inf") != 0) {
    snprintf(buf, cap, "%g", x);
  } else {
    snprintf(buf, cap, "%s", v);
  }
}

/* The symbol a title uses for a key (the caption keeps the key names users type). */
static const char *key_symbol(const char *key) {
  static const char *const map[][2] = {{"gamma", "γ"}, {"rho", "ρ"},     {"epsilon", "ε"},
                                       {"sigma", "σ"}, {"zeta", "ζ"},    {"eta", "η"},
                                       {"delta", "δ"}, {"clip", "C/√p"}, {NULL, NULL}};
  for (size_t k = 0; map[k][0] != NULL; k++) {
    if (strcmp(map[k][0], key) == 0) {
      return map[k][1];
    }
  }
  return key;
}

/* The characters of a UTF-8 string (its bytes less the continuation bytes). */
static size_t utf8_chars(const char *s) {
  size_t n = 0;
  for (; *s != '\0'; s++) {
    n += ((unsigned char)*s & 0xC0) != 0x80;
  }
  return n;
}

/* The header of a data file: its `# key = value` lines (docs/output.md), at most 96. */
typedef struct {
  char command[64], keys[96][48], values[96][208];
  size_t n;
} header;

static void header_read(const char *data, header *h) {
  FILE *f = fopen(data, "r");
  char line[512];
  memset(h, 0, sizeof *h);
  if (f == NULL) {
    return;
  }
  while (fgets(line, sizeof line, f) != NULL && line[0] == '#') {
    char *eq = strstr(line, " = ");
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "# command: ", 11) == 0) {
      snprintf(h->command, sizeof h->command, "%.63s", line + 11);
    } else if (eq != NULL && line[1] == ' ' && h->n < 96 && (size_t)(eq - line - 2) < 48) {
      memcpy(h->keys[h->n], line + 2, (size_t)(eq - line - 2));
      h->keys[h->n][eq - line - 2] = '\0';
      snprintf(h->values[h->n], sizeof h->values[h->n], "%s", eq + 3);
      h->n++;
    }
  }
  fclose(f);
}

static const char *header_get(const header *h, const char *key) {
  for (size_t k = 0; k < h->n; k++) {
    if (strcmp(h->keys[k], key) == 0) {
      return h->values[k];
    }
  }
  return NULL;
}

/* The figure's title: the model and command, the few parameters that matter, and the replicates;
 * and its caption: every parameter in effect (key = value, numbers in %g form), wrapped into
 * lines of at most about 130 characters so that nothing is cut off at 900 pixels. */
static void read_title(const char *data, const char *script, char *title, size_t tcap,
                       char *caption, size_t ccap) {
  /* the parameters of each model's title; the rest goes to the caption */
  static const char *const linreg[] = {"d", "n", "rho", "c", NULL};
  static const char *const rf[] = {"p", "n", "epsilon", "sigma", "clip", NULL};
  static const char *const other[] = {"d", "n", "p", "K", "k", "rho", "epsilon", "sigma", NULL};
  static const char *const skip[] = {"out", "threads", "save_replicates", "model", NULL};
  header h;
  const char *model, *schedule, *reps, *const *keys;
  char v[208];
  size_t len, head, line = 0;
  int first = 1;
  header_read(data, &h);
  model = header_get(&h, "model");
  model = model != NULL ? model : "linreg";
  keys = strcmp(model, "linreg") == 0 ? linreg : strcmp(model, "rf") == 0 ? rf : other;
  len = (size_t)snprintf(title, tcap, "%s %s", model, h.command[0] != '\0' ? h.command : script);
  schedule = strcmp(model, "linreg") == 0 ? header_get(&h, "schedule") : NULL;
  if (schedule != NULL && len < tcap) {
    /* the label noise and the spectrum when they are not the defaults (short ones only) */
    const char *noise = header_get(&h, "noise"), *spectrum = header_get(&h, "spectrum");
    len += (size_t)snprintf(title + len, tcap - len, " (%s schedule", schedule);
    if (noise != NULL && strcmp(noise, "gaussian") != 0 && strlen(noise) <= 16 && len < tcap) {
      len += (size_t)snprintf(title + len, tcap - len, ", %s noise", noise);
    }
    if (spectrum != NULL && strcmp(spectrum, "iso") != 0 && strlen(spectrum) <= 16 && len < tcap) {
      len += (size_t)snprintf(title + len, tcap - len, ", %s spectrum", spectrum);
    }
    if (len < tcap) {
      len += (size_t)snprintf(title + len, tcap - len, ")");
    }
  }
  head = len;
  for (size_t k = 0; keys[k] != NULL && len < tcap; k++) {
    const char *raw = header_get(&h, keys[k]);
    if (raw == NULL || (strcmp(keys[k], "clip") == 0 && strcmp(raw, "inf") == 0)) {
      continue;
    }
    cli_plot_value(raw, v, sizeof v);
    len += (size_t)snprintf(title + len, tcap - len, "%s %s = %s", first ? ":" : ",",
                            key_symbol(keys[k]), strcmp(v, "inf") == 0 ? "∞" : v);
    first = 0;
  }
  reps = header_get(&h, strcmp(script, "tune") == 0 ? "confirm_seeds" : "seeds");
  if (reps != NULL && strcmp(reps, "0") != 0 && strcmp(script, "ode") != 0 &&
      strcmp(script, "rf_ou") != 0 && len < tcap) {
    cli_plot_value(reps, v, sizeof v);
    len += (size_t)snprintf(title + len, tcap - len, " (%s replicates)", v);
  }
  /* a title longer than about 85 characters goes on two lines: the model, command and setting,
   * then the parameters (head: where they start, after "linreg compare (...)" and a colon) */
  if (len < tcap && utf8_chars(title) > 85 && !first && title[head] == ':' &&
      title[head + 1] == ' ') {
    title[head + 1] = '\n';
  }
  len = 0;
  caption[0] = '\0';
  for (size_t k = 0; k < h.n && len < ccap; k++) {
    char item[300];
    size_t il, s;
    for (s = 0; skip[s] != NULL && strcmp(skip[s], h.keys[k]) != 0; s++) {
    }
    if (skip[s] != NULL) {
      continue;
    }
    cli_plot_value(h.values[k], v, sizeof v);
    il = (size_t)snprintf(item, sizeof item, "%s = %s", h.keys[k], v);
    if (len > 0 && line + il + 2 > 130) {
      len += (size_t)snprintf(caption + len, ccap - len, ",\n");
      line = 0;
    } else if (len > 0) {
      len += (size_t)snprintf(caption + len, ccap - len, ", ");
      line += 2;
    }
    if (len < ccap) {
      len += (size_t)snprintf(caption + len, ccap - len, "%s", item);
      line += il;
    }
  }
}

int cli_write_in_place(const char *dir, const char *name, const char *text, dpd_err *err) {
  char *tmp = cli_temp_begin(dir, name), *final = cli_path_join(dir, name);
  FILE *f;
  int status = DPD_OK;
  if (tmp == NULL || final == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  } else if ((f = fopen(tmp, "w")) == NULL) {
    status = DPD_FAIL(err, DPD_EIO, "cannot write in '%s': %s", dir, strerror(errno));
  } else {
    int failed = fputs(text, f) < 0;
    failed |= fclose(f) != 0;
    if (failed || rename(tmp, final) != 0) {
      status = DPD_FAIL(err, DPD_EIO, "cannot write '%s'", final);
      unlink(tmp);
    }
  }
  cli_temp_end(tmp);
  free(final);
  return status;
}

/* Whether a data file has a header row and at least one data row (non-blank lines not starting
 * with `#`). */
static int has_data_rows(const char *path) {
  FILE *f = fopen(path, "r");
  int c, at_start = 1, comment = 0, blank = 1, lines = 0;
  if (f == NULL) {
    return 0;
  }
  /* lines neither `#` nor blank: the header row, then the data rows (docs/output.md) */
  while (lines < 2 && (c = getc(f)) != EOF) {
    if (c == '\n') {
      lines += !comment && !blank;
      at_start = 1;
      comment = 0;
      blank = 1;
    } else if (at_start && c == '#') {
      comment = 1;
      at_start = 0;
    } else if (c != ' ' && c != '\t' && c != '\r') {
      blank = 0;
      at_start = 0;
    }
  }
  lines += lines < 2 && !comment && !blank; /* a last line without its newline */
  fclose(f);
  return lines >= 2;
}

/* Runs gnuplot with `argv` (argv[0] "gnuplot"), which renders the image `img_tmp`; renames it to
 * `img` when gnuplot succeeds. Returns a CLI_EXIT_* code. */
static int run_gnuplot(char **argv, const char *img_tmp, const char *img, dpd_err *err) {
  const char *gnuplot = DPD_GNUPLOT[0] != '\0' ? DPD_GNUPLOT : "gnuplot";
  posix_spawnattr_t attr;
  sigset_t old;
  pid_t pid;
  int status;
  /* Spawn and record the child as one step for the signal handler (which stops it); the
   * child starts with the signals unblocked. */
  cli_signals_block(&old);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &old);
  {
    /* dpdyn ignores SIGXFSZ (output.c); gnuplot, which does not check its writes, must die of
     * it rather than leave a truncated image */
    sigset_t deflt;
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGXFSZ);
    posix_spawnattr_setsigdefault(&attr, &deflt);
  }
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  status = posix_spawnp(&pid, gnuplot, NULL, &attr, argv, environ);
  if (status != 0) {
    /* Fall back to gnuplot on PATH if the configured one moved. */
    status = posix_spawnp(&pid, "gnuplot", NULL, &attr, argv, environ);
  }
  posix_spawnattr_destroy(&attr);
  if (status == 0) {
    cli_child_set((long)pid);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (status != 0) {
    DPD_FAIL(err, DPD_EIO, "cannot run gnuplot: %s (install the gnuplot package)",
             strerror(status));
    return CLI_EXIT_IO;
  }
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    cli_child_set(0);
    unlink(img_tmp);
    DPD_FAIL(err, DPD_EIO, "gnuplot failed rendering '%s'%s", img,
             WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ
                 ? ": the file size limit (ulimit -f) was reached"
                 : "");
    return CLI_EXIT_IO;
  }
  cli_child_set(0);
  if (rename(img_tmp, img) != 0) {
    DPD_FAIL(err, DPD_EIO, "cannot rename into '%s': %s", img, strerror(errno));
    unlink(img_tmp);
    return CLI_EXIT_IO;
  }
  return CLI_EXIT_OK;
}

static int render(const char *dir, const char *script, const char *format, dpd_err *err) {
  const plot_script *sc = script_find(script);
  const char *text = sc != NULL ? sc->text : NULL;
  char *gp = NULL, *data = NULL, *release = NULL, *img_tmp = NULL, *img = NULL;
  char gp_name[64], img_name[64], title[512], caption[2048];
  int code = CLI_EXIT_OK;
  if (text == NULL || sc->second == NULL) {
    DPD_FAIL(err, DPD_EINVAL,
             "no figure '%s' (allowed: compare, compare3, simulate, sde, ode, tune, rf_simulate, "
             "rf_ou, rf_compare)",
             script);
    return CLI_EXIT_USAGE;
  }
  snprintf(gp_name, sizeof gp_name, "%s.gp", script);
  snprintf(img_name, sizeof img_name, "%s.%s", script, format);
  gp = cli_path_join(dir, gp_name);
  data = cli_path_join(dir, "trajectory.tsv");
  release = cli_path_join(dir, sc->second);
  img = cli_path_join(dir, img_name);
  if (gp == NULL || data == NULL || release == NULL || img == NULL) {
    DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_IO;
    goto done;
  }
  if (access(data, R_OK) != 0 || access(release, R_OK) != 0) {
    DPD_FAIL(err, DPD_EINVAL, "'%s' has no trajectory.tsv and %s to plot", dir, sc->second);
    code = CLI_EXIT_USAGE;
    goto done;
  }
  if (!has_data_rows(data) || !has_data_rows(release)) {
    DPD_FAIL(err, DPD_EINVAL, "no data rows in '%s' (allowed: a complete dpdyn output directory)",
             has_data_rows(data) ? release : data);
    code = CLI_EXIT_USAGE;
    goto done;
  }
  if (cli_write_in_place(dir, gp_name, text, err) < 0) {
    code = CLI_EXIT_IO;
    goto done;
  }
  img_tmp = cli_temp_begin(dir, img_name);
  if (img_tmp == NULL) {
    DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_IO;
    goto done;
  }
  read_title(data, script, title, sizeof title, caption, sizeof caption);
  {
    char *argv[] = {(char *)"gnuplot", (char *)"-c",   gp,    data,    release,
                    img_tmp,           (char *)format, title, caption, NULL};
    code = run_gnuplot(argv, img_tmp, img, err);
  }
done:
  cli_temp_end(img_tmp);
  free(gp);
  free(data);
  free(release);
  free(img);
  return code;
}

int cli_plot_render(const char *dir, const char *script, dpd_err *err) {
  return render(dir, script, "png", err);
}

int cli_plot_script(const char *dir, const char *script, const char *preamble, const char *data,
                    const char *format, dpd_err *err) {
  const plot_script *sc = script_find(script);
  char gp_name[64], img_name[64];
  char *gp = NULL, *data_path = NULL, *img = NULL, *img_tmp = NULL, *text = NULL;
  int code = CLI_EXIT_OK;
  if (sc == NULL) {
    DPD_FAIL(err, DPD_EINVAL, "no figure '%s'", script);
    return CLI_EXIT_USAGE;
  }
  snprintf(gp_name, sizeof gp_name, "%s.gp", script);
  snprintf(img_name, sizeof img_name, "%s.%s", script, format);
  gp = cli_path_join(dir, gp_name);
  data_path = cli_path_join(dir, data);
  img = cli_path_join(dir, img_name);
  text = malloc(strlen(preamble) + strlen(sc->text) + 1);
  if (gp == NULL || data_path == NULL || img == NULL || text == NULL) {
    DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_IO;
    goto done;
  }
  strcpy(text, preamble);
  strcat(text, sc->text);
  if (cli_write_in_place(dir, gp_name, text, err) < 0) {
    code = CLI_EXIT_IO;
    goto done;
  }
  if ((img_tmp = cli_temp_begin(dir, img_name)) == NULL) {
    DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_IO;
    goto done;
  }
  {
    char *argv[] = {(char *)"gnuplot", (char *)"-c", gp, data_path, img_tmp, (char *)format, NULL};
    code = run_gnuplot(argv, img_tmp, img, err);
  }
done:
  cli_temp_end(img_tmp);
  free(gp);
  free(data_path);
  free(img);
  free(text);
  return code;
}

/* A sweep directory (sweep.tsv, and the figure script dpdyn sweep wrote: its settings, then the
 * embedded script): the figure rendered again in `format`. 0 when `dir` is not a sweep. */
static int plot_sweep(const char *dir, const char *format, int *code, dpd_err *err) {
  static const char *const figures[] = {"sweep_line", "sweep_heat", NULL};
  for (size_t k = 0; figures[k] != NULL; k++) {
    const plot_script *sc = script_find(figures[k]);
    char name[64], *path, *text = NULL, *at;
    FILE *f;
    long len;
    snprintf(name, sizeof name, "%s.gp", figures[k]);
    path = cli_path_join(dir, name);
    f = path != NULL ? fopen(path, "rb") : NULL;
    free(path);
    if (f == NULL) {
      continue;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)len + 1)) != NULL && fread(text, 1, (size_t)len, f) == (size_t)len) {
      text[len] = '\0';
    } else {
      free(text);
      text = NULL;
    }
    fclose(f);
    if (text == NULL || (at = strstr(text, sc->text)) == NULL) {
      free(text);
      DPD_FAIL(err, DPD_EINVAL, "'%s/%s' is not a figure script written by dpdyn sweep", dir, name);
      *code = CLI_EXIT_USAGE;
      return 1;
    }
    *at = '\0'; /* the settings of the figure */
    *code = cli_plot_script(dir, figures[k], text, "sweep.tsv", format, err);
    free(text);
    return 1;
  }
  return 0;
}

/* The image formats of the figures: png (pngcairo), svg, pdf (pdfcairo). */
int cli_plot_format_check(const char *format, dpd_err *err) {
  if (strcmp(format, "png") != 0 && strcmp(format, "svg") != 0 && strcmp(format, "pdf") != 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'format': '%s' (allowed: png, svg, pdf)",
                    format);
  }
  return DPD_OK;
}

/* dpdyn plot DIR [--format=png|svg|pdf] */
int cli_cmd_plot(int argc, char **argv, dpd_err *err) {
  const char *dir = NULL, *format = "png";
  char *data;
  char line[320], script[320] = "";
  FILE *f;
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "--format=", 9) == 0) {
      format = argv[i] + 9;
    } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
      format = argv[++i];
    } else if (argv[i][0] == '-') {
      DPD_FAIL(err, DPD_EINVAL, "unknown option '%s' (allowed: --format=png|svg|pdf)", argv[i]);
      return CLI_EXIT_USAGE;
    } else if (dir == NULL) {
      dir = argv[i];
    } else {
      DPD_FAIL(err, DPD_EINVAL, "unexpected argument '%s' (allowed: one output directory)",
               argv[i]);
      return CLI_EXIT_USAGE;
    }
  }
  if (dir == NULL) {
    DPD_FAIL(err, DPD_EINVAL,
             "missing output directory (usage: dpdyn plot DIR [--format=png|svg|pdf])");
    return CLI_EXIT_USAGE;
  }
  if (cli_plot_format_check(format, err) < 0) {
    return CLI_EXIT_USAGE;
  }
  data = cli_path_join(dir, "trajectory.tsv");
  f = data != NULL ? fopen(data, "r") : NULL;
  free(data);
  if (f == NULL) {
    int code;
    if (plot_sweep(dir, format, &code, err)) {
      return code;
    }
    DPD_FAIL(err, DPD_EINVAL, "cannot read '%s/trajectory.tsv' (allowed: a dpdyn output directory)",
             dir);
    return CLI_EXIT_USAGE;
  }
  /* The figure named in the header; older files only name their command. */
  while (fgets(line, sizeof line, f) != NULL && line[0] == '#') {
    if (strncmp(line, "# figure: ", 10) == 0) {
      snprintf(script, sizeof script, "%s", line + 10);
      script[strcspn(script, "\n")] = '\0';
      break;
    }
    if (strncmp(line, "# command: ", 11) == 0) {
      snprintf(script, sizeof script, "%s", line + 11);
      script[strcspn(script, "\n")] = '\0';
    }
  }
  fclose(f);
  if (script[0] == '\0') {
    DPD_FAIL(err, DPD_EINVAL, "'%s/trajectory.tsv' has no '# figure:' or '# command:' header line",
             dir);
    return CLI_EXIT_USAGE;
  }
  return render(dir, script, format, err);
}
