/* Tests of the model-independent core: the ISA dispatch (isa.h, isa/isa_impl.h), the replicate
 * driver (replicate.h, core/replicate_impl.h) and the replicate statistics (core/stats_impl.h),
 * and the progress callback of the three simulators that use the driver.
 * SPDX-License-Identifier: MIT
 *
 * The driver's promises checked here: the failure reported is that of the lowest-index failing
 * replicate whatever the thread count and whatever the order in which replicates finish (the
 * low-index failure is made the slowest); every replicate runs; the progress callback runs on
 * the calling thread only, with done increasing to total (heartbeats repeat it); a stop skips the
 * replicates not yet started and returns DPD_ECANCELLED; results do not depend on the thread
 * count. Seeds are fixed (SEED). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isa/isa_impl.h"
#include "core/output_impl.h"
#include "core/replicate_impl.h"
#include "core/stats_impl.h"
#include "dpd_test.h"
#include "dpdyn/linreg.h"
#include "dpdyn/model.h"
#include "dpdyn/rf.h"
#include "dpdyn/rf_sim.h"
#include "dpdyn/rng.h"
#include "dpdyn/schedule.h"
#include "dpdyn/sde.h"

#define SEED UINT64_C(2385)

static const dpd_isa all_isas[] = {DPD_ISA_AUTO, DPD_ISA_SCALAR, DPD_ISA_AVX2, DPD_ISA_AVX512};

/* ---- ISA ------------------------------------------------------------------------------------ */

static void isa_get_name_and_available_agree(void **state) {
  (void)state;
  const dpd_isa best = dpd_isa_best();
  assert_true(best == DPD_ISA_SCALAR || best == DPD_ISA_AVX2 || best == DPD_ISA_AVX512);
  assert_int_equal(dpd_isa_available(best), 1);
  assert_int_equal(dpd_isa_available(DPD_ISA_AUTO), 1);
  assert_int_equal(dpd_isa_available(DPD_ISA_SCALAR), 1);
  assert_int_equal(dpd_isa_available((dpd_isa)7), 0);
  /* The best path is the fastest available one. */
  assert_int_equal(best == DPD_ISA_AVX512, dpd_isa_available(DPD_ISA_AVX512));
  if (best == DPD_ISA_SCALAR) {
    assert_int_equal(dpd_isa_available(DPD_ISA_AVX2), 0);
  }
  assert_string_equal(dpd_isa_name(DPD_ISA_AUTO), "auto");
  assert_string_equal(dpd_isa_name(DPD_ISA_SCALAR), "scalar");
  assert_string_equal(dpd_isa_name(DPD_ISA_AVX2), "avx2");
  assert_string_equal(dpd_isa_name(DPD_ISA_AVX512), "avx512");
  assert_string_equal(dpd_isa_name((dpd_isa)7), "unknown");
  /* The RNG's former names are aliases of the same choice (DPD_ISA may force another path). */
  assert_int_equal(dpd_rng_isa_get(), dpd_isa_get());
  assert_int_equal(DPD_RNG_ISA_AVX512, DPD_ISA_AVX512);
  assert_string_equal(dpd_rng_isa_name(DPD_RNG_ISA_AVX2), "avx2");
  print_message("this CPU: %s; in use: %s\n", dpd_isa_name(best), dpd_isa_name(dpd_isa_get()));
}

static void isa_request_falls_back_to_what_the_cpu_runs(void **state) {
  (void)state;
  const dpd_isa best = dpd_isa_best(), in_use = dpd_isa_get();
  for (size_t i = 0; i < sizeof all_isas / sizeof all_isas[0]; i++) {
    const dpd_isa want = all_isas[i], got = dpd__isa_resolve(want);
    assert_int_not_equal(got, DPD_ISA_AUTO);
    assert_int_equal(dpd_isa_available(got), 1);
    if (want == DPD_ISA_AUTO) {
      assert_int_equal(got, in_use);
    } else if (dpd_isa_available(want)) {
      assert_int_equal(got, want); /* a supported request is honoured */
    } else {
      assert_true(got < want);     /* a lacking one falls back below it ... */
      assert_int_equal(got, best); /* ... to the fastest this CPU has */
    }
  }
  assert_int_equal(dpd__isa_resolve((dpd_isa)7), in_use);
}

