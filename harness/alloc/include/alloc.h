/* Finding and opening an allocator: from a command-line name to its filled
 * table (alloc_table.h). What the runner and heaplab-gbench see of
 * harness/alloc/; workloads never do.
 *
 * An allocator is named one of two ways:
 * - a family's name: "system", "heaplab", "mimalloc", ... (alloc_families);
 * - a library: "so:PATH[:PREFIX]", or "NAME=so:PATH[:PREFIX]" to give it a
 *   short NAME for documents, tables and legends (alloc_table.name = NAME,
 *   alloc_table.path = PATH). NAME is letters, digits, '-', '_' and '.', and
 *   no family's name. */
#ifndef HEAPLAB_ALLOC_H
#define HEAPLAB_ALLOC_H

#include <stddef.h>

#include "alloc_table.h"

/* One allocator family the runner knows by name. */
typedef struct alloc_family {
    const char *name;
    /* Fills *out (zeroed by the caller) or returns -1 with a one-line reason
     * in err ("jemalloc: not installed (apt install libjemalloc2)"). argv:
     * the process's own, for re-executing it (jemalloc's static TLS). */
    int (*open)(alloc_table *out, char *err, size_t errlen, char **argv);
    /* Before a process measures it: loads it the way it is deployed when
     * that differs from dlopen (mimalloc: preloaded, by re-executing the
     * process once). 0 when the process is ready, -1 with a reason when the
     * re-execution failed. NULL: nothing to do. */
    int (*prepare)(char *err, size_t errlen, char **argv);
    /* 1 when a run that names no allocator includes it; 0 for baselines
     * ("floor") that only make sense for some workloads */
    int runs_by_default;
} alloc_family;

/* Every family, in display order (--list, messages); at most
 * ALLOC_FAMILIES_MAX, the room callers may reserve for them. */
enum { ALLOC_FAMILIES_MAX = 16 };
extern const alloc_family alloc_families[];
extern const int alloc_family_count;

/* The family of that name, or NULL. */
const alloc_family *alloc_family_find(const char *name);

/* The pattern shown after the families' names in messages. */
#define ALLOC_SO_PATTERN "[NAME=]so:PATH[:PREFIX]"

/* 1 when `spec` names an allocator -- a family or a so: library, loadable
 * or not -- as opposed to a typo. */
int alloc_names_an_allocator(const char *spec);

/* Opens the allocator `spec` names into *out. Returns 0, or -1 with a
 * one-line reason in err ("unknown allocator 'jemaloc' (available: system,
 * heaplab, ...)", "so:/x.so: no such file"). May re-execute the process
 * (jemalloc's static TLS needs GLIBC_TUNABLES). */
int alloc_table_open(const char *spec, alloc_table *out, char *err, size_t errlen,
                     char **argv);

/* The family's prepare step (see alloc_family) for a process that will
 * measure `spec`; 0 when there is none or the name is unknown
 * (alloc_table_open reports that). A listing that only probes allocators
 * does not call it. */
int alloc_table_prepare(const char *spec, char *err, size_t errlen, char **argv);

#endif
