/* "system": glibc's own malloc, reached through the same table as every
 * other allocator. */
#include "families.h"

#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

static char system_version[64];

static int system_trim(void)
{
    /* malloc_trim returns 1 when it released memory and 0 when there was
     * nothing to release; both are success for the table's contract. */
    malloc_trim(0);
    return 0;
}

/* mallinfo2's fields under glibc's own names (see mallinfo(3)); the two
 * chunk counts are marked _count as the table's contract asks. */
static int system_stats(alloc_stat *out, int max)
{
    struct mallinfo2 mi = mallinfo2();
    const alloc_stat all[] = {
        {"arena", (double)mi.arena},           /* bytes obtained with brk/sbrk */
        {"ordblks_count", (double)mi.ordblks}, /* free chunks */
        {"smblks_count", (double)mi.smblks},   /* free fastbin chunks */
        {"hblks_count", (double)mi.hblks},     /* chunks allocated with mmap */
        {"hblkhd", (double)mi.hblkhd},         /* bytes allocated with mmap */
        {"fsmblks", (double)mi.fsmblks},       /* bytes in free fastbin chunks */
        {"uordblks", (double)mi.uordblks},     /* bytes in chunks in use */
        {"fordblks", (double)mi.fordblks},     /* bytes in free chunks */
        {"keepcost", (double)mi.keepcost},     /* trimmable bytes at the top */
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && n < max; i++)
        out[n++] = all[i];
    return n;
}

int alloc_open_system(alloc_table *out, char *err, size_t errlen, char **argv)
{
    (void)err;
    (void)errlen;
    (void)argv;
    snprintf(system_version, sizeof system_version, "glibc %s", gnu_get_libc_version());
    out->name = "system";
    out->version = system_version;
    out->library = "libc";
    out->preload = NULL;
    out->malloc = malloc;
    out->free = free;
    out->calloc = calloc;
    out->realloc = realloc;
    out->aligned_alloc = aligned_alloc;
    out->usable_size = malloc_usable_size;
    /* glibc 2.36 has no free_sized and no per-thread
     * cache flush: those stay n/a. */
    out->free_sized = NULL;
    out->stats = system_stats;
    out->trim = system_trim;
    out->thread_flush = NULL;
    return 0;
}
