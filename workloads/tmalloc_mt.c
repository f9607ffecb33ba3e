/* tmalloc's multi-thread rows (workloads published by the tmalloc README).
 *
 * tmalloc-mt: each of T threads allocates a batch of small blocks and then
 * frees them all, round after round. "Small" is not defined by the seed; we
 * draw 16-256 B uniformly (a range every allocator here serves from its
 * per-thread fast path), and free in allocation order (the seed does not
 * say; first-in first-out is the order a queue of requests would give).
 * Metric: millions of allocate+free pairs per second over all threads.
 */
#include "wl_common.h"

typedef struct mt_thread {
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure;
    void **blocks;      /* [count] this thread's batch */
    uint32_t *sizes;    /* [WL_SIZE_POOL_LEN] this thread's pre-drawn sizes */
} mt_thread;

typedef struct mt_run {
    size_t count;
    long long rounds;
    wl_touch_mode touch;
    mt_thread *threads; /* [ctx->threads] */
} mt_run;

static void mt_worker(wl_ctx *ctx, int index, void *arg)
{
    mt_run *run = arg;
    mt_thread *me = &run->threads[index];
    const alloc_table *a = ctx->a;
    const size_t n = run->count;
    size_t next_size = 0;
    for (long long r = 0; r < run->rounds; r++) {
        for (size_t i = 0; i < n; i++) {
            size_t size = me->sizes[next_size++ & WL_SIZE_POOL_MASK];
            me->blocks[i] = a->malloc(size);
            if (me->blocks[i] == NULL) {
                me->failure = (wl_thread_failure){1, size};
                for (size_t k = 0; k < i; k++)
                    a->free(me->blocks[k]);
                return;
            }
            wl_touch_block(me->blocks[i], size, run->touch);
        }
        for (size_t i = 0; i < n; i++)
            a->free(me->blocks[i]);
    }
}

static int run_mt(wl_ctx *ctx)
{
    const long long count = wl_param(ctx, "count");
    const long long rounds = wl_param(ctx, "rounds");
    const long long lo = wl_param(ctx, "min_size");
    const long long hi = wl_param(ctx, "max_size");
    if (wl_check_order(ctx, "min_size", lo, "max_size", hi) != 0)
        return -1;
    const int nthreads = ctx->threads;
    mt_run run = {.count = (size_t)count, .rounds = rounds, .touch = wl_touch_param(ctx)};

    int rc = -1;
    run.threads = wl_scratch_get(ctx, (size_t)nthreads * sizeof *run.threads);
    if (run.threads == NULL)
        return -1;
    for (int t = 0; t < nthreads; t++) {
        wl_rng rng;
        wl_rng_seed_thread(&rng, ctx->seed, t);
        run.threads[t].sizes = wl_draw_sizes_uniform(ctx, &rng, WL_SIZE_POOL_LEN,
                                                     (uint32_t)lo, (uint32_t)hi);
        if (run.threads[t].sizes == NULL)
            goto out;
        run.threads[t].blocks = wl_scratch_get(ctx, run.count * sizeof(void *));
        if (run.threads[t].blocks == NULL)
            goto out;
    }

    /* fresh threads for every thread count, so T=1 is measured the same way */
    uint64_t elapsed = wl_run_threads(ctx, nthreads, 1, mt_worker, &run);
    if (wl_report_thread_failure(ctx, &run.threads[0].failure, sizeof run.threads[0],
                                 nthreads) != 0)
        goto out;
    double pairs = (double)nthreads * (double)count * (double)rounds;
    wl_metric(ctx, "mpairs_per_s", wl_millions_per_s(pairs, elapsed), "Mpairs/s", "higher");
    wl_operations(ctx, 2 * nthreads * count * rounds);
    rc = 0;
out:
    for (int t = 0; t < nthreads; t++) {
        wl_scratch_put(run.threads[t].blocks, run.count * sizeof(void *));
        wl_scratch_put(run.threads[t].sizes, WL_SIZE_POOL_LEN * sizeof(uint32_t));
    }
    wl_scratch_put(run.threads, (size_t)nthreads * sizeof *run.threads);
    return rc;
}

const workload wl_tmalloc_mt = {
    .name = "tmalloc-mt",
    .group = "tmalloc",
    .describe = "T threads each allocating 50,000 blocks of 16-256 B, then freeing them; repeated",
    .metric = "mpairs_per_s", .unit = "Mpairs/s", .better = "higher",
    .default_threads = 1, .threaded = 1,
    .params = {
        {"count", 50000, 0, 1, 100000000, "blocks each thread allocates before freeing"},
        {"rounds", 200, 24, 1, 1000000000, "times each thread allocates and frees its batch"},
        {"min_size", 16, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 256, 0, 1, 1 << 30, "largest block size in bytes"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_mt,
};
