/* The family table, and alloc_table_open(): from an allocator's name to
 * its filled table (alloc.h).
 *
 * How fairness between allocators is kept (what every user of the table
 * relies on):
 * - One binary for all of them. Each table is filled at run time from the
 *   name on the command line, and workloads call only through the table's
 *   pointers, so no allocator -- heaplab, linked in statically, included --
 *   can be inlined into a workload or get a cheaper call than another.
 * - Libraries are dlopen()ed with RTLD_LOCAL: the measured allocator serves
 *   only the workload's calls; glibc, stdio and the runner keep glibc's
 *   malloc, and never hand the measured allocator a foreign pointer.
 * - The runner's own bookkeeping (phases, samples, metrics) is one mapping
 *   touched before the workload starts (harness/runner/runner.h):
 *   recording never allocates, and under "system" never disturbs glibc's
 *   heap.
 * - Reading RSS and the allocator's statistics at a phase end is left out
 *   of the phase's time (harness/runner/wl_api.c), and every allocator pays
 *   the same for it.
 * - One process per measured cell (run.py), so RSS and peak figures are the
 *   allocator's own and nothing carries over from a previous run.
 * Allocator-specific adapters (mimalloc's aligned entry, jemalloc's sized
 * free) are one extra direct call, and each is explained where it is made. */
#include "alloc.h"
#include "families.h"

#include <stdio.h>
#include <string.h>

const alloc_family alloc_families[] = {
    {"system", alloc_open_system, NULL, 1},
    {"heaplab", alloc_open_heaplab, NULL, 1},
    {"heaplab-nocache", alloc_open_heaplab_nocache, NULL, 1},
    {"mimalloc", alloc_open_mimalloc, alloc_prepare_mimalloc, 1},
    {"jemalloc", alloc_open_jemalloc, NULL, 1},
    {"tcmalloc", alloc_open_tcmalloc, NULL, 1},
    /* a baseline: run only when named */
    {"floor", alloc_open_floor, NULL, 0},
};
#define FAMILY_COUNT (sizeof alloc_families / sizeof alloc_families[0])
_Static_assert(FAMILY_COUNT <= ALLOC_FAMILIES_MAX, "raise ALLOC_FAMILIES_MAX");
const int alloc_family_count = FAMILY_COUNT;

const alloc_family *alloc_family_find(const char *name)
{
    for (int i = 0; i < alloc_family_count; i++)
        if (strcmp(alloc_families[i].name, name) == 0)
            return &alloc_families[i];
    return NULL;
}

int alloc_names_an_allocator(const char *spec)
{
    return alloc_family_find(spec) != NULL || alloc_is_so_spec(spec) == 1;
}

static void unknown_allocator(const char *name, char *err, size_t errlen)
{
    int n = snprintf(err, errlen, "unknown allocator '%s' (available: ", name);
    for (int i = 0; i < alloc_family_count && n >= 0 && (size_t)n < errlen; i++)
        n += snprintf(err + n, errlen - (size_t)n, "%s, ", alloc_families[i].name);
    if (n >= 0 && (size_t)n < errlen)
        snprintf(err + n, errlen - (size_t)n, "%s)", ALLOC_SO_PATTERN);
}

/* Every mandatory entry must be there: workloads call them unchecked. */
static int check_mandatory(const alloc_table *t, char *err, size_t errlen)
{
    const struct {
        const char *entry;
        int present;
    } entries[] = {
        {"malloc", t->malloc != NULL},         {"free", t->free != NULL},
        {"calloc", t->calloc != NULL},         {"realloc", t->realloc != NULL},
        {"aligned_alloc", t->aligned_alloc != NULL},
        {"usable_size", t->usable_size != NULL},
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        if (!entries[i].present) {
            snprintf(err, errlen, "%s: the table has no %s entry", t->name, entries[i].entry);
            return -1;
        }
    }
    return 0;
}

int alloc_table_prepare(const char *spec, char *err, size_t errlen, char **argv)
{
    const alloc_family *f = alloc_family_find(spec);
    if (!f || !f->prepare)
        return 0;
    return f->prepare(err, errlen, argv);
}

int alloc_table_open(const char *spec, alloc_table *out, char *err, size_t errlen,
                     char **argv)
{
    memset(out, 0, sizeof *out);
    const alloc_family *f = alloc_family_find(spec);
    int rc;
    if (f) {
        rc = f->open(out, err, errlen, argv);
    } else if (alloc_is_so_spec(spec) != 0) {
        /* a NAME that cannot be used is so.c's to explain */
        rc = alloc_open_so(spec, out, err, errlen, argv);
    } else {
        unknown_allocator(spec, err, errlen);
        return -1;
    }
    if (rc != 0)
        return rc;
    return check_mandatory(out, err, errlen);
}
