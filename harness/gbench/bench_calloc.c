/* "calloc": calloc of one zeroed block and free at once, 16 B to 1 MiB.
 * Small blocks must be cleared by the allocator; large ones come from fresh
 * mappings that are zero already, and an allocator that knows it skips the
 * clearing -- that difference is what this benchmark shows. */
#include "benches.h"

/* calloc's count argument: one block of the benchmark's size */
enum { ONE_ELEMENT = 1 };

static void bench_calloc(gb_state *st, void *user)
{
    const alloc_table *t = gbench_table_or_skip(st, user);
    if (!t)
        return;
    size_t size = (size_t)gb_range(st, 0);
    while (gb_keep_running(st)) {
        void *p = t->calloc(ONE_ELEMENT, size);
        if (!p) {
            gb_skip_with_error(st, "calloc returned NULL");
            break;
        }
        gb_do_not_optimize(p);
        t->free(p);
    }
    /* an item is one calloc+free pair */
    gb_set_items_processed(st, gb_iterations(st));
    gb_set_bytes_processed(st, gb_iterations(st) * (int64_t)size);
}

void gbench_register_calloc(const gbench_alloc *a)
{
    gbench_sizes_16_to_1mib(gbench_register(a, "calloc", bench_calloc));
}
