/* dlopen helpers shared by the mimalloc, jemalloc, tcmalloc and so:PATH
 * families. */
#include "families.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

void *alloc_dl_open(const char *label, const char *path, const char *package,
                    char *err, size_t errlen, char **argv)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h)
        return h;
    const char *why = dlerror();
    if (!why)
        why = "unknown reason";
    /* glibc's words for a library whose initial-exec TLS does not fit */
    if (strstr(why, "static TLS")) {
        char reexec_err[512];
        static_tls_reexec(argv, reexec_err, sizeof reexec_err); /* returns only on failure */
        snprintf(err, errlen, "%s: %s", label, reexec_err);
        return NULL;
    }
    /* dlerror says "No such file or directory" when the loader found no file
     * by that name anywhere it looks: the package is missing. */
    if (package && strstr(why, "No such file or directory"))
        snprintf(err, errlen, "%s: not installed (apt install %s)", label, package);
    else
        snprintf(err, errlen, "%s: dlopen failed: %s", label, why);
    return NULL;
}

static struct link_map *handle_map(void *handle)
{
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0)
        return NULL;
    return map;
}

void *alloc_dl_own_symbol(void *handle, const char *name)
{
    void *sym = dlsym(handle, name);
    if (!sym)
        return NULL;
    Dl_info info;
    struct link_map *owner = NULL;
    if (!dladdr1(sym, &info, (void **)&owner, RTLD_DL_LINKMAP) || !owner)
        return NULL;
    /* found in a dependency (glibc, libstdc++), not in the library itself */
    if (owner != handle_map(handle))
        return NULL;
    return sym;
}

void *alloc_dl_need(void *handle, const char *label, const char *name, char *err,
                    size_t errlen)
{
    void *sym = alloc_dl_own_symbol(handle, name);
    if (!sym)
        snprintf(err, errlen, "%s: %s does not define '%s'", label,
                 alloc_dl_path(handle), name);
    return sym;
}

int alloc_dl_need_all(void *handle, const char *label, const alloc_dl_symbol *list,
                      size_t count, char *err, size_t errlen)
{
    for (size_t i = 0; i < count; i++) {
        *list[i].slot = alloc_dl_need(handle, label, list[i].name, err, errlen);
        if (!*list[i].slot)
            return -1;
    }
    return 0;
}

const char *alloc_dl_path(void *handle)
{
    struct link_map *map = handle_map(handle);
    if (!map || !map->l_name || !map->l_name[0])
        return "unknown";
    return map->l_name;
}

void *alloc_dl_open_table(const char *label, const char *soname, const char *package,
                          const alloc_dl_names *names, alloc_table *out, void **aligned_sym,
                          char *err, size_t errlen, char **argv)
{
    void *h = alloc_dl_open(label, soname, package, err, errlen, argv);
    if (!h)
        return NULL;
    void *sym_malloc, *sym_free, *sym_calloc, *sym_realloc, *sym_aligned, *sym_usable;
    const alloc_dl_symbol mandatory[] = {
        {names->malloc, &sym_malloc},          {names->free, &sym_free},
        {names->calloc, &sym_calloc},          {names->realloc, &sym_realloc},
        {names->aligned_alloc, &sym_aligned},  {names->usable_size, &sym_usable},
    };
    if (alloc_dl_need_all(h, label, mandatory, sizeof mandatory / sizeof mandatory[0], err,
                          errlen) != 0)
        return NULL;
    out->library = alloc_dl_path(h);
    /* these libraries also export malloc & co. under the standard names */
    out->preload = out->library;
    out->malloc = (void *(*)(size_t))sym_malloc;
    out->free = (void (*)(void *))sym_free;
    out->calloc = (void *(*)(size_t, size_t))sym_calloc;
    out->realloc = (void *(*)(void *, size_t))sym_realloc;
    out->aligned_alloc = (void *(*)(size_t, size_t))sym_aligned;
    out->usable_size = (size_t(*)(void *))sym_usable;
    if (aligned_sym)
        *aligned_sym = sym_aligned;
    return h;
}
