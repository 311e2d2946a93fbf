/* Figures: runs gnuplot on an output directory with the embedded scripts of plots/.
 * SPDX-License-Identifier: MIT
 *
 * The script that makes a figure is written next to it (<name>.gp), so every
 * figure can be re-made or edited by hand: gnuplot -c <name>.gp trajectory.tsv
 * release.tsv <name>.png [png|svg|pdf] [title] [caption]. The image is rendered to a temporary
 * name and renamed into place. The title names the model, the command, the few parameters that
 * matter and the replicates; the caption under the plot lists every parameter in effect.
 *
 * Nothing from the data reaches gnuplot as code (docs/output.md, Figures): gnuplot runs the
 * embedded script (given on its standard input, never the copy in the directory), in the output
 * directory, on fixed file names that start with "./" (never a pipe `<cmd`, `|cmd` or a
 * `$datablock`); titles and captions are passed as arguments (string values, never parsed); the
 * settings of a sweep's figure are read as data and written back through cli_gp_string. Every
 * file read here must be a regular file, and every read is bounded. */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np (glibc >= 2.29, macOS >= 10.15) */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dpd_plots.h"

extern char **environ;

/* The embedded figures (generated from the scripts in plots/: dpd_plot_table). `sde` has its own
 * (plots/sde.gp); simulate.gp still draws an sde directory whose header names it. */
typedef dpd_plot_entry plot_script;

