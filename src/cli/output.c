/* Output directory: one run's files published as one unit, data-file headers, JSON helpers.
 * SPDX-License-Identifier: MIT
 *
 * A run writes every file (data, summary, figure) into a hidden staging directory beside the
 * output directory, `.<out>.dpdyn-<pid>-XXXXXX`, and publishes it with one atomic exchange of
 * the two directories (renameat2 RENAME_EXCHANGE; a plain rename when `out` does not exist yet),
 * then removes the previous result. Whatever kills the process, `out` holds the complete old
 * result or the complete new one, never a mix:
 *   - SIGINT, SIGTERM, SIGHUP: the handler removes the staging files it knows of (a fixed
 *     registry: an async-signal-safe handler cannot walk a directory), prints one line and exits
 *     with 128 + the signal number (130, 143, 129); the exchange itself runs with these signals
 *     blocked;
 *   - SIGKILL: the staging directory stays; the next run into the same parent directory removes
 *     every staging directory whose process is gone.
 * An existing `out` is replaced only if it holds dpdyn output and nothing else (checked while
 * validating, before any work), so a mistyped --out=. or --out=$HOME is an input error, not a
 * deleted directory. The directory is created only at the first write, after all input has
 * been validated.
 *
 * The registry and the handler are the one place of the CLI with mutable globals: a signal
 * handler takes no argument. */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- signal-time cleanup registry ---- */

enum { REG_MAX = 64 };
static char reg_paths[REG_MAX][PATH_MAX];
static volatile sig_atomic_t reg_used[REG_MAX];
static char reg_stage[PATH_MAX];
static volatile sig_atomic_t reg_stage_set;
static volatile sig_atomic_t reg_child;
static volatile sig_atomic_t reg_published; /* the new result is in place */
static pid_t main_tid;                      /* the thread that publishes */
static mode_t process_umask = 022;          /* read once at start-up (umask() sets it too) */

static pid_t thread_id(void) {
  return (pid_t)syscall(SYS_gettid);
}

static void reg_add_path(const char *path) {
  for (int i = 0; i < REG_MAX; i++) {
    if (!reg_used[i]) {
      snprintf(reg_paths[i], sizeof reg_paths[i], "%s", path);
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
      reg_used[i] = 1;
      return;
    }
  }
}

static void reg_drop_path(const char *path) {
  for (int i = 0; i < REG_MAX; i++) {
    if (reg_used[i] && strcmp(reg_paths[i], path) == 0) {
      reg_used[i] = 0;
    }
  }
}

void cli_child_set(long pid) {
  reg_child = (sig_atomic_t)pid;
}

/* Runs on the main thread only: a worker thread (OpenMP, OpenBLAS) that receives the signal
 * hands it to the main thread, which blocks it while it publishes. */
static void on_signal(int sig) {
  static const char *const name[] = {"interrupted (SIGINT)", "terminated (SIGTERM)",
                                     "hung up (SIGHUP)"};
  static const char unchanged[] = "; the output directory is unchanged\n";
  static const char complete[] = "; the output directory holds the complete new result\n";
  const char *what = sig == SIGINT ? name[0] : sig == SIGTERM ? name[1] : name[2];
  ssize_t ignored;
  if (main_tid > 0 && thread_id() != main_tid) {
    syscall(SYS_tgkill, getpid(), main_tid, sig);
    return;
  }
  if (reg_child > 0) {
    kill((pid_t)reg_child, SIGTERM);
  }
  for (int i = 0; i < REG_MAX; i++) {
    if (reg_used[i]) {
      unlink(reg_paths[i]);
    }
  }
  if (reg_stage_set) {
    rmdir(reg_stage);
  }
  ignored = write(STDERR_FILENO, "dpdyn: ", 7);
  ignored = write(STDERR_FILENO, what, strlen(what));
  if (reg_published) {
    ignored = write(STDERR_FILENO, complete, sizeof complete - 1);
  } else {
    ignored = write(STDERR_FILENO, unchanged, sizeof unchanged - 1);
  }
  (void)ignored;
  _exit(128 + sig);
}

