/* heaplab core test: the API edge-case table. Each row is one named check of
 * a C or glibc contract; the abort cases run in a forked child whose stderr
 * is read back. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heaplab.h"
#include "testutil.h"

static int aligned(void *p, size_t a)
{
    return ((uintptr_t)p % a) == 0;
}

static void free_stack_pointer(void)
{
    char local[32];
    hl_free(local + 16);
}
static void free_interior_small(void)
{
    char *p = hl_malloc(64);
    hl_free(p + 16);
}
/* a 16-byte multiple inside a block of a class whose size is not a power
 * of two: only the exact divisibility check can tell */
static void free_interior_odd_class(void)
{
    char *p = hl_malloc(600);
    hl_free(p + 320);
}
/* the block went back to its span's bitmap in between */
static void double_free_after_flush(void)
{
    void *p = hl_malloc(48);
    hl_free(p);
    hl_thread_flush();
    hl_free(p);
}
static void double_free_small(void)
{
    void *p = hl_malloc(48);
    hl_free(p);
    hl_free(p);
}
static void double_free_medium(void)
{
    void *p = hl_malloc(100000);
    hl_free(p);
    hl_free(p);
}
/* the block waits whole in the reuse cache; then it is merged back */
static void double_free_medium_after_trim(void)
{
    void *keep = hl_malloc(100000); /* the segment stays mapped */
    void *p = hl_malloc(100000);
    hl_free(p);
    hl_trim();
    hl_free(p);
    hl_free(keep);
}
static void double_free_large(void)
{
    void *p = hl_malloc(3u << 20);
    hl_free(p);
    hl_free(p);
}
static void free_interior_large(void)
{
    char *p = hl_malloc(3u << 20);
    hl_free(p + 4096);
}
static void free_wild_heap_address(void)
{
    /* inside a small segment but in its header area */
    uintptr_t p = (uintptr_t)hl_malloc(16);
    hl_free((void *)((p & ~(uintptr_t)((4u << 20) - 1)) + 64));
}

