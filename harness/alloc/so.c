/* "[NAME=]so:PATH[:PREFIX]": any other allocator a user has, as a shared
 * library exporting PREFIX+malloc, free, calloc, realloc, an aligned
 * allocation (aligned_alloc, memalign or posix_memalign) and a usable-size
 * query (malloc_usable_size or usable_size). dlopen()ed with RTLD_LOCAL.
 * NAME, when given, is what documents call it (alloc.h). */
#include "alloc.h"
#include "families.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SO_SCHEME "so:"
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
enum { SO_PATH_MAX = 1024, SO_PREFIX_MAX = 64, SO_SYMBOL_MAX = 128 };
/* the longest NAME of NAME=so:PATH, in characters (a label, not a path) */
#define SO_NAME_LONGEST 63
enum { SO_NAME_MAX = SO_NAME_LONGEST + 1 };

/* what the document calls it: NAME, or the whole "so:PATH[:PREFIX]" */
static char so_name[SO_PATH_MAX + SO_PREFIX_MAX + 8];
/* what messages call it: the spec as given */
static char so_label[SO_NAME_MAX + SO_PATH_MAX + SO_PREFIX_MAX + 8];
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

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* The "so:..." part of spec: spec itself, or what follows "NAME=". NULL
 * when spec has neither shape. *name_len: the length of NAME, or -1 when
 * there is no "NAME=". */
static const char *so_part(const char *spec, long *name_len)
{
    *name_len = -1;
    if (strncmp(spec, SO_SCHEME, strlen(SO_SCHEME)) == 0)
        return spec;
    const char *eq = strchr(spec, '=');
    if (!eq || strncmp(eq + 1, SO_SCHEME, strlen(SO_SCHEME)) != 0)
        return NULL;
    *name_len = eq - spec;
    return eq + 1;
}

/* Why NAME (the first len bytes of spec) cannot name an allocator, or NULL
 * when it can. */
static const char *bad_name(const char *spec, size_t len)
{
    if (len == 0)
        return "the name before '=' is empty";
    if (len >= SO_NAME_MAX)
        return "the name is longer than " STRINGIFY(SO_NAME_LONGEST) " characters";
    for (size_t i = 0; i < len; i++)
        if (!is_name_char(spec[i]))
            return "the name may hold only letters, digits, '-', '_' and '.'";
    char name[SO_NAME_MAX];
    memcpy(name, spec, len);
    name[len] = '\0';
    if (alloc_family_find(name))
        return "the name is taken by a built-in allocator";
    return NULL;
}

int alloc_is_so_spec(const char *spec)
{
    long name_len;
    if (!so_part(spec, &name_len))
        return 0;
    return name_len < 0 || !bad_name(spec, (size_t)name_len) ? 1 : -1;
}

/* "so:PATH" or "so:PATH:PREFIX" into so_path and so_prefix: a prefix is
 * the part after the last ':' when it holds no '/' (paths may contain ':',
 * prefixes never contain '/'). */
static int split_so(const char *so, char *err, size_t errlen)
{
    const char *spec = so + strlen(SO_SCHEME);
    const char *colon = strrchr(spec, ':');
    size_t path_len = strlen(spec);
    so_prefix[0] = '\0';
    if (colon && !strchr(colon, '/')) {
        path_len = (size_t)(colon - spec);
        if (strlen(colon + 1) >= sizeof so_prefix || !valid_prefix(colon + 1)) {
            snprintf(err, errlen, "%s: the prefix '%s' is not a C identifier prefix", so_label,
                     colon + 1);
            return -1;
        }
        strcpy(so_prefix, colon + 1);
    }
    if (path_len == 0 || path_len >= sizeof so_path) {
        snprintf(err, errlen, "%s: expected %s with a library path", so_label,
                 ALLOC_SO_PATTERN);
        return -1;
    }
    memcpy(so_path, spec, path_len);
    so_path[path_len] = '\0';
    return 0;
}

/* Fills so_label, so_name, so_path and so_prefix from the spec. */
static int parse_spec(const char *spec, char *err, size_t errlen)
{
    snprintf(so_label, sizeof so_label, "%s", spec);
    long name_len;
    const char *so = so_part(spec, &name_len);
    const char *why = name_len >= 0 ? bad_name(spec, (size_t)name_len) : NULL;
    if (why) {
        snprintf(err, errlen, "%s: %s", so_label, why);
        return -1;
    }
    if (split_so(so, err, errlen) != 0)
        return -1;
    if (name_len >= 0)
        snprintf(so_name, sizeof so_name, "%.*s", (int)name_len, spec);
    else
        snprintf(so_name, sizeof so_name, "%s", so);
    return 0;
}

/* A path (it holds a '/') names one file: say so plainly when it is not
 * there, before dlopen's longer words. A bare file name is searched for by
 * the loader, and dlopen's message says where it looked. */
static int check_file(char *err, size_t errlen)
{
    if (!strchr(so_path, '/') || access(so_path, F_OK) == 0)
        return 0;
    if (errno == ENOENT)
        snprintf(err, errlen, "%s: no such file", so_label);
    else
        snprintf(err, errlen, "%s: %s: %s", so_label, so_path, strerror(errno));
    return -1;
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
    if (parse_spec(spec, err, errlen) != 0 || check_file(err, errlen) != 0)
        return -1;
    void *h = alloc_dl_open(so_label, so_path, NULL, err, errlen, argv);
    if (!h)
        return -1;

    static const char *const basic[] = {"malloc", "free", "calloc", "realloc"};
    void *sym[sizeof basic / sizeof basic[0]];
    for (size_t i = 0; i < sizeof basic / sizeof basic[0]; i++) {
        sym[i] = own_prefixed(h, basic[i]);
        if (!sym[i]) {
            snprintf(err, errlen, "%s: %s does not define '%s%s'", so_label, so_path, so_prefix,
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
                 so_label, so_path, so_prefix, so_prefix, so_prefix);
        return -1;
    }
    static const char *const usable_names[] = {"malloc_usable_size", "usable_size"};
    void *usable = first_own(h, usable_names, sizeof usable_names / sizeof usable_names[0]);
    if (!usable) {
        snprintf(err, errlen, "%s: %s defines neither '%smalloc_usable_size' nor '%susable_size'",
                 so_label, so_path, so_prefix, so_prefix);
        return -1;
    }

    out->name = so_name;
    out->path = so_path;
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
