/* "aligned": aligned_alloc of one block and free at once, for alignments
 * from 16 B (what malloc gives anyway) to a page. Each block's alignment is
 * checked: an allocator that returns a misaligned block fails the benchmark
 * instead of winning it. */
#include "benches.h"

#include <stdint.h>

static const int64_t alignments[] = {16, 64, 256, 4096};
/* Sizes per alignment: the alignment itself and SIZE_SPAN times it, so every
 * size is a multiple of its alignment as C11's aligned_alloc asks. */
enum { SIZE_SPAN = 16 };
static const char *const arg_names[] = {"align", "size"};

static void bench_aligned(gb_state *st, void *user)
{
    const alloc_table *t = gbench_table_or_skip(st, user);
    if (!t)
        return;
    size_t align = (size_t)gb_range(st, 0);
    size_t size = (size_t)gb_range(st, 1);
    while (gb_keep_running(st)) {
        void *p = t->aligned_alloc(align, size);
        if (!p) {
            gb_skip_with_error(st, "aligned_alloc returned NULL");
            break;
        }
        gb_do_not_optimize(p);
        int misaligned = ((uintptr_t)p & (align - 1)) != 0;
        t->free(p);
        if (misaligned) {
            gb_skip_with_error(st, "aligned_alloc returned a misaligned block");
            break;
        }
    }
    /* an item is one aligned_alloc+free pair */
    gb_set_items_processed(st, gb_iterations(st));
}

void gbench_register_aligned(const gbench_alloc *a)
{
    gb_bench *b = gbench_register(a, "aligned", bench_aligned);
    gb_bench_arg_names(b, arg_names, sizeof arg_names / sizeof arg_names[0]);
    for (size_t i = 0; i < sizeof alignments / sizeof alignments[0]; i++) {
        const int64_t small[] = {alignments[i], alignments[i]};
        const int64_t large[] = {alignments[i], alignments[i] * SIZE_SPAN};
        gb_bench_args(b, small, sizeof small / sizeof small[0]);
        gb_bench_args(b, large, sizeof large / sizeof large[0]);
    }
}
