/* "batch/fifo" and "batch/lifo": allocate 1,000 blocks of one size, then
 * free them all, in allocation order (fifo) or in reverse (lifo). Unlike a
 * pair, the blocks outlive each other: the allocator must find 1,000 free
 * blocks, and the frees overflow thread caches back into shared structures.
 * lifo gives back the most recent block first, which suits free lists;
 * fifo walks them from the other end. */
#include "benches.h"

enum { BATCH_BLOCKS = 1000 };

/* Sizes of the batch: 16 B to 64 KiB. Larger blocks would make a batch
 * reserve more than 1 GiB of address space per thread for a figure the
 * pair benchmark already gives. */
enum {
    BATCH_SIZE_MIN = 16,
    BATCH_SIZE_MAX = 64 << 10,
    BATCH_SIZE_STEP = 4,
};
/* Size of the threaded variant: a small class, where thread caches matter. */
enum { BATCH_THREADED_SIZE = 64 };

typedef enum free_order { FREE_FIFO, FREE_LIFO } free_order;

static void run_batch(gb_state *st, const gbench_alloc *a, free_order order)
{
    const alloc_table *t = gbench_table_or_skip(st, a);
    if (!t)
        return;
    size_t size = (size_t)gb_range(st, 0);
    void *blocks[BATCH_BLOCKS];
    while (gb_keep_running(st)) {
        int failed = 0;
        for (int i = 0; i < BATCH_BLOCKS; i++) {
            blocks[i] = t->malloc(size);
            failed |= blocks[i] == NULL;
        }
        gb_do_not_optimize(blocks);
        if (order == FREE_FIFO) {
            for (int i = 0; i < BATCH_BLOCKS; i++)
                t->free(blocks[i]);
        } else {
            for (int i = BATCH_BLOCKS - 1; i >= 0; i--)
                t->free(blocks[i]);
        }
        /* checked after the frees (free(NULL) is harmless) so nothing leaks */
        if (failed) {
            gb_skip_with_error(st, "malloc returned NULL");
            break;
        }
    }
    /* an item is one malloc+free pair, 1,000 per iteration */
    gb_set_items_processed(st, gb_iterations(st) * BATCH_BLOCKS);
    gb_set_bytes_processed(st, gb_iterations(st) * BATCH_BLOCKS * (int64_t)size);
}

static void bench_batch_fifo(gb_state *st, void *user)
{
    run_batch(st, user, FREE_FIFO);
}

static void bench_batch_lifo(gb_state *st, void *user)
{
    run_batch(st, user, FREE_LIFO);
}

static void register_order(const gbench_alloc *a, const char *family, gb_function fn)
{
    gb_bench *b = gbench_register(a, family, fn);
    gb_bench_range_multiplier(b, BATCH_SIZE_STEP);
    gb_bench_range(b, BATCH_SIZE_MIN, BATCH_SIZE_MAX);

    gb_bench *mt = gbench_register(a, family, fn);
    gb_bench_arg(mt, BATCH_THREADED_SIZE);
    gb_bench_threads(mt, 1);
    for (int i = 0; i < gbench_thread_count_n; i++)
        gb_bench_threads(mt, gbench_thread_counts[i]);
    gb_bench_use_real_time(mt);
}

void gbench_register_batch(const gbench_alloc *a)
{
    register_order(a, "batch/fifo", bench_batch_fifo);
    register_order(a, "batch/lifo", bench_batch_lifo);
}
