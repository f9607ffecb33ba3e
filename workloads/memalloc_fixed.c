/* memalloc-fixed: "fixed-size churn" (workload published by the memalloc
 * README): 8 threads repeatedly allocate and free 64-byte objects; the seed
 * calls it an 8-thread, 2M-operation run. Here an operation is one call,
 * allocate or free, so a pair counts two; the 2M operations are split
 * evenly over the threads. The seed does not say how many objects a thread
 * holds at once; we allocate a batch of 64 before freeing them (memalloc's
 * own cache flush threshold), so the allocator's per-thread cache is worked
 * over its whole range and not through one recycled slot. The seed's run
 * ends in well under a second, too short to time on a shared VM, so it is
 * repeated `rounds` times inside one measurement. Metric: millions of
 * operations per second over all threads. Peak RSS, the seed's other
 * column, is the runner's process.peak_rss_bytes.
 */
#include "wl_common.h"

typedef struct fixed_thread {
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure;
    void **blocks; /* [batch] */
} fixed_thread;

typedef struct fixed_run {
    size_t size;
    size_t batch;
    long long pairs_per_thread; /* per round */
    long long rounds;
    wl_touch_mode touch;  /* written into each new block */
    fixed_thread *threads;
} fixed_run;

static void fixed_worker(wl_ctx *ctx, int index, void *arg)
{
    fixed_run *run = arg;
    fixed_thread *me = &run->threads[index];
    const alloc_table *a = ctx->a;
    const size_t size = run->size;
    const long long total = run->pairs_per_thread * run->rounds;
    for (long long done = 0; done < total;) {
        size_t n = run->batch;
        if ((long long)n > total - done)
            n = (size_t)(total - done);
        for (size_t i = 0; i < n; i++) {
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
        done += (long long)n;
    }
}

enum { OPS_PER_PAIR = 2 };

static int run_fixed(wl_ctx *ctx)
{
    const int nthreads = ctx->threads;
    fixed_run run = {
        .size = (size_t)wl_param(ctx, "size"),
        .batch = (size_t)wl_param(ctx, "batch"),
        .rounds = wl_param(ctx, "rounds"),
        .touch = wl_touch_param(ctx),
    };
    const long long ops = wl_param(ctx, "ops");
    run.pairs_per_thread = ops / OPS_PER_PAIR / nthreads;
    if (run.pairs_per_thread < 1) {
        wl_fail(ctx, "parameter ops=%lld gives no allocate+free pair to each of %d threads",
                ops, nthreads);
        return -1;
    }
    int rc = -1;
    run.threads = wl_scratch_get(ctx, (size_t)nthreads * sizeof *run.threads);
    if (run.threads == NULL)
        return -1;
    for (int t = 0; t < nthreads; t++) {
        run.threads[t].blocks = wl_scratch_get(ctx, run.batch * sizeof(void *));
        if (run.threads[t].blocks == NULL)
            goto out;
    }
    uint64_t elapsed = wl_run_threads(ctx, nthreads, 1, fixed_worker, &run);
    if (wl_report_thread_failure(ctx, &run.threads[0].failure, sizeof run.threads[0],
                                 nthreads) != 0)
        goto out;
    double done = (double)OPS_PER_PAIR * (double)run.pairs_per_thread *
                  (double)run.rounds * (double)nthreads;
    wl_metric(ctx, "mops_per_s", wl_millions_per_s(done, elapsed), "Mops/s", "higher");
    wl_operations(ctx, OPS_PER_PAIR * run.pairs_per_thread * run.rounds * nthreads);
    rc = 0;
out:
    for (int t = 0; t < nthreads; t++)
        wl_scratch_put(run.threads[t].blocks, run.batch * sizeof(void *));
    wl_scratch_put(run.threads, (size_t)nthreads * sizeof *run.threads);
    return rc;
}

const workload wl_memalloc_fixed = {
    .name = "memalloc-fixed",
    .group = "memalloc",
    .describe = "64-byte objects allocated and freed in batches of 64 on 8 threads",
    .metric = "mops_per_s", .unit = "Mops/s", .better = "higher",
    .default_threads = 8, .threaded = 1,
    .params = {
        {"ops", 2000000, 0, 2, 10000000000LL, "allocate or free calls per round, over all threads"},
        {"rounds", 50, 6, 1, 1000000000, "times the whole run is repeated"},
        {"size", 64, 0, 1, 1 << 30, "object size in bytes"},
        {"batch", 64, 0, 1, 1000000, "objects a thread allocates before freeing them"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_fixed,
};
