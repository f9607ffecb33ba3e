/* rptest: the multi-threaded pattern of rpmalloc's benchmark, as its
 * documentation describes it (rpmalloc-benchmark README; "rptestN" in
 * mimalloc's benchmark list), written here from that description: threads
 * allocate with a size distribution weighted to small blocks, free in a
 * mixed order, hand a share of their blocks to another thread to free,
 * with a loop count and a live-set target.
 *
 * Each of T threads keeps a live set of `live` slots. A loop makes `ops`
 * steps; a step picks a random slot, frees the block in it (if any) and
 * allocates a new one (size log-uniform in [min_size, max_size]); with
 * chance cross_permille the new block is not kept but put aside for the
 * next thread (index + 1, round the ring), and the slot stays empty until a
 * later step fills it. At the end of each loop the thread puts what it set
 * aside into that thread's mailbox (wl_mailbox.h) and frees everything in
 * its own. After `loops` loops a thread closes its neighbour's mailbox,
 * frees its live set and empties its own mailbox until its sender has
 * closed.
 *
 * Cross-thread frees by construction: every block a thread takes out of its
 * mailbox (its sender is another thread whenever T > 1), so about
 * cross_permille / 1000 of all frees. Metric: nanoseconds per allocator
 * call (wall time from the start barrier to the end of the last thread).
 */
#include "wl_mailbox.h"

#include <sched.h>

enum {
    PERMILLE = 1000,
    /* a mailbox holds this many loops' worth of set-aside blocks */
    MAILBOX_LOOPS = 16,
};

typedef struct rp_thread {
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure;
    wl_free_count freed;
    long long allocs;
    void **slots;       /* [live] */
    void **aside;       /* [ops] blocks for the next thread */
    void **taken;       /* [ops * MAILBOX_LOOPS] blocks out of the mailbox */
    uint32_t *sizes;    /* [WL_SIZE_POOL_LEN] pre-drawn sizes */
    uint32_t *random;   /* [WL_SIZE_POOL_LEN] pre-drawn random words */
    wl_mailbox box;     /* what the previous thread hands this one */
} rp_thread;

typedef struct rp_run {
    size_t live;
    size_t ops;
    long long loops;
    uint32_t cross_permille;
    wl_touch_mode touch; /* written into each new block */
    rp_thread *threads;  /* [T] */
} rp_run;

/* Frees everything in me's mailbox; returns how many. */
static size_t rp_drain(const alloc_table *a, rp_run *run, rp_thread *me, int remote, int wait)
{
    size_t cap = run->ops * MAILBOX_LOOPS, total = 0;
    for (size_t n; (n = wl_mailbox_take(&me->box, me->taken, cap, wait)) > 0;) {
        for (size_t i = 0; i < n; i++)
            a->free(me->taken[i]);
        me->freed.frees += (long long)n;
        me->freed.cross_thread += remote ? (long long)n : 0;
        total += n;
        if (!wait)
            break;
    }
    return total;
}

/* Hands n blocks to the next thread; while its mailbox is full, frees what
 * this thread's own holds (so a ring of full mailboxes cannot deadlock). */
static void rp_hand(const alloc_table *a, rp_run *run, rp_thread *me, rp_thread *next, size_t n,
                    int remote)
{
    size_t sent = 0;
    while (sent < n) {
        sent += wl_mailbox_try_put(&next->box, me->aside + sent, n - sent);
        if (sent < n && rp_drain(a, run, me, remote, 0) == 0)
            sched_yield();
    }
}

static void rp_worker(wl_ctx *ctx, int index, void *arg)
{
    rp_run *run = arg;
    rp_thread *me = &run->threads[index];
    rp_thread *next = &run->threads[(index + 1) % ctx->threads];
    const alloc_table *a = ctx->a;
    const int remote = ctx->threads > 1;
    size_t r = 0;
    for (long long loop = 0; loop < run->loops && !me->failure.failed; loop++) {
        size_t aside = 0;
        for (size_t op = 0; op < run->ops; op++, r++) {
            void **slot = &me->slots[me->random[r & WL_SIZE_POOL_MASK] % run->live];
            if (*slot != NULL) {
                a->free(*slot);
                me->freed.frees++;
            }
            uint32_t size = me->sizes[r & WL_SIZE_POOL_MASK];
            void *p = a->malloc(size);
            *slot = NULL;
            if (p == NULL) {
                me->failure = (wl_thread_failure){1, size};
                break;
            }
            wl_touch_block(p, size, run->touch);
            me->allocs++;
            /* the high bits decide, the low ones chose the slot */
            if ((me->random[r & WL_SIZE_POOL_MASK] >> 16) % PERMILLE < run->cross_permille)
                me->aside[aside++] = p;
            else
                *slot = p;
        }
        rp_hand(a, run, me, next, aside, remote);
        rp_drain(a, run, me, remote, 0);
    }
    wl_mailbox_close(&next->box);
    for (size_t i = 0; i < run->live; i++) {
        if (me->slots[i] != NULL) {
            a->free(me->slots[i]);
            me->freed.frees++;
            me->slots[i] = NULL;
        }
    }
    rp_drain(a, run, me, remote, 1);
}

