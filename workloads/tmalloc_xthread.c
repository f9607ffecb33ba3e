/* tmalloc-xthread: "allocated on one thread, freed on another" (workload
 * published by the tmalloc README). A producer thread allocates small
 * blocks in batches and hands each full batch to a consumer thread through
 * a bounded single-producer single-consumer queue; the consumer frees every
 * block it receives. Every free is therefore a remote free, which is what
 * the row measures. Metric: millions of pairs per second (pairs / wall time
 * from the start barrier to the end of both threads).
 *
 * Queue protocol: `head` counts batches published, `tail` batches consumed.
 * The producer fills slot head % depth only while head - tail < depth and
 * then publishes with a release store of head + 1; the consumer reads a
 * slot only after an acquire load shows head > tail, and gives the slot
 * back with a release store of tail + 1. Each slot therefore has one owner
 * at a time and the plain stores into it are ordered by those two atomics.
 */
#include "wl_common.h"

#include <sched.h>
#include <stdatomic.h>

/* Spins this many times on an empty or full queue before yielding the CPU:
 * long enough to catch the other thread's next batch on a free core, short
 * enough not to starve it when both threads share one core. */
enum { XT_SPINS_BEFORE_YIELD = 256 };

typedef struct xt_slot {
    size_t count;   /* blocks in this batch */
    void **blocks;  /* [batch] */
} xt_slot;

typedef struct xt_queue {
    _Alignas(WL_CACHE_LINE) atomic_size_t head;
    _Alignas(WL_CACHE_LINE) atomic_size_t tail;
    /* set by the producer when it stops early because malloc failed */
    _Alignas(WL_CACHE_LINE) atomic_int producer_stopped;
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure; /* the producer's */
    size_t depth;
    size_t batch;
    size_t batches;    /* batches to hand over in all */
    xt_slot *slots;    /* [depth] */
    uint32_t *sizes;   /* [WL_SIZE_POOL_LEN] pre-drawn */
    wl_touch_mode touch; /* what the producer writes into each block */
} xt_queue;

static void xt_wait(unsigned *spins)
{
    if (++*spins >= XT_SPINS_BEFORE_YIELD) {
        *spins = 0;
        sched_yield();
    }
}

static void xt_produce(const alloc_table *a, xt_queue *q)
{
    size_t next_size = 0;
    for (size_t b = 0; b < q->batches; b++) {
        unsigned spins = 0;
        while (b - atomic_load_explicit(&q->tail, memory_order_acquire) >= q->depth)
            xt_wait(&spins);
        xt_slot *slot = &q->slots[b % q->depth];
        for (size_t i = 0; i < q->batch; i++) {
            size_t size = q->sizes[next_size++ & WL_SIZE_POOL_MASK];
            void *p = a->malloc(size);
            if (p == NULL) {
                q->failure = (wl_thread_failure){1, size};
                /* hand over what was allocated so the consumer frees it */
                slot->count = i;
                atomic_store_explicit(&q->head, b + 1, memory_order_release);
                atomic_store_explicit(&q->producer_stopped, 1, memory_order_release);
                return;
            }
            wl_touch_block(p, size, q->touch);
            slot->blocks[i] = p;
        }
        slot->count = q->batch;
        atomic_store_explicit(&q->head, b + 1, memory_order_release);
    }
}

static void xt_consume(const alloc_table *a, xt_queue *q)
{
    for (size_t b = 0; b < q->batches; b++) {
        unsigned spins = 0;
        while (atomic_load_explicit(&q->head, memory_order_acquire) <= b) {
            /* the stop flag is stored after the last head, so a second look
             * at head after seeing it cannot miss a batch */
            if (atomic_load_explicit(&q->producer_stopped, memory_order_acquire) &&
                atomic_load_explicit(&q->head, memory_order_acquire) <= b)
                return;
            xt_wait(&spins);
        }
        xt_slot *slot = &q->slots[b % q->depth];
        for (size_t i = 0; i < slot->count; i++)
            a->free(slot->blocks[i]);
        atomic_store_explicit(&q->tail, b + 1, memory_order_release);
    }
}

enum { XT_PRODUCER = 0, XT_CONSUMER = 1, XT_THREADS = 2 };

static void xt_worker(wl_ctx *ctx, int index, void *arg)
{
    if (index == XT_PRODUCER)
        xt_produce(ctx->a, arg);
    else
        xt_consume(ctx->a, arg);
}

static int run_xthread(wl_ctx *ctx)
{
    const long long pairs = wl_param(ctx, "pairs");
    const long long batch = wl_param(ctx, "batch");
    const long long depth = wl_param(ctx, "depth");
    const long long lo = wl_param(ctx, "min_size");
    const long long hi = wl_param(ctx, "max_size");
    if (wl_check_order(ctx, "min_size", lo, "max_size", hi) != 0)
        return -1;

    int rc = -1;
    xt_queue *q = wl_scratch_get(ctx, sizeof *q);
    if (q == NULL)
        return -1;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    atomic_init(&q->producer_stopped, 0);
    q->depth = (size_t)depth;
    q->batch = (size_t)batch;
    /* whole batches only: pairs rounded up to a multiple of the batch */
    q->batches = ((size_t)pairs + q->batch - 1) / q->batch;
    wl_rng rng;
    wl_rng_seed(&rng, ctx->seed);
    q->touch = wl_touch_param(ctx);
    q->sizes = wl_draw_sizes_uniform(ctx, &rng, WL_SIZE_POOL_LEN, (uint32_t)lo, (uint32_t)hi);
    q->slots = wl_scratch_get(ctx, q->depth * sizeof *q->slots);
    if (q->sizes == NULL || q->slots == NULL)
        goto out;
    for (size_t s = 0; s < q->depth; s++) {
        q->slots[s].blocks = wl_scratch_get(ctx, q->batch * sizeof(void *));
        if (q->slots[s].blocks == NULL)
            goto out;
    }

    uint64_t elapsed = wl_run_threads(ctx, XT_THREADS, 1, xt_worker, q);
    if (wl_report_thread_failure(ctx, &q->failure, 0, 1) != 0)
        goto out;
    double done = (double)q->batches * (double)q->batch;
    wl_metric(ctx, "mpairs_per_s", wl_millions_per_s(done, elapsed), "Mpairs/s", "higher");
    /* every block the producer allocates, the consumer frees */
    wl_operations(ctx, 2 * (long long)(q->batches * q->batch));
    rc = 0;
out:
    if (q->slots != NULL)
        for (size_t s = 0; s < q->depth; s++)
            wl_scratch_put(q->slots[s].blocks, q->batch * sizeof(void *));
    wl_scratch_put(q->slots, q->depth * sizeof *q->slots);
    wl_scratch_put(q->sizes, WL_SIZE_POOL_LEN * sizeof *q->sizes);
    wl_scratch_put(q, sizeof *q);
    return rc;
}

const workload wl_tmalloc_xthread = {
    .name = "tmalloc-xthread",
    .group = "tmalloc",
    .describe = "16-256 B blocks allocated on one thread and freed on another, "
                "handed over in batches through a bounded queue",
    .metric = "mpairs_per_s", .unit = "Mpairs/s", .better = "higher",
    .default_threads = XT_THREADS, .threaded = 0,
    .params = {
        {"pairs", 10000000, 1500000, 1, 10000000000LL, "blocks handed from producer to consumer"},
        {"batch", 64, 0, 1, 1000000, "blocks per hand-over"},
        {"depth", 8, 0, 1, 4096, "batches the queue holds"},
        {"min_size", 16, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 256, 0, 1, 1 << 30, "largest block size in bytes"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_xthread,
};
