/* larson: the server benchmark of Larson and Krishnan, "Memory Allocation
 * for Long-Running Server Applications" (ISMM 1998), written here from the
 * paper's description.
 *
 * Each of T threads owns an array of `blocks` live blocks (or its share of
 * `total_blocks`, for a live set that does not grow with T) with sizes
 * uniform in [min_size, max_size]. A step frees the block in a random slot
 * and allocates a new one of a fresh size into it. After `pairs` steps the
 * round ends: every thread exits and a new thread takes over its array, so
 * the new thread frees what its predecessors allocated (the paper's
 * "bleeding" of memory from thread to thread in a server). The arrays are
 * first filled by the calling thread, as the original's warm-up does, and
 * what is live at the end is freed by it too.
 *
 * Cross-thread frees are known by construction: every thread of a round is
 * new, so a free is cross-thread exactly when the slot's block was
 * allocated before this round (each slot carries the round that filled it,
 * in the same 16 bytes as its pointer). Metric: nanoseconds per allocator
 * call (wall time of the rounds, thread start-up excluded, over all
 * threads' mallocs and frees).
 */
#include "wl_common.h"

/* The round stamp of blocks the calling thread allocated (fill). */
static const uint32_t LARSON_CALLER = UINT32_MAX;

enum { CALLS_PER_STEP = 2 }; /* one free, one malloc */

typedef struct larson_slot {
    void *block;
    uint32_t size;
    uint32_t round; /* the round whose thread allocated block */
} larson_slot;

typedef struct larson_thread {
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure;
    wl_free_count freed;
    larson_slot *slots; /* [blocks] the array this thread index owns */
    uint32_t *sizes;    /* [WL_SIZE_POOL_LEN] pre-drawn sizes */
    uint32_t *victims;  /* [WL_SIZE_POOL_LEN] pre-drawn slots */
    size_t next;        /* next pool entry: rounds continue where the last stopped */
} larson_thread;

typedef struct larson_run {
    size_t blocks;
    long long pairs;
    uint32_t round;
    wl_touch_mode touch;    /* written into each new block */
    larson_thread *threads; /* [ctx->threads] */
} larson_run;

static void larson_worker(wl_ctx *ctx, int index, void *arg)
{
    larson_run *run = arg;
    larson_thread *me = &run->threads[index];
    const alloc_table *a = ctx->a;
    const uint32_t round = run->round;
    wl_free_count freed = me->freed;
    size_t next = me->next;
    for (long long i = 0; i < run->pairs; i++, next++) {
        larson_slot *s = &me->slots[me->victims[next & WL_SIZE_POOL_MASK]];
        uint32_t size = me->sizes[next & WL_SIZE_POOL_MASK];
        if (s->block != NULL) {
            a->free(s->block);
            freed.frees++;
            freed.cross_thread += s->round != round;
        }
        s->block = a->malloc(size);
        if (s->block == NULL) {
            me->failure = (wl_thread_failure){1, size};
            break;
        }
        wl_touch_block(s->block, size, run->touch);
        s->size = size;
        s->round = round;
    }
    me->freed = freed;
    me->next = next;
}

static size_t larson_live_bytes(const larson_run *run, int nthreads)
{
    size_t live = 0;
    for (int t = 0; t < nthreads; t++)
        for (size_t i = 0; i < run->blocks; i++)
            if (run->threads[t].slots[i].block != NULL)
                live += run->threads[t].slots[i].size;
    return live;
}

/* The calling thread's fill; returns 0, or -1 after wl_fail(). */
static int larson_fill(wl_ctx *ctx, larson_run *run, int nthreads)
{
    for (int t = 0; t < nthreads; t++) {
        larson_thread *th = &run->threads[t];
        for (size_t i = 0; i < run->blocks; i++) {
            uint32_t size = th->sizes[(WL_SIZE_POOL_LEN - 1 - i) & WL_SIZE_POOL_MASK];
            th->slots[i] = (larson_slot){ctx->a->malloc(size), size, LARSON_CALLER};
            if (th->slots[i].block == NULL) {
                wl_fail(ctx, "malloc(%u) returned NULL while filling thread %d's array", size, t);
                return -1;
            }
            wl_touch_block(th->slots[i].block, size, run->touch);
        }
    }
    return 0;
}

/* Frees what is still live from the calling thread; counts into *freed. */
static void larson_free_all(wl_ctx *ctx, larson_run *run, int nthreads, wl_free_count *freed)
{
    for (int t = 0; t < nthreads; t++) {
        larson_slot *slots = run->threads[t].slots;
        if (slots == NULL)
            continue;
        for (size_t i = 0; i < run->blocks; i++) {
            if (slots[i].block == NULL)
                continue;
            ctx->a->free(slots[i].block);
            freed->frees++;
            freed->cross_thread += slots[i].round != LARSON_CALLER;
            slots[i].block = NULL;
        }
    }
}

