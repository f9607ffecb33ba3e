/* xmalloc: the asymmetric producer/consumer test of Lever and Boreham,
 * "malloc() Performance in a Multithreaded Linux Environment" (USENIX 2000,
 * FREENIX track), written here from the paper's description: some threads
 * only allocate, others only free what those allocated.
 *
 * Of T threads, the first T - T/2 are producers and the other T/2
 * consumers; producer p hands its blocks to consumer p % (T/2). A producer
 * allocates `blocks` blocks (sizes uniform in [min_size, max_size]) in
 * batches of `batch` and puts each full batch into its consumer's mailbox
 * (wl_mailbox.h: room for `depth` batches; a producer waits while it is
 * full, a consumer while it is empty). A consumer frees every block it
 * takes out. With one thread there is nobody to hand to: the thread frees
 * each batch itself (no cross-thread frees).
 *
 * Cross-thread frees by construction: every free a consumer makes. Metric:
 * nanoseconds per allocator call (wall time from the start barrier to the
 * end of the last thread, over all mallocs and frees).
 */
#include "wl_mailbox.h"

enum { CALLS_PER_BLOCK = 2 };

typedef struct xm_thread {
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure;
    wl_free_count freed;
    void **batch;     /* [batch * depth] blocks in hand */
    uint32_t *sizes;  /* [WL_SIZE_POOL_LEN] producers' pre-drawn sizes */
} xm_thread;

typedef struct xm_run {
    size_t batch;
    size_t depth;
    long long blocks;   /* per producer */
    int producers;
    int consumers;
    wl_touch_mode touch;  /* written into each new block */
    xm_thread *threads;   /* [T] */
    wl_mailbox *boxes;    /* [consumers] */
} xm_run;

static void xm_free_all(const alloc_table *a, void **blocks, size_t n, wl_free_count *freed,
                        int cross)
{
    for (size_t i = 0; i < n; i++)
        a->free(blocks[i]);
    freed->frees += (long long)n;
    freed->cross_thread += cross ? (long long)n : 0;
}

/* Allocates up to one batch into me->batch; returns how many, and on a NULL
 * frees them again itself and records the failure (returns 0). */
static size_t xm_allocate(const alloc_table *a, xm_thread *me, size_t want, size_t *next_size,
                          wl_touch_mode touch)
{
    for (size_t i = 0; i < want; i++) {
        size_t size = me->sizes[(*next_size)++ & WL_SIZE_POOL_MASK];
        me->batch[i] = a->malloc(size);
        if (me->batch[i] == NULL) {
            me->failure = (wl_thread_failure){1, size};
            xm_free_all(a, me->batch, i, &me->freed, 0);
            return 0;
        }
        wl_touch_block(me->batch[i], size, touch);
    }
    return want;
}

static void xm_produce(const alloc_table *a, xm_run *run, xm_thread *me, wl_mailbox *box)
{
    size_t next_size = 0;
    for (long long left = run->blocks; left > 0;) {
        size_t want = (long long)run->batch < left ? run->batch : (size_t)left;
        size_t got = xm_allocate(a, me, want, &next_size, run->touch);
        if (got == 0)
            break;
        if (box == NULL)
            xm_free_all(a, me->batch, got, &me->freed, 0);
        else
            wl_mailbox_put(box, me->batch, got);
        left -= (long long)got;
    }
    if (box != NULL)
        wl_mailbox_close(box);
}

static void xm_consume(const alloc_table *a, xm_run *run, xm_thread *me, wl_mailbox *box)
{
    size_t cap = run->batch * run->depth;
    for (size_t n; (n = wl_mailbox_take(box, me->batch, cap, 1)) > 0;)
        xm_free_all(a, me->batch, n, &me->freed, 1);
}

static void xm_worker(wl_ctx *ctx, int index, void *arg)
{
    xm_run *run = arg;
    xm_thread *me = &run->threads[index];
    if (run->consumers == 0)
        xm_produce(ctx->a, run, me, NULL);
    else if (index < run->producers)
        xm_produce(ctx->a, run, me, &run->boxes[index % run->consumers]);
    else
        xm_consume(ctx->a, run, me, &run->boxes[index - run->producers]);
}

