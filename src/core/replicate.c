/* The replicate driver: independent replicates on an OpenMP team, progress through a callback,
 * the lowest-index failure.
 * SPDX-License-Identifier: MIT
 *
 * Why the results cannot depend on the thread count: the driver only decides which thread runs
 * which replicate and when; a replicate reads the shared job, draws from its own stream and
 * writes its own slots, so any schedule gives the same bits. The failure reported is the one
 * of lowest index among all replicates (every replicate runs), not the first in time.
 *
 * Progress: the threads add finished units to one atomic counter; only the calling thread
 * (thread 0 of the team) reads it and calls the callback, so the callback needs no locking and
 * may print. The calling thread works on replicates like the others and reports between them;
 * once the loop has no replicate left for it, it looks at the counter every POLL_NS until the
 * others are done, so the last replicates are reported as they finish rather than all at the
 * end. Without a callback it goes straight to the closing barrier.
 *
 * Heartbeat: the callback is also called, with an unchanged count, when HEARTBEAT_NS have
 * passed since its last call, so that a callback that stops the run (a binding's Ctrl-C) is
 * heard within that time even while no replicate finishes (long replicates poll
 * dpd__replicate_progress with 0 units between their steps). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "core/error_impl.h"
#include "core/replicate_impl.h"

/* Each thread's workspace starts on its own cache line (64 bytes). */
#define CACHE_DOUBLES 8
/* Interval at which the calling thread, its own replicates done, looks at the count of the
 * others (progress callback only): 1 ms. Output timing only; results never depend on it. */
#define POLL_NS 1000000L
/* Longest interval between two calls of the callback while the calling thread polls: 100 ms. */
#define HEARTBEAT_NS 100000000L

typedef struct {
  const dpd__replicate_plan *plan;
  size_t total;    /* n * units */
  size_t done;     /* units finished (OpenMP atomic) */
  int stop;        /* the callback asked for a stop (OpenMP atomic) */
  size_t reported; /* done at the last callback (calling thread only) */
  struct timespec called; /* time of the last callback (calling thread only) */
  size_t fail_rep; /* lowest failing replicate (n: none), under critical(dpd_replicate_fail) */
  int fail_status;
} run_state;

struct dpd__replicate_slot {
  run_state *run;
  int caller;      /* runs on the calling thread */
  size_t credited; /* units the current replicate has reported */
};

static size_t done_get(run_state *run) {
  size_t done;
#pragma omp atomic read
  done = run->done;
  return done;
}

static int stop_get(run_state *run) {
  int stop;
#pragma omp atomic read
  stop = run->stop;
  return stop;
}

static long elapsed_ns(const struct timespec *since, const struct timespec *now) {
  return (long)(now->tv_sec - since->tv_sec) * 1000000000L + (now->tv_nsec - since->tv_nsec);
}

/* Calling thread only: calls the callback if the count moved since its last call, or as a
 * heartbeat HEARTBEAT_NS after it. */
static void report(run_state *run) {
  const dpd__replicate_plan *plan = run->plan;
  if (plan->progress == NULL || stop_get(run)) {
    return; /* after a stop request the callback is not called again */
  }
  const size_t done = done_get(run);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (done == run->reported && elapsed_ns(&run->called, &now) < HEARTBEAT_NS) {
    return;
  }
  run->reported = done;
  run->called = now;
  if (plan->progress(plan->progress_user, done, run->total) != 0) {
#pragma omp atomic write
    run->stop = 1;
  }
}

int dpd__replicate_progress(dpd__replicate_slot *slot, size_t units) {
  run_state *run = slot->run;
  const size_t room = run->plan->units - slot->credited;
  if (units > room) {
    units = room;
  }
  if (units > 0) {
    slot->credited += units;
#pragma omp atomic update
    run->done += units;
  }
  if (slot->caller) {
    report(run);
  }
  return stop_get(run);
}