void cli_signals_install(void) {
  struct sigaction sa;
  main_tid = thread_id();
  process_umask = umask(022); /* umask() only reads by writing: set it back at once */
  umask(process_umask);
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGHUP);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* A write past RLIMIT_FSIZE (ulimit -f) fails with EFBIG instead of killing the process, so it
   * is reported and cleaned up like a full disk (exit 3, the staging directory removed). */
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGXFSZ, &sa, NULL);
}

void cli_signals_block(sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, old);
}

/* ---- names ---- */

char *cli_path_join(const char *dir, const char *name) {
  size_t cap = strlen(dir) + strlen(name) + 2;
  char *s = malloc(cap);
  if (s != NULL) {
    snprintf(s, cap, "%s/%s", dir, name);
  }
  return s;
}

/* parent directory and last component of `dir` (no trailing slash) */
static int split_path(const char *dir, char **parent, char **base) {
  const char *slash = strrchr(dir, '/');
  *parent = NULL;
  *base = NULL;
  if (slash == NULL) {
    *parent = strdup(".");
    *base = strdup(dir);
  } else {
    size_t plen = slash == dir ? 1 : (size_t)(slash - dir);
    *parent = strndup(dir, plen);
    *base = strdup(slash + 1);
  }
  return *parent != NULL && *base != NULL ? 0 : -1;
}

/* Whether a file name is one dpdyn writes in an output directory (or a temporary of one). */
static int is_output_name(const char *name) {
  static const char *const ext[] = {".json", ".tsv", ".png", ".svg", ".pdf", ".gp", NULL};
  if (strcmp(name, CLI_OUT_MARKER) == 0) {
    return 1;
  }
  for (size_t k = 0; ext[k] != NULL; k++) {
    const char *hit = strstr(name, ext[k]);
    if (hit != NULL && (hit[strlen(ext[k])] == '\0' || name[0] == '.')) {
      return 1;
    }
  }
  return 0;
}

/* The pid in a temporary's name "...dpdyn-<pid>-..." (0 if none). */
static long temp_pid(const char *name) {
  const char *tag = strstr(name, ".dpdyn-");
  char *end;
  long pid;
  if (tag == NULL) {
    return 0;
  }
  pid = strtol(tag + 7, &end, 10);
  return end != tag + 7 && *end == '-' && pid > 0 ? pid : 0;
}

static int process_gone(long pid) {
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes a flat directory (regular files only). */
static void remove_flat(const char *dir) {
  DIR *dp = opendir(dir);
  struct dirent *e;
  if (dp != NULL) {
    while ((e = readdir(dp)) != NULL) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
        unlinkat(dirfd(dp), e->d_name, 0);
      }
    }
    closedir(dp);
  }
  rmdir(dir);
}

/* Removes the staging directories `.<base>.dpdyn-<pid>-*` in `parent` (and, when `inside` is
 * set, the temporaries `.*.dpdyn-<pid>-*` in the directory itself) of processes that are gone:
 * what a SIGKILL left behind. */
static void remove_stale(const char *parent, const char *base, const char *inside) {
  DIR *dp = opendir(parent);
  struct dirent *e;
  size_t blen = strlen(base);
  if (dp != NULL) {
    while ((e = readdir(dp)) != NULL) {
      const char *nm = e->d_name;
      long pid;
      if (nm[0] == '.' && strncmp(nm + 1, base, blen) == 0 &&
          strncmp(nm + 1 + blen, ".dpdyn-", 7) == 0 && (pid = temp_pid(nm + blen)) > 0 &&
          process_gone(pid)) {
        char *path = cli_path_join(parent, nm);
        if (path != NULL) {
          remove_flat(path);
          free(path);
        }
      }
    }
    closedir(dp);
  }
  if (inside != NULL && (dp = opendir(inside)) != NULL) {
    while ((e = readdir(dp)) != NULL) {
      long pid = temp_pid(e->d_name);
      if (e->d_name[0] == '.' && pid > 0 && process_gone(pid)) {
        unlinkat(dirfd(dp), e->d_name, 0);
      }
    }
    closedir(dp);
  }
}

