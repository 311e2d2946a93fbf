/* Bounded reader of NumPy .npy files: npy_impl.h.
 * SPDX-License-Identifier: MIT
 *
 * Reference: the .npy format of numpy/lib/format.py (NEP 1). The header dict is parsed by a
 * small tokenizer (strings, True/False, tuples of decimal integers); nothing of it is
 * evaluated. Every size is checked for overflow and the data size against the file size before
 * any allocation, so a header cannot make the reader allocate more than the file holds. Values
 * are decoded byte by byte as little-endian, whatever the host's byte order. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error_impl.h"
#include "core/file_impl.h"
#include "core/npy_impl.h"
#include "core/table_impl.h"

#define NPY_CHUNK 65536 /* bytes read at a time */

/* ---- the header dict ---- */

typedef struct {
  const char *s, *end;
} cursor;

static void skip_space(cursor *c) {
  while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r')) {
    c->s++;
  }
}

static int take(cursor *c, char ch) {
  skip_space(c);
  if (c->s < c->end && *c->s == ch) {
    c->s++;
    return 1;
  }
  return 0;
}

/* A quoted string into buf (cap bytes); 0 when malformed or too long. */
static int take_string(cursor *c, char *buf, size_t cap) {
  char q;
  size_t len = 0;
  skip_space(c);
  if (c->s >= c->end || (*c->s != '\'' && *c->s != '"')) {
    return 0;
  }
  q = *c->s++;
  while (c->s < c->end && *c->s != q) {
    if (len + 1 >= cap) {
      return 0;
    }
    buf[len++] = *c->s++;
  }
  if (c->s >= c->end) {
    return 0;
  }
  c->s++;
  buf[len] = '\0';
  return 1;
}

static int take_word(cursor *c, const char *word) {
  size_t len = strlen(word);
  skip_space(c);
  if ((size_t)(c->end - c->s) >= len && memcmp(c->s, word, len) == 0) {
    c->s += len;
    return 1;
  }
  return 0;
}

/* A non-negative decimal integer (an old 'L' suffix allowed) that fits in size_t. */
static int take_size(cursor *c, size_t *out) {
  size_t v = 0;
  int digits = 0;
  skip_space(c);
  while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
    size_t d = (size_t)(*c->s - '0');
    if (v > (SIZE_MAX - d) / 10) {
      return 0;
    }
    v = 10 * v + d;
    c->s++;
    digits++;
  }
  if (digits == 0) {
    return 0;
  }
  if (c->s < c->end && *c->s == 'L') {
    c->s++;
  }
  *out = v;
  return 1;
}

static int bad_header(dpd_err *err, const char *key, const char *path, const char *what) {
  return DPD_FAIL(err, DPD_EINVAL,
                  "invalid value for '%s': '%s' is not a valid .npy file: %s (allowed: a 1-D or "
                  "2-D array saved by numpy.save)",
                  key, path, what);
}

/* A dtype string: byte order ('<', '|', or '>' for one byte), kind, size in bytes. */
static int dtype_parse(const char *descr, char *kind, size_t *size) {
  const char order = descr[0];
  if (order == '\0' || descr[1] == '\0' || descr[2] == '\0' || descr[3] != '\0') {
    return 0;
  }
  *kind = descr[1];
  *size = (size_t)(descr[2] - '0');
  if (!(order == '<' || order == '|' || (order == '>' && *size == 1))) {
    return 0;
  }
  return (*kind == 'f' && (*size == 8 || *size == 4)) ||
         ((*kind == 'i' || *kind == 'u') &&
          (*size == 8 || *size == 4 || *size == 2 || *size == 1)) ||
         (*kind == 'b' && *size == 1);
}

