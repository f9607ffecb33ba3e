/* heaplab core test: a call that succeeds leaves errno as it was.
 *
 * C and POSIX let a successful call change errno, but programs (and glibc's
 * malloc, which they are used to) rely on malloc not doing it: code that
 * reads errno after a sequence of calls must see the error of the call that
 * failed. Each row below sets errno to a sentinel, makes one successful
 * call, and checks the sentinel is still there: on every path, and on the
 * ones that make system calls whose failure does not fail the allocation
 * (naming a fresh mapping, mremap in place before a move, a futex wait on a
 * contended lock). The rest of the public API follows, one row per
 * function of heaplab.h (reallocarray, memalign, valloc, pvalloc,
 * usable_size, free_sized, free_aligned_sized on the small, medium and
 * large paths; the stats, checker, route and cache switches). The preload
 * library's standard names have their own test (errno_preload.c). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define SENTINEL 12345
/* blocks of one size kept live at once, so that each takes a fresh mapping */
#define FRESH_BLOCKS 4
#define THREADS 8
#define THREAD_ITERATIONS 3000

/* the check of a row whose calls left errno at `seen` (the first value
 * other than the sentinel, when several calls ran) */
static void report(const char *name, int succeeded, int seen)
{
    CHECK(name, succeeded && seen == SENTINEL);
    if (seen != SENTINEL)
        printf("     errno is %d (%s), not the sentinel %d\n", seen, strerror(seen), SENTINEL);
}

/* a row of one call: errno as the call left it (read before CHECK prints) */
static void kept(const char *name, int succeeded)
{
    report(name, succeeded, errno);
}

/* after one call of a row of several: remembers the first change */
static void note(int *seen)
{
    if (errno != SENTINEL && *seen == SENTINEL)
        *seen = errno;
}

static _Atomic size_t thread_changes, thread_failures;

/* Threads contend on the medium arenas and the large lock; every call must
 * leave this thread's errno at the sentinel. */
static void *contend(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 0x51ED27u + 7;
    void *held[8] = {0};
    errno = SENTINEL;
    for (unsigned i = 0; i < THREAD_ITERATIONS; i++) {
        uint64_t r = tu_rand(&rng);
        unsigned k = (unsigned)(r % 8);
        hl_free(held[k]);
        if (errno != SENTINEL)
            atomic_fetch_add(&thread_changes, 1);
        errno = SENTINEL;
        size_t size = r % 16 == 0 ? 2 * MiB + (size_t)(r >> 8) % MiB : 40 * KiB + (size_t)(r >> 8) % (200 * KiB);
        held[k] = hl_malloc(size);
        if (!held[k])
            atomic_fetch_add(&thread_failures, 1);
        if (errno != SENTINEL)
            atomic_fetch_add(&thread_changes, 1);
        errno = SENTINEL;
    }
    for (unsigned k = 0; k < 8; k++)
        hl_free(held[k]);
    if (errno != SENTINEL)
        atomic_fetch_add(&thread_changes, 1);
    return NULL;
}

/* Every other function of heaplab.h, small, medium and large where the
 * paths differ. */
