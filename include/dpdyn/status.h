/* Status codes and error records shared by every dpdyn module.
 * SPDX-License-Identifier: MIT
 *
 * Convention (as in CVODE): DPD_OK == 0, negative codes are failures,
 * positive codes are non-error outcomes. Callers test `status < 0`. */
#ifndef DPD_STATUS_H
#define DPD_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(DPD_BUILDING_LIBRARY)
#define DPD_API __attribute__((visibility("default")))
#else
#define DPD_API
#endif

/* X(name, value, message): the single list every code and message comes from. */
#define DPD_STATUS_LIST(X)                                                     \
  X(DPD_OK, 0, "success")                                                      \
  X(DPD_CONTINUE, 1, "not finished yet")                                      \
  X(DPD_EINVAL, -1, "invalid argument")                                        \
  X(DPD_ENOMEM, -2, "out of memory")                                           \
  X(DPD_ESOLVER, -3, "solver failure (ODE integrator or linear algebra)")       \
  X(DPD_ENONFINITE, -4, "non-finite value (numerical instability)")           \
  X(DPD_EIO, -5, "input/output failure")                                       \
  X(DPD_EMAXITER, -6, "iteration limit reached without convergence")         \
  X(DPD_ECANCELLED, -7, "stopped on request (progress callback)")

typedef enum {
#define DPD_X_ENUM(name, value, msg) name = value,
  DPD_STATUS_LIST(DPD_X_ENUM)
#undef DPD_X_ENUM
} dpd_status;

/* Human-readable message of a status code ("unknown status" otherwise). */
DPD_API const char *dpd_status_str(int status);

/* Last-error record. Every function that can fail for a reason other than a
 * bad pointer takes an optional `dpd_err *` (NULL is allowed) and fills it on
 * failure with the code, the source location and a one-line reason. */
typedef struct {
  int status;
  const char *file;
  int line;
  char reason[512];
} dpd_err;

/* Clears an error record (status DPD_OK, empty reason). */
DPD_API void dpd_err_reset(dpd_err *err);

/* Fills an error record as the library does: `status`, the source location (`file` borrowed:
 * a string literal such as __FILE__) and a printf-style one-line reason (truncated to fit);
 * err may be NULL. Returns `status`, so that `return dpd_err_set(err, DPD_EINVAL, __FILE__,
 * __LINE__, "...", ...);` reports and fails in one statement. For code around the library (a
 * front end, a caller's callbacks such as dpd_run_env.validated) that reports its own failures
 * through the same record; the library's own errors go through an internal function. */
DPD_API int dpd_err_set(dpd_err *err, int status, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Library version string ("MAJOR.MINOR.PATCH"). */
DPD_API const char *dpd_version(void);

#ifdef __cplusplus
}
#endif
#endif /* DPD_STATUS_H */