/* dpd_isa_set forces the path of every DPD_ISA_AUTO dispatch (kernel picks and the Gaussian
 * fills, which give the same bits on each), refuses what the CPU lacks, and DPD_ISA_AUTO
 * returns to the fastest; dpd_isa_parse and dpd_isa_env_check read names exactly. */
static int id_scalar(void);
#if DPD__ISA_X86
static int id_avx2(void);
static int id_avx512(void);
#endif
static void isa_set_forces_every_auto_dispatch(void **state) {
  (void)state;
  const dpd_isa before = dpd_isa_get(), best = dpd_isa_best();
  double ref[1001], got[1001];
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 3);
  assert_int_equal(dpd_rng_gaussian_fill_isa(&rng, ref, 1001, DPD_ISA_SCALAR), DPD_OK);
  for (size_t i = 1; i < sizeof all_isas / sizeof all_isas[0]; i++) {
    const dpd_isa p = all_isas[i];
    if (!dpd_isa_available(p)) {
      assert_int_equal(dpd_isa_set(p), DPD_EINVAL);
      assert_int_equal(dpd_isa_get(), before); /* unchanged */
      continue;
    }
    assert_int_equal(dpd_isa_set(p), DPD_OK);
    assert_int_equal(dpd_isa_get(), p);
    assert_int_equal(DPD__ISA_PICK(DPD_ISA_AUTO, id_scalar, id_avx2, id_avx512)(), (int)p);
    dpd_rng_init(&rng, SEED, 3);
    dpd_rng_gaussian_fill(&rng, got, 1001);
    assert_memory_equal(got, ref, sizeof ref);
  }
  assert_int_equal(dpd_isa_set((dpd_isa)7), DPD_EINVAL);
  assert_int_equal(dpd_isa_set(DPD_ISA_AUTO), DPD_OK);
  assert_int_equal(dpd_isa_get(), best);
  assert_int_equal(dpd_isa_set(before), DPD_OK); /* as DPD_ISA had it, for the other tests */

  dpd_isa parsed = DPD_ISA_AUTO;
  assert_int_equal(dpd_isa_parse("avx2", &parsed), DPD_OK);
  assert_int_equal(parsed, DPD_ISA_AVX2);
  assert_int_equal(dpd_isa_parse("scalar", &parsed), DPD_OK);
  assert_int_equal(parsed, DPD_ISA_SCALAR);
  assert_int_equal(dpd_isa_parse("auto", &parsed), DPD_OK);
  assert_int_equal(parsed, DPD_ISA_AUTO);
  assert_int_equal(dpd_isa_parse("AVX2", &parsed), DPD_EINVAL);
  assert_int_equal(dpd_isa_parse("avx2 ", &parsed), DPD_EINVAL);
  assert_int_equal(dpd_isa_parse("", &parsed), DPD_EINVAL);
  assert_int_equal(dpd_isa_parse(NULL, &parsed), DPD_EINVAL);

  const char *saved = getenv("DPD_ISA");
  char *keep = saved != NULL ? strdup(saved) : NULL;
  char msg[256];
  assert_int_equal(setenv("DPD_ISA", "avx3", 1), 0);
  assert_int_equal(dpd_isa_env_check(msg, sizeof msg), DPD_EINVAL);
  assert_non_null(strstr(msg, "DPD_ISA"));
  assert_non_null(strstr(msg, "'avx3'"));
  assert_non_null(strstr(msg, "scalar, avx2, avx512"));
  assert_int_equal(setenv("DPD_ISA", "scalar", 1), 0);
  assert_int_equal(dpd_isa_env_check(msg, sizeof msg), DPD_OK);
  assert_string_equal(msg, "");
  assert_int_equal(setenv("DPD_ISA", "", 1), 0);
  assert_int_equal(dpd_isa_env_check(msg, sizeof msg), DPD_OK);
  if (!dpd_isa_available(DPD_ISA_AVX512)) {
    assert_int_equal(setenv("DPD_ISA", "avx512", 1), 0);
    assert_int_equal(dpd_isa_env_check(msg, sizeof msg), DPD_EINVAL);
    assert_non_null(strstr(msg, "cannot run the avx512 path"));
  }
  if (keep != NULL) {
    assert_int_equal(setenv("DPD_ISA", keep, 1), 0);
  } else {
    assert_int_equal(unsetenv("DPD_ISA"), 0);
  }
  free(keep);
}