static void rest_of_api(void)
{
    static const size_t sizes[] = {200, 100 * KiB, 6 * MiB};
    static const char *const paths[] = {"small", "medium", "large"};
    char name[160];
    for (size_t k = 0; k < 3; k++) {
        const char *path = paths[k];
        size_t size = sizes[k];
        errno = SENTINEL;
        void *r = hl_reallocarray(NULL, 4, size / 4);
        snprintf(name, sizeof name, "errno kept by reallocarray(NULL, 4, %zu) (%s)", size / 4, path);
        kept(name, r != NULL);
        errno = SENTINEL;
        void *r2 = hl_reallocarray(r, 8, size / 4);
        snprintf(name, sizeof name, "errno kept by reallocarray growing it to 8 x %zu (%s)", size / 4, path);
        kept(name, r2 != NULL);
        errno = SENTINEL;
        size_t usable = hl_usable_size(r2);
        snprintf(name, sizeof name, "errno kept by usable_size (%s)", path);
        kept(name, usable >= 2 * size);
        errno = SENTINEL;
        hl_free_sized(r2, 2 * size);
        snprintf(name, sizeof name, "errno kept by free_sized (%s)", path);
        kept(name, 1);

        errno = SENTINEL;
        void *m = hl_memalign(256, size);
        snprintf(name, sizeof name, "errno kept by memalign(256, %zu) (%s request)", size, path);
        kept(name, m != NULL && (uintptr_t)m % 256 == 0);
        errno = SENTINEL;
        void *m2 = hl_memalign(3000, size); /* not a power of two: rounded up to 4096 */
        snprintf(name, sizeof name, "errno kept by memalign(3000, %zu) (%s request)", size, path);
        kept(name, m2 != NULL && (uintptr_t)m2 % 4096 == 0);
        errno = SENTINEL;
        hl_free_aligned_sized(m, 256, size);
        hl_free_aligned_sized(m2, 4096, size);
        snprintf(name, sizeof name, "errno kept by free_aligned_sized (%s request)", path);
        kept(name, 1);

        errno = SENTINEL;
        void *v = hl_valloc(size);
        snprintf(name, sizeof name, "errno kept by valloc(%zu) (%s request)", size, path);
        kept(name, v != NULL && (uintptr_t)v % 4096 == 0);
        errno = SENTINEL;
        void *pv = hl_pvalloc(size);
        snprintf(name, sizeof name, "errno kept by pvalloc(%zu) (%s request)", size, path);
        kept(name, pv != NULL && (uintptr_t)pv % 4096 == 0 && hl_usable_size(pv) >= ((size + 4095) & ~(size_t)4095));
        errno = SENTINEL;
        hl_free(v);
        hl_free(pv);
        snprintf(name, sizeof name, "errno kept by the frees of the valloc and pvalloc blocks (%s request)", path);
        kept(name, 1);
    }
    errno = SENTINEL;
    void *z = hl_pvalloc(0);
    kept("errno kept by pvalloc(0) (one page)", z != NULL);
    hl_free(z);

    hl_stats_t st;
    errno = SENTINEL;
    hl_stats(&st);
    kept("errno kept by hl_stats", st.mapped > 0);
    errno = SENTINEL;
    int balanced = hl_stats_balanced(&st);
    kept("errno kept by hl_stats_balanced", balanced);
    errno = SENTINEL;
    int broken = hl_check();
    kept("errno kept by hl_check (a clean heap)", broken == 0);
    errno = SENTINEL;
    enum hl_route route = hl_route(100 * KiB, 0);
    kept("errno kept by hl_route", route == HL_ROUTE_MEDIUM);
    errno = SENTINEL;
    const char *route_name = hl_route_name(route);
    kept("errno kept by hl_route_name", strcmp(route_name, "medium") == 0);
    errno = SENTINEL;
    int was_on = hl_set_tcache(0);
    kept("errno kept by hl_set_tcache(0)", was_on == 1);
    errno = SENTINEL;
    int on = hl_tcache_enabled();
    kept("errno kept by hl_tcache_enabled", on == 0);
    errno = SENTINEL;
    void *uncached = hl_malloc(64);
    hl_free(uncached);
    kept("errno kept by a malloc and free with the caches off", uncached != NULL);
    errno = SENTINEL;
    was_on = hl_set_tcache(1);
    kept("errno kept by hl_set_tcache(1)", was_on == 0);
    errno = SENTINEL;
    const char *version = hl_version();
    kept("errno kept by hl_version", version != NULL && version[0] != 0);
}

