/* "jemalloc": Debian's libjemalloc.so.2 (unprefixed: it exports malloc,
 * free, ... under the standard names). dlopen()ed with RTLD_LOCAL, so those
 * names do not replace glibc's anywhere; the table takes them from the
 * library's own symbol table (alloc_dl_own_symbol refuses glibc's).
 *
 * The library needs static TLS, so loading it usually re-executes the
 * runner once first (alloc_dl_open, reexec.c). */
#include "families.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define JEMALLOC_SONAME "libjemalloc.so.2"
#define JEMALLOC_PACKAGE "libjemalloc2"
/* jemalloc's MALLCTL_ARENAS_ALL: the arena index that means "every arena" */
#define JEMALLOC_ARENAS_ALL "4096"

typedef int (*mallctl_fn)(const char *name, void *oldp, size_t *oldlenp, void *newp,
                          size_t newlen);
static mallctl_fn je_mallctl;
static void (*je_sdallocx)(void *p, size_t size, int flags);
static char jemalloc_version[128];

static void jemalloc_free_sized(void *p, size_t size)
{
    /* flags 0: no alignment, default tcache and arena */
    je_sdallocx(p, size, 0);
}

static int jemalloc_trim(void)
{
    return je_mallctl("arena." JEMALLOC_ARENAS_ALL ".purge", NULL, NULL, NULL, 0) == 0 ? 0
                                                                                      : -1;
}

static void jemalloc_thread_flush(void)
{
    (void)je_mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
}

/* jemalloc's statistics are a snapshot refreshed by writing "epoch". A key
 * the library cannot give (built without stats) is left out, not faked. */
static int jemalloc_stats(alloc_stat *out, int max)
{
    uint64_t epoch = 1;
    size_t len = sizeof epoch;
    if (je_mallctl("epoch", &epoch, &len, &epoch, sizeof epoch) != 0)
        return 0;
    static const struct {
        const char *key;
        const char *mallctl;
    } wanted[] = {
        {"allocated", "stats.allocated"}, {"active", "stats.active"},
        {"metadata", "stats.metadata"},   {"resident", "stats.resident"},
        {"mapped", "stats.mapped"},       {"retained", "stats.retained"},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0] && n < max; i++) {
        size_t value = 0;
        len = sizeof value;
        if (je_mallctl(wanted[i].mallctl, &value, &len, NULL, 0) == 0)
            out[n++] = (alloc_stat){wanted[i].key, (double)value};
    }
    return n;
}

int alloc_open_jemalloc(alloc_table *out, char *err, size_t errlen, char **argv)
{
    static const alloc_dl_names names = {"malloc", "free", "calloc", "realloc",
                                         "aligned_alloc", "malloc_usable_size"};
    void *h = alloc_dl_open_table("jemalloc", JEMALLOC_SONAME, JEMALLOC_PACKAGE, &names, out,
                                  NULL, err, errlen, argv);
    if (!h)
        return -1;

    je_mallctl = (mallctl_fn)alloc_dl_own_symbol(h, "mallctl");
    je_sdallocx = (void (*)(void *, size_t, int))alloc_dl_own_symbol(h, "sdallocx");

    const char *v = NULL;
    size_t len = sizeof v;
    if (je_mallctl && je_mallctl("version", &v, &len, NULL, 0) == 0 && v)
        snprintf(jemalloc_version, sizeof jemalloc_version, "%s", v);
    else
        snprintf(jemalloc_version, sizeof jemalloc_version, "unknown");

    out->name = "jemalloc";
    out->version = jemalloc_version;
    out->free_sized = je_sdallocx ? jemalloc_free_sized : NULL;
    out->stats = je_mallctl ? jemalloc_stats : NULL;
    out->trim = je_mallctl ? jemalloc_trim : NULL;
    out->thread_flush = je_mallctl ? jemalloc_thread_flush : NULL;
    return 0;
}
