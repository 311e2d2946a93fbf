/* Private: the replicate driver (replicate.c), the one OpenMP loop over the independent
 * replicates of every simulator.
 * SPDX-License-Identifier: MIT
 *
 * A simulator describes one replicate as a function of its index and hands it to
 * dpd__replicate_run, which runs all of them on a team of threads, gives each thread its own
 * workspace, reports progress through the caller's dpd_progress_fn (replicate.h) from the
 * calling thread only, honours a stop request, and reports the failure of the lowest-index
 * failing replicate. Results are independent of the thread count as long as replicate r draws
 * only from stream (seed, r) and writes only its own output slots. */
#ifndef DPD_REPLICATE_IMPL_H
#define DPD_REPLICATE_IMPL_H

#include <stddef.h>

#include "dpdyn/replicate.h"
#include "dpdyn/status.h"

/* What a running replicate may use besides its index: the progress counter of the run
 * (dpd__replicate_progress). Owned by the driver, one per thread. */
typedef struct dpd__replicate_slot dpd__replicate_slot;

/* Runs replicate `rep` (0 <= rep < n). `job` is the caller's (borrowed, shared by all threads:
 * read it, and write only the slots of `rep`); `work` is this thread's workspace of
 * work_doubles doubles (64-byte aligned, contents left by the previous replicate of the thread;
 * NULL when work_doubles = 0). Returns DPD_OK or a negative status (the replicate failed; its
 * details are the job's to record in the slots of `rep`). */
typedef int (*dpd__replicate_fn)(void *job, size_t rep, double *work, dpd__replicate_slot *slot);

typedef struct {
  size_t n;                 /* replicates, >= 1 */
  int threads;              /* OpenMP threads (<= 0: omp_get_max_threads()), at most n are used */
  size_t work_doubles;      /* workspace per thread in doubles (0: none) */
  size_t units;             /* progress units per replicate, >= 1 (1: progress counts replicates) */
  dpd_progress_fn progress; /* NULL: no progress */
  void *progress_user;      /* passed to progress (borrowed) */
  const char *what;         /* the run's name for error reasons ("simulate") */
} dpd__replicate_plan;

/* Runs replicates 0..n-1 of `fn` on plan->threads threads (dynamic schedule, one replicate at a
 * time). Every replicate runs, even after another failed, unless a stop is requested.
 * Progress: a finished replicate counts plan->units units (those it reported itself through
 * dpd__replicate_progress included); plan->progress is called with the units done out of
 * n * units from the calling thread only, whenever that thread finds the count changed (after
 * each of its own replicates, at its own progress reports, and while it waits for the other
 * threads at the end), and with an unchanged count when 100 ms have passed since its last call
 * (a heartbeat, so that a stop request is heard during long replicates), last with
 * done = total.
 * Returns DPD_OK; the status of the failing replicate of lowest index, with its index in
 * *failed (err untouched: the caller words the reason from its slots); DPD_ECANCELLED when
 * the progress callback asked for a stop (this takes precedence over failures); DPD_EINVAL
 * for a bad plan; DPD_ENOMEM. *failed is set to n when no replicate failed. */
__attribute__((visibility("hidden"))) int dpd__replicate_run(const dpd__replicate_plan *plan,
                                                             dpd__replicate_fn fn, void *job,
                                                             size_t *failed, dpd_err *err);

/* From inside a replicate: adds `units` finished units of this replicate (in total at most
 * plan->units per replicate; the rest is added when it returns) and, on the calling thread,
 * reports progress. Returns 1 when a stop has been requested (the replicate may then return
 * DPD_ECANCELLED at once), 0 otherwise. Cheap: one atomic add. */
__attribute__((visibility("hidden"))) int dpd__replicate_progress(dpd__replicate_slot *slot,
                                                                  size_t units);

#endif /* DPD_REPLICATE_IMPL_H */