/* Parses the dict; fills ndim, rows, cols, itemsize, kind, fortran_order. */
static int parse_dict(const char *key, const char *path, const char *text, size_t len,
                      dpd__npy_info *info, dpd_err *err) {
  cursor c = {text, text + len};
  char name[32], descr[32];
  int have_descr = 0, have_order = 0, have_shape = 0;
  size_t shape[3] = {0, 0, 0}, ndim = 0;
  if (!take(&c, '{')) {
    return bad_header(err, key, path, "the header is not a dict");
  }
  for (;;) {
    if (take(&c, '}')) {
      break;
    }
    if (!take_string(&c, name, sizeof name) || !take(&c, ':')) {
      return bad_header(err, key, path, "malformed header dict");
    }
    if (strcmp(name, "descr") == 0) {
      if (!take_string(&c, descr, sizeof descr)) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' has a structured or unreadable dtype "
                        "(allowed: a plain numeric dtype, e.g. '<f8', '<f4', '<i8', '|u1')",
                        key, path);
      }
      have_descr = 1;
    } else if (strcmp(name, "fortran_order") == 0) {
      if (take_word(&c, "True")) {
        info->fortran_order = 1;
      } else if (take_word(&c, "False")) {
        info->fortran_order = 0;
      } else {
        return bad_header(err, key, path, "fortran_order is neither True nor False");
      }
      have_order = 1;
    } else if (strcmp(name, "shape") == 0) {
      if (!take(&c, '(')) {
        return bad_header(err, key, path, "shape is not a tuple");
      }
      ndim = 0;
      while (!take(&c, ')')) {
        size_t v;
        if (ndim == 3 || !take_size(&c, &v)) {
          return ndim == 3 ? DPD_FAIL(err, DPD_EINVAL,
                                      "invalid value for '%s': '%s' holds an array of more than "
                                      "3 dimensions (allowed: 1-D or 2-D)",
                                      key, path)
                           : bad_header(err, key, path, "malformed shape");
        }
        shape[ndim++] = v;
        if (!take(&c, ',')) {
          if (!take(&c, ')')) {
            return bad_header(err, key, path, "malformed shape");
          }
          break;
        }
      }
      if (ndim > 2) {
        return DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' holds an array of %zu dimensions (allowed: "
                        "1-D or 2-D)",
                        key, path, ndim);
      }
      have_shape = 1;
    } else {
      return bad_header(err, key, path, "unknown key in the header dict");
    }
    if (!take(&c, ',')) {
      if (!take(&c, '}')) {
        return bad_header(err, key, path, "malformed header dict");
      }
      break;
    }
  }
  skip_space(&c);
  if (c.s != c.end) {
    return bad_header(err, key, path, "text after the header dict");
  }
  if (!have_descr || !have_order || !have_shape) {
    return bad_header(err, key, path, "the header lacks descr, fortran_order or shape");
  }
  /* dtype: byte order, kind, size */
  if (descr[0] == '>' && descr[1] != '\0' && strcmp(descr + 2, "1") != 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' is big-endian (dtype '%s') (allowed: "
                    "little-endian; save it with arr.astype('<f8'))",
                    key, path, descr);
  }
  if (!dtype_parse(descr, &info->kind, &info->itemsize)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' has dtype '%s' (allowed: little-endian f8, "
                    "f4, i8, i4, i2, i1, u8, u4, u2, u1 or b1)",
                    key, path, descr);
  }
  if (ndim == 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' holds a 0-D array (a scalar) (allowed: 1-D or "
                    "2-D)",
                    key, path);
  }
  info->ndim = ndim;
  info->rows = shape[0];
  info->cols = ndim == 2 ? shape[1] : 1;
  return DPD_OK;
}

int dpd__npy_header(const char *key, const char *path, dpd__npy_info *info, dpd_err *err) {
  unsigned char pre[12];
  char *text = NULL;
  size_t hlen, prelen, nelem, data_bytes;
  unsigned long long file_size = 0;
  FILE *f;
  int status = DPD_OK;
  memset(info, 0, sizeof *info);
  if ((status = dpd__file_open_regular(key, 1, path, DPD_MAX_DATA_BYTES, &f, &file_size, err)) <
      0) {
    return status;
  }
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
    fclose(f);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' does not start with the .npy magic \\x93NUMPY "
                    "(allowed: a file written by numpy.save; other files need a name that does "
                    "not end in .npy)",
                    key, path);
  }
  if (pre[6] == 1 && pre[7] == 0) {
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    prelen = 10;
  } else if ((pre[6] == 2 || pre[6] == 3) && pre[7] == 0) {
    if (fread(pre + 10, 1, 2, f) != 2) {
      fclose(f);
      return bad_header(err, key, path, "truncated header");
    }
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    prelen = 12;
  } else {
    fclose(f);
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' is .npy version %d.%d (allowed: 1.0, 2.0, 3.0)",
                    key, path, pre[6], pre[7]);
  }
  if (hlen > DPD_NPY_MAX_HEADER) {
    fclose(f);
    return bad_header(err, key, path, "the header is longer than 65536 bytes");
  }
  text = malloc(hlen + 1);
  if (text == NULL) {
    fclose(f);
    return DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s'", path);
  }
  if (fread(text, 1, hlen, f) != hlen) {
    status = bad_header(err, key, path, "truncated header");
  } else if (memchr(text, '\0', hlen) != NULL) {
    status = bad_header(err, key, path, "a NUL byte in the header");
  } else {
    text[hlen] = '\0';
    status = parse_dict(key, path, text, hlen, info, err);
  }
  free(text);
  fclose(f);
  if (status < 0) {
    return status;
  }
  info->data_offset = prelen + hlen;
  if (info->rows == 0 || info->cols == 0) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' holds an empty array (shape %zu x %zu) "
                    "(allowed: at least one element)",
                    key, path, info->rows, info->cols);
  }
  if (info->rows > SIZE_MAX / info->cols ||
      (nelem = info->rows * info->cols) > SIZE_MAX / info->itemsize ||
      (data_bytes = nelem * info->itemsize) > SIZE_MAX - info->data_offset) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' declares shape %zu x %zu, larger than any file "
                    "(allowed: the shape of the data the file holds)",
                    key, path, info->rows, info->cols);
  }
  if (file_size != (unsigned long long)(info->data_offset + data_bytes)) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' declares shape %zu x %zu of %zu-byte values "
                    "(%zu data bytes) but holds %lld bytes after its %zu-byte header (%s; "
                    "allowed: exactly the declared data)",
                    key, path, info->rows, info->cols, info->itemsize, data_bytes,
                    (long long)file_size - (long long)info->data_offset, info->data_offset,
                    file_size < info->data_offset + data_bytes
                        ? "the file is truncated"
                        : "trailing bytes");
  }
  return DPD_OK;
}

