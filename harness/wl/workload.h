/* The workload API: what a workload (built-in C, or an interpreted script)
 * sees of the runner. A workload allocates only through ctx->a, reads its
 * parameters with wl_param(), and reports through wl_metric(), wl_phase()
 * and wl_sample(); the runner turns those into the JSON document
 * (schema "heaplab.run/1", see docs/schema.md).
 *
 * The one harness header workloads/ may include (its build target sees
 * harness/wl/ and the table's header, nothing else). What is declared here
 * is defined by the runner (harness/runner/: recording, threads, the clock)
 * or by harness/wl/ itself (the PRNG, touching memory).
 */
#ifndef HEAPLAB_WORKLOAD_H
#define HEAPLAB_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "alloc_table.h"

/* A parameter with its default and allowed range (inclusive). Values are
 * integers; sizes are in bytes. `--param NAME=VALUE` outside [min, max] is
 * refused before the workload runs, naming the parameter and the range.
 * `def` is the published size; `quick` (0 = same as def) is what the runner
 * uses under --quick, sized so one cell takes ~0.1 s on a 2-core VM. */
typedef struct wl_param_def {
    const char *name;
    long long def;
    long long quick;
    long long min;
    long long max;
    const char *help;
    /* NULL, or the names of the values min..max in order (NULL-terminated):
     * `--param touch=first` then means the value of "first". */
    const char *const *names;
} wl_param_def;

enum { WL_MAX_PARAMS = 16 };

typedef struct wl_ctx wl_ctx;

typedef struct workload {
    const char *name;      /* "tmalloc-st-64": unique, used on the command line */
    const char *group;     /* "tmalloc", "memalloc", "memalloc-cpp", "kevy", "script" */
    const char *describe;  /* one line */
    const char *metric;    /* name of the primary metric, e.g. "ns_per_pair" */
    const char *unit;      /* its unit: "ns", "Mpairs/s", "MB", ... */
    const char *better;    /* "lower" or "higher" */
    int default_threads;   /* used when --threads is not given */
    int threaded;          /* 1 when --threads changes what it does */
    wl_param_def params[WL_MAX_PARAMS]; /* terminated by a {NULL} entry */
    /* Returns 0 on success; on failure calls wl_fail() first. */
    int (*run)(wl_ctx *ctx);
    const char *source;    /* NULL for built-ins; the script path for scripts */
    void *data;            /* private to the workload (a parsed script) */
} workload;

/* What the runner gives a workload. Fields are read-only for workloads. */
struct wl_ctx {
    const alloc_table *a;  /* the only way to allocate */
    const workload *w;
    int threads;           /* from --threads, or w->default_threads */
    uint64_t seed;         /* from --seed (default 1) */
    void *runner;          /* private to the runner */
};

/* The value of a parameter (default, or from --param). Aborts the run with a
 * clear message if the workload asks for a name it did not declare. */
long long wl_param(wl_ctx *ctx, const char *name);

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC). */
uint64_t wl_now_ns(void);

/* Records a metric. The workload's primary metric (w->metric) must be
 * recorded; others are extra columns (e.g. "p99_ns", "rss_over_live"). */
void wl_metric(wl_ctx *ctx, const char *name, double value, const char *unit,
               const char *better);

/* Ends a phase: the runner records the phase's elapsed time (since the
 * previous wl_phase or the start), `ops`, RSS, the working set above the
 * process's size at the start, `live_bytes` (bytes requested and still
 * live, as the workload counts them) and the allocator's own statistics. */
void wl_phase(wl_ctx *ctx, const char *name, long long ops, size_t live_bytes);

/* One point of the memory-over-time series (RSS read by the runner, from
 * statm). Its time is the harness's: wl_phase leaves it out of the phase's
 * elapsed time, and a workload timing a stretch that samples subtracts
 * what wl_untimed_ns() grew by. */
void wl_sample(wl_ctx *ctx, long long ops, size_t live_bytes);

/* Nanoseconds the runner has spent in wl_sample() so far, on all threads. */
uint64_t wl_untimed_ns(wl_ctx *ctx);

/* Records how many blocks the workload freed and how many of those it freed
 * on a thread other than the one that allocated them. A workload knows by
 * construction which of its frees are cross-thread; it counts both in
 * per-thread counters and calls this once, after its threads have been
 * joined. The document's "frees" is {"total", "cross_thread"}, or null for
 * a workload that does not count. */