static int id_scalar(void) {
  return DPD_ISA_SCALAR;
}
#if DPD__ISA_X86
static int id_avx2(void) {
  return DPD_ISA_AVX2;
}
static int id_avx512(void) {
  return DPD_ISA_AVX512;
}
#endif

/* A reduction with a fixed order: every clone must give the same bits. */
static inline __attribute__((always_inline)) double sum_sq_body(const double *x, size_t n) {
  double acc[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    acc[i % 4] += x[i] * x[i];
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
DPD__ISA_CLONES(double, sum_sq, (const double *x, size_t n), sum_sq_body(x, n))

static void isa_pick_selects_the_kernel_of_the_resolved_path(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof all_isas / sizeof all_isas[0]; i++) {
    const dpd_isa want = all_isas[i];
    int (*id)(void) = DPD__ISA_PICK(want, id_scalar, id_avx2, id_avx512);
    assert_int_equal(id(), dpd__isa_resolve(want));
  }
  double x[203];
  dpd_rng rng;
  dpd_rng_init(&rng, SEED, 0);
  dpd_rng_gaussian_fill(&rng, x, 203);
  const double want = sum_sq_scalar(x, 203);
  assert_true(DPD__ISA_CLONE_PICK(DPD_ISA_SCALAR, sum_sq) == sum_sq_scalar);
  for (size_t i = 0; i < sizeof all_isas / sizeof all_isas[0]; i++) {
    const double got = DPD__ISA_CLONE_PICK(all_isas[i], sum_sq)(x, 203);
    assert_memory_equal(&got, &want, sizeof got);
  }
}

/* ---- Replicate driver ----------------------------------------------------------------------- */

/* A job of the tests: replicate r draws work_len Gaussians from stream (SEED, r) into its
 * workspace and writes their sum, sum of squares and maximum into out[3 r ...]; failing
 * replicates return fail_status[r] < 0, the first one in index order after a long spin. */
typedef struct {
  size_t n, work_len, units;
  double *out;            /* [3 n] */
  int *ran;               /* [n] times replicate r ran */
  const int *fail_status; /* [n] or NULL */
  size_t slow;            /* this replicate spins before it returns (n: none) */
  size_t report;          /* units each replicate reports itself, in steps of 1 */
  int misaligned;         /* set when a workspace is not 64-byte aligned */
  int block;              /* replicates report one unit, then wait for a stop request */
  int started;            /* replicates started (block only) */
} test_job;

static int test_replicate(void *job_, size_t rep, double *work, dpd__replicate_slot *slot) {
  test_job *job = job_;
  dpd_rng rng;
  if (job->block) {
#pragma omp atomic update
    job->started++;
    (void)dpd__replicate_progress(slot, 1);
    const struct timespec pause = {.tv_sec = 0, .tv_nsec = 50000};
    while (!dpd__replicate_progress(slot, 0)) {
      nanosleep(&pause, NULL); /* only a stop ends this replicate */
    }
    return DPD_ECANCELLED;
  }
  if ((uintptr_t)work % 64 != 0) {
#pragma omp atomic write
    job->misaligned = 1;
  }
  dpd_rng_init(&rng, SEED, (uint64_t)rep);
  dpd_rng_gaussian_fill(&rng, work, job->work_len);
  double sum = 0.0, ss = 0.0, max = -INFINITY;
  for (size_t i = 0; i < job->work_len; i++) {
    sum += work[i];
    ss += work[i] * work[i];
    max = fmax(max, work[i]);
  }
  if (rep == job->slow) {
    volatile double spin = 0.0;
    for (long i = 0; i < 20000000L; i++) {
      spin += 1.0;
    }
  }
  for (size_t k = 0; k < job->report; k++) {
    (void)dpd__replicate_progress(slot, 1);
  }
  job->out[3 * rep] = sum;
  job->out[3 * rep + 1] = ss;
  job->out[3 * rep + 2] = max;
  job->ran[rep]++;
  return job->fail_status != NULL ? job->fail_status[rep] : DPD_OK;
}

static void job_init(test_job *job, size_t n) {
  memset(job, 0, sizeof *job);
  job->n = n;
  job->work_len = 37;
  job->units = 1;
  job->out = calloc(3 * n, sizeof *job->out);
  job->ran = calloc(n, sizeof *job->ran);
  job->slow = n;
  assert_non_null(job->out);
  assert_non_null(job->ran);
}

static void job_free(test_job *job) {
  free(job->out);
  free(job->ran);
}

static dpd__replicate_plan plan_of(const test_job *job, int threads) {
  dpd__replicate_plan plan = {.n = job->n,
                              .threads = threads,
                              .work_doubles = job->work_len,
                              .units = job->units,
                              .progress = NULL,
                              .progress_user = NULL,
                              .what = "test"};
  return plan;
}

static void replicate_reports_the_lowest_index_failure_for_any_thread_count(void **state) {
  (void)state;
  const size_t n = 23;
  int fail_status[23] = {0};
  fail_status[5] = DPD_ESOLVER; /* the lowest failing index, and the slowest replicate */
  fail_status[6] = DPD_ENONFINITE;
  fail_status[19] = DPD_EMAXITER;
  const int threads[] = {1, 2, 3, 4, 8, 0};
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    test_job job;
    job_init(&job, n);
    job.fail_status = fail_status;
    job.slow = 5;
    dpd__replicate_plan plan = plan_of(&job, threads[t]);
    size_t failed = 0;
    dpd_err err;
    dpd_err_reset(&err);
    int status = dpd__replicate_run(&plan, test_replicate, &job, &failed, &err);
    if (status != DPD_ESOLVER || failed != 5) {
      print_error("threads = %d: status %d, failed replicate %zu (want %d, 5)\n", threads[t],
                  status, failed, DPD_ESOLVER);
    }
    assert_int_equal(status, DPD_ESOLVER);
    assert_int_equal(failed, 5);
    assert_int_equal(err.status, DPD_OK); /* the caller words the reason */
    for (size_t r = 0; r < n; r++) {
      assert_int_equal(job.ran[r], 1); /* every replicate ran, once */
    }
    job_free(&job);
  }
}

