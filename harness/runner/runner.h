/* The runner's state for one run: the chosen allocator and workload, the
 * parameter values, and the bookkeeping the workload API fills (phases,
 * samples, metrics, failure).
 *
 * The bookkeeping never allocates through the measured allocator, nor
 * through malloc at all while the workload runs: it lives in one fixed-size
 * anonymous mapping, touched in full before rss_start is read, so recording
 * a phase neither calls an allocator nor faults in new pages. Each buffer
 * has a fixed capacity; running out fails the run with a message naming the
 * limit, instead of growing. */
#ifndef HEAPLAB_RUNNER_H
#define HEAPLAB_RUNNER_H

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "alloc_table.h"
#include "measure.h"
#include "workload.h"

enum {
    RUNNER_MAX_PHASES = 512,
    RUNNER_MAX_SAMPLES = 16384,
    RUNNER_MAX_METRICS = 64,
    RUNNER_NAME_MAX = 64,   /* phase and metric names, with the NUL */
    RUNNER_UNIT_MAX = 32,
    RUNNER_BETTER_MAX = 8,  /* "lower" / "higher" */
    RUNNER_ERROR_MAX = 1024,
    RUNNER_MAX_THREADS = 1024, /* --threads and wl_run_threads */
};

/* alloc_stats of a phase: count -1 = the allocator has no stats hook (null). */
typedef struct runner_phase {
    char name[RUNNER_NAME_MAX];
    uint64_t elapsed_ns;
    long long ops;
    long long rss_bytes;       /* -1 = could not be read */
    size_t live_bytes;
    int stats_count;
    alloc_stat stats[ALLOC_STATS_MAX];
} runner_phase;

typedef struct runner_sample {
    uint64_t t_ns; /* since the workload started */
    long long ops;
    long long rss_bytes;
    size_t live_bytes;
} runner_sample;

typedef struct runner_metric {
    char name[RUNNER_NAME_MAX];
    char unit[RUNNER_UNIT_MAX];
    char better[RUNNER_BETTER_MAX];
    double value;
} runner_metric;

/* Everything the workload API writes while the workload runs. */
typedef struct runner_books {
    runner_phase phases[RUNNER_MAX_PHASES];
    runner_sample samples[RUNNER_MAX_SAMPLES];
    runner_metric metrics[RUNNER_MAX_METRICS];
    int phase_count;
    int sample_count;
    int metric_count;
    int samples_overflowed; /* the failure is reported once, not per sample */
    int frees_counted;      /* wl_frees() was called */
    long long frees_total;
    long long frees_cross_thread;
    int operations_counted; /* wl_operations() was called */
    long long operations;
} runner_books;

typedef struct runner {
    const alloc_table *a;
    const workload *w;
    const char *kind; /* "builtin", "script" or "program" */
    wl_ctx ctx;
    int param_count;
    long long param_values[WL_MAX_PARAMS];

    runner_books *books;
    /* taken by every wl_ call that records something: workloads may report
     * from several threads */
    pthread_mutex_t lock;

    long long rss_start_bytes;
    uint64_t start_ns;        /* when run() was called */
    uint64_t last_phase_ns;   /* end of the previous phase's measurement */
    /* time spent in wl_sample() so far, and as of the previous phase: the
     * harness's own work, taken out of every timed figure */
    _Atomic uint64_t untimed_ns;
    uint64_t untimed_at_last_phase_ns;
    measure_usage usage_start;

    /* results of the whole run, filled by runner_finish() */
    uint64_t wall_ns;
    long long peak_rss_bytes;
    measure_usage usage;

    int failed;
    char error[RUNNER_ERROR_MAX];
} runner;

/* Maps and touches the bookkeeping. Returns 0, or -1 with a reason. */
int runner_init(runner *r, const alloc_table *a, const workload *w, const char *kind,
                int threads, uint64_t seed, const long long *param_values, int param_count,
                char *err, size_t errlen);

/* Runs the workload once, measuring it. Returns 0 when it succeeded and
 * recorded its primary metric; otherwise r->failed is set with r->error. */
int runner_run(runner *r);

/* Records a failure (the first one wins) and prints it on stderr without
 * allocating. Callers hold no lock. */
void runner_fail(runner *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* For a fault inside the workload API that cannot be returned to the
 * workload (an undeclared parameter): records the failure, prints the
 * document with status "error" and exits 1. */
_Noreturn void runner_abort(runner *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The document, "heaplab.run/1", on stdout (report.c). */
void report_print(runner *r);

#endif
