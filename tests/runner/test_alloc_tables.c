/* Each allocator table serves: open it by name (argv[1]) and drive every
 * entry the way workloads do -- malloc, free, calloc, realloc,
 * aligned_alloc, usable_size, the optional hooks, and a block freed on a
 * different thread from the one that allocated it.
 *
 * An optional second argument lowers the largest alignment checked (default
 * 65536), for a library known to get larger ones wrong.
 *
 * Exit 0 when every check holds, 1 otherwise (one line per broken check),
 * 77 (ctest's SKIP_RETURN_CODE) when the allocator is not installed here. */
#include "alloc.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heaplab.h"

enum { EXIT_SKIP = 77 };
enum { PATTERN_BYTE = 0x5c, SMALL_SIZE = 100, GROWN_SIZE = 5000 };
enum { CALLOC_COUNT = 1000, CALLOC_ELEM = 8 };
enum { MAX_ALIGN_TESTED = 65536, SIZED_FREE_SIZE = 48 };
enum { HANDOFF_BLOCKS = 1000, HANDOFF_SIZE = 96 };
/* sizes from 1 byte to 8 MiB, each step x3, cover every size path
 * (small, medium, large) of every allocator measured */
enum { LARGEST_SIZE = 8 << 20, SIZE_STEP = 3 };

#include "check.h"

static int all_bytes(const unsigned char *p, size_t n, unsigned char value)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != value)
            return 0;
    return 1;
}

static void check_identity(const alloc_table *t, const char *asked)
{
    CHECK(t->name && strcmp(t->name, asked) == 0, "name is '%s', asked for '%s'",
          t->name ? t->name : "(null)", asked);
    CHECK(t->version && t->version[0], "version is empty");
    CHECK(t->library && t->library[0], "library is empty");
}

static void check_malloc_realloc(const alloc_table *t)
{
    unsigned char *p = t->malloc(SMALL_SIZE);
    CHECK(p != NULL, "malloc(%d) returned NULL", SMALL_SIZE);
    if (!p)
        return;
    CHECK(t->usable_size(p) >= SMALL_SIZE, "usable_size %zu < %d", t->usable_size(p),
          SMALL_SIZE);
    memset(p, PATTERN_BYTE, SMALL_SIZE);
    unsigned char *q = t->realloc(p, GROWN_SIZE);
    CHECK(q != NULL, "realloc to %d returned NULL", GROWN_SIZE);
    if (!q) {
        t->free(p);
        return;
    }
    CHECK(all_bytes(q, SMALL_SIZE, PATTERN_BYTE), "realloc lost the block's contents");
    CHECK(t->usable_size(q) >= GROWN_SIZE, "usable_size after realloc %zu < %d",
          t->usable_size(q), GROWN_SIZE);
    t->free(q);
}

static void check_calloc(const alloc_table *t)
{
    /* dirty a block of the same size first, so a reused block must be cleared */
    unsigned char *dirty = t->malloc(CALLOC_COUNT * CALLOC_ELEM);
    if (dirty) {
        memset(dirty, PATTERN_BYTE, CALLOC_COUNT * CALLOC_ELEM);
        t->free(dirty);
    }
    unsigned char *z = t->calloc(CALLOC_COUNT, CALLOC_ELEM);
    CHECK(z != NULL, "calloc returned NULL");
    if (z) {
        CHECK(all_bytes(z, CALLOC_COUNT * CALLOC_ELEM, 0), "calloc memory is not zero");
        t->free(z);
    }
}

static void check_aligned(const alloc_table *t, size_t max_align)
{
    for (size_t align = sizeof(void *); align <= max_align; align *= 2) {
        size_t size = 2 * align; /* a multiple of align, as C11 asks */
        void *p = t->aligned_alloc(align, size);
        CHECK(p != NULL, "aligned_alloc(%zu, %zu) returned NULL", align, size);
        if (!p)
            continue;
        CHECK((uintptr_t)p % align == 0, "aligned_alloc(%zu) gave %p", align, p);
        CHECK(t->usable_size(p) >= size, "usable_size of aligned block %zu < %zu",
              t->usable_size(p), size);
        memset(p, PATTERN_BYTE, size);
        t->free(p);
    }
}

static void check_size_ladder(const alloc_table *t)
{
    for (size_t size = 1; size <= LARGEST_SIZE; size *= SIZE_STEP) {
        unsigned char *p = t->malloc(size);
        CHECK(p != NULL, "malloc(%zu) returned NULL", size);
        if (!p)
            continue;
        p[0] = PATTERN_BYTE;
        p[size - 1] = PATTERN_BYTE;
        CHECK(t->usable_size(p) >= size, "usable_size %zu < %zu", t->usable_size(p), size);
        t->free(p);
    }
}