static void replicate_results_are_identical_for_1_2_and_3_threads(void **state) {
  (void)state;
  const size_t n = 17;
  test_job ref;
  job_init(&ref, n);
  dpd__replicate_plan plan = plan_of(&ref, 1);
  size_t failed = 0;
  assert_int_equal(dpd__replicate_run(&plan, test_replicate, &ref, &failed, NULL), DPD_OK);
  assert_int_equal(failed, n);
  assert_int_equal(ref.misaligned, 0);
  for (int threads = 2; threads <= 3; threads++) {
    test_job job;
    job_init(&job, n);
    job.slow = 2; /* changes who runs what, never the results */
    plan = plan_of(&job, threads);
    assert_int_equal(dpd__replicate_run(&plan, test_replicate, &job, NULL, NULL), DPD_OK);
    assert_memory_equal(job.out, ref.out, 3 * n * sizeof *job.out);
    assert_int_equal(job.misaligned, 0);
    job_free(&job);
  }
  /* Replicate r is stream (SEED, r) alone: rerun by itself it gives the same row. */
  test_job one;
  job_init(&one, 1);
  double w[37];
  one.work_len = 37;
  assert_int_equal(test_replicate(&one, 0, w, NULL), DPD_OK);
  assert_memory_equal(one.out, ref.out, 3 * sizeof *one.out);
  job_free(&one);
  job_free(&ref);
}