int main(void)
{
    void *a = hl_malloc(0), *b = hl_malloc(0);
    CHECK("malloc(0) returns a unique freeable pointer", a && b && a != b);
    hl_free(a);
    hl_free(b);

    int all_aligned = 1;
    static const size_t sizes[] = {1, 7, 16, 17, 100, 1000, 5000, 40000, 300000, 2000000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *p = hl_malloc(sizes[i]);
        all_aligned &= p && aligned(p, 16) && hl_usable_size(p) >= sizes[i];
        hl_free(p);
    }
    CHECK("every pointer 16-byte aligned, usable_size >= request (all paths)", all_aligned);

    errno = 0;
    CHECK("malloc(PTRDIFF_MAX + 1) is NULL with ENOMEM", hl_malloc((size_t)PTRDIFF_MAX + 1) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK("malloc(SIZE_MAX) is NULL with ENOMEM", hl_malloc(SIZE_MAX) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK("calloc overflow is NULL with ENOMEM", hl_calloc(SIZE_MAX / 2, 3) == NULL && errno == ENOMEM);

    unsigned char *z = hl_malloc(256);
    memset(z, 0xAB, 256);
    hl_free(z);
    z = hl_calloc(16, 16);
    int zeroed = z != NULL;
    for (int i = 0; zeroed && i < 256; i++)
        zeroed = z[i] == 0;
    CHECK("calloc zeroes a recycled block", zeroed);
    hl_free(z);

    errno = 0;
    CHECK("aligned_alloc(3, 16) is NULL with EINVAL", hl_aligned_alloc(3, 16) == NULL && errno == EINVAL);
    void *out = (void *)0x1;
    CHECK("posix_memalign(align 3) returns EINVAL", hl_posix_memalign(&out, 3, 16) == EINVAL && out == (void *)0x1);
    CHECK("posix_memalign(align 4 < sizeof(void*)) returns EINVAL", hl_posix_memalign(&out, 4, 16) == EINVAL);

    int align_ok = 1;
    static const size_t aligns[] = {16, 32, 64, 128, 256, 4096, 8192, 65536, 1u << 20};
    static const size_t asizes[] = {1, 24, 100, 5000, 70000, 1500000};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++)
        for (size_t j = 0; j < sizeof asizes / sizeof asizes[0]; j++) {
            void *p = hl_aligned_alloc(aligns[i], asizes[j]);
            void *q = NULL;
            int rc = hl_posix_memalign(&q, aligns[i], asizes[j]);
            align_ok &= p && aligned(p, aligns[i]) && hl_usable_size(p) >= asizes[j];
            align_ok &= rc == 0 && q && aligned(q, aligns[i]);
            memset(p, 1, asizes[j]);
            hl_free(p);
            hl_free_aligned_sized(q, aligns[i], asizes[j]);
        }
    CHECK("aligned_alloc and posix_memalign honour 16 B .. 1 MiB alignments", align_ok);
    void *m = hl_memalign(48, 10);
    CHECK("memalign rounds a non-power-of-two alignment up (glibc)", m && aligned(m, 64));
    hl_free(m);
    void *v = hl_valloc(10), *pv = hl_pvalloc(5000);
    CHECK("valloc and pvalloc are page-aligned", v && pv && aligned(v, 4096) && aligned(pv, 4096) && hl_usable_size(pv) >= 8192);
    hl_free(v);
    hl_free(pv);

    /* free(NULL) returns at once: nothing counted or moved, errno kept */
    hl_stats_t before_null, after_null;
    hl_stats(&before_null);
    errno = EILSEQ;
    hl_free(NULL);
    int errno_kept = errno == EILSEQ;
    hl_stats(&after_null);
    CHECK("free(NULL) is a no-op: stats and errno unchanged, hl_check clean",
          memcmp(&before_null, &after_null, sizeof before_null) == 0 && errno_kept &&
              hl_check() == 0);
    CHECK("realloc(NULL, n) allocates", (a = hl_realloc(NULL, 40)) != NULL);
    memset(a, 0x5A, 40);
    errno = 0;
    void *r = hl_realloc(a, (size_t)PTRDIFF_MAX + 1);
    int intact = 1;
    for (int i = 0; i < 40; i++)
        intact &= ((unsigned char *)a)[i] == 0x5A;
    CHECK("failed realloc returns NULL with ENOMEM and keeps the block", r == NULL && errno == ENOMEM && intact);
    size_t steps[] = {100, 3000, 50000, 600000, 3000000, 9000000, 200000, 20, 0};
    hl_free(a);
    size_t prev;
    int kept_all = 1;
    {
        /* redo with a fixed pattern from the start */
        unsigned char *h = hl_malloc(40);
        for (int k = 0; k < 40; k++)
            h[k] = (unsigned char)(k * 7);
        prev = 40;
        for (size_t i = 0; steps[i]; i++) {
            h = hl_realloc(h, steps[i]);
            size_t keep = prev < steps[i] ? prev : steps[i];
            for (size_t k = 0; kept_all && h && k < keep; k++)
                kept_all = h[k] == (unsigned char)(k * 7);
            if (!h) {
                kept_all = 0;
                break;
            }
            for (size_t k = 0; k < steps[i]; k++)
                h[k] = (unsigned char)(k * 7);
            prev = steps[i];
        }
        hl_free(h);
    }
    CHECK("realloc keeps contents across small/medium/large moves and mremap", kept_all);
    errno = 0;
    CHECK("reallocarray overflow is NULL with ENOMEM", hl_reallocarray(NULL, SIZE_MAX / 2, 3) == NULL && errno == ENOMEM);
    void *big = hl_malloc(5u << 20);
    CHECK("realloc(p, 0) frees and returns NULL (glibc)", hl_realloc(big, 0) == NULL);

    CHECK("routes: 100 B small, 100 KiB medium, 2 MiB large, align 3 invalid",
          hl_route(100, 0) == HL_ROUTE_SMALL && hl_route(100000, 0) == HL_ROUTE_MEDIUM &&
              hl_route(2u << 20, 0) == HL_ROUTE_LARGE && hl_route(16, 3) == HL_ROUTE_INVALID);
    CHECK("route names", strcmp(hl_route_name(HL_ROUTE_MEDIUM), "medium") == 0);
    {
        /* a freed medium block serves the next request of nearly its size
         * whole, where it was; one an eighth smaller does not take it */
        void *med = hl_malloc(100000);
        hl_free(med);
        void *again = hl_malloc(99000);
        CHECK("a freed medium block is reused whole by a request up to 1/8 smaller", again == med);
        hl_free(again);
        void *smaller = hl_malloc(80000);
        CHECK("a request more than 1/8 smaller does not take the cached block", smaller != med);
        hl_free(smaller);
        hl_stats_t cached;
        hl_stats(&cached);
        CHECK("cached medium blocks count as free and the stats balance",
              cached.medium_free >= 100000 && hl_stats_balanced(&cached));
        CHECK("hl_check clean with blocks in the reuse cache", hl_check() == 0);
    }
    CHECK("version names heaplab", strncmp(hl_version(), "heaplab", 7) == 0);

    CHECK("free of a stack pointer aborts with one line", tu_dies_with(free_stack_pointer, "heaplab: free(): invalid pointer 0x"));
    CHECK("free of an interior small pointer aborts", tu_dies_with(free_interior_small, "heaplab: free(): invalid pointer 0x"));
    CHECK("double free (small) aborts", tu_dies_with(double_free_small, "heaplab: free(): invalid pointer 0x"));
    CHECK("free inside a block of a non-power-of-two class aborts",
          tu_dies_with(free_interior_odd_class, "heaplab: free(): invalid pointer 0x"));
    CHECK("double free after the block went back to its span aborts",
          tu_dies_with(double_free_after_flush, "heaplab: free(): invalid pointer 0x"));
    CHECK("double free (medium) aborts", tu_dies_with(double_free_medium, "heaplab: free(): invalid pointer 0x"));
    CHECK("double free (medium) after trim merged the block back aborts",
          tu_dies_with(double_free_medium_after_trim, "heaplab: free(): invalid pointer 0x"));
    CHECK("double free (large) aborts", tu_dies_with(double_free_large, "heaplab: free(): invalid pointer 0x"));
    CHECK("free of an interior large pointer aborts", tu_dies_with(free_interior_large, "heaplab: free(): invalid pointer 0x"));
    CHECK("free of a segment-header address aborts", tu_dies_with(free_wild_heap_address, "heaplab: free(): invalid pointer 0x"));

    CHECK("hl_check clean after the table", hl_check() == 0);
    hl_stats_t s;
    hl_stats(&s);
    CHECK("stats balanced after the table", hl_stats_balanced(&s));
    return tu_finish();
}
