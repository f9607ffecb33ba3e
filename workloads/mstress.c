/* mstress: the stress pattern mimalloc's documentation describes for its
 * stress test (mimalloc README, benchmark "mstressN", and its test-stress
 * description), written here from that description: many allocations of
 * random sizes (mostly small, a few large), random lifetimes, objects
 * passed to other threads, and worker threads created and destroyed
 * several times while some objects outlive the thread that allocated them.
 *
 * `generations` times, T new threads each run this loop until they have
 * made `allocs` allocations into their working set and `allocs` *
 * retain_permille / 1000 into a retained set (each step picks one of the
 * two while both have some left): after each allocation, with chance
 * free_permille it frees a random working-set entry, and with chance
 * transfer_permille it swaps a random working-set entry with a random slot
 * of a shared transfer array (an atomic exchange), so the object goes to
 * whichever thread takes that slot next, in this generation or a later one.
 * At the end of its run a thread frees its retained and working sets; the
 * calling thread frees what the transfer array still holds at the very end.
 *
 * Sizes: 1-40 words of 8 bytes (uniform); 1 in 100 ten times larger, 1 in
 * 1,000 a hundred times (so up to 32,000 bytes).
 *
 * Cross-thread frees: each block's first word holds the number of the
 * thread that allocated it (generation * T + index + 1; 0 is the calling
 * thread), written at allocation; a free compares it with the freeing
 * thread's own number (the original checks a cookie in every block at
 * free, so reading the block there is part of the pattern). Metric:
 * nanoseconds per allocator call over all generations (thread start-up
 * excluded).
 */
#include "wl_common.h"

#include <stdatomic.h>

enum {
    WORD = 8,
    MIN_WORDS = 1, MAX_WORDS = 40,
    PERMILLE = 1000,
    LARGER_CHANCE = 10, LARGER_FACTOR = 10,    /* per mille */
    LARGEST_CHANCE = 1, LARGEST_FACTOR = 100,  /* per mille */
    /* which of the two sets a step allocates into, while both have some left */
    RETAIN_CHOICE = 500,
};

typedef struct ms_thread {
    _Alignas(WL_CACHE_LINE) wl_thread_failure failure;
    wl_free_count freed;
    void **data;        /* [allocs] working set; freed entries are NULL */
    void **retained;    /* [retain] */
    uint32_t *sizes;    /* [WL_SIZE_POOL_LEN] pre-drawn sizes */
    uint32_t *random;   /* [WL_SIZE_POOL_LEN] pre-drawn random words */
    size_t next_size;
    size_t next_random;
} ms_thread;

typedef struct ms_run {
    long long allocs;
    long long retain;
    uint32_t free_permille;
    uint32_t transfer_permille;
    size_t slots;
    uint64_t generation;
    wl_touch_mode touch;         /* written into each new block, before its tag */
    _Atomic(void *) *transfer;  /* [slots] */
    ms_thread *threads;          /* [T] */
} ms_run;

static inline uint64_t *ms_tag(void *p)
{
    return (uint64_t *)p;
}

static inline uint32_t ms_random(ms_thread *me)
{
    return me->random[me->next_random++ & WL_SIZE_POOL_MASK];
}

static inline void ms_free(const alloc_table *a, void *p, uint64_t self, wl_free_count *freed)
{
    if (p == NULL)
        return;
    freed->frees++;
    freed->cross_thread += *ms_tag(p) != self;
    a->free(p);
}

static void *ms_alloc(const alloc_table *a, ms_thread *me, uint64_t self, wl_touch_mode touch)
{
    uint32_t size = me->sizes[me->next_size++ & WL_SIZE_POOL_MASK];
    void *p = a->malloc(size);
    if (p == NULL) {
        me->failure = (wl_thread_failure){1, size};
    } else {
        wl_touch_block(p, size, touch);
        *ms_tag(p) = self;
    }
    return p;
}

static void ms_worker(wl_ctx *ctx, int index, void *arg)
{
    ms_run *run = arg;
    ms_thread *me = &run->threads[index];
    const alloc_table *a = ctx->a;
    const uint64_t self = run->generation * (uint64_t)ctx->threads + (uint64_t)index + 1;
    wl_free_count freed = me->freed;
    long long allocs = run->allocs, retain = run->retain;
    size_t top = 0, rtop = 0;
    while (allocs > 0 || retain > 0) {
        if (retain == 0 || (allocs > 0 && ms_random(me) % PERMILLE < RETAIN_CHOICE)) {
            if ((me->data[top] = ms_alloc(a, me, self, run->touch)) == NULL)
                break;
            top++;
            allocs--;
        } else {
            if ((me->retained[rtop] = ms_alloc(a, me, self, run->touch)) == NULL)
                break;
            rtop++;
            retain--;
        }
        if (top > 0 && ms_random(me) % PERMILLE < run->free_permille) {
            size_t i = ms_random(me) % top;
            ms_free(a, me->data[i], self, &freed);
            me->data[i] = NULL;
        }
        if (top > 0 && ms_random(me) % PERMILLE < run->transfer_permille) {
            size_t i = ms_random(me) % top;
            size_t slot = ms_random(me) % run->slots;
            me->data[i] = atomic_exchange_explicit(&run->transfer[slot], me->data[i],
                                                   memory_order_acq_rel);
        }
    }
    for (size_t i = 0; i < rtop; i++)
        ms_free(a, me->retained[i], self, &freed);
    for (size_t i = 0; i < top; i++) {
        ms_free(a, me->data[i], self, &freed);
        me->data[i] = NULL;
    }
    me->freed = freed;
}