/* What the progress callback saw. */
typedef struct {
  pthread_t caller;
  int calls, wrong_thread, not_increasing, inside; /* inside: concurrent calls */
  size_t last, total;
  size_t stop_at; /* ask for a stop once done >= stop_at (0: never) */
  int after_stop; /* calls after a stop was asked for */
  int stopped;
} progress_log;

static int log_progress(void *user, size_t done, size_t total) {
  progress_log *log = user;
  log->inside++;
  if (log->inside != 1) {
    log->wrong_thread = 1;
  }
  if (!pthread_equal(pthread_self(), log->caller)) {
    log->wrong_thread = 1;
  }
  if (log->stopped) {
    log->after_stop++;
  }
  if (done < log->last || done > total) {
    log->not_increasing = 1;
  }
  if (done == log->last) { /* a heartbeat (replicate.h): not a report */
    log->inside--;
    return log->stopped;
  }
  log->calls++;
  log->last = done;
  log->total = total;
  log->inside--;
  if (log->stop_at > 0 && done >= log->stop_at) {
    log->stopped = 1;
    return 1;
  }
  return 0;
}

static void replicate_progress_runs_on_the_calling_thread_up_to_total(void **state) {
  (void)state;
  const int threads[] = {1, 2, 3};
  for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
    for (size_t report = 0; report <= 7; report += 7) {
      test_job job;
      job_init(&job, 11);
      job.units = 5;
      job.report = report; /* 0: the driver counts all 5; 7: capped at 5 per replicate */
      job.slow = 10;
      progress_log log = {.caller = pthread_self()};
      dpd__replicate_plan plan = plan_of(&job, threads[t]);
      plan.progress = log_progress;
      plan.progress_user = &log;
      assert_int_equal(dpd__replicate_run(&plan, test_replicate, &job, NULL, NULL), DPD_OK);
      assert_true(log.calls >= 1);
      assert_int_equal(log.wrong_thread, 0);
      assert_int_equal(log.not_increasing, 0);
      assert_int_equal(log.last, 55);
      assert_int_equal(log.total, 55);
      if (threads[t] == 1) {
        /* Alone, the calling thread reports after every unit it counts. */
        assert_int_equal(log.calls, report > 0 ? 55 : 11);
      }
      job_free(&job);
    }
  }
}

static void replicate_stop_request_skips_the_rest_and_cancels(void **state) {
  (void)state;
  /* One thread: deterministic; replicates 0, 1, 2 run, the stop asked after 2 skips 3.. */
  test_job job;
  job_init(&job, 40);
  progress_log log = {.caller = pthread_self(), .stop_at = 3};
  dpd__replicate_plan plan = plan_of(&job, 1);
  plan.progress = log_progress;
  plan.progress_user = &log;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd__replicate_run(&plan, test_replicate, &job, NULL, &err), DPD_ECANCELLED);
  assert_int_equal(err.status, DPD_ECANCELLED);
  assert_non_null(strstr(err.reason, "stopped"));
  size_t ran = 0;
  for (size_t r = 0; r < job.n; r++) {
    ran += (size_t)job.ran[r];
  }
  assert_int_equal(ran, 3);
  assert_int_equal(log.after_stop, 0);
  job_free(&job);

  /* Several threads, replicates that end only when they see the stop (so none would finish
   * without it): every thread is held in its first replicate until the calling thread's first
   * report asks for the stop; nothing starts after it, the callback is not called again, and a
   * failure elsewhere does not hide the stop. */
  int fail_status[200] = {0};
  fail_status[150] = DPD_ENONFINITE;
  for (int threads = 2; threads <= 4; threads++) {
    job_init(&job, 200);
    job.units = 10;
    job.block = 1;
    job.fail_status = fail_status;
    progress_log log2 = {.caller = pthread_self(), .stop_at = 1};
    plan = plan_of(&job, threads);
    plan.progress = log_progress;
    plan.progress_user = &log2;
    assert_int_equal(dpd__replicate_run(&plan, test_replicate, &job, NULL, NULL), DPD_ECANCELLED);
    assert_true(job.started >= 1 && job.started <= threads);
    assert_int_equal(log2.calls, 1);
    assert_int_equal(log2.after_stop, 0);
    assert_int_equal(log2.wrong_thread, 0);
    job_free(&job);
  }
}

