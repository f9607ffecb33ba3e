/* MemAlloc's single-thread latency and multi-thread scaling rows
 * (workloads published by the MemAlloc README): 2,000,000 allocate+free
 * pairs over its exact size classes 16, 64, 256 and 1,024 bytes, on one
 * thread, or split evenly over T threads. Each pair's class is drawn at
 * random (pre-drawn, so the RNG is not timed); the block is freed at once.
 * Metric, as the seed reports it: nanoseconds per pair, i.e. wall time
 * over all threads divided by all pairs. The seed's speedup column needs
 * the one-thread figure of the same run and is derived on the Python side.
 * 2M pairs take a few milliseconds, so the run is repeated `rounds` times.
 */
#include "wl_common.h"

/* The four size classes the seed's benchmark requests. */
static const uint32_t SEED_CLASSES[] = {16, 64, 256, 1024};
enum { SEED_CLASS_COUNT = sizeof SEED_CLASSES / sizeof SEED_CLASSES[0] };

typedef struct pp_thread {
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure;
    uint32_t *sizes;  /* [WL_SIZE_POOL_LEN] */
    long long pairs;  /* this thread's share, all rounds */
} pp_thread;

typedef struct pp_run {
    wl_touch_mode touch;  /* written into each new block */
    pp_thread *threads;
} pp_run;

static void pp_worker(wl_ctx *ctx, int index, void *arg)
{
    pp_run *run = arg;
    pp_thread *me = &run->threads[index];
    const alloc_table *a = ctx->a;
    for (long long i = 0; i < me->pairs; i++) {
        size_t size = me->sizes[(size_t)i & WL_SIZE_POOL_MASK];
        void *p = a->malloc(size);
        if (p == NULL) {
            me->failure = (wl_thread_failure){1, size};
            return;
        }
        wl_touch_block(p, size, run->touch);
        a->free(p);
    }
}

/* fresh: run on new threads (the multi-thread row) or on the calling one */
static int run_pairs(wl_ctx *ctx, int nthreads, int fresh)
{
    const long long pairs = wl_param(ctx, "pairs");
    const long long rounds = wl_param(ctx, "rounds");
    if (pairs < nthreads) {
        wl_fail(ctx, "parameter pairs=%lld is fewer than the %d threads", pairs, nthreads);
        return -1;
    }
    int rc = -1;
    pp_run run = {.touch = wl_touch_param(ctx)};
    run.threads = wl_scratch_get(ctx, (size_t)nthreads * sizeof *run.threads);
    if (run.threads == NULL)
        return -1;
    long long total = 0;
    for (int t = 0; t < nthreads; t++) {
        pp_thread *th = &run.threads[t];
        /* an even split; the first pairs % T threads take one more */
        th->pairs = (pairs / nthreads + (t < pairs % nthreads)) * rounds;
        total += th->pairs;
        th->sizes = wl_scratch_get(ctx, WL_SIZE_POOL_LEN * sizeof *th->sizes);
        if (th->sizes == NULL)
            goto out;
        wl_rng rng;
        wl_rng_seed_thread(&rng, ctx->seed, t);
        for (size_t i = 0; i < WL_SIZE_POOL_LEN; i++)
            th->sizes[i] = SEED_CLASSES[wl_rng_range(&rng, 0, SEED_CLASS_COUNT - 1)];
    }
    uint64_t elapsed = wl_run_threads(ctx, nthreads, fresh, pp_worker, &run);
    if (wl_report_thread_failure(ctx, &run.threads[0].failure, sizeof run.threads[0],
                                 nthreads) != 0)
        goto out;
    wl_metric(ctx, "ns_per_op", (double)elapsed / (double)total, "ns", "lower");
    wl_operations(ctx, 2 * total);
    rc = 0;
out:
    for (int t = 0; t < nthreads; t++)
        wl_scratch_put(run.threads[t].sizes, WL_SIZE_POOL_LEN * sizeof(uint32_t));
    wl_scratch_put(run.threads, (size_t)nthreads * sizeof *run.threads);
    return rc;
}

static int run_pp_st(wl_ctx *ctx)
{
    return run_pairs(ctx, 1, 0);
}

static int run_pp_mt(wl_ctx *ctx)
{
    return run_pairs(ctx, ctx->threads, 1);
}

const workload wl_memallocpp_st = {
    .name = "memallocpp-st",
    .group = "memalloc-cpp",
    .describe = "2,000,000 allocate+free pairs of 16/64/256/1,024 B on one thread",
    .metric = "ns_per_op", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"pairs", 2000000, 0, 1, 10000000000LL, "allocate+free pairs per round"},
        {"rounds", 20, 3, 1, 1000000, "times the whole run is repeated"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_pp_st,
};

const workload wl_memallocpp_mt = {
    .name = "memallocpp-mt",
    .group = "memalloc-cpp",
    .describe = "2,000,000 allocate+free pairs of 16/64/256/1,024 B split evenly over T threads",
    .metric = "ns_per_op", .unit = "ns", .better = "lower",
    .default_threads = 2, .threaded = 1,
    .params = {
        {"pairs", 2000000, 0, 1, 10000000000LL, "allocate+free pairs per round, over all threads"},
        {"rounds", 20, 3, 1, 1000000, "times the whole run is repeated"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_pp_mt,
};
