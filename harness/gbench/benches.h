/* heaplab-gbench's allocator microbenchmarks, one family per file
 * (bench_*.c), all measuring the one allocator the process opened.
 *
 * Benchmark names read "<family>/<allocator>/<arguments>", e.g.
 * "pair/mimalloc/64" or "batch/lifo/system/64/threads:2/real_time": Google
 * Benchmark appends the arguments, thread count and timing mode to the name
 * it is given, so the allocator comes before them. Every family is
 * registered under the same names whatever the allocator, so one filter
 * selects the same benchmarks in every process of a comparison. */
#ifndef HEAPLAB_GBENCH_BENCHES_H
#define HEAPLAB_GBENCH_BENCHES_H

#include "alloc_table.h"
#include "gbench.h"

/* What every benchmark of the process shares (its `user` argument). */
typedef struct gbench_alloc {
    const char *name;         /* as given with --alloc */
    const alloc_table *table; /* NULL when it could not be opened */
    const char *error;        /* why not (one line), "" when it was opened */
} gbench_alloc;

/* The table to measure, or NULL after reporting the allocator's error with
 * gb_skip_with_error: a benchmark of an allocator that is not installed is
 * an error in Google Benchmark's report, never a silent absence. */
const alloc_table *gbench_table_or_skip(gb_state *st, const gbench_alloc *a);

/* Registers "<family>/<allocator>" running fn with a as its argument. */
gb_bench *gbench_register(const gbench_alloc *a, const char *family, gb_function fn);

/* Sizes 16 B, 64 B, ... 1 MiB: every fourth power of two. */
gb_bench *gbench_sizes_16_to_1mib(gb_bench *b);

/* Thread counts of the threaded variants; 1 is the plain benchmark. */
extern const int gbench_thread_counts[];
extern const int gbench_thread_count_n;

/* One function per family file, each registering its benchmarks. */
void gbench_register_pair(const gbench_alloc *a);     /* bench_pair.c */
void gbench_register_batch(const gbench_alloc *a);    /* bench_batch.c */
void gbench_register_realloc(const gbench_alloc *a);  /* bench_realloc.c */
void gbench_register_aligned(const gbench_alloc *a);  /* bench_aligned.c */
void gbench_register_calloc(const gbench_alloc *a);   /* bench_calloc.c */

#endif
