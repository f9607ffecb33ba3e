/* alloc_table_open(): from an allocator's name to its filled table.
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
 *   touched before the workload starts (runner.h): recording never
 *   allocates, and under "system" never disturbs glibc's heap.
 * - Reading RSS and the allocator's statistics at a phase end is left out of
 *   the phase's time (wl_api.c), and every allocator pays the same for it.
 * - One process per measured cell (run.py), so RSS and peak figures are the
 *   allocator's own and nothing carries over from a previous run.
 * Allocator-specific adapters (mimalloc's aligned entry, jemalloc's sized
 * free) are one extra direct call, and each is explained where it is made. */
#include "alloc_families.h"
#include "alloc_registry.h"

#include <stdio.h>
#include <string.h>

const char *const alloc_known_names[] = {
    "system", "heaplab", "heaplab-nocache", "mimalloc", "jemalloc", "tcmalloc", "floor",
};
#define KNOWN_COUNT (sizeof alloc_known_names / sizeof alloc_known_names[0])
_Static_assert(KNOWN_COUNT <= ALLOC_KNOWN_MAX, "raise ALLOC_KNOWN_MAX");
const int alloc_known_count = KNOWN_COUNT;

#define SO_SCHEME "so:"

int alloc_runs_by_default(const char *name)
{
    return strcmp(name, "floor") != 0;
}

static void unknown_allocator(const char *name, char *err, size_t errlen)
{
    int n = snprintf(err, errlen, "unknown allocator '%s' (available: ", name);
    for (int i = 0; i < alloc_known_count && n >= 0 && (size_t)n < errlen; i++)
        n += snprintf(err + n, errlen - (size_t)n, "%s, ", alloc_known_names[i]);
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

int alloc_table_prepare(const char *name, char *err, size_t errlen, char **argv)
{
    if (strcmp(name, "mimalloc") == 0)
        return alloc_prepare_mimalloc(err, errlen, argv);
    return 0;
}

int alloc_table_open(const char *name, alloc_table *out, char *err, size_t errlen,
                     char **argv)
{
    memset(out, 0, sizeof *out);
    int rc;
    if (strcmp(name, "system") == 0)
        rc = alloc_open_system(out, err, errlen);
    else if (strcmp(name, "heaplab") == 0)
        rc = alloc_open_heaplab(0, out, err, errlen);
    else if (strcmp(name, "heaplab-nocache") == 0)
        rc = alloc_open_heaplab(1, out, err, errlen);
    else if (strcmp(name, "mimalloc") == 0)
        rc = alloc_open_mimalloc(out, err, errlen, argv);
    else if (strcmp(name, "jemalloc") == 0)
        rc = alloc_open_jemalloc(out, err, errlen, argv);
    else if (strcmp(name, "tcmalloc") == 0)
        rc = alloc_open_tcmalloc(out, err, errlen, argv);
    else if (strcmp(name, "floor") == 0)
        rc = alloc_open_floor(out, err, errlen);
    else if (strncmp(name, SO_SCHEME, strlen(SO_SCHEME)) == 0)
        rc = alloc_open_so(name + strlen(SO_SCHEME), out, err, errlen, argv);
    else {
        unknown_allocator(name, err, errlen);
        return -1;
    }
    if (rc != 0)
        return rc;
    return check_mandatory(out, err, errlen);
}
