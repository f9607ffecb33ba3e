/* "pair": allocate one block of a fixed size and free it at once, the
 * allocator's fastest path (a thread cache hit, for most). Threaded, every
 * thread does the same on its own blocks: what the fast path costs when
 * threads share the allocator's global structures. */
#include "benches.h"

/* Sizes of the threaded variant: a small class, a medium one, a page. */
static const int64_t threaded_sizes[] = {16, 256, 4096};

static void bench_pair(gb_state *st, void *user)
{
    const alloc_table *t = gbench_table_or_skip(st, user);
    if (!t)
        return;
    size_t size = (size_t)gb_range(st, 0);
    while (gb_keep_running(st)) {
        void *p = t->malloc(size);
        if (!p) {
            gb_skip_with_error(st, "malloc returned NULL");
            break;
        }
        gb_do_not_optimize(p);
        t->free(p);
    }
    /* an item is one malloc+free pair */
    gb_set_items_processed(st, gb_iterations(st));
    gb_set_bytes_processed(st, gb_iterations(st) * (int64_t)size);
}

void gbench_register_pair(const gbench_alloc *a)
{
    gbench_sizes_16_to_1mib(gbench_register(a, "pair", bench_pair));

    gb_bench *mt = gbench_register(a, "pair", bench_pair);
    for (size_t i = 0; i < sizeof threaded_sizes / sizeof threaded_sizes[0]; i++)
        gb_bench_arg(mt, threaded_sizes[i]);
    /* 1 thread too, timed the same way, as the scaling baseline */
    gb_bench_threads(mt, 1);
    for (int i = 0; i < gbench_thread_count_n; i++)
        gb_bench_threads(mt, gbench_thread_counts[i]);
    gb_bench_use_real_time(mt);
}