static int run_larson(wl_ctx *ctx)
{
    const long long total = wl_param(ctx, "total_blocks");
    const long long blocks = total ? total / ctx->threads : wl_param(ctx, "blocks");
    if (blocks < 1) {
        wl_fail(ctx, "parameter total_blocks=%lld gives no block to each of %d threads", total, ctx->threads);
        return -1;
    }
    const long long lo = wl_param(ctx, "min_size");
    const long long hi = wl_param(ctx, "max_size");
    const long long rounds = wl_param(ctx, "rounds");
    const int nthreads = ctx->threads;
    larson_run run = {.blocks = (size_t)blocks, .pairs = wl_param(ctx, "pairs"),
                      .touch = wl_touch_param(ctx)};

    int rc = -1;
    run.threads = wl_scratch_get(ctx, (size_t)nthreads * sizeof *run.threads);
    if (run.threads == NULL)
        return -1;
    for (int t = 0; t < nthreads; t++) {
        larson_thread *th = &run.threads[t];
        wl_rng rng;
        wl_rng_seed_thread(&rng, ctx->seed, t);
        th->sizes = wl_draw_sizes_uniform(ctx, &rng, WL_SIZE_POOL_LEN, (uint32_t)lo, (uint32_t)hi);
        th->victims = wl_draw_sizes_uniform(ctx, &rng, WL_SIZE_POOL_LEN, 0, (uint32_t)(blocks - 1));
        th->slots = wl_scratch_get(ctx, run.blocks * sizeof *th->slots);
        if (th->sizes == NULL || th->victims == NULL || th->slots == NULL)
            goto out;
    }

    wl_free_count caller = {0, 0};
    if (larson_fill(ctx, &run, nthreads) != 0)
        goto out;
    wl_phase(ctx, "built", (long long)nthreads * blocks, larson_live_bytes(&run, nthreads));

    uint64_t elapsed = 0;
    long long done = 0;
    for (long long r = 0; r < rounds; r++) {
        run.round = (uint32_t)r;
        elapsed += wl_run_threads(ctx, nthreads, 1, larson_worker, &run);
        if (wl_report_thread_failure(ctx, &run.threads[0].failure, sizeof run.threads[0],
                                     nthreads) != 0)
            goto out;
        done += run.pairs * nthreads;
    }
    wl_phase(ctx, "churned", done * CALLS_PER_STEP, larson_live_bytes(&run, nthreads));
    larson_free_all(ctx, &run, nthreads, &caller);
    wl_phase(ctx, "freed", 0, 0);
    wl_report_frees(ctx, &run.threads[0].freed, sizeof run.threads[0], nthreads, caller);
    wl_metric(ctx, "ns_per_op", (double)elapsed / ((double)done * CALLS_PER_STEP), "ns", "lower");
    /* every step frees a full slot, and every block, filled or stepped in,
     * is freed by the end: a malloc and a free per block */
    wl_operations(ctx, CALLS_PER_STEP * ((long long)nthreads * blocks + done));
    rc = 0;
out:
    {
        wl_free_count ignored = {0, 0};
        larson_free_all(ctx, &run, nthreads, &ignored);
    }
    for (int t = 0; t < nthreads; t++) {
        wl_scratch_put(run.threads[t].slots, run.blocks * sizeof *run.threads[t].slots);
        wl_scratch_put(run.threads[t].sizes, WL_SIZE_POOL_LEN * sizeof(uint32_t));
        wl_scratch_put(run.threads[t].victims, WL_SIZE_POOL_LEN * sizeof(uint32_t));
    }
    wl_scratch_put(run.threads, (size_t)nthreads * sizeof *run.threads);
    return rc;
}

const workload wl_larson = {
    .name = "larson",
    .group = "classic",
    .describe = "server: each thread frees a random block of its array and allocates a new one; "
                "every round new threads take the arrays over and free what the old ones allocated",
    .metric = "ns_per_op", .unit = "ns", .better = "lower",
    .default_threads = 2, .threaded = 1,
    .params = {
        {"blocks", 5000, 0, 1, 100000000, "live blocks in each thread's array"},
        /* the paper's live set grows with the threads; this one holds it
         * fixed, so that a footprint growing with threads shows */
        {"total_blocks", 0, 0, 0, 100000000,
         "live blocks over all threads, shared equally (0: `blocks` per thread instead)"},
        {"min_size", 8, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 1000, 0, 1, 1 << 30, "largest block size in bytes"},
        {"pairs", 200000, 50000, 1, 10000000000LL, "free+malloc steps per thread per round"},
        {"rounds", 30, 4, 1, 1000000, "rounds: each one starts new threads on the arrays"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_larson,
};
