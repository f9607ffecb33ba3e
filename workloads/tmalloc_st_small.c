/* tmalloc's single-thread small-block rows (workloads published by the
 * tmalloc README): one 64-byte block at a time; 1,000 blocks of 16-256 B
 * freed in reverse; 100,000 blocks of 16-1,024 B freed in random order.
 * Metric: nanoseconds per allocate+free pair. Each new block is written as
 * `touch` says (default: its first byte, as a program would); the seed
 * wrote nothing into these blocks (only its medium and huge rows say
 * "touched"), so reproducing its table runs them with touch=none.
 */
#include "wl_common.h"

/* The shape of the reverse-order and random-order rows: a batch of blocks
 * of uniformly drawn sizes, built and freed `rounds` times. */
typedef struct batch_shape {
    long long count;   /* blocks allocated before any is freed */
    long long rounds;  /* times the whole batch is built and freed */
    uint32_t min_size, max_size;
} batch_shape;

static int read_batch_shape(wl_ctx *ctx, batch_shape *s)
{
    s->count = wl_param(ctx, "count");
    s->rounds = wl_param(ctx, "rounds");
    long long lo = wl_param(ctx, "min_size");
    long long hi = wl_param(ctx, "max_size");
    if (wl_check_order(ctx, "min_size", lo, "max_size", hi) != 0)
        return -1;
    s->min_size = (uint32_t)lo;
    s->max_size = (uint32_t)hi;
    return 0;
}

/* tmalloc-st-64 ------------------------------------------------------- */

static int run_st_64(wl_ctx *ctx)
{
    const long long pairs = wl_param(ctx, "pairs");
    const size_t size = (size_t)wl_param(ctx, "size");
    const wl_touch_mode touch = wl_touch_param(ctx);
    const alloc_table *a = ctx->a;

    uint64_t start = wl_now_ns();
    for (long long i = 0; i < pairs; i++) {
        void *p = a->malloc(size);
        if (p == NULL) {
            wl_fail(ctx, "malloc(%zu) returned NULL", size);
            return -1;
        }
        wl_touch_block(p, size, touch);
        a->free(p);
    }
    uint64_t elapsed = wl_now_ns() - start;
    wl_metric(ctx, "ns_per_pair", (double)elapsed / (double)pairs, "ns", "lower");
    wl_operations(ctx, 2 * pairs);
    return 0;
}

const workload wl_tmalloc_st_64 = {
    .name = "tmalloc-st-64",
    .group = "tmalloc",
    .describe = "64-byte block, allocated and freed one at a time",
    .metric = "ns_per_pair", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"pairs", 50000000, 10000000, 1, 10000000000LL, "allocate+free pairs"},
        {"size", 64, 0, 1, 1 << 20, "block size in bytes"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_st_64,
};

/* tmalloc-st-reverse and tmalloc-st-random ----------------------------- */

typedef enum free_order { FREE_REVERSE, FREE_RANDOM } free_order;

/* Builds `count` blocks, then frees them newest first (FREE_REVERSE) or in
 * the order of one random permutation drawn before the clock starts
 * (FREE_RANDOM); `rounds` times. Sizes come from a pre-drawn pool,
 * continuing where the previous round stopped, so each round sees
 * different sizes. */
static int run_batches(wl_ctx *ctx, free_order how)
{
    batch_shape s;
    if (read_batch_shape(ctx, &s) != 0)
        return -1;
    const alloc_table *a = ctx->a;
    const size_t n = (size_t)s.count;
    const wl_touch_mode touch = wl_touch_param(ctx);

    wl_rng rng;
    wl_rng_seed(&rng, ctx->seed);
    uint32_t *sizes = wl_draw_sizes_uniform(ctx, &rng, WL_SIZE_POOL_LEN,
                                            s.min_size, s.max_size);
    void **blocks = sizes ? wl_scratch_get(ctx, n * sizeof *blocks) : NULL;
    uint32_t *order = NULL;
    if (blocks != NULL && how == FREE_RANDOM)
        order = wl_draw_permutation(ctx, &rng, n);
    int rc = -1;
    if (blocks == NULL || (how == FREE_RANDOM && order == NULL))
        goto out;

    size_t next_size = 0;
    uint64_t start = wl_now_ns();
    for (long long r = 0; r < s.rounds; r++) {
        for (size_t i = 0; i < n; i++) {
            size_t size = sizes[next_size++ & WL_SIZE_POOL_MASK];
            blocks[i] = a->malloc(size);
            if (blocks[i] == NULL) {
                wl_fail(ctx, "malloc(%zu) returned NULL with %zu blocks live", size, i);
                for (size_t k = 0; k < i; k++)
                    a->free(blocks[k]);
                goto out;
            }
            wl_touch_block(blocks[i], size, touch);
        }
        /* order exists exactly when how == FREE_RANDOM */
        if (order != NULL) {
            for (size_t i = 0; i < n; i++)
                a->free(blocks[order[i]]);
        } else {
            for (size_t i = n; i-- > 0;)
                a->free(blocks[i]);
        }
    }
    uint64_t elapsed = wl_now_ns() - start;
    wl_metric(ctx, "ns_per_pair", (double)elapsed / ((double)n * (double)s.rounds),
              "ns", "lower");
    wl_operations(ctx, 2 * s.count * s.rounds);
    rc = 0;
out:
    wl_scratch_put(order, n * sizeof *order);
    wl_scratch_put(blocks, n * sizeof *blocks);
    wl_scratch_put(sizes, WL_SIZE_POOL_LEN * sizeof *sizes);
    return rc;
}

static int run_st_reverse(wl_ctx *ctx)
{
    return run_batches(ctx, FREE_REVERSE);
}

static int run_st_random(wl_ctx *ctx)
{
    return run_batches(ctx, FREE_RANDOM);
}

const workload wl_tmalloc_st_reverse = {
    .name = "tmalloc-st-reverse",
    .group = "tmalloc",
    .describe = "1,000 blocks of 16-256 B allocated, then freed in reverse order; repeated",
    .metric = "ns_per_pair", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"count", 1000, 0, 1, 100000000, "blocks allocated before the first free"},
        {"min_size", 16, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 256, 0, 1, 1 << 30, "largest block size in bytes"},
        {"rounds", 40000, 3000, 1, 1000000000, "times the batch is built and freed"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_st_reverse,
};

const workload wl_tmalloc_st_random = {
    .name = "tmalloc-st-random",
    .group = "tmalloc",
    .describe = "100,000 blocks of 16-1,024 B allocated, then freed in random order; repeated",
    .metric = "ns_per_pair", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"count", 100000, 0, 1, 100000000, "blocks allocated before the first free"},
        {"min_size", 16, 0, 1, 1 << 30, "smallest block size in bytes"},
        {"max_size", 1024, 0, 1, 1 << 30, "largest block size in bytes"},
        {"rounds", 100, 6, 1, 1000000000, "times the batch is built and freed"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_st_random,
};