/* 0 if `dir` does not exist or may be replaced (a directory holding only dpdyn output), else an
 * input error naming 'out'. */
static int check_replaceable(const char *dir, dpd_err *err) {
  struct stat st;
  DIR *dp;
  struct dirent *e;
  if (lstat(dir, &st) != 0) {
    if (errno == ENOENT) {
      return DPD_OK;
    }
    return CLI_FAIL(err, DPD_EINVAL, "invalid value for 'out': '%s': %s", dir, strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return CLI_FAIL(err, DPD_EINVAL,
                    "invalid value for 'out': '%s' exists and is not a directory (allowed: a new "
                    "path, or a directory of dpdyn output)",
                    dir);
  }
  if ((dp = opendir(dir)) == NULL) {
    return CLI_FAIL(err, DPD_EINVAL, "invalid value for 'out': cannot read '%s': %s", dir,
                    strerror(errno));
  }
  while ((e = readdir(dp)) != NULL) {
    struct stat fs;
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
      continue;
    }
    if (fstatat(dirfd(dp), e->d_name, &fs, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(fs.st_mode) ||
        !is_output_name(e->d_name)) {
      int st_ok = fstatat(dirfd(dp), e->d_name, &fs, AT_SYMLINK_NOFOLLOW) == 0;
      CLI_FAIL(err, DPD_EINVAL,
               "invalid value for 'out': '%s' holds %s '%s' that dpdyn did not write (allowed: a "
               "new path, or a directory of dpdyn output, which a run replaces whole)",
               dir, st_ok && S_ISDIR(fs.st_mode) ? "the directory" : "the file", e->d_name);
      closedir(dp);
      return DPD_EINVAL;
    }
  }
  closedir(dp);
  return DPD_OK;
}

int cli_out_init(cli_out *o, const char *dir, dpd_err *err) {
  size_t len = strlen(dir);
  memset(o, 0, sizeof *o);
  reg_published = 0; /* a new run (dpdyn sweep runs several in one process) */
  if (len == 0) {
    return CLI_FAIL(err, DPD_EINVAL, "invalid value for 'out': '' (allowed: a directory path)");
  }
  o->dir = malloc(len + 1);
  if (o->dir == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  memcpy(o->dir, dir, len + 1);
  while (len > 1 && o->dir[len - 1] == '/') {
    o->dir[--len] = '\0';
  }
  if (strcmp(o->dir, "/") == 0 || strcmp(o->dir, ".") == 0 || strcmp(o->dir, "..") == 0 ||
      (len >= 2 && strcmp(o->dir + len - 2, "/.") == 0) ||
      (len >= 3 && strcmp(o->dir + len - 3, "/..") == 0)) {
    int status = CLI_FAIL(err, DPD_EINVAL,
                          "invalid value for 'out': '%s' (allowed: a path whose last component "
                          "names the output directory, e.g. ./dpdyn-out)",
                          dir);
    cli_out_free(o);
    return status;
  }
  if (check_replaceable(o->dir, err) < 0) {
    cli_out_free(o);
    return DPD_EINVAL;
  }
  return DPD_OK;
}

/* mkdir -p */
static int make_dirs(const char *path, dpd_err *err) {
  size_t len = strlen(path);
  char *buf = malloc(len + 1);
  struct stat st;
  if (buf == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  memcpy(buf, path, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char saved = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        int e = errno;
        free(buf);
        return CLI_FAIL(err, DPD_EIO, "cannot create directory '%s': %s", path, strerror(e));
      }
      buf[i] = saved;
    }
  }
  free(buf);
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
    return CLI_FAIL(err, DPD_EIO, "'%s' is not a directory", path);
  }
  return DPD_OK;
}

int cli_make_dirs(const char *path, dpd_err *err) {
  return make_dirs(path, err);
}

