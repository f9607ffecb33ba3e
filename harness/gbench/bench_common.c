/* What the benchmark families share: naming, the size ladder, and turning
 * an allocator that could not be opened into Google Benchmark's error. */
#include "benches.h"

#include <stdio.h>

/* Longest "<family>/<allocator>"; so:PATH names carry a whole path. */
enum { NAME_MAX_CHARS = 4096 };

/* 16 B to 1 MiB in steps of 4: small classes, page-sized blocks, and sizes
 * past glibc's mmap threshold (128 KiB by default). */
enum {
    SIZE_LADDER_MIN = 16,
    SIZE_LADDER_MAX = 1 << 20,
    SIZE_LADDER_STEP = 4,
};

const int gbench_thread_counts[] = {2, 4};
const int gbench_thread_count_n = sizeof gbench_thread_counts / sizeof gbench_thread_counts[0];

const alloc_table *gbench_table_or_skip(gb_state *st, const gbench_alloc *a)
{
    if (a->table)
        return a->table;
    gb_skip_with_error(st, a->error);
    return NULL;
}

gb_bench *gbench_register(const gbench_alloc *a, const char *family, gb_function fn)
{
    char name[NAME_MAX_CHARS];
    snprintf(name, sizeof name, "%s/%s", family, a->name);
    /* the const is dropped for the callback's sake only: benchmarks read it */
    return gb_register(name, fn, (void *)a);
}

gb_bench *gbench_sizes_16_to_1mib(gb_bench *b)
{
    gb_bench_range_multiplier(b, SIZE_LADDER_STEP);
    return gb_bench_range(b, SIZE_LADDER_MIN, SIZE_LADDER_MAX);
}
