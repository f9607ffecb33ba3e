/* heaplab core test: alignments of 4 MiB and more.
 *
 * glibc serves any power-of-two alignment the address space allows; so must
 * aligned_alloc, posix_memalign and memalign here. For each alignment from
 * 4 MiB to 2^36 (64 GiB: address space only, never touched beyond two
 * pages) and sizes of 1 byte, 100 KiB and 5 MiB, the block must be there,
 * aligned as asked, writable at its first and last byte, at least as big as
 * asked, growable by realloc with its content (the grown block need not
 * keep the alignment), and freeable; the heap checks clean after. */
#include <errno.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

enum api { API_ALIGNED_ALLOC, API_POSIX_MEMALIGN, API_MEMALIGN };
static const char *const api_names[] = {"aligned_alloc", "posix_memalign", "memalign"};

/* *error: errno, or what posix_memalign returned */
static void *allocate(enum api api, size_t align, size_t size, int *error)
{
    void *p = NULL;
    errno = 0;
    switch (api) {
    case API_ALIGNED_ALLOC:
        p = hl_aligned_alloc(align, size);
        break;
    case API_POSIX_MEMALIGN:
        *error = hl_posix_memalign(&p, align, size);
        return *error == 0 ? p : NULL;
    case API_MEMALIGN:
        p = hl_memalign(align, size);
        break;
    }
    *error = errno;
    return p;
}

/* every step for one block; prints what went wrong and returns 0 then */
static int serve_one(enum api api, size_t align, size_t size)
{
    int error = 0;
    unsigned char *p = allocate(api, align, size, &error);
    if (!p) {
        printf("     %s(%zu MiB, %zu): no block, error %d (%s)\n", api_names[api], align / MiB, size, error,
               strerror(error));
        return 0;
    }
    int ok = 1;
    if ((uintptr_t)p % align != 0) {
        printf("     %s(%zu MiB, %zu): %p is not aligned\n", api_names[api], align / MiB, size, (void *)p);
        ok = 0;
    }
    /* (for a 1-byte block the first byte is the last: it holds 0xA5) */
    p[0] = 0x5A;
    p[size - 1] = 0xA5;
    if (hl_usable_size(p) < size) {
        printf("     %s(%zu MiB, %zu): usable size %zu\n", api_names[api], align / MiB, size, hl_usable_size(p));
        ok = 0;
    }
    size_t grown = 2 * size + 64 * KiB;
    unsigned char *q = hl_realloc(p, grown);
    if (!q) {
        printf("     %s(%zu MiB, %zu): realloc to %zu failed\n", api_names[api], align / MiB, size, grown);
        hl_free(p);
        return 0;
    }
    if (q[0] != (size > 1 ? 0x5A : 0xA5) || q[size - 1] != 0xA5) {
        printf("     %s(%zu MiB, %zu): realloc lost the content\n", api_names[api], align / MiB, size);
        ok = 0;
    }
    q[grown - 1] = 1;
    hl_free(q);
    return ok;
}

int main(void)
{
    static const size_t aligns[] = {4 * MiB, 8 * MiB, 64 * MiB, (size_t)1 << 30, (size_t)1 << 36};
    static const char *const align_names[] = {"4 MiB", "8 MiB", "64 MiB", "1 GiB", "2^36 (64 GiB)"};
    static const size_t sizes[] = {1, 100 * KiB, 5 * MiB};
    for (int api = API_ALIGNED_ALLOC; api <= API_MEMALIGN; api++)
        for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; a++) {
            int ok = 1;
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                ok &= serve_one((enum api)api, aligns[a], sizes[s]);
            char name[160];
            snprintf(name, sizeof name, "%s with alignment %s serves 1 B, 100 KiB, 5 MiB: aligned, writable, realloc keeps content",
                     api_names[api], align_names[a]);
            CHECK(name, ok);
        }
    CHECK("hl_check clean after the big alignments", hl_check() == 0);
    hl_stats_t s;
    hl_stats(&s);
    CHECK("stats balanced and nothing live after the big alignments", hl_stats_balanced(&s) && s.live == 0);
    return tu_finish();
}
