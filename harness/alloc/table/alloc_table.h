/* The common allocator function table.
 *
 * Every allocator the runner measures -- system, heaplab, mimalloc, jemalloc,
 * tcmalloc, so:PATH -- is reached through one of these, filled at start-up.
 * Workload code calls only through `ctx->a->...`; the table is chosen from the
 * command line at run time, so the compiler cannot see through the pointer and
 * cannot inline any allocator into the workload. That is how fairness between
 * allocators is kept: same binary, same call shape, same indirection cost.
 *
 * Mandatory entries are never NULL. Optional hooks are NULL when the allocator
 * has no such thing; the report then says "n/a" instead of inventing a figure.
 *
 * This header is the type only, seen by every part (workloads through
 * workload.h); finding and opening an allocator is alloc.h's, which only the
 * runner and heaplab-gbench see.
 */
#ifndef HEAPLAB_ALLOC_TABLE_H
#define HEAPLAB_ALLOC_TABLE_H

#include <stddef.h>

/* One allocator-reported statistic, e.g. {"resident", 12345678}. Units are
 * bytes unless the key ends in "_count". */
typedef struct alloc_stat {
    const char *key;
    double value;
} alloc_stat;

enum { ALLOC_STATS_MAX = 48 };

typedef struct alloc_table {
    const char *name;     /* as given on the command line: "mimalloc", "so:/x/y.so",
                           * or the NAME of NAME=so:PATH */
    const char *path;     /* so:PATH: the PATH as given; NULL for a named family */
    const char *version;  /* "2.0.9", "glibc 2.36", "unknown" */
    const char *library;  /* path of the loaded library, "libc", or "static" */
    const char *preload;  /* library to LD_PRELOAD for program workloads, NULL for none */
    const char *preload_env; /* one more NAME=VALUE for such a program, or NULL
                              * (heaplab-nocache: "HEAPLAB_TCACHE=0") */

    void *(*malloc)(size_t size);
    void (*free)(void *p);
    void *(*calloc)(size_t n, size_t size);
    void *(*realloc)(void *p, size_t size);
    void *(*aligned_alloc)(size_t align, size_t size);
    size_t (*usable_size)(void *p);

    /* Optional hooks: NULL = the allocator has none ("n/a" in reports). */
    void (*free_sized)(void *p, size_t size);   /* mi_free_size, sdallocx, hl_free_sized */
    int (*stats)(alloc_stat *out, int max);     /* returns how many entries it wrote */
    int stats_version;                          /* the layout and meaning of those entries when the
                                                 * allocator versions them (heaplab: HL_STATS_VERSION), else 0 */
    int (*trim)(void);                          /* give memory back to the OS now; 0 on success */
    void (*thread_flush)(void);                 /* return this thread's cached memory now */
} alloc_table;

#endif