void wl_frees(wl_ctx *ctx, long long total, long long cross_thread);

/* Records how many allocator calls the workload's run() made: every call
 * through ctx->a that allocates, resizes or frees a block (malloc, calloc,
 * realloc, aligned_alloc, free, free_sized), free(NULL) included, from the
 * first to the last call of run() -- setup and clean-up as well as the
 * timed loop, since instruction counts cover the whole of run(). Queries
 * and hooks (usable_size, stats, trim, thread_flush) are not operations.
 * A workload knows the count by construction (or from counters it keeps
 * anyway) and calls this once, after its threads have been joined, so
 * nothing is counted inside a timed loop. The document's "operations" is
 * that count, or null for a workload that does not report it. */
void wl_operations(wl_ctx *ctx, long long count);

/* Reports why the workload failed; the runner prints it and exits non-zero. */
void wl_fail(wl_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Runs fn(ctx, index, arg) on n threads that all start together (after a
 * barrier) and returns the nanoseconds from the release of the barrier to
 * the end of the last thread. n == 1 still uses a fresh thread only when
 * `fresh` is set; otherwise the calling thread runs it. */
typedef void (*wl_thread_fn)(wl_ctx *ctx, int index, void *arg);
uint64_t wl_run_threads(wl_ctx *ctx, int n, int fresh, wl_thread_fn fn, void *arg);

/* A small fast PRNG (xoshiro256** seeded by splitmix64), one per thread. */
typedef struct wl_rng {
    uint64_t s[4];
} wl_rng;
void wl_rng_seed(wl_rng *r, uint64_t seed);
uint64_t wl_rng_next(wl_rng *r);
/* Uniform in [lo, hi] inclusive. */
uint64_t wl_rng_range(wl_rng *r, uint64_t lo, uint64_t hi);
/* Log-uniform in [lo, hi] inclusive (lo >= 1). */
uint64_t wl_rng_logrange(wl_rng *r, uint64_t lo, uint64_t hi);

/* Writes one byte per 4 KiB page (and the first and last byte) of p, so the
 * memory is really touched; `all` writes every byte. */
void wl_touch(void *p, size_t n, int all);

/* What a workload writes into each block it allocates, as a program would:
 * the parameter `touch` every built-in workload has (WL_TOUCH_PARAM). A
 * block never written flatters an allocator whose cost is the program's
 * first store to a cold block, so the default is WL_TOUCH_FIRST unless a
 * published table needs the seed's own choice. */
typedef enum wl_touch_mode {
    WL_TOUCH_NONE,   /* nothing */
    WL_TOUCH_FIRST,  /* the first byte */
    WL_TOUCH_PAGES,  /* a byte per 4 KiB page and the last byte (wl_touch) */
    WL_TOUCH_ALL,    /* every byte */
} wl_touch_mode;
/* A non-zero byte, so no layer can treat a written block as "still zero". */
enum { WL_TOUCH_BYTE = 0xa5 };
extern const char *const wl_touch_names[];  /* "none", "first", "pages", "all", NULL */

#define WL_TOUCH_PARAM(mode)                                                          \
    {"touch", (mode), 0, WL_TOUCH_NONE, WL_TOUCH_ALL,                                 \
     "what is written into each new block: none, first (byte), pages (a byte per "    \
     "4 KiB page), all (every byte)", wl_touch_names}

/* Writes into a new block of n bytes as `mode` says; inline, because it sits
 * in timed loops right after the allocation it belongs to. */
static inline void wl_touch_block(void *p, size_t n, wl_touch_mode mode)
{
    if (mode == WL_TOUCH_NONE || n == 0)
        return;
    if (mode == WL_TOUCH_FIRST) {
        /* volatile: the store is the point, the compiler must keep it */
        *(volatile unsigned char *)p = WL_TOUCH_BYTE;
        return;
    }
    wl_touch(p, n, mode == WL_TOUCH_ALL);
}

/* The workload's `touch` parameter. */
static inline wl_touch_mode wl_touch_param(wl_ctx *ctx)
{
    return (wl_touch_mode)wl_param(ctx, "touch");
}

/* The built-in workloads (workloads/builtin.c) and their count. */
extern const workload *const wl_builtins[];
extern const int wl_builtin_count;

#endif