static void replicate_rejects_a_bad_plan(void **state) {
  (void)state;
  test_job job;
  job_init(&job, 3);
  dpd__replicate_plan plan = plan_of(&job, 1);
  dpd_err err;
  plan.n = 0;
  assert_int_equal(dpd__replicate_run(&plan, test_replicate, &job, NULL, &err), DPD_EINVAL);
  plan.n = 3;
  plan.units = 0;
  assert_int_equal(dpd__replicate_run(&plan, test_replicate, &job, NULL, &err), DPD_EINVAL);
  plan.units = SIZE_MAX;
  assert_int_equal(dpd__replicate_run(&plan, test_replicate, &job, NULL, &err), DPD_EINVAL);
  plan.units = 1;
  assert_int_equal(dpd__replicate_run(&plan, NULL, &job, NULL, &err), DPD_EINVAL);
  assert_int_equal(dpd__replicate_run(NULL, test_replicate, &job, NULL, &err), DPD_EINVAL);
  for (size_t r = 0; r < 3; r++) {
    assert_int_equal(job.ran[r], 0);
  }
  job_free(&job);
}

/* ---- The simulators report through the driver ---------------------------------------------- */

static void simulators_report_progress_and_honour_a_stop(void **state) {
  (void)state;
  dpd_linreg_problem_config pcfg = dpd_linreg_problem_config_default();
  pcfg.d = 19;
  pcfg.seed = SEED;
  dpd_schedule_config scfg = dpd_schedule_config_default();
  dpd_linreg_problem *problem = NULL;
  dpd_schedule *schedule = NULL;
  assert_int_equal(dpd_linreg_problem_create(&pcfg, &problem, NULL), DPD_OK);
  assert_int_equal(dpd_schedule_create(&scfg, &schedule, NULL), DPD_OK);

  dpd_linreg_sim_config sc = dpd_linreg_sim_config_default();
  assert_null(sc.progress);
  assert_null(sc.progress_user);
  sc.n = 60;
  sc.seeds = 7;
  sc.seed = SEED;
  sc.threads = 2;
  progress_log log = {.caller = pthread_self()};
  sc.progress = log_progress;
  sc.progress_user = &log;
  dpd_linreg_sim_result *res = NULL;
  assert_int_equal(dpd_linreg_sim_run(problem, schedule, &sc, &res, NULL), DPD_OK);
  dpd_linreg_sim_result_free(res);
  assert_int_equal(log.last, 7);
  assert_int_equal(log.total, 7);
  assert_int_equal(log.wrong_thread + log.not_increasing, 0);
  progress_log stop = {.caller = pthread_self(), .stop_at = 1};
  sc.progress_user = &stop;
  res = (dpd_linreg_sim_result *)&stop; /* must be reset to NULL */
  assert_int_equal(dpd_linreg_sim_run(problem, schedule, &sc, &res, NULL), DPD_ECANCELLED);
  assert_null(res);

  dpd_linreg_sde_config ec = dpd_linreg_sde_config_default();
  assert_null(ec.progress);
  ec.n = 60;
  ec.seeds = 5;
  ec.seed = SEED;
  ec.threads = 3;
  progress_log elog = {.caller = pthread_self()};
  ec.progress = log_progress;
  ec.progress_user = &elog;
  assert_int_equal(dpd_linreg_sde_run(problem, schedule, &ec, &res, NULL), DPD_OK);
  dpd_linreg_sim_result_free(res);
  assert_int_equal(elog.last, 5);
  assert_int_equal(elog.wrong_thread + elog.not_increasing, 0);
  dpd_linreg_problem_free(problem);
  dpd_schedule_free(schedule);

  dpd_rf_config rcfg = dpd_rf_config_default();
  rcfg.d = 6;
  rcfg.n = 40;
  rcfg.n_test = 20;
  rcfg.p = 30;
  rcfg.seed = SEED;
  dpd_rf_problem *rf = NULL;
  assert_int_equal(dpd_rf_problem_create(&rcfg, &rf, NULL), DPD_OK);
  dpd_rf_sim_config fc = dpd_rf_sim_config_default();
  assert_null(fc.progress);
  fc.T = 37; /* not a multiple of the 16-step reports: the driver adds the rest */
  fc.seeds = 3;
  fc.grid = 5;
  fc.seed = SEED;
  const int rf_threads[] = {1, 2, 5}; /* 5 > seeds: one replicate at a time, blocks in parallel */
  for (size_t t = 0; t < 3; t++) {
    progress_log flog = {.caller = pthread_self()};
    fc.threads = rf_threads[t];
    fc.progress = log_progress;
    fc.progress_user = &flog;
    dpd_rf_sim_result *fres = NULL;
    assert_int_equal(dpd_rf_sim_run(rf, &fc, &fres, NULL), DPD_OK);
    dpd_rf_sim_result_free(fres);
    assert_int_equal(flog.last, 3 * 37);
    assert_int_equal(flog.total, 3 * 37);
    assert_int_equal(flog.wrong_thread + flog.not_increasing, 0);
    progress_log fstop = {.caller = pthread_self(), .stop_at = 16};
    fc.progress_user = &fstop;
    fres = NULL;
    assert_int_equal(dpd_rf_sim_run(rf, &fc, &fres, NULL), DPD_ECANCELLED);
    assert_null(fres);
    assert_int_equal(fstop.after_stop, 0);
  }
  dpd_rf_problem_free(rf);
}

