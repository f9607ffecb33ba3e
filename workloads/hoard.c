/* The Hoard paper's multi-threaded benchmarks: Berger, McKinley, Blumofe
 * and Wilson, "Hoard: A Scalable Memory Allocator for Multithreaded
 * Applications" (ASPLOS 2000), written here from the paper's descriptions.
 *
 * threadtest: each of T threads allocates its share (objects / T) of small
 * objects and then frees them, `iterations` times; nothing is shared, so
 * it measures how an allocator scales when threads keep to themselves.
 *
 * cache-thrash (active false sharing): each thread allocates one small
 * object, writes every byte of it `repetitions` times, frees it, and does
 * that for its share of `iterations`. An allocator that hands objects on
 * one cache line to different threads makes every write contend.
 *
 * cache-scratch (passive false sharing): the same, except that the calling
 * thread first allocates T objects one after another (so they likely share
 * cache lines) and gives object i to thread i, which frees it before it
 * starts. An allocator that reuses a freed block for the thread that freed
 * it then hands every thread memory on a line another thread writes.
 *
 * Cross-thread frees by construction: none in threadtest and cache-thrash;
 * in cache-scratch the T objects the calling thread allocated.
 * Metrics: threadtest nanoseconds per allocator call; the cache workloads
 * nanoseconds per byte written (the writes are what false sharing slows).
 */
#include "wl_common.h"

enum { CALLS_PER_OBJECT = 2 };

typedef struct hoard_thread {
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure;
    wl_free_count freed;
    void **objects;   /* threadtest: [per_thread] */
    void *handed;     /* cache-scratch: the object the caller allocated for this thread */
} hoard_thread;

typedef struct hoard_run {
    long long per_thread;   /* threadtest: objects; cache: iterations */
    long long iterations;   /* threadtest */
    long long repetitions;  /* cache */
    size_t size;
    wl_touch_mode touch;    /* written into each object at allocation */
    hoard_thread *threads;  /* [T] */
} hoard_run;

/* Shares `total` among n threads; refuses a total smaller than n. */
static long long hoard_share(wl_ctx *ctx, const char *name, long long total, int n)
{
    if (total < n) {
        wl_fail(ctx, "parameter %s=%lld gives nothing to each of %d threads", name, total, n);
        return 0;
    }
    return total / n;
}

static int hoard_threads(wl_ctx *ctx, hoard_run *run)
{
    run->threads = wl_scratch_get(ctx, (size_t)ctx->threads * sizeof *run->threads);
    return run->threads == NULL ? -1 : 0;
}

static void hoard_release(wl_ctx *ctx, hoard_run *run, size_t objects_each)
{
    if (run->threads == NULL)
        return;
    for (int t = 0; t < ctx->threads; t++) {
        if (run->threads[t].handed != NULL)
            ctx->a->free(run->threads[t].handed);
        wl_scratch_put(run->threads[t].objects, objects_each * sizeof(void *));
    }
    wl_scratch_put(run->threads, (size_t)ctx->threads * sizeof *run->threads);
}

static int hoard_finish(wl_ctx *ctx, hoard_run *run, wl_free_count caller)
{
    if (wl_report_thread_failure(ctx, &run->threads[0].failure, sizeof run->threads[0],
                                 ctx->threads) != 0)
        return -1;
    wl_phase(ctx, "done", 0, 0);
    wl_report_frees(ctx, &run->threads[0].freed, sizeof run->threads[0], ctx->threads, caller);
    return 0;
}

/* ---- threadtest ---- */

static void threadtest_worker(wl_ctx *ctx, int index, void *arg)
{
    hoard_run *run = arg;
    hoard_thread *me = &run->threads[index];
    const alloc_table *a = ctx->a;
    const size_t n = (size_t)run->per_thread;
    for (long long it = 0; it < run->iterations; it++) {
        for (size_t i = 0; i < n; i++) {
            me->objects[i] = a->malloc(run->size);
            if (me->objects[i] == NULL) {
                me->failure = (wl_thread_failure){1, run->size};
                for (size_t k = 0; k < i; k++)
                    a->free(me->objects[k]);
                return;
            }
            wl_touch_block(me->objects[i], run->size, run->touch);
        }
        for (size_t i = 0; i < n; i++)
            a->free(me->objects[i]);
        me->freed.frees += (long long)n;
    }
}

static int run_threadtest(wl_ctx *ctx)
{
    hoard_run run = {.touch = wl_touch_param(ctx), .iterations = wl_param(ctx, "iterations"),
                     .size = (size_t)wl_param(ctx, "size")};
    run.per_thread = hoard_share(ctx, "objects", wl_param(ctx, "objects"), ctx->threads);
    if (run.per_thread == 0)
        return -1;
    int rc = -1;
    if (hoard_threads(ctx, &run) != 0)
        return -1;
    for (int t = 0; t < ctx->threads; t++) {
        run.threads[t].objects = wl_scratch_get(ctx, (size_t)run.per_thread * sizeof(void *));
        if (run.threads[t].objects == NULL)
            goto out;
    }
    uint64_t elapsed = wl_run_threads(ctx, ctx->threads, 1, threadtest_worker, &run);
    if (hoard_finish(ctx, &run, (wl_free_count){0, 0}) != 0)
        goto out;
    double calls = (double)CALLS_PER_OBJECT * (double)run.per_thread * (double)run.iterations *
                   (double)ctx->threads;
    wl_metric(ctx, "ns_per_op", (double)elapsed / calls, "ns", "lower");
    wl_operations(ctx, CALLS_PER_OBJECT * run.per_thread * run.iterations * ctx->threads);
    rc = 0;
out:
    hoard_release(ctx, &run, (size_t)run.per_thread);
    return rc;
}