static uint32_t ms_draw_size(wl_rng *rng)
{
    uint32_t words = (uint32_t)wl_rng_range(rng, MIN_WORDS, MAX_WORDS);
    uint32_t roll = (uint32_t)wl_rng_range(rng, 0, PERMILLE - 1);
    if (roll < LARGEST_CHANCE)
        words *= LARGEST_FACTOR;
    else if (roll < LARGEST_CHANCE + LARGER_CHANCE)
        words *= LARGER_FACTOR;
    return words * WORD;
}

static int ms_prepare(wl_ctx *ctx, ms_run *run)
{
    for (int t = 0; t < ctx->threads; t++) {
        ms_thread *th = &run->threads[t];
        wl_rng rng;
        wl_rng_seed_thread(&rng, ctx->seed, t);
        th->data = wl_scratch_get(ctx, (size_t)run->allocs * sizeof(void *));
        th->retained = wl_scratch_get(ctx, (size_t)run->retain * sizeof(void *) + 1);
        th->sizes = wl_scratch_get(ctx, WL_SIZE_POOL_LEN * sizeof(uint32_t));
        th->random = wl_scratch_get(ctx, WL_SIZE_POOL_LEN * sizeof(uint32_t));
        if (!th->data || !th->retained || !th->sizes || !th->random)
            return -1;
        for (size_t i = 0; i < WL_SIZE_POOL_LEN; i++) {
            th->sizes[i] = ms_draw_size(&rng);
            th->random[i] = (uint32_t)wl_rng_next(&rng);
        }
    }
    return 0;
}

static int run_mstress(wl_ctx *ctx)
{
    const long long generations = wl_param(ctx, "generations");
    ms_run run = {
        .touch = wl_touch_param(ctx),
        .allocs = wl_param(ctx, "allocs"),
        .free_permille = (uint32_t)wl_param(ctx, "free_permille"),
        .transfer_permille = (uint32_t)wl_param(ctx, "transfer_permille"),
        .slots = (size_t)wl_param(ctx, "transfer_slots"),
    };
    run.retain = run.allocs * wl_param(ctx, "retain_permille") / PERMILLE;
    const int nthreads = ctx->threads;
    int rc = -1;
    wl_free_count caller = {0, 0};
    run.transfer = wl_scratch_get(ctx, run.slots * sizeof *run.transfer);
    run.threads = wl_scratch_get(ctx, (size_t)nthreads * sizeof *run.threads);
    if (run.transfer == NULL || run.threads == NULL || ms_prepare(ctx, &run) != 0)
        goto out;

    uint64_t elapsed = 0;
    for (long long g = 0; g < generations; g++) {
        run.generation = (uint64_t)g;
        elapsed += wl_run_threads(ctx, nthreads, 1, ms_worker, &run);
        if (wl_report_thread_failure(ctx, &run.threads[0].failure, sizeof run.threads[0],
                                     nthreads) != 0)
            goto out;
    }
    size_t left = 0;
    for (size_t s = 0; s < run.slots; s++) {
        void *p = atomic_load_explicit(&run.transfer[s], memory_order_acquire);
        left += p != NULL;
    }
    wl_phase(ctx, "generations", generations, left);
    for (size_t s = 0; s < run.slots; s++) {
        ms_free(ctx->a, atomic_exchange(&run.transfer[s], NULL), 0, &caller);
    }
    wl_phase(ctx, "freed", 0, 0);
    wl_report_frees(ctx, &run.threads[0].freed, sizeof run.threads[0], nthreads, caller);
    double calls = (double)(run.allocs + run.retain) * (double)nthreads * (double)generations;
    /* each block allocated is freed once: calls = allocations + frees */
    wl_metric(ctx, "ns_per_op", (double)elapsed / (2.0 * calls), "ns", "lower");
    wl_operations(ctx, 2 * (run.allocs + run.retain) * nthreads * generations);
    rc = 0;
out:
    if (run.transfer != NULL)
        for (size_t s = 0; s < run.slots; s++) {
            wl_free_count ignored = {0, 0};
            ms_free(ctx->a, atomic_exchange(&run.transfer[s], NULL), 0, &ignored);
        }
    if (run.threads != NULL)
        for (int t = 0; t < nthreads; t++) {
            ms_thread *th = &run.threads[t];
            wl_scratch_put(th->data, (size_t)run.allocs * sizeof(void *));
            wl_scratch_put(th->retained, (size_t)run.retain * sizeof(void *) + 1);
            wl_scratch_put(th->sizes, WL_SIZE_POOL_LEN * sizeof(uint32_t));
            wl_scratch_put(th->random, WL_SIZE_POOL_LEN * sizeof(uint32_t));
        }
    wl_scratch_put(run.threads, (size_t)nthreads * sizeof *run.threads);
    wl_scratch_put(run.transfer, run.slots * sizeof *run.transfer);
    return rc;
}

const workload wl_mstress = {
    .name = "mstress",
    .group = "classic",
    .describe = "stress: random sizes (mostly small, some large) and lifetimes, objects passed "
                "to other threads, threads recreated while a retained set outlives them",
    .metric = "ns_per_op", .unit = "ns", .better = "lower",
    .default_threads = 2, .threaded = 1,
    .params = {
        {"generations", 10, 3, 1, 1000000, "times the threads are created, run and joined"},
        {"allocs", 200000, 20000, 1, 1000000000, "working-set allocations per thread per generation"},
        {"retain_permille", 500, 0, 0, 10000, "retained-set allocations per 1,000 working-set ones"},
        {"free_permille", 660, 0, 0, 1000, "chance per step of freeing a random working-set entry"},
        {"transfer_permille", 250, 0, 0, 1000, "chance per step of swapping one with the transfer array"},
        {"transfer_slots", 1000, 0, 1, 100000000, "slots of the shared transfer array"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_mstress,
};