static int run_xmalloc(wl_ctx *ctx)
{
    const int nthreads = ctx->threads;
    const long long lo = wl_param(ctx, "min_size");
    const long long hi = wl_param(ctx, "max_size");
    xm_run run = {
        .batch = (size_t)wl_param(ctx, "batch"),
        .depth = (size_t)wl_param(ctx, "depth"),
        .blocks = wl_param(ctx, "blocks"),
        .touch = wl_touch_param(ctx),
        .consumers = nthreads / 2,
    };
    run.producers = nthreads - run.consumers;

    int rc = -1;
    run.threads = wl_scratch_get(ctx, (size_t)nthreads * sizeof *run.threads);
    run.boxes = wl_scratch_get(ctx, (size_t)(run.consumers + 1) * sizeof *run.boxes);
    if (run.threads == NULL || run.boxes == NULL)
        goto out;
    for (int t = 0; t < nthreads; t++) {
        xm_thread *th = &run.threads[t];
        th->batch = wl_scratch_get(ctx, run.batch * run.depth * sizeof(void *));
        if (th->batch == NULL)
            goto out;
        if (t < run.producers) {
            wl_rng rng;
            wl_rng_seed_thread(&rng, ctx->seed, t);
            th->sizes = wl_draw_sizes_uniform(ctx, &rng, WL_SIZE_POOL_LEN, (uint32_t)lo,
                                              (uint32_t)hi);
            if (th->sizes == NULL)
                goto out;
        }
    }
    for (int c = 0; c < run.consumers; c++) {
        /* producers c, c + consumers, c + 2 * consumers, ... send here */
        int senders = (run.producers - c + run.consumers - 1) / run.consumers;
        if (wl_mailbox_init(ctx, &run.boxes[c], run.batch * run.depth, senders) != 0)
            goto out;
    }

    uint64_t elapsed = wl_run_threads(ctx, nthreads, 1, xm_worker, &run);
    if (wl_report_thread_failure(ctx, &run.threads[0].failure, sizeof run.threads[0],
                                 nthreads) != 0)
        goto out;
    wl_phase(ctx, "done", CALLS_PER_BLOCK * run.blocks * run.producers, 0);
    wl_report_frees(ctx, &run.threads[0].freed, sizeof run.threads[0], nthreads,
                    (wl_free_count){0, 0});
    double calls = (double)CALLS_PER_BLOCK * (double)run.blocks * (double)run.producers;
    wl_metric(ctx, "ns_per_op", (double)elapsed / calls, "ns", "lower");
    wl_operations(ctx, CALLS_PER_BLOCK * run.blocks * run.producers);
    rc = 0;
out:
    if (run.boxes != NULL)
        for (int c = 0; c < run.consumers; c++)
            wl_mailbox_release(&run.boxes[c]);
    if (run.threads != NULL)
        for (int t = 0; t < nthreads; t++) {
            wl_scratch_put(run.threads[t].batch, run.batch * run.depth * sizeof(void *));
            wl_scratch_put(run.threads[t].sizes, WL_SIZE_POOL_LEN * sizeof(uint32_t));
        }
    wl_scratch_put(run.boxes, (size_t)(run.consumers + 1) * sizeof *run.boxes);
    wl_scratch_put(run.threads, (size_t)nthreads * sizeof *run.threads);
    return rc;
}

const workload wl_xmalloc = {
    .name = "xmalloc",
    .group = "classic",
    .describe = "producer/consumer: half the threads allocate blocks in batches and hand them "
                "over, the other half free them",
    .metric = "ns_per_op", .unit = "ns", .better = "lower",
    .default_threads = 2, .threaded = 1,
    .params = {
        {"blocks", 5000000, 400000, 1, 10000000000LL, "blocks each producer allocates"},
        {"batch", 64, 0, 1, 1000000, "blocks per hand-over"},
        {"depth", 16, 0, 1, 4096, "batches a consumer's mailbox holds"},
        {"min_size", 16, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 128, 0, 1, 1 << 30, "largest block size in bytes"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_xmalloc,
};
