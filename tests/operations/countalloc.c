/* A so: allocator (prefix cnt_) that forwards to libc and counts every call
 * that allocates, resizes or frees a block; it prints the count on stderr
 * when the process exits ("countalloc: N calls"). The operation-count tests
 * compare it with the document's "operations". Queries (usable size) are
 * not counted, as the document does not count them. */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static _Atomic long long calls;

void *cnt_malloc(size_t n)
{
    calls++;
    return malloc(n);
}

void cnt_free(void *p)
{
    calls++;
    free(p);
}

void cnt_free_sized(void *p, size_t n)
{
    (void)n;
    calls++;
    free(p);
}

void *cnt_calloc(size_t count, size_t n)
{
    calls++;
    return calloc(count, n);
}

void *cnt_realloc(void *p, size_t n)
{
    calls++;
    return realloc(p, n);
}

void *cnt_aligned_alloc(size_t align, size_t n)
{
    calls++;
    return aligned_alloc(align, n);
}

size_t cnt_malloc_usable_size(void *p)
{
    return malloc_usable_size(p);
}

__attribute__((destructor)) static void report(void)
{
    char line[64];
    int n = snprintf(line, sizeof line, "countalloc: %lld calls\n", (long long)calls);
    if (n > 0)
        (void)!write(STDERR_FILENO, line, (size_t)n);
}
