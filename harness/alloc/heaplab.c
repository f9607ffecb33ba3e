/* "heaplab" and "heaplab-nocache": the allocator core, linked statically but
 * reached through the table exactly like the others (the table is filled at
 * run time, so the workload's calls stay indirect and cannot be inlined).
 *
 * The one file of the harness that sees the core: it is built as its own
 * target (heaplab-alloc-heaplab), the only one that links libheaplab.a. */
#include "families.h"
#include "heaplab.h"

#ifndef HEAPLAB_PRELOAD_PATH
#error "HEAPLAB_PRELOAD_PATH must be defined by the build"
#endif

/* One entry per HL_STATS_FIELDS field: every field is reported, under its
 * own name. */
#define HL_COUNT_FIELD(name, doc) +1
enum { HL_STATS_FIELD_COUNT = 0 HL_STATS_FIELDS(HL_COUNT_FIELD) };
#undef HL_COUNT_FIELD
_Static_assert((int)HL_STATS_FIELD_COUNT <= (int)ALLOC_STATS_MAX,
               "alloc_table's ALLOC_STATS_MAX is too small for heaplab's statistics");

static int heaplab_stats(alloc_stat *out, int max)
{
    hl_stats_t s;
    hl_stats(&s);
    int n = 0;
#define HL_EMIT_FIELD(field, doc)                                                           \
    if (n < max)                                                                           \
        out[n++] = (alloc_stat){#field, (double)s.field};
    HL_STATS_FIELDS(HL_EMIT_FIELD)
#undef HL_EMIT_FIELD
    return n;
}

static int heaplab_trim(void)
{
    /* hl_trim reports how many bytes it released; none is still success */
    (void)hl_trim();
    return 0;
}

static int open_core(int nocache, alloc_table *out)
{
    /* say it explicitly both ways, so HEAPLAB_TCACHE in the environment
     * cannot make "heaplab" run without its caches */
    hl_set_tcache(nocache ? 0 : 1);
    out->name = nocache ? "heaplab-nocache" : "heaplab";
    out->version = hl_version();
    out->stats_version = HL_STATS_VERSION;
    out->library = "static";
    out->preload = HEAPLAB_PRELOAD_PATH[0] ? HEAPLAB_PRELOAD_PATH : NULL;
    /* a preloaded program reads its switch from the environment at start-up */
    out->preload_env = nocache ? "HEAPLAB_TCACHE=0" : "HEAPLAB_TCACHE=1";
    out->malloc = hl_malloc;
    out->free = hl_free;
    out->calloc = hl_calloc;
    out->realloc = hl_realloc;
    out->aligned_alloc = hl_aligned_alloc;
    out->usable_size = hl_usable_size;
    out->free_sized = hl_free_sized;
    out->stats = heaplab_stats;
    out->trim = heaplab_trim;
    out->thread_flush = hl_thread_flush;
    return 0;
}

int alloc_open_heaplab(alloc_table *out, char *err, size_t errlen, char **argv)
{
    (void)err;
    (void)errlen;
    (void)argv;
    return open_core(0, out);
}

int alloc_open_heaplab_nocache(alloc_table *out, char *err, size_t errlen, char **argv)
{
    (void)err;
    (void)errlen;
    (void)argv;
    return open_core(1, out);
}
