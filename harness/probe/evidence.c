/* The evidence probe: a small library the program workloads preload after
 * the allocator under test, so each cell can show which allocator served
 * the program instead of trusting that LD_PRELOAD worked.
 *
 * At start-up and at exit it appends one line to
 * $HEAPLAB_EVIDENCE_DIR/PID.txt: the event, the program, the library that
 * `malloc` resolves to in the global scope (what the program's own calls
 * bind to), and at exit that library's own statistics when it has a way to
 * report them (heaplab's hl_stats, jemalloc's mallctl, tcmalloc's numeric
 * properties, mimalloc's mi_process_info, glibc's mallinfo2). A program that
 * drops LD_PRELOAD, a static binary or a setuid one never loads the probe,
 * so it leaves no line: that absence is what "allocator not in use" means.
 *
 * Only write(2) and snprintf into stack buffers: the probe must not allocate
 * from the allocator it is reporting on more than the program itself does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heaplab.h" /* only the hl_stats_t layout; the function is found with dlsym */

enum { LINE_MAX_BYTES = 4096, PATH_MAX_BYTES = 1024 };

static const char DIR_VAR[] = "HEAPLAB_EVIDENCE_DIR";

typedef void (*hl_stats_fn)(hl_stats_t *out);
typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef int (*tc_property_fn)(const char *, size_t *);
typedef void (*mi_process_info_fn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
                                   size_t *, size_t *);
struct glibc_mallinfo2 {
    size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};
typedef struct glibc_mallinfo2 (*mallinfo2_fn)(void);

/* The address of `name` when the object that defines `malloc` defines it. */
static void *from_same_object(const char *name, const char *malloc_object)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    Dl_info info;
    if (!sym || !dladdr(sym, &info) || !info.dli_fname || strcmp(info.dli_fname, malloc_object))
        return NULL;
    return sym;
}

/* Appends " key=value" pairs of the serving allocator's statistics. */
static size_t allocator_stats(const char *object, char *out, size_t len)
{
    size_t n = 0;
    void *sym;
    if ((sym = from_same_object("hl_stats", object))) {
        hl_stats_t st;
        memset(&st, 0, sizeof st);
        ((hl_stats_fn)sym)(&st);
        n += (size_t)snprintf(out + n, len - n, " stats=hl_stats allocated=%zu mapped=%zu",
                              st.alloc_count, st.mapped);
    } else if ((sym = from_same_object("mallctl", object))) {
        size_t epoch = 1, allocated = 0, sz = sizeof allocated;
        mallctl_fn ctl = (mallctl_fn)sym;
        ctl("epoch", &epoch, &sz, &epoch, sizeof epoch);
        sz = sizeof allocated;
        if (ctl("stats.allocated", &allocated, &sz, NULL, 0) == 0) {
            size_t mapped = 0;
            sz = sizeof mapped;
            ctl("stats.mapped", &mapped, &sz, NULL, 0);
            n += (size_t)snprintf(out + n, len - n,
                                  " stats=mallctl allocated=%zu mapped=%zu", allocated, mapped);
        }
    } else if ((sym = from_same_object("MallocExtension_GetNumericProperty", object))) {
        size_t allocated = 0, heap = 0;
        tc_property_fn prop = (tc_property_fn)sym;
        prop("generic.current_allocated_bytes", &allocated);
        prop("generic.heap_size", &heap);
        n += (size_t)snprintf(out + n, len - n,
                              " stats=tcmalloc allocated=%zu heap_size=%zu", allocated, heap);
    } else if ((sym = from_same_object("mi_process_info", object))) {
        size_t ms = 0, user = 0, sys = 0, rss = 0, peak_rss = 0, commit = 0, peak_commit = 0,
               faults = 0;
        ((mi_process_info_fn)sym)(&ms, &user, &sys, &rss, &peak_rss, &commit, &peak_commit,
                                  &faults);
        n += (size_t)snprintf(out + n, len - n, " stats=mimalloc peak_commit=%zu", peak_commit);
    } else if ((sym = from_same_object("mallinfo2", object))) {
        struct glibc_mallinfo2 mi = ((mallinfo2_fn)sym)();
        n += (size_t)snprintf(out + n, len - n, " stats=mallinfo2 arena=%zu mmapped=%zu",
                              mi.arena, mi.hblkhd);
    }
    return n < len ? n : len - 1;
}

/* The object whose `malloc` the program's calls bind to: the first object
 * in the global search order (main program, preloads, then dependencies)
 * that defines it. dlsym(RTLD_DEFAULT) alone would name a non-PIE main
 * program whenever it takes malloc's address (its "canonical PLT" entry),
 * so the main program is skipped; a program that defines malloc itself,
 * statically linked, is not told apart here. */
static const char *malloc_object(void)
{
    struct link_map *map = NULL;
    void *self = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (!self || dlinfo(self, RTLD_DI_LINKMAP, &map) != 0 || !map)
        return NULL;
    for (struct link_map *l = map->l_next; l; l = l->l_next) {
        if (!l->l_name || !*l->l_name)
            continue;
        void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
        void *sym = h ? dlsym(h, "malloc") : NULL;
        Dl_info info;
        int here = sym && dladdr(sym, &info) && info.dli_fname &&
                   strcmp(info.dli_fname, l->l_name) == 0;
        if (h)
            dlclose(h);
        if (here)
            return l->l_name;
    }
    return NULL;
}

static void record(const char *event, int with_stats)
{
    const char *dir = getenv(DIR_VAR);
    if (!dir || !*dir)
        return;
    char path[PATH_MAX_BYTES], exe[PATH_MAX_BYTES], line[LINE_MAX_BYTES];
    if ((size_t)snprintf(path, sizeof path, "%s/%ld.txt", dir, (long)getpid()) >= sizeof path)
        return;
    ssize_t e = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[e > 0 ? e : 0] = '\0';
    const char *object = malloc_object();
    if (!object)
        object = exe;
    size_t n = (size_t)snprintf(line, sizeof line, "event=%s pid=%ld exe=%s malloc=%s", event,
                                (long)getpid(), exe, object);
    if (n >= sizeof line)
        n = sizeof line - 1;
    if (with_stats)
        n += allocator_stats(object, line + n, sizeof line - n);
    if (n + 1 < sizeof line)
        line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, n);
    (void)w;
    close(fd);
}

__attribute__((constructor)) static void probe_start(void)
{
    record("start", 0);
}

__attribute__((destructor)) static void probe_exit(void)
{
    record("exit", 1);
}