/* Creates the staging directory at the first write. */
static int stage_create(cli_out *o, dpd_err *err) {
  char *parent = NULL, *base = NULL;
  sigset_t old;
  int status = DPD_OK;
  if (o->stage != NULL) {
    return DPD_OK;
  }
  if (split_path(o->dir, &parent, &base) < 0) {
    status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    goto done;
  }
  if ((status = make_dirs(parent, err)) < 0) {
    goto done;
  }
  remove_stale(parent, base, NULL);
  {
    size_t cap = strlen(parent) + strlen(base) + 64;
    o->stage = malloc(cap);
    if (o->stage == NULL) {
      status = CLI_FAIL(err, DPD_ENOMEM, "out of memory");
      goto done;
    }
    snprintf(o->stage, cap, "%s/.%s.dpdyn-%ld-XXXXXX", parent, base, (long)getpid());
    /* creation and registration as one step for the signal handler */
    cli_signals_block(&old);
    if (mkdtemp(o->stage) == NULL) {
      sigprocmask(SIG_SETMASK, &old, NULL);
      status = CLI_FAIL(err, DPD_EIO, "cannot create a directory beside '%s': %s", o->dir,
                        strerror(errno));
      free(o->stage);
      o->stage = NULL;
      goto done;
    }
    /* mkdtemp creates mode 0700: the published directory follows the umask like mkdir */
    if (chmod(o->stage, 0777 & ~process_umask) != 0) {
      int e = errno;
      rmdir(o->stage);
      sigprocmask(SIG_SETMASK, &old, NULL);
      status = CLI_FAIL(err, DPD_EIO, "cannot set the mode of '%s': %s", o->stage, strerror(e));
      free(o->stage);
      o->stage = NULL;
      goto done;
    }
    snprintf(reg_stage, sizeof reg_stage, "%s", o->stage);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    reg_stage_set = 1;
    reg_published = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
  }
done:
  free(parent);
  free(base);
  return status;
}

const char *cli_out_stage(cli_out *o, dpd_err *err) {
  return stage_create(o, err) < 0 ? NULL : o->stage;
}

FILE *cli_out_open(cli_out *o, const char *name, char **tmp_path, dpd_err *err) {
  char *path;
  FILE *f;
  *tmp_path = NULL;
  if (stage_create(o, err) < 0) {
    return NULL;
  }
  path = cli_path_join(o->stage, name);
  if (path == NULL) {
    CLI_FAIL(err, DPD_ENOMEM, "out of memory");
    return NULL;
  }
  reg_add_path(path);
  f = fopen(path, "w");
  if (f == NULL) {
    CLI_FAIL(err, DPD_EIO, "cannot write '%s': %s", path, strerror(errno));
    free(path);
    return NULL;
  }
  *tmp_path = path;
  return f;
}

int cli_out_commit(cli_out *o, FILE *f, char *tmp_path, const char *name, dpd_err *err) {
  int failed = ferror(f);
  int e = failed ? errno : 0; /* the failed write's errno (ENOSPC, EFBIG, EIO) */
  int status = DPD_OK;
  (void)o;
  if (fflush(f) != 0 && !failed) {
    failed = 1;
    e = errno;
  }
  if (fclose(f) != 0 && !failed) {
    failed = 1;
    e = errno;
  }
  if (failed) {
    status = CLI_FAIL(err, DPD_EIO, "error writing '%s' in '%s': %s%s", name, tmp_path,
                      e != 0 ? strerror(e) : "write error",
                      e == EFBIG ? " (the file size limit, ulimit -f, was reached)" : "");
  }
  free(tmp_path);
  return status;
}

/* The staging directory is gone (published or removed): the signal handler forgets it. */
static void stage_forget(cli_out *o) {
  for (int i = 0; i < REG_MAX; i++) {
    reg_used[i] = 0;
  }
  reg_stage_set = 0;
  free(o->stage);
  o->stage = NULL;
}

