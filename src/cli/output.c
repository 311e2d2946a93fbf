/* Output directory: atomic file writes, data-file headers, JSON helpers.
 * SPDX-License-Identifier: MIT
 *
 * Each file is written to a hidden temporary name in the output directory and
 * renamed into place only when complete, so a reader never sees a
 * half-written file and a failed run leaves the previous files intact. The
 * directory itself is created only at the first write, after all input has
 * been validated. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/error_impl.h"

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_out_init(cli_out *o, const char *dir, dpd_err *err) {
  size_t len = strlen(dir);
  memset(o, 0, sizeof *o);
  if (len == 0) {
    return DPD_FAIL(err, DPD_EINVAL, "invalid value for 'out': '' (allowed: a directory path)");
  }
  o->dir = malloc(len + 1);
  if (o->dir == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  memcpy(o->dir, dir, len + 1);
  while (len > 1 && o->dir[len - 1] == '/') {
    o->dir[--len] = '\0';
  }
  return DPD_OK;
}

void cli_out_free(cli_out *o) {
  free(o->dir);
  memset(o, 0, sizeof *o);
}

/* mkdir -p */
static int make_dirs(const char *path, dpd_err *err) {
  size_t len = strlen(path);
  char *buf = malloc(len + 1);
  if (buf == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  memcpy(buf, path, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char saved = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        int e = errno;
        free(buf);
        return DPD_FAIL(err, DPD_EIO, "cannot create output directory '%s': %s", path,
                        strerror(e));
      }
      buf[i] = saved;
    }
  }
  free(buf);
  {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
      return DPD_FAIL(err, DPD_EIO, "output path '%s' is not a directory", path);
    }
  }
  return DPD_OK;
}

FILE *cli_out_open(cli_out *o, const char *name, char **tmp_path, dpd_err *err) {
  size_t cap = strlen(o->dir) + strlen(name) + 32;
  char *path;
  int fd;
  FILE *f;
  *tmp_path = NULL;
  if (!o->made_dir) {
    if (make_dirs(o->dir, err) < 0) {
      return NULL;
    }
    o->made_dir = 1;
  }
  path = malloc(cap);
  if (path == NULL) {
    DPD_FAIL(err, DPD_ENOMEM, "out of memory");
    return NULL;
  }
  snprintf(path, cap, "%s/.%s.XXXXXX", o->dir, name);
  fd = mkstemp(path);
  if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
    DPD_FAIL(err, DPD_EIO, "cannot write in '%s': %s", o->dir, strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(path);
    }
    free(path);
    return NULL;
  }
  *tmp_path = path;
  return f;
}

int cli_out_commit(cli_out *o, FILE *f, char *tmp_path, const char *name, dpd_err *err) {
  size_t cap = strlen(o->dir) + strlen(name) + 2;
  char *final_path = malloc(cap);
  int failed = ferror(f);
  int status = DPD_OK;
  if (fclose(f) != 0) {
    failed = 1;
  }
  if (final_path == NULL) {
    unlink(tmp_path);
    free(tmp_path);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory");
  }
  snprintf(final_path, cap, "%s/%s", o->dir, name);
  if (failed) {
    status = DPD_FAIL(err, DPD_EIO, "error writing '%s'", final_path);
    unlink(tmp_path);
  } else {
    chmod(tmp_path, 0644);
    if (rename(tmp_path, final_path) != 0) {
      status = DPD_FAIL(err, DPD_EIO, "cannot rename into '%s': %s", final_path, strerror(errno));
      unlink(tmp_path);
    }
  }
  free(final_path);
  free(tmp_path);
  return status;
}

int cli_out_json(cli_out *o, const char *name, const cJSON *obj, dpd_err *err) {
  char *tmp;
  char *text = cJSON_Print(obj);
  FILE *f;
  if (text == NULL) {
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory printing JSON");
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
    }
  }
}

void cli_json_number(cJSON *obj, const char *key, double v) {
  if (isfinite(v)) {
    cJSON_AddNumberToObject(obj, key, v);
  } else {
    cJSON_AddStringToObject(obj, key, isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
  }
}

void cli_write_header(FILE *f, const cli_params *p, const char *figure, const char *columns) {
  fprintf(f, "# dpdyn %s\n", dpd_version());
  fprintf(f, "# command: %s\n", p->command);
  fprintf(f, "# figure: %s\n", figure);
  cli_params_to_header(p, f);
  fprintf(f, "# columns: %s\n", columns);
}
