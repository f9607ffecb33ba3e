/* "realloc": grow one block from 16 B by doubling up to a final size, as a
 * growing buffer does, then free it. Each step writes the block's last byte,
 * as a buffer being filled would, so the allocator cannot hand back memory
 * it has not really provided. Allocators that grow in place, or remap large
 * blocks instead of copying them, show it here. */
#include "benches.h"

enum { GROWTH_START = 16, GROWTH_FACTOR = 2 };
/* Final sizes: within a page, within the medium range, and past glibc's
 * mmap threshold up to 1 MiB. */
static const int64_t growth_ends[] = {4 << 10, 64 << 10, 1 << 20};
static const char *const arg_names[] = {"from", "to"};

/* Allocator calls in one growth: the malloc and one realloc per doubling. */
static int64_t growth_calls(size_t from, size_t to)
{
    int64_t calls = 1;
    for (size_t size = from * GROWTH_FACTOR; size <= to; size *= GROWTH_FACTOR)
        calls++;
    return calls;
}

static void bench_realloc(gb_state *st, void *user)
{
    const alloc_table *t = gbench_table_or_skip(st, user);
    if (!t)
        return;
    size_t from = (size_t)gb_range(st, 0);
    size_t to = (size_t)gb_range(st, 1);
    const int64_t calls = growth_calls(from, to);
    while (gb_keep_running(st)) {
        char *p = t->malloc(from);
        if (!p) {
            gb_skip_with_error(st, "malloc returned NULL");
            break;
        }
        p[from - 1] = 1;
        size_t size = from * GROWTH_FACTOR;
        for (; size <= to; size *= GROWTH_FACTOR) {
            char *grown = t->realloc(p, size);
            if (!grown)
                break; /* p is still valid and still ours */
            p = grown;
            p[size - 1] = 1;
        }
        gb_do_not_optimize(p);
        t->free(p);
        if (size <= to) {
            gb_skip_with_error(st, "realloc returned NULL");
            break;
        }
    }
    /* an item is one malloc or realloc call */
    gb_set_items_processed(st, gb_iterations(st) * calls);
    gb_set_counter(st, "calls_per_iteration", (double)calls, GB_COUNTER_DEFAULT);
}

void gbench_register_realloc(const gbench_alloc *a)
{
    gb_bench *b = gbench_register(a, "realloc", bench_realloc);
    gb_bench_arg_names(b, arg_names, sizeof arg_names / sizeof arg_names[0]);
    for (size_t i = 0; i < sizeof growth_ends / sizeof growth_ends[0]; i++) {
        const int64_t args[] = {GROWTH_START, growth_ends[i]};
        gb_bench_args(b, args, sizeof args / sizeof args[0]);
    }
}