static const plot_script *script_find(const char *name) {
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

/* A number as a title prints it: %g form, inf as ∞. */
static void title_value(const char *v, char *buf, size_t cap) {
  cli_plot_value(v, buf, cap);
  if (strcmp(buf, "inf") == 0) {
    snprintf(buf, cap, "∞");
  }
}

void cli_plot_privacy(const char *const given[6], char *buf, size_t cap) {
  /* epsilon, delta, zcdp, mu, sigma, rho: the first of these given names the privacy */
  char a[208], b[208];
  const char *eps = given[0], *delta = given[1], *zcdp = given[2], *mu = given[3];
  const char *sigma = given[4], *rho = given[5];
  buf[0] = '\0';
  if (eps != NULL) {
    title_value(eps, a, sizeof a);
    if (delta != NULL) {
      title_value(delta, b, sizeof b);
      snprintf(buf, cap, "ε = %s, δ = %s", a, b);
    } else {
      snprintf(buf, cap, "ε = %s", a);
    }
  } else if (zcdp != NULL) {
    title_value(zcdp, a, sizeof a);
    snprintf(buf, cap, "%s-zCDP", a);
  } else if (mu != NULL) {
    title_value(mu, a, sizeof a);
    snprintf(buf, cap, "%s-GDP", a);
  } else if (sigma != NULL) {
    title_value(sigma, a, sizeof a);
    snprintf(buf, cap, "σ = %s", a);
  } else if (rho != NULL) {
    title_value(rho, a, sizeof a);
    snprintf(buf, cap, "ρ = %s", a);
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

/* The most a figure reads of one file (data files of a run are far smaller). */
#define PLOT_READ_MAX ((long)64 << 20)

/* `path` opened for reading when it is a regular file (not a FIFO, device or directory: opened
 * without blocking, then checked on the open file); NULL otherwise, errno set. */
static FILE *open_regular(const char *path) {
  struct stat st;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  FILE *f;
  if (fd < 0) {
    return NULL;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    errno = EINVAL;
    return NULL;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if ((f = fdopen(fd, "r")) == NULL) {
    close(fd);
  }
  return f;
}

/* Whether `path` is a regular file that can be read. */
static int is_regular(const char *path) {
  FILE *f = open_regular(path);
  if (f == NULL) {
    return 0;
  }
  fclose(f);
  return 1;
}

/* The figure a directory's summary.json names, with its data files: {"figure": {"name": NAME,
 * "data": [FIRST, SECOND]}} (a model whose tables are not trajectory.tsv + the script's second
 * file, e.g. semipriv). script: the figure's name to match, or "" to take any (filled in).
 * first / second: the data files (second = first when only one is named). 0 when none. */
static int summary_figure(const char *dir, char *script, size_t scap, char *first, char *second,
                          size_t cap) {
  char *path = cli_path_join(dir, "summary.json"), *text = NULL;
  FILE *f = path != NULL ? open_regular(path) : NULL;
  cJSON *root = NULL;
  const cJSON *fig, *name, *data, *a, *b;
  int found = 0;
  if (f != NULL && (text = calloc(1, (size_t)1 << 20)) != NULL) {
    (void)fread(text, 1, ((size_t)1 << 20) - 1, f);
    root = cJSON_Parse(text);
  }
  fig = cJSON_GetObjectItemCaseSensitive(root, "figure");
  name = cJSON_GetObjectItemCaseSensitive(fig, "name");
  data = cJSON_GetObjectItemCaseSensitive(fig, "data");
  a = cJSON_GetArrayItem(data, 0);
  b = cJSON_GetArrayItem(data, 1);
  if (cJSON_IsString(name) && cJSON_IsString(a) && strchr(a->valuestring, '/') == NULL &&
      (b == NULL || (cJSON_IsString(b) && strchr(b->valuestring, '/') == NULL)) &&
      (script[0] == '\0' || strcmp(script, name->valuestring) == 0)) {
    snprintf(script, scap, "%s", name->valuestring);
    snprintf(first, cap, "%s", a->valuestring);
    snprintf(second, cap, "%s", b != NULL ? b->valuestring : a->valuestring);
    found = 1;
  }
  cJSON_Delete(root);
  free(text);
  if (f != NULL) {
    fclose(f);
  }
  free(path);
  return found;
}

/* The header of a data file: its `# key = value` lines (docs/output.md), at most 96. */
typedef struct {
  char command[64], keys[96][48], values[96][208];
  size_t n;
} header;

static void header_read(const char *data, header *h) {
  FILE *f = open_regular(data);
  char line[512];
  size_t lines = 0;
  memset(h, 0, sizeof *h);
  if (f == NULL) {
    return;
  }
  while (lines++ < 4096 && fgets(line, sizeof line, f) != NULL && line[0] == '#') {
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

/* The file name of a dataset run's features (features=file:PATH; its last path component, at
 * most 40 characters), or NULL. */
static const char *data_file(const header *h) {
  const char *f = header_get(h, "features"), *slash;
  if (f == NULL || strncmp(f, "file:", 5) != 0 || f[5] == '\0') {
    return NULL;
  }
  slash = strrchr(f + 5, '/');
  f = slash != NULL && slash[1] != '\0' ? slash + 1 : f + 5;
  return strlen(f) <= 40 ? f : NULL;
}

/* The figure's title: the model and command, the few parameters that matter, and the replicates;
 * and its caption: every parameter in effect (key = value, numbers in %g form), wrapped into
 * lines of at most about 130 characters so that nothing is cut off at 900 pixels. */
static void read_title(const char *data, const char *script, char *title, size_t tcap,
                       char *caption, size_t ccap) {
  /* the parameters of each model's title; the rest goes to the caption */
  static const char *const linreg[] = {"d", "n", "privacy", "c", NULL};
  static const char *const rf[] = {"p", "n", "privacy", "clip", NULL};
  static const char *const other[] = {"d", "n", "p", "K", "k", "privacy", NULL};
  static const char *const skip[] = {"out", "threads", "save_replicates", "model", NULL};
  header h;
  const char *model, *schedule, *reps, *const *keys, *given[6];
  char v[208], privacy[512];
  size_t len, head, line = 0;
  int first = 1;
  header_read(data, &h);
  {
    /* the privacy as the user gave it: the header records what was given (epsilon, delta,
     * zcdp, mu, sigma) and linreg's rho always (derived when another form was given) */
    static const char *const forms[] = {"epsilon", "delta", "zcdp", "mu", "sigma", "rho"};
    for (size_t i = 0; i < 6; i++) {
      given[i] = header_get(&h, forms[i]);
    }
    cli_plot_privacy(given, privacy, sizeof privacy);
  }
  if (strcmp(script, "tune") == 0) {
    /* tune: the setting of the optimisation (the same heading the script drew before) */
    const char *const k[] = {"schedule", "d", "n", "zeta", "spectrum", "confirm_seeds"};
    const char *val[6];
    char zeta[32];
    for (size_t i = 0; i < 6; i++) {
      val[i] = header_get(&h, k[i]);
      val[i] = val[i] != NULL ? val[i] : "";
    }
    snprintf(zeta, sizeof zeta, "%.4g", strtod(val[3], NULL));
    len = (size_t)snprintf(title, tcap,
                           "linreg tune (%s schedule): d = %s, n = %s, %s, ζ = %s, %s%s%s", val[0],
                           val[1], val[2], privacy, zeta, data_file(&h) != NULL ? "data " : "",
                           data_file(&h) != NULL ? data_file(&h) : val[4],
                           data_file(&h) != NULL ? "" : " spectrum");
    if (strcmp(val[5], "0") != 0 && len < tcap) {
      snprintf(title + len, tcap - len, " (%s replicate%s)", val[5],
               strcmp(val[5], "1") == 0 ? "" : "s");
    }
    caption[0] = '\0';
    return;
  }
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
    if (data_file(&h) != NULL && len < tcap) {
      len += (size_t)snprintf(title + len, tcap - len, ", data %s", data_file(&h));
    }
    if (len < tcap) {
      len += (size_t)snprintf(title + len, tcap - len, ")");
    }
  }
  head = len;
  for (size_t k = 0; keys[k] != NULL && len < tcap; k++) {
    const char *raw = header_get(&h, keys[k]);
    if (strcmp(keys[k], "privacy") == 0) {
      if (privacy[0] != '\0') {
        len += (size_t)snprintf(title + len, tcap - len, "%s %s", first ? ":" : ",", privacy);
        first = 0;
      }
      continue;
    }
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
    len += (size_t)snprintf(title + len, tcap - len, " (%s replicate%s)", v,
                            strcmp(v, "1") == 0 ? "" : "s");
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
    status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  } else if ((f = fopen(tmp, "w")) == NULL) {
    status = CLI_FAIL(err, DPD_EIO, "cannot write in '%s': %s", dir, strerror(errno));
  } else {
    int failed = fputs(text, f) < 0;
    failed |= fclose(f) != 0;
    if (failed || rename(tmp, final) != 0) {
      status = CLI_FAIL(err, DPD_EIO, "cannot write '%s'", final);
      unlink(tmp);
    }
  }
  cli_temp_end(tmp);
  free(final);
  return status;
}

/* What a data file holds (docs/output.md: `#` lines, a header row, data rows): whether it has a
 * header row and a data row, and whether a field after the first of a data row is a finite
 * number (the first is t, c, n or an index). Reads at most PLOT_READ_MAX bytes. 0 when `path`
 * is not a regular file that can be read. */
typedef struct {
  int rows, finite;
} data_scan;

static int data_file_scan(const char *path, data_scan *ds) {
  FILE *f = open_regular(path);
  char field[64];
  size_t flen = 0, fieldno = 0;
  long bytes = 0;
  int c, at_start = 1, comment = 0, blank = 1, lines = 0;
  memset(ds, 0, sizeof *ds);
  if (f == NULL) {
    return 0;
  }
  while ((lines < 2 || !ds->finite) && bytes++ < PLOT_READ_MAX) {
    c = getc(f);
    if (c == '\t' || c == '\n' || c == EOF) {
      /* the end of a field: a number of a data row after its first field? */
      if (lines >= 1 && !comment && fieldno >= 1 && flen > 0 && flen < sizeof field) {
        char *end;
        double x;
        field[flen] = '\0';
        x = strtod(field, &end);
        ds->finite |= end != field && (*end == '\0' || *end == '\r') && isfinite(x);
      }
      fieldno++;
      flen = 0;
    }
    if (c == '\n' || c == EOF) {
      lines += !comment && !blank;
      at_start = 1;
      comment = 0;
      blank = 1;
      fieldno = 0;
      if (c == EOF) {
        break;
      }
    } else if (at_start && c == '#') {
      comment = 1;
      at_start = 0;
    } else if (c != '\t') {
      if (c != ' ' && c != '\r') {
        blank = 0;
      }
      at_start = 0;
      if (flen < sizeof field) {
        field[flen++] = (char)c;
      }
    }
  }
  fclose(f);
  ds->rows = lines >= 2;
  return 1;
}

/* The gnuplot executable as an absolute path (the configured one, else the first on PATH that
 * is an absolute directory: gnuplot runs inside the output directory, where a relative PATH
 * entry would find a program of the directory). NULL when there is none; free it. */
static char *gnuplot_path(void) {
  const char *conf = DPD_GNUPLOT, *path = getenv("PATH");
  if (conf[0] == '/' && access(conf, X_OK) == 0) {
    return strdup(conf);
  }
  while (path != NULL && *path != '\0') {
    size_t n = strcspn(path, ":");
    if (path[0] == '/' && n < 4000) {
      char cand[4096 + 16];
      snprintf(cand, sizeof cand, "%.*s/gnuplot", (int)n, path);
      if (access(cand, X_OK) == 0) {
        return strdup(cand);
      }
    }
    path += n + (path[n] == ':');
  }
  return NULL;
}

/* Runs gnuplot inside `dir` on the script `text` (given on its standard input: the embedded
 * script, never a file of the directory) with the arguments `args` (ARG1, ARG2, ...: fixed file
 * names "./...", the format, titles as plain values), which renders the image `img_tmp`; renames
 * it to `img` when gnuplot succeeds. Returns a CLI_EXIT_* code. */
static int run_gnuplot(const char *dir, const char *text, char *const *args, size_t nargs,
                       const char *img_tmp, const char *img, dpd_err *err) {
  char *gnuplot = gnuplot_path(), *argv[16];
  FILE *in = NULL;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  sigset_t old;
  pid_t pid;
  int status;
  if (gnuplot == NULL) {
    CLI_FAIL(err, DPD_EIO, "cannot run gnuplot: not found (install the gnuplot package)");
    return CLI_EXIT_IO;
  }
  if ((in = tmpfile()) == NULL || fputs(text, in) < 0 || fflush(in) != 0 ||
      fseek(in, 0, SEEK_SET) != 0) {
    CLI_FAIL(err, DPD_EIO, "cannot write the figure's script to a temporary file: %s",
             strerror(errno));
    if (in != NULL) {
      fclose(in);
    }
    free(gnuplot);
    return CLI_EXIT_IO;
  }
  argv[0] = (char *)"gnuplot";
  argv[1] = (char *)"-c";
  argv[2] = (char *)"/dev/stdin";
  for (size_t k = 0; k < nargs && k < 12; k++) {
    argv[3 + k] = args[k];
  }
  argv[3 + (nargs < 12 ? nargs : 12)] = NULL;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fileno(in), 0);
  posix_spawn_file_actions_addchdir_np(&actions, dir);
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
  status = posix_spawn(&pid, gnuplot, &actions, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (status == 0) {
    cli_child_set((long)pid);
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  fclose(in);
  free(gnuplot);
  if (status != 0) {
    CLI_FAIL(err, DPD_EIO, "cannot run gnuplot: %s (install the gnuplot package)",
             strerror(status));
    return CLI_EXIT_IO;
  }
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    cli_child_set(0);
    unlink(img_tmp);
    CLI_FAIL(err, DPD_EIO, "gnuplot failed rendering '%s'%s", img,
             WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ
                 ? ": the file size limit (ulimit -f) was reached"
                 : "");
    return CLI_EXIT_IO;
  }
  cli_child_set(0);
  if (rename(img_tmp, img) != 0) {
    CLI_FAIL(err, DPD_EIO, "cannot rename into '%s': %s", img, strerror(errno));
    unlink(img_tmp);
    return CLI_EXIT_IO;
  }
  return CLI_EXIT_OK;
}

/* "./NAME" for the file dir/NAME at `path` (its last component: cli_path_join and
 * cli_temp_begin put a file directly in the directory): the name gnuplot is given, run inside
 * the directory, which it cannot take for a pipe or a datablock. */
static char *dot_name(const char *path) {
  const char *slash = strrchr(path, '/'), *name = slash != NULL ? slash + 1 : path;
  size_t cap = strlen(name) + 3;
  char *out = malloc(cap);
  if (out != NULL) {
    snprintf(out, cap, "./%s", name);
  }
  return out;
}

/* Checks that data file `name` of `dir` can be drawn: a regular file with a header row, a data
 * row and a finite number. Returns CLI_EXIT_OK or CLI_EXIT_USAGE (err set). */
static int data_check(const char *dir, const char *name, dpd_err *err) {
  char *path = cli_path_join(dir, name);
  data_scan ds;
  int code = CLI_EXIT_OK;
  if (path == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    return CLI_EXIT_IO;
  }
  if (!data_file_scan(path, &ds)) {
    CLI_FAIL(err, DPD_EINVAL,
             "cannot read '%s': %s (allowed: a regular file of a dpdyn output "
             "directory)",
             path, errno == EINVAL ? "not a regular file" : strerror(errno));
    code = CLI_EXIT_USAGE;
  } else if (!ds.rows) {
    CLI_FAIL(err, DPD_EINVAL, "no data rows in '%s' (allowed: a complete dpdyn output directory)",
             path);
    code = CLI_EXIT_USAGE;
  } else if (!ds.finite) {
    CLI_FAIL(err, DPD_EINVAL,
             "no finite number in '%s' (every value is nan or inf): nothing to "
             "draw",
             path);
    code = CLI_EXIT_USAGE;
  }
  free(path);
  return code;
}

static int render(const char *dir, const char *script, const char *format, dpd_err *err) {
  const plot_script *sc = script_find(script);
  const char *text = sc != NULL ? sc->text : NULL;
  char *data = NULL, *release = NULL, *img_tmp = NULL, *img = NULL, *hm = NULL;
  char *arg_tmp = NULL, *arg_release = NULL;
  char gp_name[64], img_name[64], title[512], caption[2048];
  char named[64], first[128], second[128], arg_first[132];
  int code = CLI_EXIT_OK;
  if (text == NULL || sc->second == NULL) {
    CLI_FAIL(err, DPD_EINVAL,
             "no figure '%.64s' (allowed: compare, compare3, simulate, sde, ode, tune, "
             "rf_simulate, rf_ou, rf_compare)",
             script);
    return CLI_EXIT_USAGE;
  }
  snprintf(gp_name, sizeof gp_name, "%s.gp", script);
  snprintf(img_name, sizeof img_name, "%s.%s", script, format);
  snprintf(named, sizeof named, "%s", script);
  if (!summary_figure(dir, named, sizeof named, first, second, sizeof first)) {
    snprintf(first, sizeof first, "trajectory.tsv");
    snprintf(second, sizeof second, "%s", sc->second);
  }
  data = cli_path_join(dir, first);
  release = cli_path_join(dir, second);
  img = cli_path_join(dir, img_name);
  hm = cli_path_join(dir, "heatmap.tsv");
  arg_release = release != NULL ? dot_name(release) : NULL;
  if (data == NULL || release == NULL || img == NULL || hm == NULL || arg_release == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_IO;
    goto done;
  }
  if ((code = data_check(dir, first, err)) != CLI_EXIT_OK ||
      (code = data_check(dir, second, err)) != CLI_EXIT_OK) {
    goto done;
  }
  if (cli_write_in_place(dir, gp_name, text, err) < 0) {
    code = CLI_EXIT_IO;
    goto done;
  }
  img_tmp = cli_temp_begin(dir, img_name);
  arg_tmp = img_tmp != NULL ? dot_name(img_tmp) : NULL;
  if (arg_tmp == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_IO;
    goto done;
  }
  read_title(data, script, title, sizeof title, caption, sizeof caption);
  snprintf(arg_first, sizeof arg_first, "./%s", first);
  {
    /* tune draws its heat map when the directory has one (a regular file) */
    int with_hm = strcmp(script, "tune") == 0 && is_regular(hm);
    char *args[] = {
        arg_first, arg_release, arg_tmp, (char *)format, title, caption, (char *)"./heatmap.tsv"};
    code = run_gnuplot(dir, text, args, with_hm ? 7 : 6, img_tmp, img, err);
  }
done:
  cli_temp_end(img_tmp);
  free(arg_tmp);
  free(arg_release);
  free(data);
  free(release);
  free(img);
  free(hm);
  return code;
}

int cli_plot_render(const char *dir, const char *script, dpd_err *err) {
  return render(dir, script, "png", err);
}

int cli_plot_script(const char *dir, const char *script, const char *preamble, const char *data,
                    const char *format, dpd_err *err) {
  const plot_script *sc = script_find(script);
  char gp_name[64], img_name[64];
  char *img = NULL, *img_tmp = NULL, *text = NULL, *arg_data = NULL, *arg_tmp = NULL;
  int code = CLI_EXIT_OK;
  if (sc == NULL) {
    CLI_FAIL(err, DPD_EINVAL, "no figure '%.64s'", script);
    return CLI_EXIT_USAGE;
  }
  snprintf(gp_name, sizeof gp_name, "%s.gp", script);
  snprintf(img_name, sizeof img_name, "%s.%s", script, format);
  img = cli_path_join(dir, img_name);
  text = malloc(strlen(preamble) + strlen(sc->text) + 1);
  arg_data = malloc(strlen(data) + 3);
  if (img == NULL || text == NULL || arg_data == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_IO;
    goto done;
  }
  snprintf(arg_data, strlen(data) + 3, "./%s", data);
  strcpy(text, preamble);
  strcat(text, sc->text);
  if ((code = data_check(dir, data, err)) != CLI_EXIT_OK) {
    goto done;
  }
  if (cli_write_in_place(dir, gp_name, text, err) < 0) {
    code = CLI_EXIT_IO;
    goto done;
  }
  if ((img_tmp = cli_temp_begin(dir, img_name)) == NULL || (arg_tmp = dot_name(img_tmp)) == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    code = CLI_EXIT_IO;
    goto done;
  }
  {
    char *args[] = {arg_data, arg_tmp, (char *)format};
    code = run_gnuplot(dir, text, args, 3, img_tmp, img, err);
  }
done:
  cli_temp_end(img_tmp);
  free(arg_tmp);
  free(arg_data);
  free(img);
  free(text);
  return code;
}

/* ---- the settings of a sweep's figure, read as data ----
 * dpdyn sweep writes them above the embedded script in sweep_line.gp / sweep_heat.gp: lines
 * `NAME = 12`, `NAME = "text"` (cli_gp_string) and `array NAME[K] = [v, ...]`, then the line
 * "# ---- the script". dpdyn plot reads only these values (known names, integers and strings),
 * writes them again through cli_gp_string and renders with the embedded script: whatever else
 * the file holds is never run. */

static const char *const sweep_line_keys[] = {"title_text", "xkey",  "xname", "xstring", "logx",
                                              "ykey",       "yname", "sekey", "logy",    NULL};
static const char *const sweep_heat_keys[] = {
    "title_text", "xname", "nx",    "xtic_label", "xtic_at", "yname",  "ny", "ytic_label",
    "ytic_at",    "zkey",  "zname", "sekey",      "logz",    "labels", NULL};
/* the settings of sweeps written before the columns were named (column numbers) */
static const char *const sweep_line_keys_v1[] = {"title_text", "xcol",  "xname", "xstring", "logx",
                                                 "ycol",       "yname", "secol", "logy",    NULL};
static const char *const sweep_heat_keys_v1[] = {
    "title_text", "xname",   "nx",   "xtic_label", "xtic_at", "yname",  "ny",
    "ytic_label", "ytic_at", "zcol", "zname",      "logz",    "labels", NULL};

/* A gnuplot string literal at *p ("..." with \ooo, \\, \", \n, \t escapes; or '...' with ''
 * for a quote) decoded into `out` (cap bytes). Advances *p. 0 on anything else. */
static int setting_string(const char **p, char *out, size_t cap) {
  const char *s = *p;
  char quote = *s++;
  size_t n = 0;
  if (quote != '"' && quote != '\'') {
    return 0;
  }
  for (;;) {
    unsigned char c = (unsigned char)*s++;
    if (c == '\0' || c == '\n' || n + 1 >= cap) {
      return 0;
    }
    if (c == (unsigned char)quote && !(quote == '\'' && *s == '\'')) {
      break;
    }
    if (quote == '\'' && c == '\'') {
      s++; /* '' is one quote */
    } else if (quote == '"' && c == '\\') {
      if (*s >= '0' && *s <= '7') {
        unsigned v = 0;
        for (int k = 0; k < 3 && *s >= '0' && *s <= '7'; k++) {
          v = v * 8 + (unsigned)(*s++ - '0');
        }
        if (v == 0 || v > 255) {
          return 0;
        }
        c = (unsigned char)v;
      } else if (*s == '\\' || *s == '"') {
        c = (unsigned char)*s++;
      } else if (*s == 'n' || *s == 't') {
        c = *s++ == 'n' ? '\n' : '\t';
      } else {
        return 0;
      }
    }
    out[n++] = (char)c;
  }
  out[n] = '\0';
  *p = s;
  return 1;
}

/* A non-negative integer (at most 9 digits) at *p. Advances *p. 0 on anything else. */
static int setting_number(const char **p, unsigned long *v) {
  const char *s = *p;
  size_t n = strspn(s, "0123456789");
  if (n == 0 || n > 9) {
    return 0;
  }
  *v = strtoul(s, NULL, 10);
  *p = s + n;
  return 1;
}

/* Whether `name` is one of `keys`. */
static int setting_known(const char *const *keys, const char *name) {
  for (size_t k = 0; keys[k] != NULL; k++) {
    if (strcmp(keys[k], name) == 0) {
      return 1;
    }
  }
  return 0;
}

/* One setting's value at *p (an integer, a string, or for an array a list [v, ...] of `count`
 * of one kind), written to `f` as dpdyn writes it. 0 when it is none of these. */
static int setting_value(const char **p, FILE *f, int array, unsigned long count) {
  char text[4096];
  const char *s = *p;
  unsigned long v, k = 0;
  int strings = -1;
  if (!array) {
    if (setting_number(&s, &v)) {
      fprintf(f, "%lu", v);
    } else if (setting_string(&s, text, sizeof text)) {
      cli_gp_string_write(f, text);
    } else {
      return 0;
    }
    *p = s;
    return 1;
  }
  if (*s++ != '[') {
    return 0;
  }
  fputc('[', f);
  while (*s != ']') {
    int is_string;
    s += k > 0 ? strspn(s, " ") : 0;
    if (k > 0 && *s++ != ',') {
      return 0;
    }
    s += strspn(s, " ");
    is_string = *s == '"' || *s == '\'';
    if ((strings >= 0 && is_string != strings) || k >= count) {
      return 0;
    }
    strings = is_string;
    fputs(k > 0 ? ", " : "", f);
    if (is_string ? !setting_string(&s, text, sizeof text) : !setting_number(&s, &v)) {
      return 0;
    }
    if (is_string) {
      cli_gp_string_write(f, text);
    } else {
      fprintf(f, "%lu", v);
    }
    k++;
    s += strspn(s, " ");
  }
  fputc(']', f);
  *p = s + 1;
  return k == count;
}

/* The settings of the figure in `text` (the file's lines above "# ---- the script"), checked
 * and written again as a preamble (free it); NULL when a line is not a setting of the figure or
 * one is missing. */
static char *sweep_settings(const char *text, const char *figure, const char *const *keys) {
  char *out = NULL, seen[16] = {0};
  size_t len = 0, nkeys = 0;
  FILE *f = open_memstream(&out, &len);
  const char *line = text;
  int ok = f != NULL, done = 0;
  while (keys[nkeys] != NULL) {
    nkeys++;
  }
  if (f != NULL) {
    fprintf(f,
            "# settings of this figure (dpdyn sweep); usage: gnuplot -c %s.gp sweep.tsv %s.png "
            "[png|svg|pdf]\n",
            figure, figure);
  }
  while (ok && !done && *line != '\0') {
    const char *s = line, *eol = strchr(line, '\n');
    char name[32];
    size_t n;
    int array = 0;
    unsigned long count = 0;
    if (strncmp(s, "# ---- the script", 17) == 0) {
      done = 1;
      break;
    }
    if (*s == '#' || *s == '\n') {
      line = eol != NULL ? eol + 1 : s + strlen(s);
      continue;
    }
    if (strncmp(s, "array ", 6) == 0) {
      array = 1;
      s += 6;
    }
    n = strspn(s, "abcdefghijklmnopqrstuvwxyz_");
    if (n == 0 || n >= sizeof name) {
      ok = 0;
      break;
    }
    memcpy(name, s, n);
    name[n] = '\0';
    s += n;
    if (array && (*s++ != '[' || !setting_number(&s, &count) || *s++ != ']' || count == 0)) {
      ok = 0;
      break;
    }
    ok = setting_known(keys, name) && strncmp(s, " = ", 3) == 0 &&
         (strstr(name, "tic_") != NULL) == array;
    for (size_t k = 0; ok && k < nkeys; k++) {
      if (strcmp(keys[k], name) == 0) {
        ok = !seen[k];
        seen[k] = 1;
      }
    }
    if (!ok) {
      break;
    }
    s += 3;
    if (array) {
      fprintf(f, "array %s[%lu] = ", name, count);
    } else {
      fprintf(f, "%s = ", name);
    }
    ok = setting_value(&s, f, array, count) && (*s == '\n' || *s == '\0');
    fputc('\n', f);
    line = *s == '\n' ? s + 1 : s;
  }
  for (size_t k = 0; ok && k < nkeys; k++) {
    ok = seen[k];
  }
  if (f != NULL) {
    fprintf(f, "# ---- the script (plots/%s.gp) ----\n", figure);
  }
  if (f != NULL && fclose(f) != 0) {
    ok = 0;
  }
  if (!ok || !done) {
    free(out);
    return NULL;
  }
  return out;
}

/* A sweep directory (sweep.tsv, and the figure script dpdyn sweep wrote: its settings, then the
 * embedded script): the figure rendered again in `format` with the embedded script and the
 * settings read as data. 0 when `dir` has no sweep figure script. */
static int plot_sweep(const char *dir, const char *format, int *code, dpd_err *err) {
  static const char *const figures[] = {"sweep_line", "sweep_heat", NULL};
  static const char *const *const keys[] = {sweep_line_keys, sweep_heat_keys};
  static const char *const *const keys_v1[] = {sweep_line_keys_v1, sweep_heat_keys_v1};
  for (size_t k = 0; figures[k] != NULL; k++) {
    char name[64], *path, *text = NULL, *preamble;
    FILE *f;
    size_t len;
    snprintf(name, sizeof name, "%s.gp", figures[k]);
    if ((path = cli_path_join(dir, name)) == NULL) {
      CLI_FAIL(err, DPD_ENOMEM, "out of memory");
      *code = CLI_EXIT_IO;
      return 1;
    }
    f = open_regular(path);
    if (f == NULL && errno == ENOENT) {
      free(path);
      continue;
    }
    free(path);
    if (f != NULL && (text = malloc((size_t)1 << 20)) != NULL) {
      len = fread(text, 1, ((size_t)1 << 20) - 1, f);
      text[len] = '\0';
      if (strlen(text) != len) { /* a NUL byte: not a script dpdyn wrote */
        free(text);
        text = NULL;
      }
    }
    if (f != NULL) {
      fclose(f);
    }
    preamble = text != NULL ? sweep_settings(text, figures[k], keys[k]) : NULL;
    if (text != NULL && preamble == NULL) {
      preamble = sweep_settings(text, figures[k], keys_v1[k]);
    }
    free(text);
    if (preamble == NULL) {
      CLI_FAIL(err, DPD_EINVAL,
               "'%s/%s' does not hold the settings of a figure written by dpdyn sweep (rerun "
               "the sweep to write them again)",
               dir, name);
      *code = CLI_EXIT_USAGE;
      return 1;
    }
    *code = cli_plot_script(dir, figures[k], preamble, "sweep.tsv", format, err);
    free(preamble);
    return 1;
  }
  return 0;
}

/* The image formats of the figures: png (pngcairo), svg, pdf (pdfcairo). */
int cli_plot_format_check(const char *format, dpd_err *err) {
  if (strcmp(format, "png") != 0 && strcmp(format, "svg") != 0 && strcmp(format, "pdf") != 0) {
    return CLI_FAIL(err, DPD_EINVAL, "invalid value for 'format': '%s' (allowed: png, svg, pdf)",
                    format);
  }
  return DPD_OK;
}

/* dpdyn plot DIR [--format=png|svg|pdf] */
int cli_cmd_plot(int argc, char **argv, dpd_err *err) {
  const char *dir = NULL, *format = "png";
  char *data;
  char line[320], script[320] = "";
  size_t lines = 0;
  FILE *f;
  for (int i = 0; i < argc; i++) {
    if (strncmp(argv[i], "--format=", 9) == 0) {
      format = argv[i] + 9;
    } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
      format = argv[++i];
    } else if (argv[i][0] == '-') {
      CLI_FAIL(err, DPD_EINVAL, "unknown option '%s' (allowed: --format=png|svg|pdf)", argv[i]);
      return CLI_EXIT_USAGE;
    } else if (dir == NULL) {
      dir = argv[i];
    } else {
      CLI_FAIL(err, DPD_EINVAL, "unexpected argument '%s' (allowed: one output directory)",
               argv[i]);
      return CLI_EXIT_USAGE;
    }
  }
  if (dir == NULL) {
    CLI_FAIL(err, DPD_EINVAL,
             "missing output directory (usage: dpdyn plot DIR [--format=png|svg|pdf])");
    return CLI_EXIT_USAGE;
  }
  if (cli_plot_format_check(format, err) < 0) {
    return CLI_EXIT_USAGE;
  }
  if ((data = cli_path_join(dir, "trajectory.tsv")) == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    return CLI_EXIT_IO;
  }
  f = open_regular(data);
  free(data);
  if (f == NULL) {
    int code, missing = errno == ENOENT;
    if (missing && plot_sweep(dir, format, &code, err)) {
      return code;
    }
    char first[128], second[128];
    if (missing && summary_figure(dir, script, sizeof script, first, second, sizeof first)) {
      return render(dir, script, format, err);
    }
    if (missing) {
      char *tsv = cli_path_join(dir, "sweep.tsv");
      struct stat st;
      const int sweep_dir = tsv != NULL && stat(tsv, &st) == 0 && S_ISREG(st.st_mode);
      free(tsv);
      if (sweep_dir) {
        CLI_FAIL(err, DPD_EINVAL,
                 "'%s' is a sweep without a figure (a figure needs one or two varied keys and a "
                 "plot_y with a finite value at some point; its summary.json says why under "
                 "not_available)",
                 dir);
        return CLI_EXIT_USAGE;
      }
    }
    char *summary = cli_path_join(dir, "summary.json");
    const int has_summary = missing && summary != NULL && is_regular(summary);
    free(summary);
    if (has_summary) {
      CLI_FAIL(err, DPD_EINVAL,
               "'%s' has no figure: its summary.json names none and there is no trajectory.tsv "
               "(a run with nothing to draw, e.g. account)",
               dir);
      return CLI_EXIT_USAGE;
    }
    CLI_FAIL(err, DPD_EINVAL,
             "cannot read '%s/trajectory.tsv': %s (allowed: a dpdyn output "
             "directory)",
             dir, missing ? "no such file" : "not a regular file");
    return CLI_EXIT_USAGE;
  }
  /* The figure named in the header; older files only name their command. */
  while (lines++ < 4096 && fgets(line, sizeof line, f) != NULL && line[0] == '#') {
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
    CLI_FAIL(err, DPD_EINVAL, "'%s/trajectory.tsv' has no '# figure:' or '# command:' header line",
             dir);
    return CLI_EXIT_USAGE;
  }
  return render(dir, script, format, err);
}