static void check_hooks(const alloc_table *t)
{
    if (t->free_sized) {
        void *p = t->malloc(SIZED_FREE_SIZE);
        CHECK(p != NULL, "malloc for free_sized returned NULL");
        if (p)
            t->free_sized(p, SIZED_FREE_SIZE);
    }
    if (t->stats) {
        /* keep something live so the figures have something to count */
        void *live = t->malloc(GROWN_SIZE);
        alloc_stat stats[ALLOC_STATS_MAX];
        int n = t->stats(stats, ALLOC_STATS_MAX);
        CHECK(n > 0 && n <= ALLOC_STATS_MAX, "stats returned %d entries", n);
        for (int i = 0; i < n && n <= ALLOC_STATS_MAX; i++) {
            CHECK(stats[i].key && stats[i].key[0], "stat %d has no key", i);
            CHECK(isfinite(stats[i].value) && stats[i].value >= 0, "stat '%s' = %g",
                  stats[i].key ? stats[i].key : "?", stats[i].value);
            for (int k = 0; k < i; k++)
                CHECK(strcmp(stats[i].key, stats[k].key) != 0, "stat key '%s' repeats",
                      stats[i].key);
        }
        /* a limit smaller than the list must be respected */
        alloc_stat one[1];
        CHECK(t->stats(one, 1) <= 1, "stats wrote past max = 1");
        t->free(live);
    }
    if (t->trim)
        CHECK(t->trim() == 0, "trim did not return 0");
}

typedef struct handoff {
    const alloc_table *t;
    unsigned char *blocks[HANDOFF_BLOCKS];
} handoff;

static void *allocate_on_thread(void *arg)
{
    handoff *h = arg;
    for (int i = 0; i < HANDOFF_BLOCKS; i++) {
        h->blocks[i] = h->t->malloc(HANDOFF_SIZE);
        if (h->blocks[i])
            memset(h->blocks[i], i & 0xff, HANDOFF_SIZE);
    }
    if (h->t->thread_flush)
        h->t->thread_flush();
    return NULL;
}

/* Blocks allocated on one thread, freed on another after it exited. */
static void check_cross_thread_free(const alloc_table *t)
{
    static handoff h;
    h.t = t;
    pthread_t id;
    CHECK(pthread_create(&id, NULL, allocate_on_thread, &h) == 0, "pthread_create failed");
    pthread_join(id, NULL);
    for (int i = 0; i < HANDOFF_BLOCKS; i++) {
        CHECK(h.blocks[i] != NULL, "thread's malloc %d returned NULL", i);
        if (!h.blocks[i])
            continue;
        CHECK(all_bytes(h.blocks[i], HANDOFF_SIZE, (unsigned char)(i & 0xff)),
              "block %d changed after its thread exited", i);
        t->free(h.blocks[i]);
    }
}

/* Loading a library with RTLD_LOCAL must leave the process's own malloc
 * alone: glibc, stdio and the runner keep allocating where they did, and
 * never hand the measured allocator a pointer it did not make. */
static void check_global_malloc_untouched(const alloc_table *t)
{
    if (t->library[0] != '/')
        return; /* "libc" or "static": nothing was loaded */
    Dl_info info;
    void *global_malloc = dlsym(RTLD_DEFAULT, "malloc");
    CHECK(global_malloc && dladdr(global_malloc, &info) && info.dli_fname,
          "cannot find the process's malloc");
    if (global_malloc && info.dli_fname)
        CHECK(strcmp(info.dli_fname, t->library) != 0,
              "the process's malloc now comes from %s", info.dli_fname);
    CHECK((void *)t->malloc != global_malloc, "the table's malloc is the process's malloc");
    /* and the process's malloc still works beside it */
    char *mine = malloc(SMALL_SIZE);
    CHECK(mine != NULL, "the process's malloc failed");
    free(mine);
}

static void check_core_mode(const char *name)
{
    if (strcmp(name, "heaplab") == 0)
        CHECK(hl_tcache_enabled() == 1, "heaplab opened with thread caches off");
    if (strcmp(name, "heaplab-nocache") == 0)
        CHECK(hl_tcache_enabled() == 0, "heaplab-nocache opened with thread caches on");
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s ALLOCATOR [MAX_ALIGNMENT]\n", argv[0]);
        return 2;
    }
    size_t max_align = argc == 3 ? strtoull(argv[2], NULL, 10) : MAX_ALIGN_TESTED;
    alloc_table t;
    char err[1024];
    if (alloc_table_open(argv[1], &t, err, sizeof err, argv) != 0) {
        fprintf(stderr, "%s\n", err);
        return strstr(err, "not installed") ? EXIT_SKIP : 1;
    }
    check_identity(&t, argv[1]);
    check_core_mode(argv[1]);
    check_global_malloc_untouched(&t);
    check_malloc_realloc(&t);
    check_calloc(&t);
    check_aligned(&t, max_align);
    check_size_ladder(&t);
    check_hooks(&t);
    check_cross_thread_free(&t);
    if (failures == 0)
        printf("%s %s (%s): every check holds\n", t.name, t.version, t.library);
    return failures ? 1 : 0;
}