int dpd__replicate_run(const dpd__replicate_plan *plan, dpd__replicate_fn fn, void *job,
                       size_t *failed, dpd_err *err) {
  if (failed != NULL) {
    *failed = plan != NULL ? plan->n : 0;
  }
  if (plan == NULL || fn == NULL) {
    return DPD_FAIL(err, DPD_EINVAL, "replicates: NULL plan or replicate function");
  }
  const char *what = plan->what != NULL ? plan->what : "replicates";
  const size_t n = plan->n;
  if (n < 1 || plan->units < 1 || n > SIZE_MAX / plan->units) {
    return DPD_FAIL(err, DPD_EINVAL,
                    "%s: %zu replicates of %zu progress units (allowed: both >= 1, product "
                    "representable)",
                    what, n, plan->units);
  }
  int nthreads = plan->threads > 0 ? plan->threads : omp_get_max_threads();
  if (nthreads < 1) {
    nthreads = 1;
  }
  if ((size_t)nthreads > n) {
    nthreads = (int)n;
  }
  const size_t max_doubles = SIZE_MAX / sizeof(double) / (size_t)nthreads;
  if (plan->work_doubles > max_doubles - CACHE_DOUBLES) {
    return DPD_FAIL(err, DPD_ENOMEM, "%s: workspace of %zu doubles per thread is too large", what,
                    plan->work_doubles);
  }
  /* aligned_alloc needs a size that is a multiple of the alignment: the stride is. */
  const size_t stride = (plan->work_doubles + CACHE_DOUBLES - 1) / CACHE_DOUBLES * CACHE_DOUBLES;
  double *work = NULL;
  if (stride > 0) {
    work = aligned_alloc(CACHE_DOUBLES * sizeof *work, (size_t)nthreads * stride * sizeof *work);
    if (work == NULL) {
      return DPD_FAIL(err, DPD_ENOMEM, "%s: out of memory for %d workspaces of %zu doubles", what,
                      nthreads, plan->work_doubles);
    }
  }
  run_state run = {.plan = plan,
                   .total = n * plan->units,
                   .done = 0,
                   .stop = 0,
                   .reported = 0,
                   .called = {0, 0},
                   .fail_rep = n,
                   .fail_status = DPD_OK};
  clock_gettime(CLOCK_MONOTONIC, &run.called);

#pragma omp parallel num_threads(nthreads)
  {
    const int tid = omp_get_thread_num();
    double *w = work != NULL ? work + (size_t)tid * stride : NULL;
    dpd__replicate_slot slot = {.run = &run, .caller = tid == 0, .credited = 0};
#pragma omp for schedule(dynamic, 1) nowait
    for (size_t rep = 0; rep < n; rep++) {
      if (stop_get(&run)) {
        continue; /* a stop was requested: skip what has not started */
      }
      slot.credited = 0;
      const int status = fn(job, rep, w, &slot);
      if (status < 0) {
#pragma omp critical(dpd_replicate_fail)
        {
          if (rep < run.fail_rep) {
            run.fail_rep = rep;
            run.fail_status = status;
          }
        }
      }
      (void)dpd__replicate_progress(&slot, plan->units - slot.credited);
    }
    if (slot.caller && plan->progress != NULL) {
      const struct timespec poll = {.tv_sec = 0, .tv_nsec = POLL_NS};
      while (!stop_get(&run) && done_get(&run) < run.total) {
        nanosleep(&poll, NULL);
        report(&run);
      }
      report(&run);
    }
  }

  free(work);
  if (run.stop) {
    return DPD_FAIL(err, DPD_ECANCELLED,
                    "%s: stopped by the progress callback after %zu of %zu units of work", what,
                    run.reported, run.total);
  }
  if (run.fail_rep < n) {
    if (failed != NULL) {
      *failed = run.fail_rep;
    }
    return run.fail_status;
  }
  return DPD_OK;
}
