/* "tcmalloc": gperftools' libtcmalloc_minimal.so.4, dlopen()ed with
 * RTLD_LOCAL and used through its tc_ names.
 *
 * Why dlopen is safe here: with RTLD_LOCAL the library's malloc, free,
 * __libc_malloc, operator new ... stay out of the global scope, so glibc and
 * the runner keep glibc's malloc and never hand tcmalloc a pointer it did not
 * make (tcmalloc aborts on a foreign pointer). Its own C++ runtime calls
 * (libstdc++ loaded with it) resolve operator new/delete to tcmalloc's pair,
 * which is consistent. tcmalloc takes fresh memory with sbrk before mmap;
 * glibc's malloc notices a foreign brk move and continues non-contiguously,
 * and neither shrinks brk under the other. tests/runner checks that
 * allocating, freeing and trimming work beside glibc's malloc. */
#include "families.h"

#include <stdio.h>

#define TCMALLOC_SONAME "libtcmalloc_minimal.so.4"
#define TCMALLOC_PACKAGE "libtcmalloc-minimal4"

static void (*tc_release_free_memory)(void);
static void (*tc_mark_thread_idle)(void);
static int (*tc_numeric_property)(const char *property, size_t *value);
static char tcmalloc_version[64];

static int tcmalloc_trim(void)
{
    tc_release_free_memory();
    return 0;
}

static void tcmalloc_thread_flush(void)
{
    /* releases the calling thread's cache; the next allocation makes a new one */
    tc_mark_thread_idle();
}

static int tcmalloc_stats(alloc_stat *out, int max)
{
    static const struct {
        const char *key;
        const char *property;
    } wanted[] = {
        {"allocated", "generic.current_allocated_bytes"},
        {"heap_size", "generic.heap_size"},
        {"pageheap_free", "tcmalloc.pageheap_free_bytes"},
        {"pageheap_unmapped", "tcmalloc.pageheap_unmapped_bytes"},
        {"thread_cache_free", "tcmalloc.current_total_thread_cache_bytes"},
        {"central_cache_free", "tcmalloc.central_cache_free_bytes"},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0] && n < max; i++) {
        size_t value = 0;
        /* returns 1 when it knows the property */
        if (tc_numeric_property(wanted[i].property, &value))
            out[n++] = (alloc_stat){wanted[i].key, (double)value};
    }
    return n;
}

/* Under AddressSanitizer the sanitizer's operator new is the global one, so
 * tcmalloc's start-up registration of its MallocExtension (made with new and
 * kept for the life of the process) shows up as a leak. LeakSanitizer asks
 * the program for suppressions through this hook; in other builds nothing
 * calls it. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libtcmalloc_minimal.so\n";
}

int alloc_open_tcmalloc(alloc_table *out, char *err, size_t errlen, char **argv)
{
    /* tc_memalign(align, size) has aligned_alloc's argument order */
    static const alloc_dl_names names = {"tc_malloc", "tc_free", "tc_calloc", "tc_realloc",
                                         "tc_memalign", "tc_malloc_size"};
    void *h = alloc_dl_open_table("tcmalloc", TCMALLOC_SONAME, TCMALLOC_PACKAGE, &names, out,
                                  NULL, err, errlen, argv);
    if (!h)
        return -1;

    tc_release_free_memory =
        (void (*)(void))alloc_dl_own_symbol(h, "MallocExtension_ReleaseFreeMemory");
    tc_mark_thread_idle =
        (void (*)(void))alloc_dl_own_symbol(h, "MallocExtension_MarkThreadIdle");
    tc_numeric_property = (int (*)(const char *, size_t *))alloc_dl_own_symbol(
        h, "MallocExtension_GetNumericProperty");
    const char *(*version_fn)(int *, int *, const char **) =
        (const char *(*)(int *, int *, const char **))alloc_dl_own_symbol(h, "tc_version");
    int major = 0, minor = 0;
    const char *patch = "";
    const char *v = version_fn ? version_fn(&major, &minor, &patch) : NULL;
    snprintf(tcmalloc_version, sizeof tcmalloc_version, "%s", v ? v : "unknown");

    out->name = "tcmalloc";
    out->version = tcmalloc_version;
    out->free_sized = (void (*)(void *, size_t))alloc_dl_own_symbol(h, "tc_free_sized");
    out->stats = tc_numeric_property ? tcmalloc_stats : NULL;
    out->trim = tc_release_free_memory ? tcmalloc_trim : NULL;
    out->thread_flush = tc_mark_thread_idle ? tcmalloc_thread_flush : NULL;
    return 0;
}
