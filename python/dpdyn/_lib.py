"""The C library, loaded with cffi in ABI mode (no compiler, no headers at run time).

Where the library comes from, first match wins:
  1. the environment variable DPDYN_LIBRARY (a path to libdpdyn.so);
  2. the build tree this package sits in: <repo>/build/libdpdyn.so (python/dpdyn/ -> <repo>);
  3. the system loader (an installed prefix: libdpdyn.so.0 on the loader's path, LD_LIBRARY_PATH
     included).
The declarations below mirror include/dpdyn/{status,keys,model}.h (the structs' layouts must
match them exactly: only the fields' types and order matter to ABI mode).
"""
import os
import threading

from cffi import FFI

CDEF = """
typedef struct { int status; const char *file; int line; char reason[512]; } dpd_err;
const char *dpd_version(void);
int dpd_isa_get(void);
int dpd_isa_best(void);
const char *dpd_isa_name(int isa);
int dpd_isa_env_check(char *msg, size_t cap);
const char *dpd_status_str(int status);

typedef enum { DPD_KEY_REAL = 0, DPD_KEY_INT, DPD_KEY_TEXT, DPD_KEY_BYTES } dpd_key_kind;
typedef struct {
  const char *name; dpd_key_kind kind; const char *def; double lo, hi; unsigned flags;
  const char *choices; const char *commands; const char *help;
} dpd_key_desc;
typedef struct dpd_keys dpd_keys;
int dpd_key_desc_applies(const dpd_key_desc *d, const char *command);
void dpd_keys_free(dpd_keys *keys);
size_t dpd_keys_count(const dpd_keys *keys);
const dpd_key_desc *dpd_keys_desc_get(const dpd_keys *keys, size_t i);
long dpd_keys_find(const dpd_keys *keys, const char *name);
const char *dpd_keys_text_get(const dpd_keys *keys, const char *name);
int dpd_keys_set(dpd_keys *keys, const char *name, const char *text, dpd_err *err);
int dpd_keys_bytes_get(const dpd_keys *keys, const char *name, size_t def, size_t *out,
                       dpd_err *err);
void dpd_key_desc_allowed(const dpd_key_desc *d, char *buf, size_t cap);

typedef struct {
  char *name; char *figure; size_t rows, ncols; char **columns; double *data; size_t block;
  char *comment;
} dpd_table;
typedef struct {
  char *headline; void *summary; dpd_table *tables; size_t ntables; char *figure; int plot;
  char *report; char **notes; size_t nnotes;
} dpd_output;
void dpd_output_free(dpd_output *out);
int dpd_output_params_set(dpd_output *out, const dpd_keys *keys, dpd_err *err);
char *dpd_output_summary_print(const dpd_output *out);
void free(void *ptr);

typedef int (*dpd_run_progress_fn)(void *user, const char *what, size_t done, size_t total);
typedef struct {
  size_t max_memory; dpd_run_progress_fn progress; void *progress_user; int validate_only;
  int (*validated)(void *user, dpd_err *err); void *validated_user;
} dpd_run_env;
dpd_run_env dpd_run_env_default(void);
int dpd_run_progress_flag(void *flag, const char *what, size_t done, size_t total);
typedef struct {
  const char *name; const char *summary; const char *files; const char *example; void *run_keys;
  const char *numbers; void *run; unsigned uses; const char *replicates_key; int plot_default;
} dpd_model_command;
typedef struct dpd_model_type {
  const char *name; const char *summary; const dpd_key_desc *keys;
  const dpd_model_command *commands; const char *const *small; void *setup; void *release;
  void *workspace_bytes;
} dpd_model_type;
const dpd_key_desc *dpd_model_common_keys(void);
const dpd_model_type *dpd_model_at(size_t i);
const dpd_model_type *dpd_model_lookup(const char *name);
const dpd_model_command *dpd_model_command_get(const dpd_model_type *m, const char *name);
void dpd_model_list(char *buf, size_t cap);
void dpd_model_command_list(const dpd_model_type *m, char *buf, size_t cap);
int dpd_model_keys_create(const dpd_model_type *m, const char *command, dpd_keys **keys,
                          dpd_err *err);
int dpd_model_find(const char *name, const char *command, const dpd_model_type **m,
                   dpd_err *err);
int dpd_model_key_known(const char *name);
int dpd_model_key_set(const dpd_model_type *m, dpd_keys *keys, const char *name,
                      const char *value, dpd_err *err);
int dpd_model_run(const dpd_model_type *m, const char *command, dpd_keys *keys,
                  const dpd_run_env *env, dpd_output **out, dpd_err *err);
"""

ffi = FFI()
ffi.cdef(CDEF)

_lock = threading.Lock()
_lib = None
_path = None


def _candidates():
    env = os.environ.get("DPDYN_LIBRARY")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libdpdyn.so")
    names = [build] if os.path.exists(build) else []
    return names + ["libdpdyn.so.0", "libdpdyn.so"], False


def lib():
    """The loaded library (loaded on first use; `dpdyn.load` never needs it)."""
    global _lib, _path
    with _lock:
        if _lib is None:
            names, forced = _candidates()
            errors = []
            for name in names:
                try:
                    # never unloaded: at interpreter exit cffi closes the handle, and unmapping
                    # libdpdyn (and libgomp with it) under OpenMP's idle worker threads crashed
                    # the process after a successful run (tests/test_unload.py)
                    _lib = ffi.dlopen(name, ffi.RTLD_NOW | ffi.RTLD_NODELETE)
                    _path = name
                    break
                except OSError as e:
                    errors.append("%s: %s" % (name, e))
                    if forced:
                        break
            if _lib is None:
                raise OSError(
                    "dpdyn: cannot load libdpdyn (set DPDYN_LIBRARY to its path, build it with "
                    "scripts/setup.sh, or install it): " + "; ".join(errors))
        return _lib


def path():
    """The path or name the library was loaded from (loads it)."""
    lib()
    return _path


def text(ptr):
    """A C string as str ('' for NULL)."""
    return "" if ptr == ffi.NULL else ffi.string(ptr).decode("utf-8", "replace")


def isa_problem():
    """None when the environment variable DPD_ISA is unset, empty or names a kernel path this CPU
    has; otherwise the CLI's one-line reason (docs/kernels.md)."""
    buf = ffi.new("char[]", 512)
    if lib().dpd_isa_env_check(buf, 512) != 0:
        return text(buf)
    return None