/* Publishes the staging directory as o->dir (signals blocked). */
static int publish(cli_out *o, dpd_err *err) {
  sigset_t old;
  int status = DPD_OK;
  FILE *f;
  char *marker;
  if (o->stage == NULL) {
    return DPD_OK; /* nothing was written */
  }
  marker = cli_path_join(o->stage, CLI_OUT_MARKER);
  if (marker == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  reg_add_path(marker);
  if ((f = fopen(marker, "w")) == NULL) {
    status = CLI_FAIL(err, DPD_EIO, "cannot write '%s': %s", marker, strerror(errno));
    free(marker);
    return status;
  }
  fprintf(f, "dpdyn %s output, written by process %ld\n", dpd_version(), (long)getpid());
  if (fclose(f) != 0) {
    status = CLI_FAIL(err, DPD_EIO, "error writing '%s'", marker);
    free(marker);
    return status;
  }
  free(marker);
  cli_signals_block(&old);
  if ((status = check_replaceable(o->dir, err)) < 0) {
    sigprocmask(SIG_SETMASK, &old, NULL);
    return DPD_EIO; /* something not ours appeared in `out` while the run went on */
  }
  if (rename(o->stage, o->dir) == 0) {
    /* `out` did not exist (or was an empty directory) */
  } else if (renameat2(AT_FDCWD, o->stage, AT_FDCWD, o->dir, RENAME_EXCHANGE) == 0) {
    remove_flat(o->stage); /* the previous result */
  } else {
    status = CLI_FAIL(err, DPD_EIO, "cannot publish the run as '%s': %s", o->dir, strerror(errno));
  }
  if (status == DPD_OK) {
    stage_forget(o);
    reg_published = 1;
    o->published = 1;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return status;
}

void cli_out_expect(cli_out *o, const char *name) {
  char *path;
  if (o->stage != NULL && (path = cli_path_join(o->stage, name)) != NULL) {
    reg_add_path(path);
    free(path);
  }
}

int cli_out_publish(cli_out *o, dpd_err *err) {
  return publish(o, err);
}

void cli_out_free(cli_out *o) {
  if (o->stage != NULL) { /* not published: the previous result stays */
    remove_flat(o->stage);
    stage_forget(o);
  }
  free(o->dir);
  memset(o, 0, sizeof *o);
}

char *cli_temp_begin(const char *dir, const char *name) {
  size_t cap = strlen(dir) + strlen(name) + 64;
  char *path = malloc(cap);
  char *parent = NULL, *base = NULL;
  if (path == NULL) {
    return NULL;
  }
  if (split_path(dir, &parent, &base) == 0) {
    remove_stale(parent, base, dir);
  }
  free(parent);
  free(base);
  snprintf(path, cap, "%s/.%s.dpdyn-%ld-tmp", dir, name, (long)getpid());
  reg_add_path(path);
  return path;
}

void cli_temp_end(char *path) {
  if (path != NULL) {
    reg_drop_path(path);
    free(path);
  }
}

int cli_out_json(cli_out *o, const char *name, const cJSON *obj, dpd_err *err) {
  char *tmp;
  char *text = dpd_io_json_print(obj);
  FILE *f;
  if (text == NULL) {
    return CLI_FAIL(err, DPD_ENOMEM, "out of memory printing JSON");
  }
  f = cli_out_open(o, name, &tmp, err);
  if (f == NULL) {
    free(text);
    return err != NULL ? err->status : DPD_EIO;
  }
  fputs(text, f);
  fputc('\n', f);
  free(text);
  return cli_out_commit(o, f, tmp, name, err);
}

int cli_exit_code(int status) {
  if (status == DPD_EIO) {
    return CLI_EXIT_IO;
  }
  if (status == DPD_EINVAL) {
    return CLI_EXIT_USAGE;
  }
  return CLI_EXIT_NUMERIC;
}

void cli_print_summary(const cJSON *root) {
  const cJSON *item;
  cJSON_ArrayForEach(item, root) {
    if (cJSON_IsNumber(item) && strcmp(item->string, "seed") != 0) {
      printf("%-32s %.10g\n", item->string, item->valuedouble);
    } else if (cJSON_IsString(item) && strcmp(item->string, "version") != 0) {
      printf("%-32s %s\n", item->string, item->valuestring);
    } else if (cJSON_IsNull(item)) {
      printf("%-32s n/a\n", item->string);
    }
  }
}

void cli_json_na(cJSON *obj, const char *key, const char *reason) {
  dpd_io_json_na_set(obj, key, reason);
}

void cli_json_number(cJSON *obj, const char *key, double v) {
  dpd_io_json_number_set(obj, key, v);
}