/* ---- the data ---- */

static double decode(const unsigned char *b, char kind, size_t size) {
  uint64_t u = 0;
  for (size_t k = 0; k < size; k++) {
    u |= (uint64_t)b[k] << (8 * k);
  }
  if (kind == 'f') {
    if (size == 8) {
      double d;
      memcpy(&d, &u, sizeof d);
      return d;
    } else {
      uint32_t u32 = (uint32_t)u;
      float fl;
      memcpy(&fl, &u32, sizeof fl);
      return (double)fl;
    }
  }
  if (kind == 'i' && size < 8 && (u >> (8 * size - 1)) != 0) {
    u |= ~(uint64_t)0 << (8 * size); /* sign extension */
  }
  if (kind == 'i') {
    int64_t v;
    memcpy(&v, &u, sizeof v);
    return (double)v;
  }
  return (double)u; /* u and b */
}

int dpd__read_npy(const char *key, const char *path, size_t max_bytes, double **data,
                  dpd__npy_info *info, dpd_err *err) {
  unsigned char *buf = NULL;
  double *out = NULL;
  size_t nelem, done = 0;
  FILE *f = NULL;
  int status;
  *data = NULL;
  if ((status = dpd__npy_header(key, path, info, err)) < 0) {
    return status;
  }
  nelem = info->rows * info->cols; /* checked by the header */
  if (max_bytes != 0 && nelem > max_bytes / sizeof *out) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "invalid value for '%s': '%s' holds %zu x %zu values, which need %zu bytes, "
                    "more than max_memory = %zu bytes (allowed: raise max_memory)",
                    key, path, info->rows, info->cols, nelem * sizeof *out, max_bytes);
  }
  out = malloc(nelem * sizeof *out);
  buf = malloc(NPY_CHUNK);
  if (out == NULL || buf == NULL) {
    status = DPD_FAIL(err, DPD_ENOMEM, "out of memory reading '%s' (%zu values)", path, nelem);
    goto done;
  }
  if ((status = dpd__file_open_regular(key, 1, path, DPD_MAX_DATA_BYTES, &f, NULL, err)) < 0) {
    goto done;
  }
  if (fseek(f, (long)info->data_offset, SEEK_SET) != 0) {
    status = DPD_FAIL(err, DPD_EINVAL, "invalid value for '%s': cannot read '%s': %s", key, path,
                      strerror(errno));
    goto done;
  }
  while (done < nelem) {
    const size_t per = NPY_CHUNK / info->itemsize;
    const size_t want = nelem - done < per ? nelem - done : per;
    if (fread(buf, info->itemsize, want, f) != want) {
      status = DPD_FAIL(err, DPD_EINVAL,
                        "invalid value for '%s': '%s' ended after %zu of %zu values (the file "
                        "is truncated or changed while read)",
                        key, path, done, nelem);
      goto done;
    }
    for (size_t m = 0; m < want; m++) {
      const size_t e = done + m; /* element index in file order */
      const size_t at = info->fortran_order ? (e % info->rows) * info->cols + e / info->rows : e;
      out[at] = decode(buf + m * info->itemsize, info->kind, info->itemsize);
    }
    done += want;
  }
  status = DPD_OK;
done:
  if (f != NULL) {
    fclose(f);
  }
  free(buf);
  if (status < 0) {
    free(out);
    return status;
  }
  *data = out;
  return DPD_OK;
}