/* ---- Statistics ----------------------------------------------------------------------------- */

static void stats_mean_se_are_exact_for_equal_values_and_known_for_others(void **state) {
  (void)state;
  const double same[5] = {0.1 + 0.2, 0.1 + 0.2, 0.1 + 0.2, 0.1 + 0.2, 0.1 + 0.2};
  double mean, se;
  dpd__stats_mean_se(same, 5, 1, &mean, &se);
  assert_true(mean == 0.1 + 0.2);
  assert_true(se == 0.0);
  const double x[8] = {2.385, -1.0, 7.25, 1.0, 3.5, -4.0, 0.75, 10.0};
  /* Column 0 (stride 2): 2.385, 7.25, 3.5, 0.75: mean 3.47125, sample sd 2.7587..., se sd/2. */
  dpd__stats_mean_se(x, 4, 2, &mean, &se);
  assert_rel(mean, 3.47125, 1e-15);
  const double m = 3.47125;
  const double ss = (2.385 - m) * (2.385 - m) + (7.25 - m) * (7.25 - m) + (3.5 - m) * (3.5 - m) +
                    (0.75 - m) * (0.75 - m);
  assert_rel(se, sqrt(ss / 3.0 / 4.0), 1e-15);
  dpd__stats_mean_se(x, 1, 1, &mean, &se);
  assert_true(mean == 2.385 && se == 0.0);
  double means[2], ses[2], m1, s1;
  dpd__stats_columns_mean_se(x, 4, 2, means, ses);
  dpd__stats_mean_se(x + 1, 4, 2, &m1, &s1);
  assert_memory_equal(&means[1], &m1, sizeof m1);
  assert_memory_equal(&ses[1], &s1, sizeof s1);
  assert_rel(means[0], 3.47125, 1e-15);
  /* The sum runs in index order: 1e16 + 1 rounds back to 1e16, so this gives 0, not 1. */
  const double order[3] = {1e16, 1.0, -1e16};
  assert_true(dpd__stats_sum(order, 3, 1) == 0.0);
  assert_true(dpd__stats_sum(x + 1, 4, 2) == -1.0 + 1.0 + -4.0 + 10.0);
}

