/* "so:PATH[:PREFIX]": any other allocator a user has, as a shared library
 * exporting PREFIX+malloc, free, calloc, realloc, an aligned allocation
 * (aligned_alloc, memalign or posix_memalign) and a usable-size query
 * (malloc_usable_size or usable_size). dlopen()ed with RTLD_LOCAL. */
#include "alloc_families.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

enum { SO_PATH_MAX = 1024, SO_PREFIX_MAX = 64, SO_SYMBOL_MAX = 128 };

static char so_name[SO_PATH_MAX + SO_PREFIX_MAX + 8];
static char so_path[SO_PATH_MAX];
static char so_prefix[SO_PREFIX_MAX];

/* Whichever aligned entry point the library has, adapted to
 * aligned_alloc(align, size). */
static void *(*so_memalign)(size_t align, size_t size);
static int (*so_posix_memalign)(void **out, size_t align, size_t size);

static void *so_aligned_via_posix_memalign(size_t align, size_t size)
{
    void *p = NULL;
    return so_posix_memalign(&p, align, size) == 0 ? p : NULL;
}

/* PREFIX+name, defined by the library itself (NULL otherwise). */
static void *own_prefixed(void *h, const char *name)
{
    char symbol[SO_SYMBOL_MAX];
    snprintf(symbol, sizeof symbol, "%s%s", so_prefix, name);
    return alloc_dl_own_symbol(h, symbol);
}

static int valid_prefix(const char *p)
{
    for (; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return 0;
    return 1;
}

/* "PATH" or "PATH:PREFIX": a prefix is the part after the last ':' when it
 * holds no '/' (paths may contain ':', prefixes never contain '/'). */
static int split_spec(const char *spec, char *err, size_t errlen)
{
    const char *colon = strrchr(spec, ':');
    size_t path_len = strlen(spec);
    so_prefix[0] = '\0';
    if (colon && !strchr(colon, '/')) {
        path_len = (size_t)(colon - spec);
        if (strlen(colon + 1) >= sizeof so_prefix || !valid_prefix(colon + 1)) {
            snprintf(err, errlen, "so:%s: the prefix '%s' is not a C identifier prefix", spec,
                     colon + 1);
            return -1;
        }
        strcpy(so_prefix, colon + 1);
    }
    if (path_len == 0 || path_len >= sizeof so_path) {
        snprintf(err, errlen, "so:%s: expected so:PATH[:PREFIX] with a library path", spec);
        return -1;
    }
    memcpy(so_path, spec, path_len);
    so_path[path_len] = '\0';
    return 0;
}

/* The first of `names` (PREFIX-ed) that the library defines. */
static void *first_own(void *h, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        void *sym = own_prefixed(h, names[i]);
        if (sym)
            return sym;
    }
    return NULL;
}

int alloc_open_so(const char *spec, alloc_table *out, char *err, size_t errlen, char **argv)
{
    if (split_spec(spec, err, errlen) != 0)
        return -1;
    snprintf(so_name, sizeof so_name, "so:%s", spec);
    void *h = alloc_dl_open(so_name, so_path, NULL, err, errlen, argv);
    if (!h)
        return -1;

    static const char *const basic[] = {"malloc", "free", "calloc", "realloc"};
    void *sym[sizeof basic / sizeof basic[0]];
    for (size_t i = 0; i < sizeof basic / sizeof basic[0]; i++) {
        sym[i] = own_prefixed(h, basic[i]);
        if (!sym[i]) {
            snprintf(err, errlen, "%s: %s does not define '%s%s'", so_name, so_path, so_prefix,
                     basic[i]);
            return -1;
        }
    }

    void *(*aligned)(size_t, size_t) = (void *(*)(size_t, size_t))own_prefixed(h, "aligned_alloc");
    if (!aligned) {
        so_memalign = (void *(*)(size_t, size_t))own_prefixed(h, "memalign");
        so_posix_memalign = (int (*)(void **, size_t, size_t))own_prefixed(h, "posix_memalign");
        aligned = so_memalign           ? so_memalign
                  : so_posix_memalign ? so_aligned_via_posix_memalign
                                      : NULL;
    }
    if (!aligned) {
        snprintf(err, errlen, "%s: %s defines none of '%saligned_alloc', '%smemalign', '%sposix_memalign'",
                 so_name, so_path, so_prefix, so_prefix, so_prefix);
        return -1;
    }
    static const char *const usable_names[] = {"malloc_usable_size", "usable_size"};
    void *usable = first_own(h, usable_names, sizeof usable_names / sizeof usable_names[0]);
    if (!usable) {
        snprintf(err, errlen, "%s: %s defines neither '%smalloc_usable_size' nor '%susable_size'",
                 so_name, so_path, so_prefix, so_prefix);
        return -1;
    }

    out->name = so_name;
    out->version = "unknown";
    out->library = alloc_dl_path(h);
    /* only an unprefixed library replaces malloc & co. when preloaded */
    out->preload = so_prefix[0] ? NULL : out->library;
    out->malloc = (void *(*)(size_t))sym[0];
    out->free = (void (*)(void *))sym[1];
    out->calloc = (void *(*)(size_t, size_t))sym[2];
    out->realloc = (void *(*)(void *, size_t))sym[3];
    out->aligned_alloc = aligned;
    out->usable_size = (size_t(*)(void *))usable;
    /* C23's free_sized when the library has it; nothing else is guessed */
    out->free_sized = (void (*)(void *, size_t))own_prefixed(h, "free_sized");
    out->stats = NULL;
    out->trim = NULL;
    out->thread_flush = NULL;
    return 0;
}
