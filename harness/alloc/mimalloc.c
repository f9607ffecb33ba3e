/* "mimalloc": Debian's libmimalloc.so.2, used through its mi_ names. It is
 * loaded by re-executing the runner with it in LD_PRELOAD, because dlopen()ed
 * it runs far slower than as deployed (see reexec.c); so in a
 * mimalloc cell the runner's own few allocations go to mimalloc too. */
#include "families.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>

#define MIMALLOC_SONAME "libmimalloc.so.2"
#define MIMALLOC_PACKAGE "libmimalloc2.0"

/* mi_version() encodes major*100 + minor*10 + patch (209 = 2.0.9). */
enum { MI_VERSION_MAJOR_UNIT = 100, MI_VERSION_MINOR_UNIT = 10 };

static void (*mi_collect_fn)(bool force);
static void (*mi_process_info_fn)(size_t *elapsed_msecs, size_t *user_msecs,
                                  size_t *system_msecs, size_t *current_rss,
                                  size_t *peak_rss, size_t *current_commit,
                                  size_t *peak_commit, size_t *page_faults);
static void *(*mi_malloc_aligned_at_fn)(size_t size, size_t alignment, size_t offset);
static char mimalloc_version[32];

/* mimalloc 2.0.9 (Debian 12's) returns misaligned blocks from mi_aligned_alloc
 * and mi_malloc_aligned for alignments of 256 to 1024 bytes when the size is
 * a small power of two (microsoft/mimalloc#700, fixed after 2.0.9): their
 * fast path skips the alignment check. mi_malloc_aligned_at with offset 0
 * does the same job through the path that checks, so the table uses it. */
static void *mimalloc_aligned_alloc(size_t align, size_t size)
{
    return mi_malloc_aligned_at_fn(size, align, 0);
}

static int mimalloc_trim(void)
{
    /* force = true: collect every heap's free pages and return them to the OS */
    mi_collect_fn(true);
    return 0;
}

static void mimalloc_thread_flush(void)
{
    /* force = false: this thread's deferred frees and empty pages only */
    mi_collect_fn(false);
}

/* mi_process_info is what mimalloc reports about memory. Only its commit
 * figures are its own: on Linux its "current_rss" is a copy of the commit
 * figure (2.0.9 cannot read RSS) and its peak RSS is getrusage's, which the
 * document already has as peak_rss_bytes; neither is reported. */
static int mimalloc_stats(alloc_stat *out, int max)
{
    size_t elapsed, user, sys, rss, peak_rss, commit, peak_commit, faults;
    mi_process_info_fn(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit,
                       &faults);
    const alloc_stat all[] = {
        {"committed", (double)commit},
        {"peak_committed", (double)peak_commit},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && n < max; i++)
        out[n++] = all[i];
    return n;
}

/* A sanitizer's runtime must be the first library the process loads, so a
 * sanitizer build never preloads anything: it checks correctness, and its
 * timings mean nothing anyway. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
enum { PRELOAD_ALLOWED = 0 };
#else
enum { PRELOAD_ALLOWED = 1 };
#endif

int alloc_prepare_mimalloc(char *err, size_t errlen, char **argv)
{
    if (!PRELOAD_ALLOWED)
        return 0;
    void *h = dlopen(MIMALLOC_SONAME, RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        dlclose(h); /* drops only the reference RTLD_NOLOAD took */
        return 0;
    }
    /* not installed or not loadable: alloc_open_mimalloc says which */
    if (!(h = dlopen(MIMALLOC_SONAME, RTLD_NOW | RTLD_LOCAL)))
        return 0;
    char why[512];
    preload_reexec(MIMALLOC_SONAME, argv, why, sizeof why); /* returns only on failure */
    snprintf(err, errlen, "mimalloc: %s", why);
    return -1;
}

int alloc_open_mimalloc(alloc_table *out, char *err, size_t errlen, char **argv)
{
    static const alloc_dl_names names = {"mi_malloc", "mi_free", "mi_calloc", "mi_realloc",
                                         "mi_malloc_aligned_at", "mi_usable_size"};
    void *sym_aligned;
    void *h = alloc_dl_open_table("mimalloc", MIMALLOC_SONAME, MIMALLOC_PACKAGE, &names, out,
                                  &sym_aligned, err, errlen, argv);
    if (!h)
        return -1;

    int (*version_fn)(void) = (int (*)(void))alloc_dl_own_symbol(h, "mi_version");
    if (version_fn) {
        int v = version_fn();
        snprintf(mimalloc_version, sizeof mimalloc_version, "%d.%d.%d",
                 v / MI_VERSION_MAJOR_UNIT, v % MI_VERSION_MAJOR_UNIT / MI_VERSION_MINOR_UNIT,
                 v % MI_VERSION_MINOR_UNIT);
    } else {
        snprintf(mimalloc_version, sizeof mimalloc_version, "unknown");
    }
    mi_collect_fn = (void (*)(bool))alloc_dl_own_symbol(h, "mi_collect");
    mi_process_info_fn = (void (*)(size_t *, size_t *, size_t *, size_t *, size_t *,
                                   size_t *, size_t *, size_t *))
        alloc_dl_own_symbol(h, "mi_process_info");

    out->name = "mimalloc";
    out->version = mimalloc_version;
    /* mi_malloc_aligned_at(size, align, offset) has its own shape: wrapped */
    mi_malloc_aligned_at_fn = (void *(*)(size_t, size_t, size_t))sym_aligned;
    out->aligned_alloc = mimalloc_aligned_alloc;
    out->free_sized = (void (*)(void *, size_t))alloc_dl_own_symbol(h, "mi_free_size");
    out->stats = mi_process_info_fn ? mimalloc_stats : NULL;
    out->trim = mi_collect_fn ? mimalloc_trim : NULL;
    out->thread_flush = mi_collect_fn ? mimalloc_thread_flush : NULL;
    return 0;
}