/* ---- cache-thrash and cache-scratch ---- */

/* Writes every byte of p `repetitions` times; volatile, so each write is a
 * real store to the object's cache line. */
static void write_object(volatile unsigned char *p, size_t size, long long repetitions)
{
    for (long long r = 0; r < repetitions; r++)
        for (size_t k = 0; k < size; k++)
            p[k] = (unsigned char)(p[k] + 1);
}

static void cache_worker(wl_ctx *ctx, int index, void *arg)
{
    hoard_run *run = arg;
    hoard_thread *me = &run->threads[index];
    const alloc_table *a = ctx->a;
    if (me->handed != NULL) {
        /* cache-scratch: the caller's object, freed here */
        a->free(me->handed);
        me->handed = NULL;
        me->freed.frees++;
        me->freed.cross_thread++;
    }
    for (long long it = 0; it < run->per_thread; it++) {
        unsigned char *p = a->malloc(run->size);
        if (p == NULL) {
            me->failure = (wl_thread_failure){1, run->size};
            return;
        }
        wl_touch_block(p, run->size, run->touch);
        write_object(p, run->size, run->repetitions);
        a->free(p);
        me->freed.frees++;
    }
}

static int run_cache(wl_ctx *ctx, int scratch)
{
    hoard_run run = {.touch = wl_touch_param(ctx), .repetitions = wl_param(ctx, "repetitions"),
                     .size = (size_t)wl_param(ctx, "size")};
    run.per_thread = hoard_share(ctx, "iterations", wl_param(ctx, "iterations"), ctx->threads);
    if (run.per_thread == 0)
        return -1;
    int rc = -1;
    if (hoard_threads(ctx, &run) != 0)
        return -1;
    for (int t = 0; scratch && t < ctx->threads; t++) {
        run.threads[t].handed = ctx->a->malloc(run.size);
        if (run.threads[t].handed == NULL) {
            wl_fail(ctx, "malloc(%zu) returned NULL for thread %d's first object", run.size, t);
            goto out;
        }
        /* written once, as an object in use would be */
        write_object(run.threads[t].handed, run.size, 1);
    }
    uint64_t elapsed = wl_run_threads(ctx, ctx->threads, 1, cache_worker, &run);
    if (hoard_finish(ctx, &run, (wl_free_count){0, 0}) != 0)
        goto out;
    double writes = (double)run.per_thread * (double)run.repetitions * (double)run.size *
                    (double)ctx->threads;
    wl_metric(ctx, "ns_per_write", (double)elapsed / writes, "ns", "lower");
    /* each thread's objects, and in cache-scratch the one handed to it */
    wl_operations(ctx, CALLS_PER_OBJECT * (run.per_thread + scratch) * ctx->threads);
    rc = 0;
out:
    hoard_release(ctx, &run, 0);
    return rc;
}

static int run_cache_thrash(wl_ctx *ctx)
{
    return run_cache(ctx, 0);
}

static int run_cache_scratch(wl_ctx *ctx)
{
    return run_cache(ctx, 1);
}

const workload wl_threadtest = {
    .name = "threadtest",
    .group = "classic",
    .describe = "each thread allocates its share of small objects, then frees them; repeated; "
                "no sharing",
    .metric = "ns_per_op", .unit = "ns", .better = "lower",
    .default_threads = 2, .threaded = 1,
    .params = {
        {"objects", 100000, 0, 1, 1000000000, "objects allocated per iteration, over all threads"},
        {"iterations", 500, 20, 1, 1000000000, "times each thread allocates and frees its share"},
        {"size", 8, 0, 1, 1 << 30, "object size in bytes"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_threadtest,
};

/* The two cache workloads take the same parameters. */
#define CACHE_PARAMS                                                                             \
    {                                                                                            \
        {"iterations", 1000, 100, 1, 1000000000, "objects allocated, over all threads"},         \
        {"repetitions", 250000, 50000, 1, 1000000000,                                            \
         "times every byte of an object is written"},                                            \
        {"size", 8, 0, 1, 1 << 20, "object size in bytes"},                                      \
        WL_TOUCH_PARAM(WL_TOUCH_FIRST), \
        {NULL, 0, 0, 0, 0, NULL},                                                                \
    }

const workload wl_cache_thrash = {
    .name = "cache-thrash",
    .group = "classic",
    .describe = "active false sharing: threads allocate small objects at the same time and "
                "write them over and over",
    .metric = "ns_per_write", .unit = "ns", .better = "lower",
    .default_threads = 2, .threaded = 1,
    .params = CACHE_PARAMS,
    .run = run_cache_thrash,
};

const workload wl_cache_scratch = {
    .name = "cache-scratch",
    .group = "classic",
    .describe = "passive false sharing: objects allocated together by one thread are freed by "
                "the workers, which then allocate and write their own",
    .metric = "ns_per_write", .unit = "ns", .better = "lower",
    .default_threads = 2, .threaded = 1,
    .params = CACHE_PARAMS,
    .run = run_cache_scratch,
};