/* ---- summary.json: one type per key ---------------------------------------------------------- */

/* dpd_output_summary_print: a non-finite number (top level, nested, in an array) is null and its
 * value is under "nonfinite" by dotted path; NaN given to the helper is null with a reason under
 * "not_available" and no "nonfinite" entry; no "inf" string anywhere; decoding puts the numbers
 * back. */
static void summary_nonfinite_numbers_are_null_with_their_value_by_path(void **state) {
  (void)state;
  dpd_output *out = NULL;
  dpd_err err;
  dpd_err_reset(&err);
  assert_int_equal(dpd_output_create(&out, &err), DPD_OK);
  dpd_output_number_set(out, "rho", INFINITY);
  dpd_output_number_set(out, "low", -INFINITY);
  dpd_output_number_set(out, "x", 0.25);
  dpd_output_number_set(out, "gap", NAN);
  cJSON *sub = cJSON_AddObjectToObject(out->summary, "privacy");
  dpd__json_number(sub, "epsilon", INFINITY);
  cJSON *arr = cJSON_AddArrayToObject(out->summary, "values");
  cJSON_AddItemToArray(arr, cJSON_CreateNumber(1.0));
  cJSON_AddItemToArray(arr, cJSON_CreateNumber(INFINITY));
  char *text = dpd_output_summary_print(out);
  assert_non_null(text);
  cJSON *j = cJSON_Parse(text);
  assert_non_null(j);
  const cJSON *nf = cJSON_GetObjectItemCaseSensitive(j, "nonfinite");
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "rho")));
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "low")));
  assert_true(cJSON_IsNull(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "privacy"), "epsilon")));
  assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "values"), 1)));
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(nf, "rho")->valuestring, "inf");
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(nf, "low")->valuestring, "-inf");
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(nf, "privacy.epsilon")->valuestring, "inf");
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(nf, "values.1")->valuestring, "inf");
  assert_null(cJSON_GetObjectItemCaseSensitive(nf, "gap"));
  assert_int_equal(cJSON_GetArraySize(nf), 4);
  assert_non_null(cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(j, "not_available"), "gap"));
  assert_true(cJSON_GetObjectItemCaseSensitive(j, "x")->valuedouble == 0.25);
  /* the in-memory summary is unchanged; decoding the text gives its numbers back */
  assert_true(isinf(cJSON_GetObjectItemCaseSensitive(out->summary, "rho")->valuedouble));
  dpd__json_nonfinite_decode(j);
  assert_null(cJSON_GetObjectItemCaseSensitive(j, "nonfinite"));
  assert_true(cJSON_GetObjectItemCaseSensitive(j, "low")->valuedouble == -INFINITY);
  assert_true(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "privacy"), "epsilon")
          ->valuedouble == INFINITY);
  assert_true(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "values"), 1)->valuedouble ==
              INFINITY);
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "gap")));
  cJSON_Delete(j);
  free(text);
  dpd_output_free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(isa_get_name_and_available_agree),
      cmocka_unit_test(isa_request_falls_back_to_what_the_cpu_runs),
      cmocka_unit_test(isa_set_forces_every_auto_dispatch),
      cmocka_unit_test(isa_pick_selects_the_kernel_of_the_resolved_path),
      cmocka_unit_test(replicate_reports_the_lowest_index_failure_for_any_thread_count),
      cmocka_unit_test(replicate_results_are_identical_for_1_2_and_3_threads),
      cmocka_unit_test(replicate_progress_runs_on_the_calling_thread_up_to_total),
      cmocka_unit_test(replicate_stop_request_skips_the_rest_and_cancels),
      cmocka_unit_test(replicate_rejects_a_bad_plan),
      cmocka_unit_test(simulators_report_progress_and_honour_a_stop),
      cmocka_unit_test(stats_mean_se_are_exact_for_equal_values_and_known_for_others),
      cmocka_unit_test(summary_nonfinite_numbers_are_null_with_their_value_by_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
