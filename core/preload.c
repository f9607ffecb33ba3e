/* heaplab core: the standard allocation names, for libheaplab-preload.so
 * only. Every entry point a program (or libc on its behalf) may call is
 * here, so no block allocated by glibc ever reaches heaplab's free. */
#include <stddef.h>

#include "heaplab.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT void *malloc(size_t size)
{
    return hl_malloc(size);
}
EXPORT void free(void *p)
{
    hl_free(p);
}
EXPORT void *calloc(size_t n, size_t size)
{
    return hl_calloc(n, size);
}
EXPORT void *realloc(void *p, size_t size)
{
    return hl_realloc(p, size);
}
EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    return hl_reallocarray(p, n, size);
}
EXPORT void *aligned_alloc(size_t align, size_t size)
{
    return hl_aligned_alloc(align, size);
}
EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    return hl_posix_memalign(out, align, size);
}
EXPORT void *memalign(size_t align, size_t size)
{
    return hl_memalign(align, size);
}
EXPORT void *valloc(size_t size)
{
    return hl_valloc(size);
}
EXPORT void *pvalloc(size_t size)
{
    return hl_pvalloc(size);
}
EXPORT size_t malloc_usable_size(void *p)
{
    return hl_usable_size(p);
}
EXPORT int malloc_trim(size_t pad)
{
    (void)pad;
    return hl_trim() > 0;
}
EXPORT void free_sized(void *p, size_t size)
{
    hl_free_sized(p, size);
}
EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
    hl_free_aligned_sized(p, align, size);
}
EXPORT void cfree(void *p)
{
    hl_free(p);
}