static int run_rptest(wl_ctx *ctx)
{
    const int nthreads = ctx->threads;
    const long long lo = wl_param(ctx, "min_size");
    const long long hi = wl_param(ctx, "max_size");
    rp_run run = {
        .live = (size_t)wl_param(ctx, "live"),
        .ops = (size_t)wl_param(ctx, "ops"),
        .loops = wl_param(ctx, "loops"),
        .cross_permille = (uint32_t)wl_param(ctx, "cross_permille"),
        .touch = wl_touch_param(ctx),
    };
    const size_t box_cap = run.ops * MAILBOX_LOOPS;
    int rc = -1;
    run.threads = wl_scratch_get(ctx, (size_t)nthreads * sizeof *run.threads);
    if (run.threads == NULL)
        return -1;
    for (int t = 0; t < nthreads; t++) {
        rp_thread *th = &run.threads[t];
        wl_rng rng;
        wl_rng_seed_thread(&rng, ctx->seed, t);
        th->slots = wl_scratch_get(ctx, run.live * sizeof(void *));
        th->aside = wl_scratch_get(ctx, run.ops * sizeof(void *));
        th->taken = wl_scratch_get(ctx, box_cap * sizeof(void *));
        th->sizes = wl_draw_sizes_log(ctx, &rng, WL_SIZE_POOL_LEN, (uint32_t)lo, (uint32_t)hi);
        th->random = wl_draw_sizes_uniform(ctx, &rng, WL_SIZE_POOL_LEN, 0, UINT32_MAX);
        if (!th->slots || !th->aside || !th->taken || !th->sizes || !th->random ||
            wl_mailbox_init(ctx, &th->box, box_cap, 1) != 0)
            goto out;
    }
    uint64_t elapsed = wl_run_threads(ctx, nthreads, 1, rp_worker, &run);
    if (wl_report_thread_failure(ctx, &run.threads[0].failure, sizeof run.threads[0],
                                 nthreads) != 0)
        goto out;
    wl_phase(ctx, "done", 0, 0);
    wl_report_frees(ctx, &run.threads[0].freed, sizeof run.threads[0], nthreads,
                    (wl_free_count){0, 0});
    long long calls = 0;
    for (int t = 0; t < nthreads; t++)
        calls += run.threads[t].allocs + run.threads[t].freed.frees;
    wl_metric(ctx, "ns_per_op", (double)elapsed / (double)calls, "ns", "lower");
    wl_operations(ctx, calls);
    rc = 0;
out:
    for (int t = 0; t < nthreads; t++) {
        rp_thread *th = &run.threads[t];
        wl_mailbox_release(&th->box);
        wl_scratch_put(th->slots, run.live * sizeof(void *));
        wl_scratch_put(th->aside, run.ops * sizeof(void *));
        wl_scratch_put(th->taken, box_cap * sizeof(void *));
        wl_scratch_put(th->sizes, WL_SIZE_POOL_LEN * sizeof(uint32_t));
        wl_scratch_put(th->random, WL_SIZE_POOL_LEN * sizeof(uint32_t));
    }
    wl_scratch_put(run.threads, (size_t)nthreads * sizeof *run.threads);
    return rc;
}

const workload wl_rptest = {
    .name = "rptest",
    .group = "classic",
    .describe = "threads keep a live set, replace random blocks (sizes weighted to small), and "
                "hand a share of new blocks to the next thread to free",
    .metric = "ns_per_op", .unit = "ns", .better = "lower",
    .default_threads = 2, .threaded = 1,
    .params = {
        {"loops", 2000, 60, 1, 1000000000, "loops per thread"},
        {"ops", 1000, 0, 1, 100000000, "replacements per loop"},
        {"live", 1000, 0, 1, 100000000, "live-set slots per thread (the live-set target)"},
        {"min_size", 16, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 16000, 0, 1, 1 << 30, "largest block size in bytes"},
        {"cross_permille", 100, 0, 0, 1000, "share of new blocks (per 1,000) freed by the next thread"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_rptest,
};
