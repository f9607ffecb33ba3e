/* heaplab core test: alignments of 4 MiB and more, up to the top of the
 * address space.
 *
 * aligned_alloc, posix_memalign and memalign serve any power-of-two
 * alignment the address space allows (glibc does not: on the development
 * machine its aligned_alloc returns NULL with ENOMEM from 2^35 up, where
 * size + alignment exceeds what its overcommit heuristic lets it map).
 *  - For each alignment from 4 MiB to 2^36 (64 GiB: address space only,
 *    never touched beyond two pages) and sizes of 1 byte, 100 KiB and 5 MiB,
 *    the block must be there, aligned as asked, writable at its first and
 *    last byte, at least as big as asked, growable by realloc with its
 *    content (the grown block need not keep the alignment), and freeable.
 *  - Every power of two up to 2^46 (half the 47-bit user address space:
 *    the largest alignment whose reservation, size + alignment, fits)
 *    serves a 1-byte block, aligned, writable at its first and last byte;
 *    every one from 2^47 up is refused with NULL and ENOMEM (posix_memalign
 *    returns ENOMEM). The reservation is PROT_NONE and MAP_NORESERVE, so
 *    the sweep must commit nothing: resident memory and the peak resident
 *    set grow by at most TOP_RSS_GROWTH_MAX over it.
 * The heap checks clean after. */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "heaplab.h"
#include "testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
/* the largest alignment served: a reservation of 2^46 + size fits in the
 * 2^47 bytes of user address space, one of 2^47 + size cannot */
#define TOP_SERVED_SHIFT 46
#define TOP_RSS_GROWTH_MAX (16 * MiB)

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

/* a 1-byte block at alignment 2^shift: served, aligned, writable at its
 * first (= last) byte, freeable */
static int serve_byte(enum api api, unsigned shift)
{
    size_t align = (size_t)1 << shift;
    int error = 0;
    unsigned char *p = allocate(api, align, 1, &error);
    if (!p) {
        printf("     %s(2^%u, 1): no block, error %d (%s)\n", api_names[api], shift, error, strerror(error));
        return 0;
    }
    int ok = 1;
    if ((uintptr_t)p % align != 0) {
        printf("     %s(2^%u, 1): %p is not aligned\n", api_names[api], shift, (void *)p);
        ok = 0;
    }
    p[0] = 0xA5;
    size_t usable = hl_usable_size(p);
    if (usable < 1 || p[0] != 0xA5) {
        printf("     %s(2^%u, 1): usable size %zu, first byte %#x\n", api_names[api], shift, usable, p[0]);
        ok = 0;
    }
    p[usable - 1] = 0x5A;
    hl_free(p);
    return ok;
}

/* alignment 2^shift refused: NULL (or posix_memalign's ENOMEM) with ENOMEM */
static int refused(enum api api, unsigned shift)
{
    int error = 0;
    void *p = allocate(api, (size_t)1 << shift, 1, &error);
    if (p || error != ENOMEM) {
        printf("     %s(2^%u, 1): %p, error %d (%s); expected NULL and ENOMEM\n", api_names[api], shift, p, error,
               strerror(error));
        hl_free(p);
        return 0;
    }
    return 1;
}

static size_t peak_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (size_t)ru.ru_maxrss * KiB;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* every power of two to the top and beyond, for each API */
static void sweep_to_the_top(void)
{
    size_t rss_before = tu_rss(), peak_before = peak_rss();
    double start = now_s();
    size_t rss_max = rss_before;
    for (int api = API_ALIGNED_ALLOC; api <= API_MEMALIGN; api++) {
        /* (posix_memalign refuses alignments below sizeof(void *)) */
        unsigned first = api == API_POSIX_MEMALIGN ? 3 : 0;
        int served = 1, refusals = 1;
        for (unsigned shift = first; shift <= TOP_SERVED_SHIFT; shift++) {
            served &= serve_byte((enum api)api, shift);
            size_t rss = tu_rss();
            rss_max = rss > rss_max ? rss : rss_max;
        }
        for (unsigned shift = TOP_SERVED_SHIFT + 1; shift < 8 * sizeof(size_t); shift++)
            refusals &= refused((enum api)api, shift);
        char name[160];
        snprintf(name, sizeof name, "%s serves a 1-byte block at every alignment 2^%u .. 2^%d: aligned, writable",
                 api_names[api], first, TOP_SERVED_SHIFT);
        CHECK(name, served);
        snprintf(name, sizeof name, "%s refuses every alignment 2^%d .. 2^63 with NULL and ENOMEM", api_names[api],
                 TOP_SERVED_SHIFT + 1);
        CHECK(name, refusals);
    }
    size_t peak_after = peak_rss();
    printf("     the sweep took %.3f s; resident %zu -> at most %zu KiB, peak %zu -> %zu KiB\n", now_s() - start,
           rss_before / KiB, rss_max / KiB, peak_before / KiB, peak_after / KiB);
    CHECK("the sweep to 2^46 commits no memory (resident and peak grow by at most 16 MiB)",
          rss_max - rss_before <= TOP_RSS_GROWTH_MAX && peak_after - peak_before <= TOP_RSS_GROWTH_MAX);
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
    sweep_to_the_top();
    CHECK("hl_check clean after the big alignments", hl_check() == 0);
    hl_stats_t s;
    hl_stats(&s);
    CHECK("stats balanced and nothing live after the big alignments", hl_stats_balanced(&s) && s.live == 0);
    return tu_finish();
}