int main(void)
{
    void *p;
    errno = SENTINEL;
    kept("errno kept by a successful small malloc (64 B)", (p = hl_malloc(64)) != NULL);
    errno = SENTINEL;
    hl_free(p);
    kept("errno kept by a small free", 1);

    /* many small blocks of one class: the class takes fresh spans and the
     * pool a fresh segment */
    {
        static void *many[20000];
        int ok = 1, seen = SENTINEL;
        for (size_t i = 0; i < sizeof many / sizeof many[0]; i++) {
            errno = SENTINEL;
            ok &= (many[i] = hl_malloc(512)) != NULL;
            note(&seen);
        }
        report("errno kept by 20,000 small mallocs (fresh spans and segments)", ok, seen);
        seen = SENTINEL;
        for (size_t i = 0; i < sizeof many / sizeof many[0]; i++) {
            errno = SENTINEL;
            hl_free(many[i]);
            note(&seen);
        }
        report("errno kept by 20,000 small frees (cache flushes)", 1, seen);
    }

    /* medium: the first blocks of fresh arenas' segments */
    {
        void *m[FRESH_BLOCKS * 8];
        int ok = 1, seen = SENTINEL;
        for (int i = 0; i < FRESH_BLOCKS * 8; i++) {
            errno = SENTINEL;
            ok &= (m[i] = hl_malloc(900 * KiB)) != NULL;
            note(&seen);
        }
        report("errno kept by medium mallocs of 900 KiB (fresh medium segments)", ok, seen);
        seen = SENTINEL;
        for (int i = 0; i < FRESH_BLOCKS * 8; i++) {
            errno = SENTINEL;
            hl_free(m[i]);
            note(&seen);
        }
        report("errno kept by medium frees", 1, seen);
    }

    static const size_t large_sizes[] = {8 * MiB, 64 * MiB};
    for (size_t s = 0; s < 2; s++) {
        void *blocks[FRESH_BLOCKS];
        char name[160];
        for (int i = 0; i < FRESH_BLOCKS; i++) {
            errno = SENTINEL;
            blocks[i] = hl_malloc(large_sizes[s]);
            snprintf(name, sizeof name, "errno kept by a malloc of %zu MiB (fresh mapping %d of %d)",
                     large_sizes[s] / MiB, i + 1, FRESH_BLOCKS);
            kept(name, blocks[i] != NULL);
        }
        for (int i = 0; i < FRESH_BLOCKS; i++) {
            errno = SENTINEL;
            hl_free(blocks[i]);
            snprintf(name, sizeof name, "errno kept by the free of a %zu MiB block (%d of %d)", large_sizes[s] / MiB,
                     i + 1, FRESH_BLOCKS);
            kept(name, 1);
        }
    }

    errno = SENTINEL;
    unsigned char *c = hl_calloc(3, 5 * MiB);
    kept("errno kept by calloc of 15 MiB (a fresh zeroed mapping)", c != NULL && c[0] == 0 && c[15 * MiB - 1] == 0);
    errno = SENTINEL;
    void *c2 = hl_calloc(1000, 100);
    kept("errno kept by calloc of 100,000 B (medium)", c2 != NULL);
    hl_free(c2);

    /* growing a large block: in place when the addresses above are free,
     * otherwise its pages move to a fresh mapping */
    errno = SENTINEL;
    unsigned char *g = hl_realloc(c, 40 * MiB);
    kept("errno kept by realloc growing 15 MiB -> 40 MiB", g != NULL && g[0] == 0);
    {
        int ok = g != NULL, seen = SENTINEL;
        void *blocker = NULL;
        for (int i = 0; ok && i < 6; i++) {
            /* a fresh mapping right after the block often blocks growth in place */
            blocker = hl_malloc(2 * MiB);
            errno = SENTINEL;
            unsigned char *h = hl_realloc(g, (size_t)(41 + 3 * i) * MiB);
            note(&seen);
            ok &= h != NULL;
            if (h)
                g = h;
            hl_free(blocker);
        }
        report("errno kept by six realloc growths of a large block (mremap in place or a move)", ok, seen);
    }
    errno = SENTINEL;
    g = hl_realloc(g, 3 * MiB);
    kept("errno kept by realloc shrinking a large block", g != NULL);
    errno = SENTINEL;
    g = hl_realloc(g, 100 * KiB);
    kept("errno kept by realloc of a large block down to medium", g != NULL);
    errno = SENTINEL;
    hl_free(g);
    kept("errno kept by free after the reallocs", 1);

    errno = SENTINEL;
    void *a1 = hl_aligned_alloc(64, 200);
    kept("errno kept by aligned_alloc(64, 200) (small)", a1 != NULL);
    errno = SENTINEL;
    void *a2 = hl_aligned_alloc(64 * KiB, 300 * KiB);
    kept("errno kept by aligned_alloc(64 KiB, 300 KiB) (a large mapping)", a2 != NULL);
    errno = SENTINEL;
    void *a3 = hl_aligned_alloc(1 * MiB, 6 * MiB);
    kept("errno kept by aligned_alloc(1 MiB, 6 MiB)", a3 != NULL);
    void *pm = NULL;
    errno = SENTINEL;
    int rc = hl_posix_memalign(&pm, 256 * KiB, 9 * MiB);
    kept("errno kept by posix_memalign(256 KiB, 9 MiB)", rc == 0 && pm != NULL);
    errno = SENTINEL;
    hl_free(a1);
    hl_free(a2);
    hl_free(a3);
    hl_free(pm);
    kept("errno kept by the frees of the aligned blocks", 1);

    errno = SENTINEL;
    hl_trim();
    kept("errno kept by hl_trim (madvise and munmap of free memory)", 1);

    {
        pthread_t t[THREADS];
        for (uintptr_t i = 0; i < THREADS; i++)
            pthread_create(&t[i], NULL, contend, (void *)(i + 1));
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        size_t changes = atomic_load(&thread_changes);
        if (changes)
            printf("     %zu calls of the threads changed errno\n", changes);
        errno = SENTINEL;
        kept("errno kept by every call of 8 threads contending on the medium and large locks",
             changes == 0 && atomic_load(&thread_failures) == 0);
    }

    errno = SENTINEL;
    hl_thread_flush();
    kept("errno kept by hl_thread_flush", 1);
    rest_of_api();
    CHECK("hl_check clean after the errno table", hl_check() == 0);
    return tu_finish();
}
